/**
 * A test for the event types `excludeEvents` leaves out: exact names, or prefixes ending in `*`
 * (`llm.stream.*`). Answers are cached per type (a bus has few), so the test costs one map
 * lookup per event; `undefined` when nothing is excluded, so the subscriber skips it entirely.
 */
export function eventTypeFilter(
  patterns: readonly string[],
): ((type: string) => boolean) | undefined {
  if (patterns.length === 0) return undefined;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('*')) prefixes.push(pattern.slice(0, -1));
    else exact.add(pattern);
  }
  const answers = new Map<string, boolean>();
  return (type) => {
    let excluded = answers.get(type);
    if (excluded === undefined) {
      excluded = exact.has(type) || prefixes.some((prefix) => type.startsWith(prefix));
      // A bounded cache: a stream of made-up types must not grow it without end.
      if (answers.size < 4096) answers.set(type, excluded);
    }
    return excluded;
  };
}

/** Whether `pattern` is an event type or a prefix ending in `*` (a `*` anywhere else is not). */
export function isEventTypePattern(pattern: unknown): boolean {
  if (typeof pattern !== 'string' || pattern === '') return false;
  const star = pattern.indexOf('*');
  return star === -1 || star === pattern.length - 1;
}
