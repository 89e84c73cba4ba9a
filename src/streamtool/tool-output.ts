import { inspect } from 'node:util';

/**
 * The `tool.result` output for a tool's final payload: the payload itself when it is a string,
 * `''` when there is none, else its JSON. A payload JSON cannot encode (a cycle, a bigint, a
 * function) falls back to its `util.inspect` form rather than losing the call's result.
 */
export function toolOutput(payload: unknown): string {
  if (typeof payload === 'string') return payload;
  if (payload === undefined || payload === null) return '';
  try {
    const json = JSON.stringify(payload) as string | undefined;
    if (json !== undefined) return json;
  } catch {
    // Not encodable as JSON; the string form below is the best that is left.
  }
  return inspect(payload, { depth: 4, breakLength: Infinity });
}

/** The message of anything thrown or given as a failure reason. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return toolOutput(error);
}
