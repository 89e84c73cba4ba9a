/**
 * What a tool may ask the one who called it for, mid-stream: the three kinds of input the MCP
 * specification defines (`elicitation/create` asks the user, `sampling/createMessage` asks the
 * client's model, `roots/list` asks for the client's roots). `params` are the request's, as the
 * specification gives them (`message` and `requestedSchema` for an elicitation; `messages` and
 * `maxTokens` for sampling; nothing for roots).
 */
export interface ToolInputRequest {
  method: ToolInputMethod;
  params?: Record<string, unknown>;
  /**
   * The name the request goes by (the key of MCP's `inputRequests`); a client's answer is matched
   * by it. Unique within a call.
   * @default `input_1`, `input_2`, … in the order the tool asks
   */
  key?: string;
}

/** The kinds of input a tool can ask for. */
export type ToolInputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/**
 * What a caller answered: the specification's result for the request's kind — an `ElicitResult`
 * (`action` `accept`, `decline` or `cancel`, with `content` when accepted), a
 * `CreateMessageResult` (`role`, `content`, `model`), a `ListRootsResult` (`roots`).
 */
export type ToolInputResponse = Record<string, unknown>;

/**
 * What a tool's caller offers beside the signal and the input: the third argument of
 * `ChannelTool.stream`. Only a caller that can carry a question back (a tool served over MCP by
 * `serveMcpTools`) gives `requestInput`; elsewhere it is absent, and a tool that must ask fails
 * or goes on without asking.
 */
export interface ToolContext {
  /**
   * Asks the caller for input and resolves with the answer, while the call stays one call (one
   * span): over MCP 2026-07-28 the request becomes an `input_required` round trip, on a
   * 2025-11-25 connection the server's own request to the client. Several asks made together
   * (`Promise.all`) travel in one round. Rejects with the reason the question cannot be asked
   * (the client did not declare the capability, it did not answer in time) or with the call's
   * abort reason.
   */
  requestInput?(request: ToolInputRequest): Promise<ToolInputResponse>;
  /**
   * The capabilities the client declared (`elicitation`, `sampling`, `roots`, …), when known: a
   * tool asks only for what is declared.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
}
