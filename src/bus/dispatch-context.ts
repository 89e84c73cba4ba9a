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
