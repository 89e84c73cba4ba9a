import type {
  ToolEvent,
  ToolInputMethod,
  ToolInputRequest,
  ToolInputResponse,
} from '../streamtool/index.js';
import { McpInputError, MISSING_CAPABILITY_CODE } from './mcp-input-error.js';

/**
 * The stream events of input rounds, on both sides (a served tool asking, a called tool asked):
 * each question and each answer a `progress` event of the call, its attributes saying which kind
 * of input, under which key, in which state, and how many rounds the call took so far; the
 * question's params and the answer are the payload, recorded only under content capture.
 */

/** `elicitation/create`, `sampling/createMessage` or `roots/list`. */
export const ATTR_MCP_INPUT_METHOD = 'tooltrace.mcp.input.method';
/** The key the question goes by (`inputRequests` key). */
export const ATTR_MCP_INPUT_KEY = 'tooltrace.mcp.input.key';
/** `requested`, then `accepted`, `declined`, `cancelled` (elicitation) or `answered`. */
export const ATTR_MCP_INPUT_STATUS = 'tooltrace.mcp.input.status';
/** Input rounds so far (a round: the questions asked together and their answers). */
export const ATTR_MCP_INPUT_ROUNDS = 'tooltrace.mcp.input.rounds';

const METHODS: ReadonlySet<string> = new Set([
  'elicitation/create',
  'sampling/createMessage',
  'roots/list',
]);

/** Whether `method` is a kind of input MCP defines. */
export function isInputMethod(method: unknown): method is ToolInputMethod {
  return typeof method === 'string' && METHODS.has(method);
}

/** The client capability a kind of input needs. */
export function capabilityFor(method: ToolInputMethod): 'elicitation' | 'sampling' | 'roots' {
  if (method === 'elicitation/create') return 'elicitation';
  if (method === 'sampling/createMessage') return 'sampling';
  return 'roots';
}

/**
 * Refuses a question the client's declared capabilities do not cover (`-32021`, naming the
 * capability); `undefined` capabilities (not known) are not judged.
 */
export function checkCapability(
  toolName: string,
  method: ToolInputMethod,
  capabilities: Readonly<Record<string, unknown>> | undefined,
): void {
  if (capabilities === undefined) return;
  const needed = capabilityFor(method);
  const declared = capabilities[needed];
  if (declared !== null && typeof declared === 'object') return;
  throw new McpInputError(
    'missing-capability',
    `MCP tool "${toolName}" asked for ${method}, and the client did not declare the ` +
      `"${needed}" capability`,
    { code: MISSING_CAPABILITY_CODE, data: { requiredCapabilities: { [needed]: {} } } },
  );
}

/** A tool's question, checked: a known kind, params an object. */
export function checkRequest(toolName: string, request: ToolInputRequest): void {
  if (request === null || typeof request !== 'object' || !isInputMethod(request.method)) {
    throw new McpInputError(
      'invalid-request',
      `MCP tool "${toolName}" asked for input of kind ${JSON.stringify(
        (request as { method?: unknown } | null)?.method,
      )}: the kinds are elicitation/create, sampling/createMessage and roots/list`,
    );
  }
  if (
    request.params !== undefined &&
    (request.params === null || typeof request.params !== 'object')
  ) {
    throw new McpInputError(
      'invalid-request',
      `MCP tool "${toolName}" asked with params that are not an object`,
    );
  }
  if (request.key !== undefined && (typeof request.key !== 'string' || request.key === '')) {
    throw new McpInputError(
      'invalid-request',
      `MCP tool "${toolName}" asked with a key that is not a non-empty string`,
    );
  }
}

/**
 * Whether `response` is an answer of the kind `method` asks for: an `ElicitResult` has a known
 * `action`, a `CreateMessageResult` a `role` and `content`, a `ListRootsResult` a `roots` array.
 * Anything else is no answer (the question is asked again).
 */
export function isAnswerTo(
  method: ToolInputMethod,
  response: unknown,
): response is ToolInputResponse {
  if (response === null || typeof response !== 'object' || Array.isArray(response)) return false;
  const answer = response as Record<string, unknown>;
  if (method === 'elicitation/create') {
    return answer.action === 'accept' || answer.action === 'decline' || answer.action === 'cancel';
  }
  if (method === 'sampling/createMessage') {
    return (
      typeof answer.role === 'string' &&
      answer.content !== null &&
      typeof answer.content === 'object'
    );
  }
  return Array.isArray(answer.roots);
}

/** How a question ended: an elicitation's action (`accepted`, …), else `answered`. */
export function answerStatus(method: ToolInputMethod, response: ToolInputResponse): string {
  if (method !== 'elicitation/create') return 'answered';
  if (response.action === 'accept') return 'accepted';
  if (response.action === 'decline') return 'declined';
  return 'cancelled';
}

/** The event of a question asked. */
export function requestedEvent(key: string, request: ToolInputRequest, rounds: number): ToolEvent {
  return {
    kind: 'progress',
    progress: -1,
    payload: { key, method: request.method, params: request.params ?? {} },
    attributes: {
      [ATTR_MCP_INPUT_METHOD]: request.method,
      [ATTR_MCP_INPUT_KEY]: key,
      [ATTR_MCP_INPUT_STATUS]: 'requested',
      [ATTR_MCP_INPUT_ROUNDS]: rounds,
    },
  };
}

/** The event of a question answered (or ended otherwise: `status` given). */
export function answeredEvent(
  key: string,
  method: ToolInputMethod,
  response: ToolInputResponse | undefined,
  rounds: number,
  status: string = response === undefined ? 'failed' : answerStatus(method, response),
): ToolEvent {
  return {
    kind: 'progress',
    progress: -1,
    payload: { key, method, response },
    attributes: {
      [ATTR_MCP_INPUT_METHOD]: method,
      [ATTR_MCP_INPUT_KEY]: key,
      [ATTR_MCP_INPUT_STATUS]: status,
      [ATTR_MCP_INPUT_ROUNDS]: rounds,
    },
  };
}
