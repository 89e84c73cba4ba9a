/**
 * The `CreateTaskResult`s (MCP 2026-07-28, `resultType: "task"`) a 2.x client receives for one
 * call's `tools/call` requests, read on the transport: the 2.x `Client` refuses a result type it
 * does not know before its caller sees it (`UNSUPPORTED_RESULT_TYPE`), so the task the server
 * created would be lost. A call registers the `arguments` object its requests carry (a fresh copy
 * per call, kept by reference in every round's request); each request sent with it has its id
 * noted at `send`, and a response to one of those ids that names a task is kept for the call.
 * Both the transport's `send` and its `onmessage` are wrapped once per transport (again after a
 * reconnect replaced `onmessage`).
 */

/** What a `tools/call` answered with when the server made a task of it. */
export interface CreatedTask {
  readonly taskId: string;
  readonly status: string;
  readonly raw: Readonly<Record<string, unknown>>;
}

/** One call's watch: the ids its requests went out with, the task its server created. */
export interface TaskWatch {
  /** The task created for one of the call's requests, once its response arrived. */
  readonly created: CreatedTask | undefined;
  /** Called once a task arrives (also one that arrives after the call gave up waiting). */
  onCreated: ((task: CreatedTask) => void) | undefined;
  /** Stops watching. */
  stop(): void;
}

interface Watched {
  send: (message: unknown, ...rest: unknown[]) => unknown;
  onmessage?: ((message: unknown, ...rest: unknown[]) => void) | undefined;
}

interface TransportWatch {
  /** The calls watching, by the `arguments` object their requests carry. */
  readonly byArguments: Map<object, CallWatch>;
  /** The calls watching, by the id of a request they sent. */
  readonly byId: Map<string, CallWatch>;
  receiver: ((message: unknown, ...rest: unknown[]) => void) | undefined;
}

/** The most request ids one call keeps (its rounds are bounded well below this). */
const MAX_IDS_PER_CALL = 64;

class CallWatch implements TaskWatch {
  created: CreatedTask | undefined;
  onCreated: ((task: CreatedTask) => void) | undefined;
  readonly ids: string[] = [];
  readonly #stop: () => void;

  constructor(stop: (watch: CallWatch) => void) {
    this.#stop = () => stop(this);
  }

  stop(): void {
    this.#stop();
  }
}

const watches = new WeakMap<object, TransportWatch>();

/**
 * Watches `transport` for a task created by a request carrying `argumentsObject`. Returns
 * `undefined` when the transport cannot be watched (no `send`/`onmessage`).
 */
export function watchCreatedTasks(
  transport: unknown,
  argumentsObject: object,
): TaskWatch | undefined {
  if (transport === null || typeof transport !== 'object') return undefined;
  const target = transport as Watched;
  if (typeof target.send !== 'function' || typeof target.onmessage !== 'function') {
    return undefined;
  }
  let watch = watches.get(transport);
  if (watch === undefined) {
    watch = { byArguments: new Map(), byId: new Map(), receiver: undefined };
    watches.set(transport, watch);
    wrapSend(target, watch);
  }
  if (target.onmessage !== watch.receiver) wrapReceive(target, watch);
  const known = watch;
  const call = new CallWatch((stopped) => {
    if (known.byArguments.get(argumentsObject) === stopped)
      known.byArguments.delete(argumentsObject);
    for (const id of stopped.ids) known.byId.delete(id);
  });
  watch.byArguments.set(argumentsObject, call);
  return call;
}

function wrapSend(target: Watched, watch: TransportWatch): void {
  const send = target.send;
  target.send = function sendWatchedForTasks(this: unknown, message: unknown, ...rest: unknown[]) {
    if (watch.byArguments.size > 0) noteSent(watch, message);
    return send.call(this, message, ...rest);
  };
}

function wrapReceive(target: Watched, watch: TransportWatch): void {
  const original = target.onmessage!;
  watch.receiver = function onmessageWatchedForTasks(
    this: unknown,
    message: unknown,
    ...rest: unknown[]
  ) {
    if (watch.byId.size > 0) noteReceived(watch, message);
    return original.call(this, message, ...rest);
  };
  target.onmessage = watch.receiver;
}

function noteSent(watch: TransportWatch, message: unknown): void {
  if (message === null || typeof message !== 'object') return;
  const { id, method, params } = message as {
    id?: unknown;
    method?: unknown;
    params?: { arguments?: unknown };
  };
  if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number')) return;
  const argumentsObject = params?.arguments;
  if (argumentsObject === null || typeof argumentsObject !== 'object') return;
  const call = watch.byArguments.get(argumentsObject);
  if (call === undefined) return;
  if (call.ids.length >= MAX_IDS_PER_CALL) watch.byId.delete(call.ids.shift()!);
  call.ids.push(String(id));
  watch.byId.set(String(id), call);
}

function noteReceived(watch: TransportWatch, message: unknown): void {
  if (message === null || typeof message !== 'object') return;
  const { id, result } = message as { id?: unknown; result?: unknown };
  if (typeof id !== 'string' && typeof id !== 'number') return;
  const call = watch.byId.get(String(id));
  if (call === undefined || result === null || typeof result !== 'object') return;
  const raw = result as Record<string, unknown>;
  if (raw.resultType !== 'task' || typeof raw.taskId !== 'string' || raw.taskId === '') return;
  const created: CreatedTask = {
    taskId: raw.taskId,
    status: typeof raw.status === 'string' ? raw.status : 'working',
    raw,
  };
  call.created = created;
  call.onCreated?.(created);
}
