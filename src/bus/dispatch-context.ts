import { AsyncLocalStorage } from 'node:async_hooks';
/**
 * What travels with the code a handler runs, synchronously or asynchronously later: the event
 * being dispatched (for `parentId`/`parentSeq`) and the causation scope.
 */
export interface DispatchFrame {
  /** Owner of the frame: a frame only applies to events emitted on the same bus. */
  readonly bus: object;
  readonly parentId: string;
  readonly parentSeq: number;
  /** Causation scope carried by the frame; `undefined` falls back to the bus default. */
  readonly sessionId: string | undefined;
  readonly agentId: string | undefined;
  readonly depth: number | undefined;
}

/**
 * The only place in tooltrace that touches AsyncLocalStorage. Every promise, timer,
 * `setImmediate` and async generator started inside `runInFrame` sees the frame.
 */
const storage = new AsyncLocalStorage<DispatchFrame>();

/** Runs `fn(...args)` with `frame` as the current dispatch frame (arguments spare a closure). */
export function runInFrame<A extends unknown[], R>(
  frame: DispatchFrame,
  fn: (...args: A) => R,
  ...args: A
): R {
  return storage.run(frame, fn, ...args);
}

/** The dispatch frame the calling code runs in, if any. */
export function currentFrame(): DispatchFrame | undefined {
  return storage.getStore();
}

/** Runs `fn(...args)` in the asynchronous context captured by {@link captureContext}. */
export type ContextRunner = <A extends unknown[], R>(fn: (...args: A) => R, ...args: A) => R;

/**
 * The asynchronous context of the calling code, to run functions in later: wherever the runner
 * is called from, `fn` runs with the dispatch frame (and every other `AsyncLocalStorage` value,
 * the active OpenTelemetry context among them) that was current here. For code a handler hands
 * to someone else to call, such as a generator another library iterates. One capture serves any
 * number of functions and calls. `AsyncLocalStorage.snapshot()`: on Node 24 (context frames) it
 * only swaps the current frame, where an `AsyncResource` per bound function also paid for an
 * async id and the async-hooks entry and exit on every call.
 */
export function captureContext(): ContextRunner {
  return AsyncLocalStorage.snapshot();
}
