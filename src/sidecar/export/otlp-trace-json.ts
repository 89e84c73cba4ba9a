import type { AttributeValue, Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NumberTypes } from './number-types.js';

/** OTLP span flags: the low byte is the W3C trace flags; these say whether the parent is remote. */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

type JsonValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: number | string }
  | { doubleValue: number }
  | { arrayValue: { values: JsonValue[] } }
  | Record<string, never>;

/**
 * Encodes spans as an OTLP/JSON `ExportTraceServiceRequest`: the same messages as
 * {@link OtlpTraceEncoder} writes in protobuf (spans grouped by resource and scope, hex ids,
 * nanosecond times as decimal strings, enums as numbers), with the same rule for numbers
 * ({@link NumberTypes}), so `http/json` and `http/protobuf` send one type per key alike. Like the
 * protobuf encoder it writes no bytes, key-value-list or scope attributes: SDK spans have none.
 */
export class OtlpTraceJsonEncoder {
  readonly #numbers: NumberTypes;

  constructor(numbers: NumberTypes = new NumberTypes()) {
    this.#numbers = numbers;
  }

  /** The request body for `spans`. */
  encode(spans: readonly ReadableSpan[]): Buffer {
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
    const resourceSpans = [...resources.values()].map((scopes) => {
      const first = scopes.values().next().value![0]!;
      return {
        resource: { attributes: this.#attributes(first.resource.attributes) },
        scopeSpans: [...scopes.values()].map((scoped) => {
          const scope = scoped[0]!.instrumentationScope;
          return {
            scope: { name: scope.name, ...(scope.version ? { version: scope.version } : {}) },
            spans: scoped.map((span) => this.#span(span)),
            ...(scope.schemaUrl ? { schemaUrl: scope.schemaUrl } : {}),
          };
        }),
        ...(first.resource.schemaUrl ? { schemaUrl: first.resource.schemaUrl } : {}),
      };
    });
    return Buffer.from(JSON.stringify({ resourceSpans }));
  }

  #span(span: ReadableSpan): Record<string, unknown> {
    const context = span.spanContext();
    const parent = span.parentSpanContext;
    const traceState = context.traceState?.serialize();
    return {
      traceId: context.traceId,
      spanId: context.spanId,
      ...(traceState ? { traceState } : {}),
      ...(parent?.spanId ? { parentSpanId: parent.spanId } : {}),
      flags: flags(context.traceFlags, parent?.isRemote),
      name: span.name,
      kind: span.kind + 1,
      startTimeUnixNano: nanos(span.startTime),
      endTimeUnixNano: nanos(span.endTime),
      attributes: this.#attributes(span.attributes),
      droppedAttributesCount: span.droppedAttributesCount,
      events: span.events.map((event) => ({
        timeUnixNano: nanos(event.time),
        name: event.name,
        attributes: this.#attributes(event.attributes ?? {}),
        droppedAttributesCount: event.droppedAttributesCount ?? 0,
      })),
      droppedEventsCount: span.droppedEventsCount,
      links: span.links.map((link) => {
        const linkState = link.context.traceState?.serialize();
        return {
          traceId: link.context.traceId,
          spanId: link.context.spanId,
          ...(linkState ? { traceState: linkState } : {}),
          attributes: this.#attributes(link.attributes ?? {}),
          droppedAttributesCount: link.droppedAttributesCount ?? 0,
          flags: flags(link.context.traceFlags, link.context.isRemote),
        };
      }),
      droppedLinksCount: span.droppedLinksCount,
      status: {
        code: span.status.code,
        ...(span.status.message ? { message: span.status.message } : {}),
      },
    };
  }

  #attributes(attributes: Attributes): { key: string; value: JsonValue }[] {
    const list: { key: string; value: JsonValue }[] = [];
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      const double =
        typeof value === 'number'
          ? this.#numbers.isDouble(key, value)
          : Array.isArray(value) && this.#numbers.isDoubleArray(key, value);
      list.push({ key, value: anyValue(value, double) });
    }
    return list;
  }
}

function anyValue(value: AttributeValue, double: boolean): JsonValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') {
    // JSON has no NaN or Infinity: OTLP/JSON spells them as strings.
    if (double || !Number.isInteger(value) || Math.abs(value) >= 2 ** 63) {
      return { doubleValue: Number.isFinite(value) ? value : (String(value) as unknown as number) };
    }
    // Beyond 2^53 a JSON number loses digits: int64 goes as a decimal string then.
    return { intValue: Number.isSafeInteger(value) ? value : BigInt(value).toString() };
  }
  return {
    arrayValue: {
      values: (value as unknown[]).map((item) =>
        item === null || item === undefined ? {} : anyValue(item as AttributeValue, double),
      ),
    },
  };
}

function nanos(time: HrTime): string {
  return (BigInt(time[0]) * 1_000_000_000n + BigInt(time[1])).toString();
}

function flags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | FLAG_HAS_IS_REMOTE | (isRemote === true ? FLAG_IS_REMOTE : 0);
}
