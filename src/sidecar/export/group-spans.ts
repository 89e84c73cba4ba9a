import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * The spans of one export request grouped as OTLP nests them: by resource, then by
 * instrumentation scope, each group in first-seen order (spans keep their order within it). Both
 * OTLP encoders, protobuf and JSON, write these groups as `ResourceSpans` and `ScopeSpans`.
 */
export function groupByResourceAndScope(
  spans: readonly ReadableSpan[],
): Map<unknown, Map<unknown, ReadableSpan[]>> {
  const resources = new Map<unknown, Map<unknown, ReadableSpan[]>>();
  for (const span of spans) {
    let scopes = resources.get(span.resource);
    if (scopes === undefined) {
      scopes = new Map<unknown, ReadableSpan[]>();
      resources.set(span.resource, scopes);
    }
    const scoped = scopes.get(span.instrumentationScope);
    if (scoped === undefined) scopes.set(span.instrumentationScope, [span]);
    else scoped.push(span);
  }
  return resources;
}
