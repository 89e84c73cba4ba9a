/** Longest log line the sidecar writes; longer ones are cut and say by how much. */
export const MAX_LOG_LINE = 2000;

/**
 * Control characters (C0, DEL, C1), line and paragraph separators, and bidirectional overrides:
 * what could move a terminal's cursor, clear it, forge a new log line or reorder what a reader
 * sees. Backslash too, so an escape in the output is never ambiguous with one in the input.
 */
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]/g;

const NAMED: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\\': '\\\\',
};

/**
 * `value` as text that is safe on one log or status line: every control character escaped
 * (`\n`, `\x1b`, `\u2028`, …) and at most `maxLength` characters of the original kept, the rest
 * counted (`…(+120 chars)`). Values from input (tool names, paths, error messages of a remote
 * endpoint) go through it before they reach a terminal or a log collector.
 */
export function printable(value: unknown, maxLength = MAX_LOG_LINE): string {
  const text = String(value);
  const kept = text.length > maxLength ? text.slice(0, maxLength) : text;
  const escaped = kept.replace(UNPRINTABLE, (character) => {
    const named = NAMED[character];
    if (named !== undefined) return named;
    const code = character.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return kept === text ? escaped : `${escaped}…(+${text.length - maxLength} chars)`;
}
