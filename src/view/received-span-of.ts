import type { Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { ReceivedScope, ReceivedSpan } from '../otlp/index.js';

/**
 * An ended SDK span as a receiver would decode it ({@link ReceivedSpan}, what the waterfall
 * draws), without going through an exporter: `tooltrace view` replays a journal in its own
 * process, and an encode, a request and a decode per span would cost more than the replay.
 * Kinds and status codes are mapped to the OTLP numbers (the API's kinds start at 0, OTLP's at
 * 1); attribute values are kept as the SDK holds them (strings, numbers, booleans, arrays);
 * `encoding` says `protobuf`, what the sidecar would have sent. Spans of one resource share one
 * copy of its attributes, and spans of one tracer one scope, as a decoded request's do: a span
 * held for drawing costs its own fields only.
 */
export function receivedSpanOf(span: ReadableSpan): ReceivedSpan {
  const context = span.spanContext();
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    traceState: context.traceState?.serialize() ?? '',
    flags: context.traceFlags,
    name: span.name,
    kind: span.kind + 1,
    startTimeUnixNano: unixNano(span.startTime),
    endTimeUnixNano: unixNano(span.endTime),
    attributes: plain(span.attributes),
    events: span.events.map((event) => ({
      name: event.name,
      timeUnixNano: unixNano(event.time),
      attributes: plain(event.attributes),
    })),
    links: span.links.map((link) => ({
      traceId: link.context.traceId,
      spanId: link.context.spanId,
      attributes: plain(link.attributes),
    })),
    status: { code: span.status.code, message: span.status.message ?? '' },
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
    resource: resourceOf(span.resource),
    scope: scopeOf(span.instrumentationScope),
    encoding: 'protobuf',
  };
}

type Resource = ReadableSpan['resource'];
type InstrumentationScope = ReadableSpan['instrumentationScope'];

const resources = new WeakMap<Resource, Record<string, unknown>>();
const scopes = new WeakMap<InstrumentationScope, ReceivedScope>();

function resourceOf(resource: Resource): Record<string, unknown> {
  let attributes = resources.get(resource);
  if (attributes === undefined) {
    attributes = plain(resource.attributes);
    resources.set(resource, attributes);
  }
  return attributes;
}

function scopeOf(scope: InstrumentationScope): ReceivedScope {
  let received = scopes.get(scope);
  if (received === undefined) {
    received = { name: scope.name, version: scope.version ?? '' };
    scopes.set(scope, received);
  }
  return received;
}

function unixNano(time: HrTime): bigint {
  return BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
}

/** The attributes with their `undefined` values left out, as a decoded request has none. */
function plain(attributes: Attributes | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (attributes === undefined) return result;
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) result[key] = value;
  }
  return result;
}
