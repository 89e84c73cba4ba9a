import { spansOfOtlpJson } from './otlp-json-spans.js';
import {
  excerpt,
  HttpTraceBackend,
  type BackendAnswer,
  type QueryWindow,
} from './trace-backend.js';

/**
 * Jaeger v2's query API, `api_v3` over HTTP (the UI port, 16686): `GET /api/v3/traces` with
 * `query.service_name`, `query.start_time_min`/`max` (RFC 3339) and `query.search_depth`. The
 * answer is OTLP/JSON, `{"result":{"resourceSpans":[…]}}`, one such object per line when it is
 * streamed in chunks; no trace at all is a 404.
 *
 * Its URL is the base URL of the query service, e.g. `http://127.0.0.1:16686`.
 */
export class JaegerBackend extends HttpTraceBackend {
  readonly name = 'Jaeger';

  async query(service: string, window: QueryWindow): Promise<BackendAnswer> {
    const parameters = new URLSearchParams({
      'query.service_name': service,
      'query.start_time_min': window.since.toISOString(),
      'query.start_time_max': window.until.toISOString(),
      'query.search_depth': '20',
    });
    const url = `${this.url}/api/v3/traces?${parameters.toString()}`;
    const answer = await this.get(url);
    if (!answer.ok) return answer;
    if (answer.status === 404) return { ok: true, spans: [] };
    if (answer.status !== 200) {
      return { ok: false, reason: `GET ${url}: HTTP ${answer.status} ${excerpt(answer.text)}` };
    }
    try {
      const spans = answer.text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .flatMap((line, index) => {
          const chunk: unknown = JSON.parse(line);
          const error = (chunk as { error?: { message?: unknown } }).error;
          if (error !== undefined) throw new Error(`chunk ${index + 1}: ${String(error.message)}`);
          return spansOfOtlpJson(chunk, `Jaeger chunk ${index + 1}`);
        });
      return { ok: true, spans };
    } catch (error) {
      return { ok: false, reason: `GET ${url}: ${(error as Error).message}` };
    }
  }
}
