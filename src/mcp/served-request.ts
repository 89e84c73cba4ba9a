/**
 * What a served `tools/call` needs of its request, from either SDK line's handler context: the
 * 1.x `RequestHandlerExtra` (`requestId`, `signal`, `_meta`, `sendNotification`) or the 2.x
 * `ServerContext` (`mcpReq.id`, `mcpReq.signal`, `mcpReq._meta`, `mcpReq.notify`).
 */
export interface ServedRequest {
  readonly requestId: string | number;
  readonly sessionId: string | undefined;
  /** Aborts on the client's `notifications/cancelled`. */
  readonly signal: AbortSignal;
  /** `params._meta`: the progress token and the trace context. */
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  notify(notification: { method: string; params: Record<string, unknown> }): Promise<void>;
  /** 2.x: the answers the request brought (`inputResponses`, malformed entries left out). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** 2.x: the `requestState` the request echoed, as sent. */
  readonly requestState?: unknown;
  /** 2.x, MCP 2026-07-28: the capabilities the request's `_meta` declares. */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /** 2.x, MCP 2026-07-28: the protocol version the request's `_meta` names. */
  readonly protocolVersion?: string;
  /** 2.x: the handler context's request object (whose refusal the server's wrapper throws). */
  readonly handle?: object;
  /** 1.x: sends a request to the client related to this one. */
  sendRequest?(
    request: { method: string; params?: Record<string, unknown> },
    schema: unknown,
  ): Promise<unknown>;
}

/** The `_meta` keys of MCP 2026-07-28's per-request envelope. */
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

interface Extra1x {
  requestId: string | number;
  sessionId?: string;
  signal: AbortSignal;
  _meta?: Record<string, unknown>;
  sendNotification(notification: never): Promise<void>;
  sendRequest?(request: never, schema: never): Promise<unknown>;
}

interface Context2x {
  sessionId?: string;
  mcpReq: {
    id: string | number;
    signal: AbortSignal;
    _meta?: Record<string, unknown>;
    envelope?: Record<string, unknown>;
    inputResponses?: Record<string, unknown>;
    requestState?: () => unknown;
    notify(notification: never): Promise<void>;
  };
}

/** The request of a tool handler's context, whichever SDK line called it. */
export function servedRequestOf(context: unknown): ServedRequest {
  const modern = context as Partial<Context2x>;
  if (modern.mcpReq !== undefined && typeof modern.mcpReq === 'object') {
    const request = modern.mcpReq;
    const envelope = request.envelope;
    const capabilities = envelope?.[CAPABILITIES_KEY];
    const version = envelope?.[VERSION_KEY];
    return {
      requestId: request.id,
      sessionId: modern.sessionId,
      signal: request.signal,
      meta: request._meta,
      notify: (notification) => request.notify(notification as never),
      inputResponses: isRecord(request.inputResponses) ? request.inputResponses : undefined,
      requestState: typeof request.requestState === 'function' ? request.requestState() : undefined,
      clientCapabilities: isRecord(capabilities) ? capabilities : undefined,
      protocolVersion: typeof version === 'string' ? version : undefined,
      handle: request,
    };
  }
  const extra = context as Extra1x;
  return {
    requestId: extra.requestId,
    sessionId: extra.sessionId,
    signal: extra.signal,
    meta: extra._meta,
    notify: (notification) => extra.sendNotification(notification as never),
    sendRequest:
      typeof extra.sendRequest === 'function'
        ? (request, schema) => extra.sendRequest!(request as never, schema as never)
        : undefined,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
