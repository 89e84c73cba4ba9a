import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/JSON `ResourceSpans`, as `tooltrace demo --out` writes them (hex ids, numeric enums). */
export type ResourceSpansJson = {
  resource?: { attributes?: { key: string; value: Record<string, unknown> }[] };
  scopeSpans: { scope?: unknown; spans: SpanJson[] }[];
};

/** An OTLP/JSON span. */
export type SpanJson = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
  [key: string]: unknown;
};

/** A request a stand-in answered, for assertions. */
export interface StandInRequest {
  path: string;
  query: URLSearchParams;
}

/** A local HTTP server answering like one tracing backend, from the spans it was given. */
export interface BackendStandIn {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: StandInRequest[];
  /** What it stores from now on (a backend that just ingested a trace). */
  store(resourceSpans: readonly ResourceSpansJson[]): void;
  close(): Promise<void>;
}

const KIND_NAMES = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_NAMES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

/**
 * Jaeger v2's `api_v3` over HTTP, as its API documentation describes it: `GET /api/v3/traces`
 * needs `query.service_name`, RFC 3339 `query.start_time_min`/`max` and a positive
 * `query.search_depth` (400 otherwise); it streams one `{"result":{"resourceSpans":[…]}}` object
 * per trace, one per line, in protobuf's JSON mapping (enum names, hex ids); 404 when nothing
 * matches.
 */
export function startJaegerStandIn(): Promise<BackendStandIn> {
  return startStandIn((url, stored, response) => {
    if (url.pathname !== '/api/v3/traces') return notFound(response);
    const query = url.searchParams;
    const service = query.get('query.service_name');
    const since = rfc3339(query.get('query.start_time_min'));
    const until = rfc3339(query.get('query.start_time_max'));
    const depth = Number(query.get('query.search_depth'));
    if (
      service === null ||
      service === '' ||
      since === undefined ||
      until === undefined ||
      !(depth > 0)
    ) {
      return json(response, 400, { error: { httpCode: 400, message: 'malformed query' } });
    }
    const traces = tracesOf(stored, service, since * 1_000_000n, until * 1_000_000n).slice(
      0,
      depth,
    );
    if (traces.length === 0) {
      return json(response, 404, {
        error: { grpcCode: 5, httpCode: 404, message: 'No traces found' },
      });
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    for (const trace of traces) {
      const resourceSpans = trace.map((resource) => protoJson(resource, (id) => id));
      response.write(`${JSON.stringify({ result: { resourceSpans } })}\n`);
    }
    response.end();
  });
}

/**
 * Tempo's HTTP API, as its API documentation describes it: `GET /api/search` with a TraceQL `q`
 * naming `resource.service.name` and `start`/`end` in Unix seconds answers
 * `{"traces":[{"traceID",…}],"metrics":{…}}` (hex ids, leading zeros dropped as Tempo does);
 * `GET /api/traces/<id>` answers `{"batches":[…]}` with base64 ids and enum names, 404 for an
 * unknown id.
 */
export function startTempoStandIn(): Promise<BackendStandIn> {
  return startStandIn((url, stored, response) => {
    if (url.pathname === '/api/search') {
      const service = /resource\.service\.name\s*=\s*"([^"]*)"/.exec(
        url.searchParams.get('q') ?? '',
      )?.[1];
      const start = url.searchParams.get('start');
      const end = url.searchParams.get('end');
      if (service === undefined || !/^\d+$/.test(start ?? '') || !/^\d+$/.test(end ?? '')) {
        return json(response, 400, 'invalid TraceQL query or time range');
      }
      const traces = tracesOf(
        stored,
        service,
        BigInt(start!) * 1_000_000_000n,
        BigInt(end!) * 1_000_000_000n,
      );
      return json(response, 200, {
        traces: traces.map((trace) => {
          const spans = trace.flatMap((resource) =>
            resource.scopeSpans.flatMap((scope) => scope.spans),
          );
          const root = spans.find((span) => (span.parentSpanId ?? '') === '') ?? spans[0]!;
          return {
            traceID: root.traceId.replace(/^0+/, ''),
            rootServiceName: serviceOf(trace[0]!),
            rootTraceName: root.name,
            startTimeUnixNano: root.startTimeUnixNano,
            durationMs: 1,
          };
        }),
        metrics: { inspectedBytes: '1024', completedJobs: 1, totalJobs: 1 },
      });
    }
    const byId = /^\/api\/traces\/([0-9a-fA-F]{1,32})$/.exec(url.pathname);
    if (byId === null) return notFound(response);
    const traceId = byId[1]!.toLowerCase().padStart(32, '0');
    const trace = tracesOf(stored, undefined, 0n, 2n ** 63n).find(
      (candidate) => candidate[0]!.scopeSpans[0]!.spans[0]!.traceId === traceId,
    );
    if (trace === undefined) return json(response, 404, 'trace not found');
    const base64 = (id: string): string => Buffer.from(id, 'hex').toString('base64');
    return json(response, 200, { batches: trace.map((resource) => protoJson(resource, base64)) });
  });
}

/** The spans' `service.name`. */
export function serviceOf(resource: ResourceSpansJson): string {
  const value = resource.resource?.attributes?.find(
    (attribute) => attribute.key === 'service.name',
  )?.value;
  return typeof value?.stringValue === 'string' ? value.stringValue : '';
}

async function startStandIn(
  answer: (url: URL, stored: readonly ResourceSpansJson[], response: ServerResponse) => void,
): Promise<BackendStandIn> {
  let stored: readonly ResourceSpansJson[] = [];
  const requests: StandInRequest[] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    requests.push({ path: url.pathname, query: url.searchParams });
    if (request.method !== 'GET') return json(response, 405, 'GET only');
    answer(url, stored, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    store(resourceSpans) {
      stored = structuredClone([...resourceSpans]);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resource spans split per trace (one resource per trace and resource), filtered by service and start time. */
function tracesOf(
  stored: readonly ResourceSpansJson[],
  service: string | undefined,
  fromNano: bigint,
  toNano: bigint,
): ResourceSpansJson[][] {
  const traces = new Map<string, ResourceSpansJson[]>();
  for (const resource of stored) {
    if (service !== undefined && serviceOf(resource) !== service) continue;
    const byTrace = new Map<string, SpanJson[]>();
    for (const span of resource.scopeSpans.flatMap((scope) => scope.spans)) {
      const start = BigInt(span.startTimeUnixNano);
      if (start < fromNano || start > toNano) continue;
      byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
    }
    for (const [traceId, spans] of byTrace) {
      const scope = resource.scopeSpans[0]?.scope;
      traces.set(traceId, [
        ...(traces.get(traceId) ?? []),
        { ...resource, scopeSpans: [{ scope, spans }] },
      ]);
    }
  }
  return [...traces.values()];
}

/** A resource in protobuf's JSON mapping: enum names, ids through `id`. */
function protoJson(resource: ResourceSpansJson, id: (hex: string) => string): unknown {
  return {
    ...resource,
    scopeSpans: resource.scopeSpans.map((scope) => ({
      ...scope,
      spans: scope.spans.map((span) => ({
        ...span,
        traceId: id(span.traceId),
        spanId: id(span.spanId),
        ...((span.parentSpanId ?? '') === ''
          ? { parentSpanId: undefined }
          : { parentSpanId: id(span.parentSpanId!) }),
        kind: KIND_NAMES[span.kind ?? 0],
        status: { ...span.status, code: STATUS_NAMES[span.status?.code ?? 0] },
      })),
    })),
  };
}

function rfc3339(text: string | null): bigint | undefined {
  if (text === null || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text))
    return undefined;
  return BigInt(Date.parse(text));
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function notFound(response: ServerResponse): void {
  json(response, 404, 'no such endpoint');
}
