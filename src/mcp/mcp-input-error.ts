import { TooltraceError } from '../errors/index.js';

/**
 * Why a question a tool asked (or a server asked a caller) could not be put or answered:
 * - `no-handler`: a called MCP tool asked for input and `mcpTools` was given no `inputHandler`;
 * - `missing-capability`: the client did not declare the capability the question needs
 *   (JSON-RPC `-32021` when it ends a served call);
 * - `invalid-state`: a `requestState` that fails its integrity check, has expired, or names a
 *   call that is no longer waiting (JSON-RPC `-32602`);
 * - `not-answered`: the client did not come back within the served call's `inputTimeout`, or the
 *   call was evicted to make room for newer ones;
 * - `rounds-exceeded`: a called tool still asked for input after `maxInputRounds` rounds;
 * - `invalid-request`: a tool asked for something MCP has no name for, or a server sent such a
 *   request.
 */
export type McpInputErrorKind =
  | 'no-handler'
  | 'missing-capability'
  | 'invalid-state'
  | 'not-answered'
  | 'rounds-exceeded'
  | 'invalid-request';

/** A question for input that could not be put or answered; see {@link McpInputErrorKind}. */
export class McpInputError extends TooltraceError {
  /** Why: see {@link McpInputErrorKind}. */
  readonly kind: McpInputErrorKind;
  /** The JSON-RPC error code a served request is refused with, when the kind has one. */
  readonly code: number | undefined;
  /** The JSON-RPC error's `data` (`requiredCapabilities`, `reason`), when it has one. */
  readonly data: Record<string, unknown> | undefined;

  constructor(
    kind: McpInputErrorKind,
    message: string,
    details: { code?: number; data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.code = details.code;
    this.data = details.data;
  }
}

/** JSON-RPC `-32021`: the request needs a client capability that was not declared. */
export const MISSING_CAPABILITY_CODE = -32021;
/** JSON-RPC `-32602`: invalid params (a bad `requestState`). */
export const INVALID_PARAMS_CODE = -32602;
