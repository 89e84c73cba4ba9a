import { Buffer } from 'node:buffer';
import type { Causation, EventInit } from '../bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../events/index.js';
import {
  isDecodeFailure,
  rejectLine,
  type DecodeFailure,
  type DecodeResult,
  type DecodeSuccess,
} from './decode-result.js';
import { describeValue } from '../errors/index.js';
import type { DroppedField } from './dropped-field.js';
import { findJsonProblem, formatJsonPath } from './find-json-problem.js';
import { parseRfc3339Nano } from './rfc3339.js';
import { isCount, normalizePayload } from './payload-fields.js';
import { isValidTraceparent } from './traceparent.js';
import { isWellFormed } from './well-formed.js';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES } from './wire-limits.js';

/** Options for {@link decodeEnvelope}. */
export interface DecodeOptions {
  /**
   * Longest line accepted, in UTF-8 bytes; longer ones are rejected as `too_large` before they
   * are parsed. The {@link LineSplitter} applies its own limit earlier; this one protects callers
   * that hand lines over directly (an HTTP body split in memory, a test).
   * @default DEFAULT_MAX_LINE_BYTES (1 MiB)
   */
  maxLineBytes?: number;
  /**
   * Deepest nesting of objects and arrays accepted, the envelope itself being level 1; deeper
   * lines are rejected as `too_deep`.
   * @default DEFAULT_MAX_DEPTH (64)
   */
  maxDepth?: number;
}

/** `fatal` makes malformed UTF-8 throw instead of turning into U+FFFD; a leading BOM is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });
const BYTE_ORDER_MARK = 0xfeff;
const MAX_MESSAGE_DETAIL = 200;
/**
 * Where one line's dropped fields are collected: decoding is synchronous, so one list serves
 * every line, and a line with none (nearly all) allocates nothing for them.
 */
const scratch: DroppedField[] = [];

/**
 * Decodes one NDJSON envelope line (the Nexus journal keys `seq`, `ts`, `type`, `event_id`,
 * `source`, `parent_id`, `parent_seq`, `session_id`, `agent_id`, `depth`, `payload`, plus an
 * optional W3C `traceparent`) into an `EventInit` for `bus.emitEvent`. It never throws for bad
 * input: it returns `{ ok: false, reason, message }` with a stable reason and a message naming the
 * field and what was wrong.
 *
 * Required: `type` (a non-empty string) and `ts` (RFC 3339, kept to the nanosecond in
 * `timeUnixNano`). Everything else may be absent, as in real Nexus journals: a missing `event_id`
 * leaves `event.id` unset (the bus assigns one; `hasEventId` says so), and every causation field
 * is set explicitly (`parentId` `''`, `parentSeq` 0, `sessionId`/`agentId` `''`, `depth` 0 when
 * absent) so the receiving bus never fills one from its own dispatch context. `seq` becomes
 * `causation.sequence` when present. An envelope field that is `null` counts as absent (a `null`
 * payload stays `null`); unknown keys (Go's `trace_id`, `side_effect`, `vetoed`, ...) are ignored.
 *
 * Only what identifies the event rejects its line when it has the wrong type: `type`, `ts`,
 * `seq`, `parent_seq`, `event_id`, `parent_id`, `session_id`, `agent_id`, and the payload fields
 * that pair it with its span (a tool call's `id` and a `tool.invoke`'s `name`, a stream event's
 * `tool_id`, an `llm.*` request id, a `subagent.*` spawn id). Any other field of the wrong type
 * (`depth`, `source`, a tool call's `arguments`, a token count) is left out and listed in
 * `droppedFields`, and the event is decoded without it; where the meaning is plain the value is
 * read instead (a number of tokens where a usage object belongs is the total).
 *
 * Payloads are turned into the typed payloads of the events module here, once, so the tracer
 * reads one spelling: `tool.invoke` and `tool.result` become `ToolCall`/`ToolResult`, and agent
 * events (`io.session.*`, `agent.turn.*`, `llm.*`, `subagent.*`) their camelCase payload types
 * (keeping only what tracing reads), each from the camelCase, the Go (`ID`, `TurnID`) or the
 * snake_case (`turn_id`, `session_id`) field names; `tool.stream.*` payloads, whose keys are the
 * seed's snake_case in every implementation, are type-checked and pass through uncopied; other
 * payloads pass through as parsed (an absent payload stays `undefined`).
 *
 * Hostile input is rejected, never half-accepted: invalid UTF-8 (bytes go through a fatal
 * `TextDecoder`), unpaired surrogates, nesting deeper than `maxDepth`, and, anywhere in the line,
 * a `__proto__` key or a `constructor`/`prototype` key holding an object or array
 * (`hostile_key`: the shapes through which `Object.assign` or a deep merge reaches a prototype;
 * rejecting rather than stripping keeps a payload from being silently changed, and a scalar
 * `constructor` or `prototype` argument still passes). An invalid `traceparent` is not a
 * rejection: it is dropped and reported as the `bad_traceparent` warning.
 */
export function decodeEnvelope(line: string | Uint8Array, options?: DecodeOptions): DecodeResult {
  const maxLineBytes = options?.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH;

  let text: string;
  if (typeof line === 'string') {
    // UTF-8 needs at least one byte per UTF-16 unit and at most three.
    if (
      line.length > maxLineBytes ||
      (line.length * 3 > maxLineBytes && Buffer.byteLength(line) > maxLineBytes)
    ) {
      return lineTooLarge(Buffer.byteLength(line), maxLineBytes);
    }
    if (!isWellFormed(line)) {
      return rejectLine('lone_surrogate', 'the line has an unpaired UTF-16 surrogate');
    }
    text = line.charCodeAt(0) === BYTE_ORDER_MARK ? line.slice(1) : line;
  } else if (line instanceof Uint8Array) {
    if (line.byteLength > maxLineBytes) return lineTooLarge(line.byteLength, maxLineBytes);
    try {
      text = utf8.decode(line);
    } catch {
      return rejectLine('invalid_utf8', 'the line is not valid UTF-8');
    }
  } else {
    return rejectLine('wrong_type', `line must be a string or a Uint8Array, got ${typeof line}`);
  }

  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return rejectLine('not_json', `the line is not JSON: ${shorten(detail)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return rejectLine('not_object', `the line must be a JSON object, got ${describeValue(value)}`);
  }
  // Only a `\uXXXX` escape can put an unpaired surrogate into a string parsed from valid UTF-8.
  const problem = findJsonProblem(value, maxDepth, text.includes('\\u'));
  if (problem !== undefined) {
    return rejectLine(problem.reason, `${formatJsonPath(problem.path)}: ${problem.detail}`);
  }
  return decodeRecord(value as Record<string, unknown>);
}

function decodeRecord(record: Record<string, unknown>): DecodeResult {
  const given = record.type;
  if (isAbsent(given)) return missingField('type');
  if (typeof given !== 'string' || given === '') {
    return wrongType('type', 'a non-empty string', given);
  }
  const type = internedType(given);

  const ts = record.ts;
  if (isAbsent(ts)) return missingField('ts');
  if (typeof ts !== 'string') return wrongType('ts', 'an RFC 3339 timestamp string', ts);
  const timeUnixNano = parseRfc3339Nano(ts);
  if (timeUnixNano === undefined) {
    return rejectLine(
      'bad_timestamp',
      `ts must be an RFC 3339 timestamp such as "2026-05-01T12:00:00.123456789Z", got ${describeValue(ts)}`,
    );
  }

  const seq = record.seq;
  if (!isAbsent(seq) && !isCount(seq)) return wrongType('seq', 'a non-negative integer', seq);
  const parentSeq = record.parent_seq;
  if (!isAbsent(parentSeq) && !isCount(parentSeq)) {
    return wrongType('parent_seq', 'a non-negative integer', parentSeq);
  }
  // Fields of another type that do not identify the event are dropped: see DroppedField.
  const dropped = scratch;
  dropped.length = 0;
  let depth = record.depth;
  if (!isAbsent(depth) && !isCount(depth)) {
    dropped.push(envelopeField('depth', 'a non-negative integer', depth));
    depth = undefined;
  }
  const eventId = record.event_id;
  if (!isAbsent(eventId) && typeof eventId !== 'string') {
    return wrongType('event_id', 'a string', eventId);
  }
  let source = record.source;
  if (!isAbsent(source) && typeof source !== 'string') {
    dropped.push(envelopeField('source', 'a string', source));
    source = undefined;
  }
  const parentId = record.parent_id;
  if (!isAbsent(parentId) && typeof parentId !== 'string') {
    return wrongType('parent_id', 'a string', parentId);
  }
  const sessionId = record.session_id;
  if (!isAbsent(sessionId) && typeof sessionId !== 'string') {
    return wrongType('session_id', 'a string', sessionId);
  }
  const agentId = record.agent_id;
  if (!isAbsent(agentId) && typeof agentId !== 'string') {
    return wrongType('agent_id', 'a string', agentId);
  }

  const payload = normalizePayload(type, record.payload, dropped);
  if (payload !== record.payload && isDecodeFailure(payload)) return payload;

  const causation: Partial<Causation> = {
    parentId: typeof parentId === 'string' ? parentId : '',
    parentSeq: typeof parentSeq === 'number' ? parentSeq : 0,
    sessionId: typeof sessionId === 'string' ? sessionId : '',
    agentId: typeof agentId === 'string' ? agentId : '',
    depth: typeof depth === 'number' ? depth : 0,
  };
  if (typeof seq === 'number') causation.sequence = seq;
  const event: EventInit = { type, payload, timeUnixNano, causation };
  const hasEventId = typeof eventId === 'string' && eventId !== '';
  if (hasEventId) event.id = eventId;
  if (typeof source === 'string' && source !== '') event.source = source;

  const decoded: DecodeSuccess = { ok: true, event, hasEventId };
  if (dropped.length > 0) decoded.droppedFields = dropped.slice();
  const traceparent = record.traceparent;
  if (!isAbsent(traceparent)) {
    if (isValidTraceparent(traceparent)) decoded.traceparent = traceparent;
    else decoded.warnings = ['bad_traceparent'];
  }
  return decoded;
}

/**
 * The tool event types as the constants themselves: `JSON.parse` makes a new string for every
 * line's `type`, and every later comparison with a constant (the subscriber makes several per
 * event) then compares characters; with the constant it compares one pointer.
 */
function internedType(type: string): string {
  switch (type) {
    case TOOL_STREAM_PROGRESS:
      return TOOL_STREAM_PROGRESS;
    case TOOL_STREAM_PARTIAL:
      return TOOL_STREAM_PARTIAL;
    case TOOL_INVOKE:
      return TOOL_INVOKE;
    case TOOL_RESULT:
      return TOOL_RESULT;
    default:
      return type;
  }
}

function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

function envelopeField(field: string, expected: string, value: unknown): DroppedField {
  return { field, message: `${field} must be ${expected}, got ${describeValue(value)}` };
}

function missingField(field: string): DecodeFailure {
  return rejectLine('missing_field', `${field} is missing`);
}

function wrongType(field: string, expected: string, value: unknown): DecodeFailure {
  return rejectLine('wrong_type', `${field} must be ${expected}, got ${describeValue(value)}`);
}

/** What is wrong with a line longer than the limit (the sidecar's splitter says it in these words). */
export function lineTooLarge(byteLength: number, maxLineBytes: number): DecodeFailure {
  return rejectLine(
    'too_large',
    `the line is ${byteLength} bytes, over the limit of ${maxLineBytes} bytes`,
  );
}

function shorten(text: string): string {
  return text.length > MAX_MESSAGE_DETAIL ? `${text.slice(0, MAX_MESSAGE_DETAIL)}…` : text;
}
