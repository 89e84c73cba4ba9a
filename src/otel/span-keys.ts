import type { TraceBy } from './trace-by.js';
import { prefixedHasher } from './stable-hash.js';

/*
 * Every identity key the subscriber builds, and every id derived from one. Parts are joined with
 * NUL, which no id, session or tool name contains, so two different part lists never make the
 * same key.
 *
 * Some of these keys are hashed into span and trace ids (`DerivedIdGenerator`), which must come
 * out the same when a sidecar restarts and replays its journal: a changed template changes the
 * ids exported after an upgrade, and every span sent before it turns into a duplicate with
 * another id. test/otel/span-keys.test.ts pins the ids a fixed journal produces; a change here
 * that moves them is a change users see, to be reviewed and said in the CHANGELOG.
 */

const SEPARATOR = '\u0000';

/** Trace ids are hashed from their key under this prefix, so a trace and a span id of one key differ. */
const hashTraceId = prefixedHasher(`trace${SEPARATOR}`);
/** Span ids are hashed from their key under this prefix. */
const hashSpanId = prefixedHasher(`span${SEPARATOR}`);

/** The 32-hex-character trace id derived from `key`. */
export function derivedTraceId(key: string): string {
  return hashTraceId(key, 4);
}

/** The 16-hex-character span id derived from `key`. */
export function derivedSpanId(key: string): string {
  return hashSpanId(key, 2);
}

/**
 * A tool call's identity when its events carry no event ids: session and tool call id (Nexus
 * reuses `tc_1` in every session). `''` when the call has no id. A span key when the call has
 * no `tool.invoke` id, and the key ended and held calls are found by.
 */
export function callKey(sessionId: string, callId: string): string {
  return callId === '' ? '' : `${sessionId}${SEPARATOR}${callId}`;
}

/**
 * What a root span's trace id is derived from, per `traceBy`: the span's own key (one trace per
 * call), the session (one trace per session, when the span has one), else the causal root the
 * ancestor walk reached.
 */
export function traceKey(
  traceBy: TraceBy,
  sessionId: string,
  selfKey: string,
  rootId: string,
): string {
  if (traceBy === 'call') return `call${SEPARATOR}${selfKey}`;
  if (traceBy === 'session' && sessionId !== '') return `session${SEPARATOR}${sessionId}`;
  return `root${SEPARATOR}${rootId}`;
}

/** The span key of a session's root span (`traceBy: 'session'`). */
export function sessionRootKey(sessionId: string): string {
  return `session${SEPARATOR}${sessionId}`;
}

/**
 * The span key of an agent span whose start event has no stable id: its kind, session, the id
 * its events name it by (turn, request or spawn id, `''` when none) and its start event's time.
 */
export function agentSpanKey(
  kind: string,
  sessionId: string,
  key: string,
  startUnixNano: bigint,
): string {
  return `${kind}${SEPARATOR}${sessionId}${SEPARATOR}${key}${SEPARATOR}${startUnixNano}`;
}

/** Why an in-flight snapshot was taken: while its span runs, or as its last, at shutdown. */
export type SnapshotState = 'running' | 'shutdown';

/**
 * The span key of in-flight snapshot number `update` of the span whose span id is `spanId`: it
 * holds what the snapshot shows (how many stream events, where it ends, why it was taken), so a
 * replay that shows the same re-exports the same snapshot, and one that shows more gets an id of
 * its own: one span id, one content.
 */
export function inflightKey(
  spanId: string,
  update: number,
  streamEvents: number,
  endUnixNano: bigint,
  state: SnapshotState,
): string {
  return [
    'inflight',
    spanId,
    String(update),
    String(streamEvents),
    String(endUnixNano),
    state,
  ].join(SEPARATOR);
}

/**
 * The span key of the snapshot an agent span (turn, chat, sub-agent, session) still open at
 * shutdown is exported as, ending at `endUnixNano`: another cut of the same span that got
 * further is another snapshot.
 */
export function agentCutKey(spanId: string, endUnixNano: bigint): string {
  return `cut${SEPARATOR}${spanId}${SEPARATOR}${endUnixNano}`;
}

/** The key a tool's description, declared by an `llm.request`, is remembered under. */
export function toolDescriptionKey(sessionId: string, toolName: string): string {
  return `${sessionId}${SEPARATOR}${toolName}`;
}
