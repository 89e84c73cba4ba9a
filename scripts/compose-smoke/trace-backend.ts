import type { FoundSpan } from './found-span.js';

/** The time range a backend is asked about. */
export interface QueryWindow {
  since: Date;
  until: Date;
}

/** A backend's answer, as a tagged union: transport and format failures are results, not throws. */
export type BackendAnswer = { ok: true; spans: FoundSpan[] } | { ok: false; reason: string };

/** A tracing backend the smoke check asks for the spans a service exported. */
export interface TraceBackend {
  /** For messages: `Jaeger`, `Tempo`. */
  readonly name: string;
  /** Where it is asked, for messages. */
  readonly url: string;
  /** The spans of every trace `service` exported in the window (none is `ok` with no spans). */
  query(service: string, window: QueryWindow): Promise<BackendAnswer>;
}

/** `fetch`, or a stand-in with the same signature. */
export type Fetch = typeof fetch;

/** Fetches `url` and reads its body as text; a network failure or timeout becomes a reason. */
export async function fetchText(
  fetchImpl: Fetch,
  url: string,
  timeoutMs: number,
): Promise<{ ok: true; status: number; text: string } | { ok: false; reason: string }> {
  try {
    const response = await fetchImpl(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { ok: true, status: response.status, text: await response.text() };
  } catch (error) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a timeout) is its cause.
    const inner =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `GET ${url} failed: ${message}${inner}` };
  }
}

/** How a backend is reached: `fetch` (default `globalThis.fetch`) and a timeout per request. */
export interface BackendOptions {
  fetch?: Fetch;
  /** @default 10000 */
  timeoutMs?: number;
}

/** What both HTTP backends share: the base URL (no trailing slash) and GETs with a timeout. */
export abstract class HttpTraceBackend implements TraceBackend {
  abstract readonly name: string;
  readonly url: string;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;

  constructor(url: string, options: BackendOptions = {}) {
    this.url = url.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  abstract query(service: string, window: QueryWindow): Promise<BackendAnswer>;

  /** {@link fetchText} with this backend's `fetch` and timeout. */
  protected get(url: string): ReturnType<typeof fetchText> {
    return fetchText(this.#fetch, url, this.#timeoutMs);
  }
}

/** The first characters of a response body, for a message. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
