import type { PrometheusSeries } from './prometheus-names.js';

/** A vector selector in a query: `rate(x_total{source="http"}[5m])` has metric `x_total`. */
export interface PromqlSelector {
  metric: string;
  /** Label names its matchers test, in order. */
  labels: string[];
}

/** The names a PromQL query uses, from {@link promqlNames}. */
export interface PromqlNames {
  selectors: PromqlSelector[];
  /** Labels in `by`, `without`, `on`, `ignoring`, `group_left`, `group_right` clauses. */
  groupingLabels: string[];
  /** Functions and aggregation operators called. */
  functions: string[];
  /** What could not be read safely: an unknown function, a selector without a metric name, … */
  problems: string[];
}

/** Grafana's interval macros, which Grafana replaces with a duration before Prometheus sees the query. */
const GRAFANA_DURATION_MACROS = ['__rate_interval', '__interval', '__range'];

const AGGREGATIONS = new Set([
  'sum',
  'avg',
  'min',
  'max',
  'count',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
]);

/**
 * Functions whose arguments are only expressions and numbers. Those that take label names as
 * strings (`label_replace`, `label_join`, `count_values`, `sort_by_label`) are left out on
 * purpose: the names in their strings would go unchecked.
 */
const FUNCTIONS = new Set([
  'abs',
  'absent',
  'absent_over_time',
  'avg_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'count_over_time',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_avg',
  'histogram_count',
  'histogram_fraction',
  'histogram_quantile',
  'histogram_sum',
  'idelta',
  'increase',
  'irate',
  'last_over_time',
  'ln',
  'log10',
  'log2',
  'max_over_time',
  'min_over_time',
  'quantile_over_time',
  'rate',
  'resets',
  'round',
  'scalar',
  'sort',
  'sort_desc',
  'sqrt',
  'sum_over_time',
  'time',
  'timestamp',
  'vector',
]);

const GROUPING_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OTHER_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);
const MATCH_OPERATORS = new Set(['=', '!=', '=~', '!~']);

type TokenKind = 'identifier' | 'string' | 'number' | 'punctuation' | 'operator';
interface Token {
  kind: TokenKind;
  text: string;
}

/**
 * Reads the metric names, label names and functions a PromQL query uses, well enough to check
 * a dashboard against the metrics that exist; it is a tokenizer with PromQL's few contexts, not
 * a full parser. Grafana's `$__rate_interval`, `$__interval` and `$__range` read as durations;
 * any other Grafana variable is a problem (its value is unknown here).
 */
export function promqlNames(query: string): PromqlNames {
  const names: PromqlNames = { selectors: [], groupingLabels: [], functions: [], problems: [] };
  const expanded = query.replace(/\$\{?([A-Za-z_]\w*)\}?/g, (match, variable: string) => {
    if (GRAFANA_DURATION_MACROS.includes(variable)) return '5m';
    names.problems.push(`uses the Grafana variable ${match}, which this check cannot resolve`);
    return '5m';
  });
  let tokens: Token[];
  try {
    tokens = tokenize(expanded);
  } catch (error) {
    names.problems.push((error as Error).message);
    return names;
  }
  const next = (index: number): Token | undefined => tokens[index + 1];
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (token.kind !== 'identifier') continue;
    const word = token.text;
    const lower = word.toLowerCase();
    if (GROUPING_KEYWORDS.has(lower)) {
      if (next(index)?.text !== '(') continue;
      let cursor = index + 2;
      for (; cursor < tokens.length && tokens[cursor]!.text !== ')'; cursor += 1) {
        const item = tokens[cursor]!;
        if (item.kind === 'identifier') names.groupingLabels.push(item.text);
        else if (item.text !== ',') names.problems.push(`unexpected ${item.text} in ${word} (…)`);
      }
      index = cursor;
      continue;
    }
    if (OTHER_KEYWORDS.has(lower)) continue;
    const following = next(index);
    const isAggregation =
      AGGREGATIONS.has(word) &&
      (following?.text === '(' || GROUPING_KEYWORDS.has(following?.text ?? ''));
    if (isAggregation || following?.text === '(') {
      names.functions.push(word);
      if (!isAggregation && !FUNCTIONS.has(word)) {
        names.problems.push(`calls ${word}(), which this check does not know`);
      }
      continue;
    }
    const selector: PromqlSelector = { metric: word, labels: [] };
    names.selectors.push(selector);
    if (following?.text === '{') index = readMatchers(tokens, index + 1, selector, names);
  }
  // A selector written as {__name__="…"} or {label="…"} alone: nothing names its metric.
  for (const [index, token] of tokens.entries()) {
    if (token.text === '{' && tokens[index - 1]?.kind !== 'identifier') {
      names.problems.push('has a selector without a metric name');
    }
  }
  return names;
}

/**
 * Every problem with a query against the series Prometheus stores: a metric not among them, a
 * matcher's label the metric does not carry, a grouping label not on every metric in the query,
 * a classic-histogram quantile not grouped by `le`. Empty when the query is sound.
 */
export function queryProblems(query: string, series: readonly PrometheusSeries[]): string[] {
  const names = promqlNames(query);
  const problems = [...names.problems];
  const byName = new Map(series.map((entry) => [entry.name, entry]));
  const known: PrometheusSeries[] = [];
  for (const selector of names.selectors) {
    const entry = byName.get(selector.metric);
    if (entry === undefined) {
      problems.push(`names ${selector.metric}, which tooltrace does not emit`);
      continue;
    }
    known.push(entry);
    for (const label of selector.labels) {
      if (!entry.labels.includes(label)) {
        problems.push(
          `matches ${selector.metric} on ${label}, which it does not carry (it has ${entry.labels.join(', ')})`,
        );
      }
    }
  }
  if (names.selectors.length === 0) problems.push('names no metric');
  for (const label of new Set(names.groupingLabels)) {
    for (const entry of known) {
      if (!entry.labels.includes(label)) {
        problems.push(
          `groups by ${label}, which ${entry.name} (${entry.instrument}) does not carry`,
        );
      }
    }
  }
  if (names.functions.includes('histogram_quantile')) {
    if (!names.groupingLabels.includes('le')) {
      problems.push('calls histogram_quantile() without keeping le in its by (…) clause');
    }
    if (!names.selectors.some((selector) => selector.metric.endsWith('_bucket'))) {
      problems.push('calls histogram_quantile() on no _bucket series');
    }
  }
  return problems;
}

function readMatchers(
  tokens: readonly Token[],
  open: number,
  selector: PromqlSelector,
  names: PromqlNames,
): number {
  let cursor = open + 1;
  while (cursor < tokens.length && tokens[cursor]!.text !== '}') {
    const label = tokens[cursor]!;
    const operator = tokens[cursor + 1];
    const value = tokens[cursor + 2];
    if (
      label.kind !== 'identifier' ||
      operator === undefined ||
      !MATCH_OPERATORS.has(operator.text) ||
      value?.kind !== 'string'
    ) {
      names.problems.push(`cannot read the matchers of ${selector.metric}{…}`);
      return tokens.findIndex((token, index) => index > cursor && token.text === '}');
    }
    selector.labels.push(label.text);
    cursor += 3;
    if (tokens[cursor]?.text === ',') cursor += 1;
  }
  return cursor;
}

function tokenize(query: string): Token[] {
  const pattern =
    /\s+|#[^\n]*|(?<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(?<number>(?:\d+(?:ms|[smhdwy]))+|\d*\.?\d+(?:[eE][+-]?\d+)?)|(?<identifier>[A-Za-z_:][A-Za-z0-9_:]*)|(?<operator>=~|!~|!=|==|>=|<=|[=<>+\-*/%^@:])|(?<punctuation>[{}()[\],])/y;
  const tokens: Token[] = [];
  let offset = 0;
  while (offset < query.length) {
    pattern.lastIndex = offset;
    const match = pattern.exec(query);
    if (match === null) {
      throw new Error(`cannot read ${JSON.stringify(query.slice(offset, offset + 20))}`);
    }
    offset = pattern.lastIndex;
    const groups = match.groups!;
    for (const kind of ['string', 'number', 'identifier', 'operator', 'punctuation'] as const) {
      if (groups[kind] !== undefined) tokens.push({ kind, text: groups[kind] });
    }
  }
  return tokens;
}
