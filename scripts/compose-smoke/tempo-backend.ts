import type { FoundSpan } from './found-span.js';
import { normalizeId, spansOfOtlpJson } from './otlp-json-spans.js';
import {
  excerpt,
  fetchText,
  type BackendAnswer,
  type Fetch,
  type QueryWindow,
  type TraceBackend,
} from './trace-backend.js';

/**
 * Tempo's HTTP API (port 3200, or through Grafana's data source proxy): `GET /api/search` with a
 * TraceQL `q` and `start`/`end` in Unix seconds finds the trace ids (`{"traces":[{"traceID"…}]}`),
 * then `GET /api/traces/<id>` returns each trace as OTLP/JSON (`{"batches":[…]}`, base64 ids).
 */
export class TempoBackend implements TraceBackend {
  readonly name = 'Tempo';
  readonly url: string;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;

  /**
   * @param url base URL of Tempo's HTTP API, e.g. `http://tempo:3200` or
   *   `http://127.0.0.1:3000/api/datasources/proxy/uid/tempo`
   * @param options.fetch @default globalThis.fetch
   * @param options.timeoutMs per request @default 10000
   */
  constructor(url: string, options: { fetch?: Fetch; timeoutMs?: number } = {}) {
    this.url = url.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  async query(service: string, window: QueryWindow): Promise<BackendAnswer> {
    const parameters = new URLSearchParams({
      q: `{ resource.service.name = ${JSON.stringify(service)} }`,
      start: String(Math.floor(window.since.getTime() / 1000)),
      end: String(Math.ceil(window.until.getTime() / 1000)),
      limit: '20',
    });
    const searchUrl = `${this.url}/api/search?${parameters.toString()}`;
    const search = await fetchText(this.#fetch, searchUrl, this.#timeoutMs);
    if (!search.ok) return search;
    if (search.status !== 200) {
      return {
        ok: false,
        reason: `GET ${searchUrl}: HTTP ${search.status} ${excerpt(search.text)}`,
      };
    }
    let traceIds: string[];
    try {
      traceIds = traceIdsOf(JSON.parse(search.text));
    } catch (error) {
      return { ok: false, reason: `GET ${searchUrl}: ${(error as Error).message}` };
    }
    const spans: FoundSpan[] = [];
    for (const traceId of traceIds) {
      const url = `${this.url}/api/traces/${traceId}`;
      const trace = await fetchText(this.#fetch, url, this.#timeoutMs);
      if (!trace.ok) return trace;
      if (trace.status === 404) continue;
      if (trace.status !== 200) {
        return { ok: false, reason: `GET ${url}: HTTP ${trace.status} ${excerpt(trace.text)}` };
      }
      try {
        spans.push(...spansOfOtlpJson(JSON.parse(trace.text), `Tempo trace ${traceId}`));
      } catch (error) {
        return { ok: false, reason: `GET ${url}: ${(error as Error).message}` };
      }
    }
    return { ok: true, spans };
  }
}

function traceIdsOf(document: unknown): string[] {
  const traces = (document as { traces?: unknown } | null)?.traces;
  if (traces === undefined || traces === null) return [];
  if (!Array.isArray(traces)) throw new TypeError('search answer: traces is not a list');
  return traces.map((trace, index) => {
    const id = (trace as { traceID?: unknown } | null)?.traceID;
    return normalizeId(id, 16, `search answer: traces[${index}].traceID`);
  });
}
