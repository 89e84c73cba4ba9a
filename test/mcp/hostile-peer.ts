/**
 * A raw JSON-RPC MCP server behind a client transport, written to misbehave on purpose: it
 * answers what a script tells it (a tool list no SDK server would send, a poll interval of 0, a
 * task that never ends, error codes as text) and records every request it got. Either SDK
 * line's `Client` connects to {@link HostilePeer.transport}.
 */

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: unknown; message: string; data?: unknown };
}

/** What the script answers: a result, or a JSON-RPC error. */
export type Answer = { result: unknown } | { error: { code: unknown; message: string } };

export interface HostileScript {
  /** Pages of `tools/list`, each a `tools` array; a cursor leads to the next page. */
  readonly pages?: readonly (readonly unknown[])[];
  /** Pages past the given ones keep coming with a new cursor, forever. */
  readonly endlessPages?: boolean;
  /** Server capabilities sent in the initialize answer. */
  readonly capabilities?: Record<string, unknown>;
  /** Answers to other requests (`tools/call`, `tasks/get`, …); `undefined` never answers. */
  readonly answer?: (
    method: string,
    params: Record<string, unknown>,
    peer: HostilePeer,
  ) => Answer | undefined | Promise<Answer | undefined>;
}

/** A request the peer received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly params: Record<string, unknown>;
  /** `performance.now()` when it came. */
  readonly at: number;
}

export class HostilePeer {
  readonly requests: ReceivedRequest[] = [];
  readonly notifications: JsonRpcMessage[] = [];
  readonly #script: HostileScript;
  #closed = false;

  /** The client's side: hand it to `client.connect()`. */
  readonly transport: {
    onmessage?: (message: unknown, extra?: unknown) => void;
    onclose?: () => void;
    onerror?: (error: Error) => void;
    sessionId?: string;
    start(): Promise<void>;
    send(message: unknown): Promise<void>;
    close(): Promise<void>;
  };

  constructor(script: HostileScript) {
    this.#script = script;
    this.transport = {
      start: () => Promise.resolve(),
      send: (message) => {
        if (!this.#closed) setImmediate(() => void this.#receive(message as JsonRpcMessage));
        return Promise.resolve();
      },
      close: () => {
        this.#closed = true;
        this.transport.onclose?.();
        return Promise.resolve();
      },
    };
  }

  /** Requests of `method` received so far. */
  received(method: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === method);
  }

  /** Sends a message to the client (a notification, say). */
  send(message: Omit<JsonRpcMessage, 'jsonrpc'>): void {
    if (!this.#closed) this.transport.onmessage?.({ jsonrpc: '2.0', ...message });
  }

  async #receive(message: JsonRpcMessage): Promise<void> {
    if (message.method === undefined) return;
    if (message.id === undefined) {
      this.notifications.push(message);
      return;
    }
    const params = message.params ?? {};
    this.requests.push({ method: message.method, params, at: performance.now() });
    const answer = await this.#answer(message.method, params);
    if (answer === undefined) return;
    this.send({ id: message.id, ...answer });
  }

  async #answer(method: string, params: Record<string, unknown>): Promise<Answer | undefined> {
    const script = this.#script;
    if (method === 'initialize') {
      return {
        result: {
          protocolVersion: '2025-11-25',
          capabilities: script.capabilities ?? { tools: {} },
          serverInfo: { name: 'hostile', version: '6.6.6' },
        },
      };
    }
    if (method === 'tools/list') {
      const pages = script.pages ?? [[]];
      const cursor = typeof params.cursor === 'string' ? Number(params.cursor) : 0;
      const tools = pages[cursor] ?? [];
      const more = cursor + 1 < pages.length || script.endlessPages === true;
      return { result: more ? { tools, nextCursor: String(cursor + 1) } : { tools } };
    }
    if (method === 'ping') return { result: {} };
    return script.answer?.(method, params, this);
  }
}

/** A tool definition as a well-behaved server would list it. */
export function toolDefinition(name: unknown, extra: Record<string, unknown> = {}): unknown {
  return { name, inputSchema: { type: 'object', properties: {} }, ...extra };
}
