import type { BusEvent, Causation, CausationContext, EmitOptions, EventInit } from './bus-event.js';
import { nowUnixNano, unixNanoFromDate } from './clock.js';
import { DispatchedEvent } from './dispatched-event.js';
import type { DispatchScope, ScopeRunner } from './dispatch-scope.js';
import { currentFrame, runInFrame, type DispatchFrame } from './dispatch-context.js';
import { newEventId } from './event-id.js';
import { isFrameless } from './frameless-handler.js';
import { quickPathOf, type QuickPath } from './quick-path.js';
import { EventRing, type EventRingStats } from './event-ring.js';
import { CORE_ERROR, type CoreErrorPayload } from './core-error.js';
import type { EventHandler, SubscribeOptions } from './subscribe-options.js';
import type { VetoablePayload, VetoDecision } from './veto.js';

/** Options for {@link EventBus}. */
export interface EventBusOptions {
  /**
   * How many recent events {@link EventBus.subscribeAllReplay} replays. The ring is off unless
   * asked for: a bus that keeps events nobody replays keeps their payloads alive (80 tool
   * results of 20 MB were 1.6 GB).
   * @default 0
   */
  ringSize?: number;
  /**
   * The most bytes (estimated: UTF-8 length of strings, `byteLength` of binary data, the JSON
   * size of anything else from a bounded walk) the replay ring holds; past it the oldest events
   * go. Only with `ringSize` above 0.
   * @default 8 MiB
   */
  ringBytes?: number;
  /**
   * The largest payload the ring holds as it is; a larger one is held by its size and a short
   * preview ({@link ElidedPayload}), so a replay shows the event without the ring keeping it.
   * @default 64 KiB
   */
  ringPayloadBytes?: number;
  /**
   * Called for every handler that throws or rejects, besides the `core.error` event.
   * An `onError` that throws itself is ignored.
   */
  onError?: (error: unknown, event: BusEvent) => void;
  /**
   * Whether handlers run inside a dispatch frame (an `AsyncLocalStorage` scope), so that what they
   * emit, synchronously or asynchronously later, gets the dispatched event as its parent and
   * inherits its session, agent and depth. A bus whose events all arrive with their causation
   * already set, such as a sidecar replaying a journal onto a bus of its own, can turn it off:
   * each dispatch then costs no frame, and with no frame ever entered, promises do not pay for
   * `AsyncLocalStorage` either. Without frames, an event emitted from a handler gets no parent
   * from the bus (set `causation` on it); `withCausation` scopes work as always.
   * @default true
   */
  dispatchFrames?: boolean;
}

/** The part of {@link Causation} that is known before an event exists. */
export type CurrentCausation = Omit<Causation, 'sequence'>;

interface Subscription {
  readonly handler: EventHandler<never>;
  readonly priority: number;
  readonly order: number;
  readonly filter: ((event: BusEvent<never>) => boolean) | undefined;
  readonly source: string;
  /** Whether the handler runs inside a dispatch frame (all but the ones marked frameless). */
  readonly framed: boolean;
  /** What the handler can do without the event object (see {@link QuickPath}). */
  readonly quick: QuickPath | undefined;
  active: boolean;
  /** Set while a replaying subscriber catches up: live events wait here. */
  backlog: BusEvent[] | undefined;
}

/** The handlers of one event type in delivery order, and whether any of them needs a frame. */
interface DispatchList {
  readonly subscriptions: readonly Subscription[];
  readonly framed: boolean;
}

const DEFAULT_RING_SIZE = 0;
const DEFAULT_RING_BYTES = 8 * 1024 * 1024;
const DEFAULT_RING_PAYLOAD_BYTES = 64 * 1024;

/** What {@link EventBus.stats} reports. */
export type EventBusStats = EventRingStats;
const EMPTY: readonly Subscription[] = [];
const NONE: DispatchList = { subscriptions: EMPTY, framed: false };

/** See {@link emitQuiet}; set by the class's static block. */
let emitWithoutEvent: (bus: EventBus, type: string, payload: unknown, options: EmitOptions) => void;
/** See {@link emitVetoableQuiet}; set by the class's static block. */
let emitVetoableWithoutEvent: (
  bus: EventBus,
  type: string,
  payload: unknown,
  options: EmitOptions,
) => VetoDecision;

/** See {@link emitAnswered}; set by the class's static block, which can reach its private parts. */
let emitWithAnswer: <T, R>(
  bus: EventBus,
  type: string,
  payload: T,
  options: EmitOptions,
  answer: (event: BusEvent<T>) => R,
) => { event: BusEvent<T>; value?: R; error?: unknown };

/**
 * An in-process event bus whose events carry causation. Dispatch is synchronous: `emit` returns
 * after every handler ran. Work a handler starts asynchronously (a promise, a timer,
 * `setImmediate`, an async generator) still emits with the handler's event as its parent.
 * A handler that throws or rejects never stops the others; the bus reports it as `core.error`.
 */
export class EventBus {
  static {
    emitWithAnswer = (bus, type, payload, options, answer) =>
      bus.#emitAnswered(type, payload, options, answer);
    emitWithoutEvent = (bus, type, payload, options) => bus.#emitQuiet(type, payload, options);
    emitVetoableWithoutEvent = (bus, type, payload, options) =>
      bus.#emitVetoableQuiet(type, payload, options);
  }

  readonly #typed = new Map<string, Subscription[]>();
  #all: Subscription[] = [];
  /** Merged, sorted handler lists per type; rebuilt lazily after any (un)subscribe. */
  #lists = new Map<string, DispatchList>();
  /**
   * The sorted list of `#all`, which is every type's list while no one subscribed to a type (a
   * sidecar's bus, with only the tracing subscriber): no lookup by type per event then.
   */
  #allSorted: DispatchList | undefined;
  readonly #ring: EventRing;
  readonly #onError: EventBusOptions['onError'];
  readonly #dispatchFrames: boolean;
  /**
   * Whether this bus ever entered a frame: with `dispatchFrames` off and no `withCausation` yet,
   * no frame of this bus can be current, so an emit need not look for one.
   */
  #framesEntered: boolean;
  #default: CausationContext = {};
  #sequence = 0;
  #order = 0;
  #pending = 0;
  #drainWaiters: (() => void)[] = [];
  #scopes: readonly DispatchScope[] = [];

  constructor(options: EventBusOptions = {}) {
    const ringSize = options.ringSize ?? DEFAULT_RING_SIZE;
    if (!Number.isInteger(ringSize) || ringSize < 0) {
      throw new TypeError(`ringSize must be a non-negative integer, got ${String(ringSize)}`);
    }
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw new TypeError('onError must be a function');
    }
    if (options.dispatchFrames !== undefined && typeof options.dispatchFrames !== 'boolean') {
      throw new TypeError('dispatchFrames must be a boolean');
    }
    const ringBytes = checkByteLimit(options.ringBytes, 'ringBytes', DEFAULT_RING_BYTES);
    const ringPayloadBytes = checkByteLimit(
      options.ringPayloadBytes,
      'ringPayloadBytes',
      Math.min(DEFAULT_RING_PAYLOAD_BYTES, ringBytes),
    );
    this.#ring = new EventRing(ringSize, ringBytes, ringPayloadBytes);
    this.#onError = options.onError;
    this.#dispatchFrames = options.dispatchFrames ?? true;
    this.#framesEntered = this.#dispatchFrames;
  }

  /**
   * What the replay ring holds now and what it let go of: events dropped to stay within
   * `ringSize` and `ringBytes`, events held by size and preview only.
   */
  stats(): EventBusStats {
    return this.#ring.stats();
  }

  /** Emits an event of `type` and returns it once every handler ran. */
  emit<T>(type: string, payload: T, options?: EmitOptions): BusEvent<T> {
    checkType(type);
    const event = this.#build<T>(type, payload, options);
    this.#dispatch(event, false);
    return event;
  }

  /** Emits a pre-built event. Fields it sets, causation included, are kept as they are. */
  emitEvent<T>(init: EventInit<T>): BusEvent<T> {
    if (init === null || typeof init !== 'object') {
      throw new TypeError('init must be an event object');
    }
    checkType(init.type);
    const event = this.#build<T>(init.type, init.payload, init);
    this.#dispatch(event, false);
    return event;
  }

  /**
   * Emits a vetoable event. Handlers see `{ original, veto }` as the payload and veto by setting
   * `event.payload.veto = { vetoed: true, reason }`; the first veto stops dispatch.
   */
  emitVetoable<T>(type: string, payload: T, options?: EmitOptions): VetoDecision {
    checkType(type);
    const wrapped: VetoablePayload<T> = { original: payload, veto: { vetoed: false, reason: '' } };
    const event = this.#build(type, wrapped, options);
    this.#dispatch(event, true);
    const veto = event.payload.veto as Partial<VetoDecision> | undefined;
    return { vetoed: veto?.vetoed === true, reason: String(veto?.reason ?? '') };
  }

  /**
   * {@link emit}, with `answer` delivered as one more handler of this event only: where a
   * handler subscribed now with the default priority would run (after every handler of priority
   * 0 or less, before those of a higher one), inside the dispatch frame. What subscribing it
   * around the emit did, without changing the handler lists (each change made every type's list
   * be sorted again) or allocating a subscription and its unsubscribe per call.
   */
  #emitAnswered<T, R>(
    type: string,
    payload: T,
    options: EmitOptions,
    answer: (event: BusEvent<T>) => R,
  ): { event: BusEvent<T>; value?: R; error?: unknown } {
    checkType(type);
    const event = this.#build<T>(type, payload, options);
    this.#ring.push(event);
    const outcome: { event: BusEvent<T>; value?: R; error?: unknown } = { event };
    const list = this.#handlersFor(type).subscriptions;
    const deliver = (): void => {
      let index = 0;
      for (; index < list.length; index += 1) {
        const subscription = list[index]!;
        if (subscription.priority > 0) break;
        this.#deliverOne(subscription, event);
      }
      try {
        outcome.value = this.#inScope(answer as unknown as EventHandler, event) as unknown as R;
      } catch (error) {
        outcome.error = error;
      }
      for (; index < list.length; index += 1) this.#deliverOne(list[index]!, event);
    };
    if (this.#dispatchFrames) runInFrame(this.#frameFor(event), deliver);
    else deliver();
    return outcome;
  }

  /**
   * {@link emit} for an emitter that does not need the event back. When the one subscriber of
   * `type` has a quick path (see {@link QuickPath}), needs no frame, sees every event (no filter,
   * no backlog) and no ring keeps events, it is offered the event's parts first; only if it
   * declines is the event built and dispatched. The event's sequence number is taken either way,
   * so the events that follow are numbered as they would be.
   */
  #emitQuiet(type: string, payload: unknown, options: EmitOptions): void {
    checkType(type);
    if (this.#unheard(type)) {
      this.#sequence += 1;
      return;
    }
    const quick = this.#quickPathFor(type, options);
    if (quick !== undefined) {
      const time = options.timeUnixNano ?? nowUnixNano();
      const sequence = ++this.#sequence;
      if (offer(quick, type, payload, options.causation!, time)) return;
      this.#dispatch(this.#buildOffered(type, payload, options, time, sequence), false);
      return;
    }
    this.#dispatch(this.#build(type, payload, options), false);
  }

  /**
   * {@link emitVetoable} for an emitter that does not need the event back, with the quick path
   * of {@link EventBus.#emitQuiet}: a subscriber that takes the event there does not veto it.
   */
  #emitVetoableQuiet(type: string, payload: unknown, options: EmitOptions): VetoDecision {
    checkType(type);
    if (this.#unheard(type)) {
      this.#sequence += 1;
      return { vetoed: false, reason: '' };
    }
    const quick = this.#quickPathFor(type, options);
    if (quick === undefined) return this.emitVetoable(type, payload, options);
    const time = options.timeUnixNano ?? nowUnixNano();
    const sequence = ++this.#sequence;
    if (offer(quick, type, payload, options.causation!, time)) {
      return { vetoed: false, reason: '' };
    }
    const wrapped: VetoablePayload<unknown> = {
      original: payload,
      veto: { vetoed: false, reason: '' },
    };
    const event = this.#buildOffered(type, wrapped, options, time, sequence);
    this.#dispatch(event, true);
    const veto = event.payload.veto as Partial<VetoDecision> | undefined;
    return { vetoed: veto?.vetoed === true, reason: String(veto?.reason ?? '') };
  }

  /** Whether an event of `type` would reach no one: no subscriber, no ring to replay it. */
  #unheard(type: string): boolean {
    return this.#ring.capacity === 0 && this.#handlersFor(type).subscriptions.length === 0;
  }

  /**
   * The quick path an event of `type` emitted with `options` may take: that of the one subscriber
   * of `type`, when it has one, needs no frame, sees every event (no filter, no backlog), the
   * emitter gave the causal parent and no id or `Date` of its own, and no ring keeps events.
   */
  #quickPathFor(type: string, options: EmitOptions): QuickPath | undefined {
    if (
      options.causation?.parentId === undefined ||
      options.id !== undefined ||
      options.timestamp !== undefined ||
      this.#ring.capacity !== 0
    ) {
      return undefined;
    }
    const list = this.#handlersFor(type).subscriptions;
    if (list.length !== 1) return undefined;
    const only = list[0]!;
    const quick = only.quick;
    if (quick === undefined || only.framed || !only.active) return undefined;
    return only.filter === undefined && only.backlog === undefined ? quick : undefined;
  }

  /** The event a quick path declined, with the time and sequence number it was offered with. */
  #buildOffered<T>(
    type: string,
    payload: T,
    options: EmitOptions,
    time: bigint,
    sequence: number,
  ): BusEvent<T> {
    const causation = options.causation!;
    const event = this.#build(type, payload, {
      ...options,
      timeUnixNano: time,
      causation: { ...causation, sequence: causation.sequence ?? sequence },
    });
    // #build drew a sequence number of its own: the event keeps the one it was offered with.
    this.#sequence -= 1;
    return event;
  }

  #deliverOne(subscription: Subscription, event: BusEvent): void {
    if (!subscription.active) return;
    if (subscription.backlog !== undefined) subscription.backlog.push(event);
    else this.#deliver(subscription, event);
  }

  /** Subscribes `handler` to events of `type`. Returns a function that unsubscribes it. */
  subscribe<T = unknown>(
    type: string,
    handler: EventHandler<T>,
    options: SubscribeOptions<T> = {},
  ): () => void {
    checkType(type);
    return this.#add(type, handler, options, false);
  }

  /** Subscribes `handler` to every event. Returns a function that unsubscribes it. */
  subscribeAll(handler: EventHandler, options: SubscribeOptions = {}): () => void {
    return this.#add(undefined, handler, options, false);
  }

  /**
   * Subscribes `handler` to every event, first replaying the events still in the ring (oldest
   * first). Events emitted while the replay runs are delivered after it, in order: nothing
   * twice, nothing missed at the boundary.
   */
  subscribeAllReplay(handler: EventHandler, options: SubscribeOptions = {}): () => void {
    return this.#add(undefined, handler, options, true);
  }

  /**
   * Runs `fn` so that everything it emits, now or asynchronously later, carries these
   * causation fields (unless the emit sets them itself). Scopes nest; the innermost wins.
   */
  withCausation<R>(context: CausationContext, fn: () => R): R {
    checkContext(context, 'context');
    if (typeof fn !== 'function') throw new TypeError('fn must be a function');
    const frame = this.#frame();
    this.#framesEntered = true;
    return runInFrame(
      {
        bus: this,
        parentId: frame?.parentId ?? '',
        parentSeq: frame?.parentSeq ?? 0,
        sessionId: context.sessionId ?? frame?.sessionId,
        agentId: context.agentId ?? frame?.agentId,
        depth: context.depth ?? frame?.depth,
      },
      fn,
    );
  }

  /**
   * Adds a dispatch scope: every handler delivery asks it for a scope to run the handler in (see
   * {@link DispatchScope}). The OpenTelemetry subscriber uses it so a tool's code runs inside its
   * span without the bus knowing about OpenTelemetry. Returns a function that removes it. With
   * none added, delivery costs nothing extra.
   */
  addDispatchScope(scope: DispatchScope): () => void {
    if (typeof scope !== 'function') throw new TypeError('scope must be a function');
    this.#scopes = [...this.#scopes, scope];
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#scopes = this.#scopes.filter((entry) => entry !== scope);
    };
  }

  /** The causation an event emitted here and now would get (without its sequence). */
  currentCausation(): CurrentCausation {
    const frame = this.#frame();
    return {
      parentId: frame?.parentId ?? '',
      parentSeq: frame?.parentSeq ?? 0,
      sessionId: frame?.sessionId ?? this.#default.sessionId ?? '',
      agentId: frame?.agentId ?? this.#default.agentId ?? '',
      depth: frame?.depth ?? this.#default.depth ?? 0,
    };
  }

  /** Sets the causation fields used where no `withCausation` scope gives them. */
  setDefaultCausation(context: CausationContext): void {
    checkContext(context, 'context');
    this.#default = definedFields(context);
  }

  /**
   * Waits for the promises handlers returned that are still running, including ones started
   * while waiting. Resolves `true` once none is left, or `false` after `timeoutMs`.
   */
  drain(timeoutMs?: number): Promise<boolean> {
    if (this.#pending === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        resolve(true);
      };
      this.#drainWaiters.push(done);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#drainWaiters = this.#drainWaiters.filter((waiter) => waiter !== done);
          resolve(false);
        }, timeoutMs);
        timer.unref();
      }
    });
  }

  #frame(): DispatchFrame | undefined {
    if (!this.#framesEntered) return undefined;
    const frame = currentFrame();
    return frame !== undefined && frame.bus === this ? frame : undefined;
  }

  #build<T>(type: string, payload: T, init: EmitOptions | undefined): BusEvent<T> {
    const sequence = ++this.#sequence;
    const given = init?.causation;
    // An emitter that gives every inherited field (an adapter's stream events, a journal line)
    // needs no look-up of the current frame.
    const frame =
      given !== undefined &&
      given.parentId !== undefined &&
      given.parentSeq !== undefined &&
      given.sessionId !== undefined &&
      given.agentId !== undefined &&
      given.depth !== undefined
        ? undefined
        : this.#frame();
    const causation: Causation = {
      parentId: given?.parentId ?? frame?.parentId ?? '',
      parentSeq: given?.parentSeq ?? frame?.parentSeq ?? 0,
      sessionId: given?.sessionId ?? frame?.sessionId ?? this.#default.sessionId ?? '',
      agentId: given?.agentId ?? frame?.agentId ?? this.#default.agentId ?? '',
      sequence: given?.sequence ?? sequence,
      depth: given?.depth ?? frame?.depth ?? this.#default.depth ?? 0,
    };
    const timestamp = init?.timestamp;
    let timeUnixNano = init?.timeUnixNano;
    if (timeUnixNano === undefined) {
      timeUnixNano = timestamp === undefined ? nowUnixNano() : unixNanoFromDate(timestamp);
    }
    const id = init?.id;
    if (id !== undefined && (typeof id !== 'string' || id === '')) {
      throw new TypeError('id must be a non-empty string when given');
    }
    return new DispatchedEvent(
      type,
      id ?? newEventId(),
      timeUnixNano,
      // A given Date is kept as it is; otherwise it is derived from the nanoseconds when read.
      timestamp,
      init?.source,
      payload,
      causation,
      id === undefined,
    );
  }

  #dispatch(event: BusEvent, vetoable: boolean): void {
    this.#ring.push(event);
    const { subscriptions: list, framed } = this.#handlersFor(event.type);
    if (list.length === 0) return;
    if (this.#dispatchFrames && framed) {
      runInFrame(this.#frameFor(event), EventBus.#deliverAll, this, list, event, vetoable);
    } else {
      EventBus.#deliverAll(this, list, event, vetoable);
    }
  }

  /** The dispatch loop; static so `runInFrame` needs no closure per event. */
  static #deliverAll(
    bus: EventBus,
    list: readonly Subscription[],
    event: BusEvent,
    vetoable: boolean,
  ): void {
    for (const subscription of list) {
      if (!subscription.active) continue;
      if (subscription.backlog !== undefined) {
        subscription.backlog.push(event);
        continue;
      }
      bus.#deliver(subscription, event);
      if (vetoable && (event.payload as VetoablePayload<unknown>).veto?.vetoed === true) break;
    }
  }

  #deliver(subscription: Subscription, event: BusEvent): void {
    try {
      if (subscription.filter !== undefined && !subscription.filter(event as BusEvent<never>)) {
        return;
      }
      const result = this.#inScope(subscription.handler as EventHandler, event);
      if (result !== undefined && result !== null && typeof result.then === 'function') {
        this.#track(result, subscription, event);
      }
    } catch (error) {
      this.#fail(error, subscription, event);
    }
  }

  /** Runs `handler(event)` in the scope the dispatch scopes give for `event`, if any. */
  #inScope(handler: EventHandler, event: BusEvent): ReturnType<EventHandler> {
    const runner = this.#scopes.length === 0 ? undefined : this.#runnerFor(event);
    return runner === undefined ? handler(event) : runner(handler, event);
  }

  /** The scope a handler of `event` runs in: the scopes given, outermost first. */
  #runnerFor(event: BusEvent): ScopeRunner | undefined {
    let runner: ScopeRunner | undefined;
    for (const scope of this.#scopes) {
      let inner: ScopeRunner | undefined;
      try {
        inner = scope(event);
      } catch {
        inner = undefined;
      }
      if (inner === undefined) continue;
      runner = runner === undefined ? inner : nested(runner, inner);
    }
    return runner;
  }

  #track(result: PromiseLike<void>, subscription: Subscription, event: BusEvent): void {
    this.#pending += 1;
    const settle = (): void => {
      this.#pending -= 1;
      if (this.#pending === 0 && this.#drainWaiters.length > 0) {
        const waiters = this.#drainWaiters;
        this.#drainWaiters = [];
        for (const waiter of waiters) waiter();
      }
    };
    result.then(settle, (error: unknown) => {
      this.#fail(error, subscription, event);
      settle();
    });
  }

  #fail(error: unknown, subscription: Subscription, event: BusEvent): void {
    if (this.#onError !== undefined) {
      try {
        this.#onError(error, event);
      } catch {
        // An error hook that fails has nowhere left to report to.
      }
    }
    // A failing core.error handler must not start a loop of core.error events.
    if (event.type === CORE_ERROR) return;
    const payload: CoreErrorPayload = {
      error,
      message: error instanceof Error ? error.message : String(error),
      eventType: event.type,
      eventId: event.id,
      source: subscription.source,
    };
    this.emit(CORE_ERROR, payload, { source: 'bus' });
  }

  #add(
    type: string | undefined,
    handler: EventHandler<never>,
    options: SubscribeOptions<never>,
    replay: boolean,
  ): () => void {
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    if (options === null || typeof options !== 'object') {
      throw new TypeError('options must be an object');
    }
    const { priority = 0, filter, source = '', signal } = options;
    if (typeof priority !== 'number' || Number.isNaN(priority)) {
      throw new TypeError('options.priority must be a number');
    }
    if (filter !== undefined && typeof filter !== 'function') {
      throw new TypeError('options.filter must be a function');
    }
    if (signal?.aborted === true) return noop;
    const subscription: Subscription = {
      handler,
      priority,
      order: this.#order++,
      filter,
      source,
      framed: !isFrameless(handler),
      quick: quickPathOf(handler),
      active: true,
      backlog: replay ? [] : undefined,
    };
    if (type === undefined) {
      this.#all = [...this.#all, subscription];
    } else {
      this.#typed.set(type, [...(this.#typed.get(type) ?? []), subscription]);
    }
    this.#subscriptionsChanged();

    const unsubscribe = (): void => {
      if (!subscription.active) return;
      subscription.active = false;
      subscription.backlog = undefined;
      signal?.removeEventListener('abort', unsubscribe);
      if (type === undefined) {
        this.#all = this.#all.filter((entry) => entry !== subscription);
      } else {
        const remaining = (this.#typed.get(type) ?? []).filter((entry) => entry !== subscription);
        if (remaining.length === 0) this.#typed.delete(type);
        else this.#typed.set(type, remaining);
      }
      this.#subscriptionsChanged();
    };
    signal?.addEventListener('abort', unsubscribe, { once: true });

    if (replay) this.#replay(subscription);
    return unsubscribe;
  }

  #replay(subscription: Subscription): void {
    const replayed = this.#ring.toArray();
    for (const event of replayed) {
      if (!subscription.active) return;
      this.#deliverInFrame(subscription, event);
    }
    // Live events that arrived during the replay, including ones emitted by the replay itself.
    while (subscription.active && subscription.backlog !== undefined) {
      const next = subscription.backlog.shift();
      if (next === undefined) {
        subscription.backlog = undefined;
        break;
      }
      this.#deliverInFrame(subscription, next);
    }
  }

  #deliverInFrame(subscription: Subscription, event: BusEvent): void {
    if (!this.#dispatchFrames) this.#deliver(subscription, event);
    else runInFrame(this.#frameFor(event), () => this.#deliver(subscription, event));
  }

  /**
   * The frame handlers of `event` run in: their emits get `event` as the parent and inherit its
   * session, agent and depth (a child event belongs to the same conversation as its cause).
   */
  #frameFor(event: BusEvent): DispatchFrame {
    const causation = event.causation;
    return {
      bus: this,
      parentId: event.id,
      parentSeq: causation.sequence,
      sessionId: causation.sessionId === '' ? undefined : causation.sessionId,
      agentId: causation.agentId === '' ? undefined : causation.agentId,
      depth: causation.depth,
    };
  }

  #subscriptionsChanged(): void {
    this.#lists = new Map();
    this.#allSorted = undefined;
  }

  #handlersFor(type: string): DispatchList {
    if (this.#typed.size === 0) return (this.#allSorted ??= sorted(EMPTY, this.#all));
    let list = this.#lists.get(type);
    if (list === undefined) {
      list = sorted(this.#typed.get(type) ?? EMPTY, this.#all);
      this.#lists.set(type, list);
    }
    return list;
  }
}

function noop(): void {}

/** Offers an event to a quick path; one that throws has reported it and declines. */
function offer(
  quick: QuickPath,
  type: string,
  payload: unknown,
  causation: Partial<Causation>,
  time: bigint,
): boolean {
  try {
    return quick(type, payload, causation, time);
  } catch {
    return false;
  }
}

/**
 * A scope that runs `inner` inside `outer`. Built here rather than in the loop over the scopes:
 * a closure there would make every pass of the loop allocate a context for the variables it
 * captures, whether or not the closure is made (one scope, the usual case, needs none).
 */
function nested(outer: ScopeRunner, inner: ScopeRunner): ScopeRunner {
  return <A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R =>
    outer(inner, fn, ...args);
}

/** The handlers of one type and of every type, in delivery order. */
function sorted(typed: readonly Subscription[], all: readonly Subscription[]): DispatchList {
  if (typed.length === 0 && all.length === 0) return NONE;
  const subscriptions = [...typed, ...all].sort(
    (left, right) => left.priority - right.priority || left.order - right.order,
  );
  return { subscriptions, framed: subscriptions.some((subscription) => subscription.framed) };
}

function checkByteLimit(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(
      `${name} must be a non-negative integer, got ${JSON.stringify(value) ?? typeof value}`,
    );
  }
  return value;
}

function checkType(type: unknown): asserts type is string {
  if (typeof type !== 'string' || type === '') {
    throw new TypeError(
      `type must be a non-empty string, got ${JSON.stringify(type) ?? 'undefined'}`,
    );
  }
}

function checkContext(context: CausationContext, name: string): void {
  if (context === null || typeof context !== 'object') {
    throw new TypeError(`${name} must be an object`);
  }
  for (const key of ['sessionId', 'agentId'] as const) {
    const value = context[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new TypeError(`${name}.${key} must be a string`);
    }
  }
  const depth = context.depth;
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 0)) {
    throw new TypeError(`${name}.depth must be a non-negative integer`);
  }
}

function definedFields(context: CausationContext): CausationContext {
  const result: CausationContext = {};
  if (context.sessionId !== undefined) result.sessionId = context.sessionId;
  if (context.agentId !== undefined) result.agentId = context.agentId;
  if (context.depth !== undefined) result.depth = context.depth;
  return result;
}

/**
 * Emits `payload` as an event of `type` on `bus` with `answer` run as one more of its handlers,
 * for this event only, where a handler subscribed now with the default priority would run: after
 * the subscribers that come first (the tracer, whose dispatch scope then runs `answer` inside the
 * call's span), inside the dispatch frame. Returns the event and what `answer` returned or threw
 * (not reported on the bus: the caller rethrows it). Internal: `runAsInvokeHandler` answers a
 * call's `tool.invoke` with it.
 */
export function emitAnswered<T, R>(
  bus: EventBus,
  type: string,
  payload: T,
  options: EmitOptions,
  answer: (event: BusEvent<T>) => R,
): { event: BusEvent<T>; value?: R; error?: unknown } {
  return emitWithAnswer(bus, type, payload, options, answer);
}

/**
 * Emits `payload` as an event of `type` on `bus`, for an emitter that does not need the event
 * back (an adapter's stream events): a subscriber with a quick path may record it without the
 * event being built (see {@link QuickPath}). What any subscriber observes is what {@link
 * EventBus.emit} would give it. Internal.
 */
export function emitQuiet(
  bus: EventBus,
  type: string,
  payload: unknown,
  options: EmitOptions,
): void {
  emitWithoutEvent(bus, type, payload, options);
}

/**
 * {@link EventBus.emitVetoable} for an emitter that does not need the event back (a tool's
 * `before:tool.result`): a subscriber with a quick path may take it without the event being built
 * (see {@link QuickPath}), and does not veto it then. What any subscriber observes is what
 * `emitVetoable` would give it. Internal.
 */
export function emitVetoableQuiet(
  bus: EventBus,
  type: string,
  payload: unknown,
  options: EmitOptions,
): VetoDecision {
  return emitVetoableWithoutEvent(bus, type, payload, options);
}
