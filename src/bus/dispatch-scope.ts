import type { BusEvent } from './bus-event.js';

/**
 * Runs `fn(...args)` inside a scope of the layer that gave it, and returns what `fn` returns.
 * The OpenTelemetry layer gives one that makes a span's context active, so work a handler starts
 * (now, after an `await`, from `setImmediate`) runs inside that span.
 */
export type ScopeRunner = <A extends unknown[], R>(fn: (...args: A) => R, ...args: A) => R;

/**
 * Asked once per handler delivery: the scope the handler of `event` runs in, or `undefined` for
 * none. Handlers earlier in the order have run by then (a subscriber with the lowest priority can
 * start a span for `event` and have every later handler run inside it). It must be cheap and must
 * not throw; one that throws is treated as giving no scope.
 */
export type DispatchScope = (event: BusEvent) => ScopeRunner | undefined;
