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

/** What a user can do about a refusal, for the statuses a misconfigured forwarder meets. */
export function refusalHint(status: number): string {
  if (status === 401 || status === 403) return ' (check options.token or TOOLTRACE_TOKEN)';
  if (status === 404) {
    return " (options.url is the sidecar's base URL, such as http://127.0.0.1:4319: /v1/events is appended)";
  }
  if (status === 413) return " (lower options.batchSize, or raise the sidecar's --max-body-bytes)";
  return '';
}
