import type { FoundSpan } from './found-span.js';
import { normalizeId, spansOfOtlpJson } from './otlp-json-spans.js';
import {
  excerpt,
  HttpTraceBackend,
  type BackendAnswer,
  type QueryWindow,
} from './trace-backend.js';

/**
 * Tempo's HTTP API (port 3200, or through Grafana's data source proxy): `GET /api/search` with a
 * TraceQL `q` and `start`/`end` in Unix seconds finds the trace ids (`{"traces":[{"traceID"…}]}`),
 * then `GET /api/traces/<id>` returns each trace as OTLP/JSON (`{"batches":[…]}`, base64 ids).
 *
 * Its URL is the base URL of Tempo's HTTP API, e.g. `http://tempo:3200` or
 * `http://127.0.0.1:3000/api/datasources/proxy/uid/tempo`.
 */
export class TempoBackend extends HttpTraceBackend {
  readonly name = 'Tempo';

  async query(service: string, window: QueryWindow): Promise<BackendAnswer> {
    const parameters = new URLSearchParams({
      q: `{ resource.service.name = ${JSON.stringify(service)} }`,
      start: String(Math.floor(window.since.getTime() / 1000)),
      end: String(Math.ceil(window.until.getTime() / 1000)),
      limit: '20',
    });
    const searchUrl = `${this.url}/api/search?${parameters.toString()}`;
    const search = await this.get(searchUrl);
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
      const trace = await this.get(url);
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
