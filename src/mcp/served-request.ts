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
}

interface Extra1x {
  requestId: string | number;
  sessionId?: string;
  signal: AbortSignal;
  _meta?: Record<string, unknown>;
  sendNotification(notification: never): Promise<void>;
}

interface Context2x {
  sessionId?: string;
  mcpReq: {
    id: string | number;
    signal: AbortSignal;
    _meta?: Record<string, unknown>;
    notify(notification: never): Promise<void>;
  };
}

/** The request of a tool handler's context, whichever SDK line called it. */
export function servedRequestOf(context: unknown): ServedRequest {
  const modern = context as Partial<Context2x>;
  if (modern.mcpReq !== undefined && typeof modern.mcpReq === 'object') {
    const request = modern.mcpReq;
    return {
      requestId: request.id,
      sessionId: modern.sessionId,
      signal: request.signal,
      meta: request._meta,
      notify: (notification) => request.notify(notification as never),
    };
  }
  const extra = context as Extra1x;
  return {
    requestId: extra.requestId,
    sessionId: extra.sessionId,
    signal: extra.signal,
    meta: extra._meta,
    notify: (notification) => extra.sendNotification(notification as never),
  };
}
