import type { ReceivedSpan } from './received-span.js';

/**
 * Encodes spans as one OTLP/JSON `ExportTraceServiceRequest` (the shape the OTLP/HTTP JSON
 * exporter sends and the Collector's file exporter writes): spans grouped by resource and
 * scope, ids as hex, times as decimal strings, attributes as typed `AnyValue`s. `tooltrace view`
 * reads it back.
 */
export function encodeOtlpJson(spans: readonly ReceivedSpan[]): string {
  const resources = new Map<
    string,
    { resource: Record<string, unknown>; scopes: Map<string, ReceivedSpan[]> }
  >();
  for (const span of spans) {
    const resourceKey = JSON.stringify(keyValues(span.resource));
    let entry = resources.get(resourceKey);
    if (entry === undefined) {
      entry = { resource: span.resource, scopes: new Map() };
      resources.set(resourceKey, entry);
    }
    const scopeKey = `${span.scope.name}\u0000${span.scope.version}`;
    const list = entry.scopes.get(scopeKey) ?? [];
    list.push(span);
    entry.scopes.set(scopeKey, list);
  }
  const request = {
    resourceSpans: [...resources.values()].map(({ resource, scopes }) => ({
      resource: { attributes: keyValues(resource) },
      scopeSpans: [...scopes.values()].map((scopeSpans) => ({
        scope: { name: scopeSpans[0]!.scope.name, version: scopeSpans[0]!.scope.version },
        spans: scopeSpans.map((span) => ({
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.traceState === '' ? {} : { traceState: span.traceState }),
          ...(span.parentSpanId === '' ? {} : { parentSpanId: span.parentSpanId }),
          ...(span.flags === 0 ? {} : { flags: span.flags }),
          name: span.name,
          kind: span.kind,
          startTimeUnixNano: span.startTimeUnixNano.toString(),
          endTimeUnixNano: span.endTimeUnixNano.toString(),
          attributes: keyValues(span.attributes),
          events: span.events.map((event) => ({
            name: event.name,
            timeUnixNano: event.timeUnixNano.toString(),
            attributes: keyValues(event.attributes),
          })),
          links: span.links.map((link) => ({
            traceId: link.traceId,
            spanId: link.spanId,
            attributes: keyValues(link.attributes),
          })),
          status: { code: span.status.code, message: span.status.message },
          droppedAttributesCount: span.droppedAttributesCount,
          droppedEventsCount: span.droppedEventsCount,
          droppedLinksCount: span.droppedLinksCount,
        })),
      })),
    })),
  };
  return `${JSON.stringify(request)}\n`;
}

function keyValues(attributes: Record<string, unknown>): { key: string; value: unknown }[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function anyValue(value: unknown): unknown {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'bigint') return { intValue: value.toString() };
  if (typeof value === 'number') {
    // Beyond 2^53 a number is a double that happens to be whole (1e21 prints as "1e+21").
    if (Number.isSafeInteger(value)) return { intValue: String(value) };
    // JSON has no NaN or Infinity; the protobuf JSON mapping spells them as strings.
    return { doubleValue: Number.isFinite(value) ? value : String(value) };
  }
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  if (value !== null && typeof value === 'object') {
    return { kvlistValue: { values: keyValues(value as Record<string, unknown>) } };
  }
  return {};
}
