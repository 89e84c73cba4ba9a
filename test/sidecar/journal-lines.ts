import { createHash } from 'node:crypto';

/** Options for {@link journalLines}. */
export interface JournalOptions {
  /** How many tool calls. */
  calls: number;
  /** Index of the first call, so two parts of one journal get distinct ids. @default 0 */
  firstCall?: number;
  /** Stream events per call (alternating progress and partial). @default 10 */
  streamEvents?: number;
  /** Session id on every line. @default 's1' */
  sessionId?: string;
  /** Leave `event_id`/`parent_id` out, as some Nexus journals do. @default false */
  withoutEventIds?: boolean;
  /**
   * Nest every call under the previous one (`parent_id` = its invoke), so calls form one trace.
   * @default false
   */
  nested?: boolean;
  /** Leave the result of the last call out, so it stays open. @default false */
  leaveLastOpen?: boolean;
}

/** A deterministic 32-hex event id for `name`. */
export function eventIdFor(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 32);
}

/** The invoke event id of call `index`. */
export function invokeIdOf(index: number): string {
  return eventIdFor(`invoke-${index}`);
}

const BASE_TIME_MS = Date.UTC(2026, 4, 1, 12, 0, 0);

function timestamp(call: number, step: number): string {
  const iso = new Date(BASE_TIME_MS + call * 20 + step).toISOString();
  return `${iso.slice(0, 23)}${String(call % 1000).padStart(3, '0')}${String(step).padStart(3, '0')}Z`;
}

/**
 * NDJSON envelope lines (the Nexus journal keys) of `calls` tool calls: `tool.invoke`, then
 * `streamEvents` stream events, then `tool.result`, about 320 bytes a line. The same options give
 * the same bytes, so two runs over them must give identical spans.
 */
export function journalLines(options: JournalOptions): string[] {
  const streamEvents = options.streamEvents ?? 10;
  const sessionId = options.sessionId ?? 's1';
  const first = options.firstCall ?? 0;
  const lines: string[] = [];
  for (let index = first; index < first + options.calls; index += 1) {
    const callId = `tc_${index}`;
    const invokeId = invokeIdOf(index);
    const parentInvoke = options.nested === true && index > first ? invokeIdOf(index - 1) : '';
    const base = (step: number, type: string, eventId: string, parentId: string) => ({
      seq: index * 100 + step,
      ts: timestamp(index, step),
      type,
      ...(options.withoutEventIds === true ? {} : { event_id: eventId, parent_id: parentId }),
      source: 'search',
      session_id: sessionId,
      agent_id: 'a1',
      depth: 0,
    });
    lines.push(
      JSON.stringify({
        ...base(0, 'tool.invoke', invokeId, parentInvoke),
        payload: {
          _schema_version: 1,
          ID: callId,
          Name: 'search',
          Arguments: { query: `thing ${index}` },
          TurnID: 't1',
        },
      }),
    );
    for (let step = 1; step <= streamEvents; step += 1) {
      const progress = step % 2 === 1;
      lines.push(
        JSON.stringify({
          ...base(
            step,
            progress ? 'tool.stream.progress' : 'tool.stream.partial',
            eventIdFor(`${index}-${step}`),
            invokeId,
          ),
          payload: {
            tool_name: 'search',
            tool_id: callId,
            turn_id: 't1',
            sequence: step,
            ...(progress ? { progress: step / streamEvents } : {}),
            payload: progress ? `step ${step}` : `chunk ${step} of ${index}`,
          },
        }),
      );
    }
    if (options.leaveLastOpen === true && index === first + options.calls - 1) continue;
    lines.push(
      JSON.stringify({
        ...base(streamEvents + 1, 'tool.result', eventIdFor(`result-${index}`), invokeId),
        payload: {
          _schema_version: 1,
          ID: callId,
          Name: 'search',
          Output: `found ${index}`,
          Error: '',
          TurnID: 't1',
        },
      }),
    );
  }
  return lines;
}

/** {@link journalLines} joined into one NDJSON text, every line ending with `\n`. */
export function journalText(options: JournalOptions): string {
  return `${journalLines(options).join('\n')}\n`;
}

/** Fields of one hand-written envelope line; the rest get fixed defaults. */
export interface EventLineFields {
  type: string;
  eventId: string;
  parentId?: string;
  seq: number;
  payload?: unknown;
}

/** One envelope line with the fields given, for journals written by hand in a test. */
export function eventLine(fields: EventLineFields): string {
  return JSON.stringify({
    seq: fields.seq,
    ts: timestamp(0, fields.seq),
    type: fields.type,
    event_id: fields.eventId,
    parent_id: fields.parentId ?? '',
    session_id: 'session-1',
    agent_id: 'agent-1',
    depth: 0,
    payload: fields.payload,
  });
}

/** The `tool.invoke`, `tool.result` (unless `open`) lines of a call without stream events. */
export function callLines(
  callId: string,
  options: { seq: number; parentId?: string; open?: boolean },
): string[] {
  const invokeId = eventIdFor(`invoke-${callId}`);
  const lines = [
    eventLine({
      type: 'tool.invoke',
      eventId: invokeId,
      seq: options.seq,
      ...(options.parentId === undefined ? {} : { parentId: options.parentId }),
      payload: { id: callId, name: 'search', arguments: {} },
    }),
  ];
  if (options.open !== true) lines.push(resultLine(callId, options.seq + 1));
  return lines;
}

/** The `tool.result` line of a call made by {@link callLines}. */
export function resultLine(callId: string, seq: number): string {
  return eventLine({
    type: 'tool.result',
    eventId: eventIdFor(`result-${callId}`),
    parentId: eventIdFor(`invoke-${callId}`),
    seq,
    payload: { id: callId, name: 'search', output: 'done' },
  });
}
