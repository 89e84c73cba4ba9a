import type { McpProgress } from './mcp-client.js';

/**
 * The `notifications/progress` a client receives, read where they arrive: the transport's
 * `onmessage`, before the SDK sees them. The SDKs hand a notification to its handler a microtask
 * later but take a response at once, and drop the call's progress handler with it: when the last
 * progress notifications and the response come in one read (a stdio chunk on a busy machine),
 * the SDK's `onprogress` never hears of them. Watching the transport hears every one, in order.
 * A client that replaces its transport's `onmessage` (a reconnect) is wrapped again at the next
 * call; until then the SDK's own `onprogress` still reports (the caller takes each value once).
 */

type Listener = (progress: McpProgress) => void;

interface WatchedTransport {
  onmessage?: ((message: unknown, ...rest: unknown[]) => void) | undefined;
}

interface Watch {
  readonly listeners: Map<string, Listener>;
  wrapper: ((message: unknown, ...rest: unknown[]) => void) | undefined;
}

const watches = new WeakMap<object, Watch>();

/**
 * Calls `onProgress` for each progress notification `transport` receives with progress token
 * `token` (the SDKs use the request's id). Returns a function that stops listening.
 */
export function onProgressReceived(
  transport: unknown,
  token: string,
  onProgress: Listener,
): () => void {
  if (transport === null || typeof transport !== 'object') return () => {};
  let watch = watches.get(transport);
  if (watch === undefined) {
    watch = { listeners: new Map(), wrapper: undefined };
    watches.set(transport, watch);
  }
  const target = transport as WatchedTransport;
  if (typeof target.onmessage !== 'function') return () => {};
  if (target.onmessage !== watch.wrapper) wrap(target, watch);
  const listeners = watch.listeners;
  listeners.set(token, onProgress);
  return () => {
    if (listeners.get(token) === onProgress) listeners.delete(token);
  };
}

function wrap(target: WatchedTransport, watch: Watch): void {
  const original = target.onmessage!;
  const listeners = watch.listeners;
  watch.wrapper = function onmessageWatched(this: unknown, message: unknown, ...rest: unknown[]) {
    if (listeners.size > 0) report(listeners, message);
    return original.call(this, message, ...rest);
  };
  target.onmessage = watch.wrapper;
}

function report(listeners: Map<string, Listener>, message: unknown): void {
  if (message === null || typeof message !== 'object') return;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'notifications/progress' || params === null || typeof params !== 'object') return;
  const { progressToken, progress, total, message: text } = params as Record<string, unknown>;
  if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return;
  const listener = listeners.get(String(progressToken));
  if (listener === undefined || typeof progress !== 'number') return;
  const received: McpProgress = { progress };
  if (typeof total === 'number') received.total = total;
  if (typeof text === 'string') received.message = text;
  listener(received);
}
