import type { ToolContext, ToolInputRequest, ToolInputResponse } from '../streamtool/index.js';
import { answeredEvent, checkCapability, checkRequest, requestedEvent } from './input-round.js';
import type { ServedRequest } from './served-request.js';
import type { StreamRelay } from './served-tool.js';

/**
 * A served tool's questions on a 2025-11-25 connection of the 1.x SDK: each one the server's own
 * request to the client (`elicitation/create`, `sampling/createMessage`, `roots/list`), related
 * to the call's request, after checking the capabilities the client declared at initialize; the
 * question and its answer are events of the call, as over 2026-07-28. (The 2.x SDK answers
 * 2025-11-25 clients the same way itself, from the `input_required` results tooltrace returns.)
 */
export function directInputContext(
  toolName: string,
  request: ServedRequest,
  capabilities: Readonly<Record<string, unknown>> | undefined,
  relay: () => StreamRelay | undefined,
  signal: AbortSignal,
): ToolContext {
  let keys = 0;
  let rounds = 0;
  const requestInput = async (question: ToolInputRequest): Promise<ToolInputResponse> => {
    checkRequest(toolName, question);
    checkCapability(toolName, question.method, capabilities);
    if (request.sendRequest === undefined) {
      throw new TypeError('this server line cannot send requests to clients');
    }
    const key = question.key ?? `input_${++keys}`;
    relay()?.inputEvent(requestedEvent(key, question, rounds));
    rounds += 1;
    const { ElicitResultSchema, CreateMessageResultSchema, ListRootsResultSchema } =
      await import('@modelcontextprotocol/sdk/types.js');
    const schema =
      question.method === 'elicitation/create'
        ? ElicitResultSchema
        : question.method === 'sampling/createMessage'
          ? CreateMessageResultSchema
          : ListRootsResultSchema;
    signal.throwIfAborted();
    const params = question.params ?? {};
    try {
      const response = (await request.sendRequest(
        { method: question.method, params },
        schema,
      )) as ToolInputResponse;
      relay()?.inputEvent(answeredEvent(key, question.method, response, rounds));
      return response;
    } catch (error) {
      relay()?.inputEvent(answeredEvent(key, question.method, undefined, rounds, 'failed'));
      throw error;
    }
  };
  return { requestInput, clientCapabilities: capabilities };
}
