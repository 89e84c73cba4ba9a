import { counted } from '../../errors/index.js';
import { SpanStatusCode, type AttributeValue, type HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * Makes text from input safe on a terminal line: control characters escaped, long text cut (the
 * sidecar's `printable`, given by the composition, which this room does not import).
 */
export type Escape = (text: string, maxLength?: number) => string;

/** Longest attribute value shown in full; longer ones are cut and say by how much. */
const MAX_VALUE_CHARS = 200;

/**
 * One span as a block of text for a terminal (the console exporter's): a first line with the
 * name, duration, status and ids, then one line per attribute, then one per span event with its
 * time from the span's start and its attributes, then a blank line. Every name and value is
 * passed through `printable` (or quoted as JSON, with what JSON leaves alone escaped too): spans
 * carry input (tool names, arguments), and a control character must not move the terminal's
 * cursor or forge a line.
 */
export function formatSpan(span: ReadableSpan, printable: Escape): string {
  const context = span.spanContext();
  const parent = span.parentSpanContext?.spanId;
  const status = statusText(span.status.code, span.status.message);
  const lines = [
    `${printable(span.name)}  ${durationText(span.duration)}  ${status}  trace=${context.traceId} span=${context.spanId}${parent === undefined ? '' : ` parent=${parent}`}`,
  ];
  for (const [key, value] of Object.entries(span.attributes)) {
    if (value !== undefined) lines.push(`  ${printable(key)}=${valueText(value)}`);
  }
  for (const event of span.events) {
    const at = durationText(difference(event.time, span.startTime));
    const attributes = Object.entries(event.attributes ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${printable(key)}=${valueText(value!)}`)
      .join(' ');
    lines.push(
      `  event +${at} ${printable(event.name)}${attributes === '' ? '' : ` ${attributes}`}`,
    );
  }
  if (span.droppedEventsCount > 0)
    lines.push(`  (${counted(span.droppedEventsCount, 'event')} dropped)`);
  return `${lines.join('\n')}\n\n`;
}

function statusText(code: SpanStatusCode, message: string | undefined): string {
  if (code === SpanStatusCode.OK) return 'OK';
  if (code === SpanStatusCode.ERROR) {
    return message === undefined || message === '' ? 'ERROR' : `ERROR ${valueText(message)}`;
  }
  return 'UNSET';
}

function valueText(value: AttributeValue): string {
  if (typeof value === 'string') {
    const kept = value.length > MAX_VALUE_CHARS ? value.slice(0, MAX_VALUE_CHARS) : value;
    const cut = kept === value ? '' : `…(+${value.length - MAX_VALUE_CHARS} chars)`;
    return `${quoted(kept)}${cut}`;
  }
  if (Array.isArray(value)) {
    const text = quoted(value);
    return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
  }
  return String(value);
}

/**
 * `value` as JSON, with what JSON leaves as it is but a terminal would act on (C1 controls, line
 * separators, bidirectional overrides) escaped as well.
 */
function quoted(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function difference(later: HrTime, earlier: HrTime): HrTime {
  let seconds = later[0] - earlier[0];
  let nanos = later[1] - earlier[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
}

/** `830 µs`, `12.3 ms`, `4.21 s`: three figures at most. */
function durationText([seconds, nanos]: HrTime): string {
  const micros = seconds * 1e6 + nanos / 1e3;
  if (micros < 1000) return `${Math.max(0, Math.round(micros))} µs`;
  if (micros < 1e6) return `${Number((micros / 1000).toPrecision(3))} ms`;
  return `${(micros / 1e6).toFixed(micros < 1e7 ? 2 : 1)} s`;
}
