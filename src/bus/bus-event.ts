/**
 * Where an event came from in the causal chain. The bus fills every field: values the caller
 * sets win, `parentId`/`parentSeq` come from the event whose handler is running, and
 * `sessionId`/`agentId`/`depth` from the innermost {@link EventBus.withCausation} scope.
 */
export interface Causation {
  /** Id of the event whose handler emitted this one; `''` for a root event. */
  parentId: string;
  /** Bus sequence of that parent event; `0` for a root event. */
  parentSeq: number;
  /** Conversation or session the event belongs to. */
  sessionId: string;
  /** Agent that emitted the event. */
  agentId: string;
  /** Monotonic per bus, from 1, never reused. */
  sequence: number;
  /** Nesting depth: 0 for the top-level agent, 1 for a sub-agent it started, and so on. */
  depth: number;
}

/**
 * The scope-level part of {@link Causation} that {@link EventBus.withCausation} and
 * {@link EventBus.setDefaultCausation} carry to everything emitted inside them.
 */
export interface CausationContext {
  sessionId?: string;
  agentId?: string;
  depth?: number;
}

/** One event as every subscriber sees it. */
export interface BusEvent<T = unknown> {
  /** Event type, for example `tool.invoke`. */
  type: string;
  /** 32 lowercase hex characters, unique per event. */
  id: string;
  /** Wall-clock time of the event (millisecond precision). */
  timestamp: Date;
  /** Nanoseconds since the Unix epoch; spans start and end at this time. */
  timeUnixNano: bigint;
  /** Name of the plugin or component that emitted the event. */
  source?: string;
  payload: T;
  causation: Causation;
}

/**
 * A pre-built event for {@link EventBus.emitEvent}. Missing fields are filled by the bus;
 * fields that are set are kept as they are (caller-set causation fields win).
 */
export interface EventInit<T = unknown> {
  type: string;
  payload: T;
  id?: string;
  /** Either `timestamp` or `timeUnixNano` may be given; when both are, `timeUnixNano` wins. */
  timestamp?: Date;
  timeUnixNano?: bigint;
  source?: string;
  causation?: Partial<Causation>;
}

/** Extra fields for {@link EventBus.emit}: everything of {@link EventInit} but type and payload. */
export type EmitOptions = Omit<EventInit, 'type' | 'payload'>;
