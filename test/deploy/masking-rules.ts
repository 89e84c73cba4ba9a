import type { CollectorConfig } from './collector-config.js';
import { listAt, mapAt, stringAt, stringListAt } from './yaml-shape.js';

/** The id of the masking processor in every collector file that masks. */
export const MASKING_PROCESSOR = 'transform/mask-credentials';

/** One OTTL replace statement of the masking processor, turned into a JavaScript regex. */
export interface MaskingRule {
  /** OTTL context: `span` or `spanevent`. */
  context: string;
  /** What it rewrites: `attributes` (every string value) or a path such as `status.message`. */
  target: string;
  pattern: RegExp;
  /** The replacement in JavaScript's syntax (`$1`). */
  replacement: string;
  /** The statement as written, for messages. */
  statement: string;
}

/**
 * The replace statements of the masking processor, in order, as JavaScript regexes that behave
 * like the collector's: OTTL string literals unescaped, the collector's `$$` turned into `$`, a
 * leading RE2 `(?i)` turned into the `i` flag. Throws on anything else, so a statement this
 * cannot reproduce faithfully fails the test instead of being skipped.
 */
export function maskingRules(config: CollectorConfig): MaskingRule[] {
  const where = `${config.file}: processors.${MASKING_PROCESSOR}`;
  const processor = mapAt(config.processors[MASKING_PROCESSOR], where);
  const rules: MaskingRule[] = [];
  for (const [index, group] of listAt(
    processor.trace_statements,
    `${where}.trace_statements`,
  ).entries()) {
    const groupWhere = `${where}.trace_statements[${index}]`;
    const settings = mapAt(group, groupWhere);
    const context = stringAt(settings.context, `${groupWhere}.context`);
    for (const statement of stringListAt(settings.statements, `${groupWhere}.statements`)) {
      rules.push({ context, ...parseReplaceStatement(statement) });
    }
  }
  return rules;
}

/** Applies the rules of one context and target to a value, in order, as the collector would. */
export function applyMaskingRules(
  rules: readonly MaskingRule[],
  context: string,
  target: string,
  value: string,
): string {
  return rules
    .filter((rule) => rule.context === context && rule.target === target)
    .reduce((current, rule) => current.replace(rule.pattern, rule.replacement), value);
}

function parseReplaceStatement(statement: string): Omit<MaskingRule, 'context'> {
  const call = /^(?<name>replace_all_patterns|replace_pattern)\((?<args>.*)\)$/.exec(statement);
  if (call?.groups === undefined) throw new Error(`not a replace statement: ${statement}`);
  const args = splitArguments(call.groups.args!);
  let target: string;
  let patternLiteral: string | undefined;
  let replacementLiteral: string | undefined;
  if (call.groups.name === 'replace_all_patterns') {
    const [map, mode, pattern, replacement, ...rest] = args;
    if (mode !== '"value"' || rest.length > 0) {
      throw new Error(
        `only replace_all_patterns(map, "value", pattern, replacement): ${statement}`,
      );
    }
    target = map!;
    patternLiteral = pattern;
    replacementLiteral = replacement;
  } else {
    const [path, pattern, replacement, ...rest] = args;
    if (rest.length > 0) throw new Error(`unexpected arguments: ${statement}`);
    target = path!;
    patternLiteral = pattern;
    replacementLiteral = replacement;
  }
  if (patternLiteral === undefined || replacementLiteral === undefined) {
    throw new Error(`missing arguments: ${statement}`);
  }
  return {
    target,
    pattern: goRegExp(collectorValue(ottlString(patternLiteral))),
    replacement: goReplacement(collectorValue(ottlString(replacementLiteral))),
    statement,
  };
}

/** Splits OTTL call arguments on top-level commas, keeping string literals whole. */
function splitArguments(text: string): string[] {
  const args: string[] = [];
  let current = '';
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (inString && character === '\\') {
      current += character + (text[index + 1] ?? '');
      index += 1;
      continue;
    }
    if (character === '"') inString = !inString;
    if (character === ',' && !inString) {
      args.push(current.trim());
      current = '';
    } else current += character;
  }
  args.push(current.trim());
  return args;
}

/** An OTTL string literal's value (OTTL unescapes `\\` and `\"` like a JSON string). */
function ottlString(literal: string): string {
  if (!/^".*"$/.test(literal)) throw new Error(`not a string literal: ${literal}`);
  const value: unknown = JSON.parse(literal);
  return value as string;
}

/** The collector expands `${...}` in config values and turns `$$` into a literal `$`. */
function collectorValue(text: string): string {
  if (/\$\{|\$[A-Za-z_]/.test(text.replaceAll('$$', ''))) {
    throw new Error(`the collector would expand a variable in ${text}`);
  }
  return text.replaceAll('$$', '$');
}

/** An RE2 pattern as a JavaScript regex with the same meaning, for the constructs used here. */
function goRegExp(source: string): RegExp {
  let flags = 'g';
  let body = source;
  if (body.startsWith('(?i)')) {
    flags += 'i';
    body = body.slice('(?i)'.length);
  }
  if (/\(\?[a-zA-Z]/.test(body) || /\[\[:/.test(body) || /\\[pPQEzACK]/.test(body)) {
    throw new Error(`RE2 construct this check cannot translate: ${source}`);
  }
  return new RegExp(body, flags);
}

/**
 * Go's `Regexp.Expand` replacement (`$1`, `${1}`) in JavaScript's syntax. Go reads `$1x` as a
 * group named `1x` (empty): rejected, because it would not mean what it looks like.
 */
function goReplacement(replacement: string): string {
  if (/\$\d+[A-Za-z_]/.test(replacement)) {
    throw new Error(`Go reads ${replacement} as a named group; write \${1} instead`);
  }
  return replacement.replace(/\$\{(\d+)\}/g, '$$$1');
}
