/** What became of one request or write. */
export type SendOutcome =
  | { kind: 'success' }
  | {
      kind: 'retryable';
      retryAfterMs: number | undefined;
      message: string;
      /** The HTTP status, when the sidecar answered (`undefined`: no answer at all). */
      status?: number;
      unread?: number;
    }
  | { kind: 'refused'; message: string; status: number };

/** The sidecar's JSON answer: its `error` message, and how many lines it left `unread`. */
export function parseAnswer(text: string): { error?: string; unread?: number } {
  try {
    const value = JSON.parse(text) as { error?: unknown; unread?: unknown };
    return {
      ...(typeof value.error === 'string' ? { error: value.error } : {}),
      ...(Number.isSafeInteger(value.unread) && (value.unread as number) >= 0
        ? { unread: value.unread as number }
        : {}),
    };
  } catch {
    return {};
  }
}

/** A fetch failure names its cause (`connect ECONNREFUSED …`) only in `cause`. */
export function errorMessage(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${text}: ${cause.message}` : text;
}

/**
 * How the user of a forwarder sets what a refusal hint points at. A program that forwards for
 * its own user (the `tooltrace demo` command) names its flags and variables, not the options
 * of the library it calls.
 */
export interface RefusalWording {
  /** Where the bearer token comes from. */
  token: string;
  /** Where the sidecar's URL is given. */
  url: string;
  /** Where the batch size is given, when the user can change it. */
  batchSize?: string;
}

/** The wording for a program calling `forwardEvents` itself: its options. */
export const LIBRARY_WORDING: RefusalWording = {
  token: 'options.token or TOOLTRACE_TOKEN',
  url: 'options.url',
  batchSize: 'options.batchSize',
};

/** What a user can do about a refusal, for the statuses a misconfigured forwarder meets. */
export function refusalHint(status: number, wording: RefusalWording = LIBRARY_WORDING): string {
  if (status === 401 || status === 403) return ` (check ${wording.token})`;
  if (status === 404) {
    return ` (${wording.url} is the sidecar's base URL, such as http://127.0.0.1:4319: /v1/events is appended)`;
  }
  if (status === 413) {
    return wording.batchSize === undefined
      ? " (raise the sidecar's --max-body-bytes)"
      : ` (lower ${wording.batchSize}, or raise the sidecar's --max-body-bytes)`;
  }
  return '';
}
