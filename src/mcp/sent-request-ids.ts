/**
 * The JSON-RPC ids of the `tools/call` requests a client really sends, read where they leave it:
 * the transport's `send(message)`, the one method every MCP transport has on both SDK lines. A
 * call registers the `arguments` object it passes (a fresh copy per call, which the SDKs carry
 * into the request by reference); the first request sent with that object reports its id. A
 * call the SDK refuses before sending (a tool that requires a task, a closed client) reports
 * nothing, so no span gets an id that was never on the wire.
 */

type Listener = (id: string) => void;

interface WatchedTransport {
  send: (message: unknown, ...rest: unknown[]) => unknown;
}

const waitingByTransport = new WeakMap<object, Map<object, Listener>>();

/**
 * Calls `onSent` with the id of the first request `transport` sends whose `params.arguments` is
 * `argumentsObject`. Returns a function that stops waiting (the call ended without sending).
 */
export function onRequestSent(
  transport: unknown,
  argumentsObject: object,
  onSent: Listener,
): () => void {
  const waiting = watch(transport);
  if (waiting === undefined) return () => {};
  waiting.set(argumentsObject, onSent);
  return () => void waiting.delete(argumentsObject);
}

/** The waiting calls of `transport`, its `send` wrapped once to report to them. */
function watch(transport: unknown): Map<object, Listener> | undefined {
  if (transport === null || typeof transport !== 'object') return undefined;
  const known = waitingByTransport.get(transport);
  if (known !== undefined) return known;
  const target = transport as WatchedTransport;
  const send = target.send;
  if (typeof send !== 'function') return undefined;
  const waiting = new Map<object, Listener>();
  waitingByTransport.set(transport, waiting);
  target.send = function sendWatched(this: unknown, message: unknown, ...rest: unknown[]) {
    if (waiting.size > 0) report(waiting, message);
    return send.call(this, message, ...rest);
  };
  return waiting;
}

function report(waiting: Map<object, Listener>, message: unknown): void {
  if (message === null || typeof message !== 'object') return;
  const { id, params } = message as { id?: unknown; params?: { arguments?: unknown } };
  const argumentsObject = params?.arguments;
  if (argumentsObject === null || typeof argumentsObject !== 'object') return;
  if (typeof id !== 'string' && typeof id !== 'number') return;
  const listener = waiting.get(argumentsObject);
  if (listener === undefined) return;
  waiting.delete(argumentsObject);
  listener(String(id));
}
