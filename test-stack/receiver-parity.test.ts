import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../src/testing/index.js';
import { startCollector, type Collector } from '../scripts/stack/stack.js';

const binaries = inject('stackBinaries');
let collector: Collector;
let receiver: OtlpReceiver;

beforeAll(async () => {
  // Its exporters point nowhere: only what its OTLP/HTTP receiver answers matters here.
  collector = await startCollector(binaries.collector, {
    env: { JAEGER_OTLP_ENDPOINT: '127.0.0.1:9', TEMPO_OTLP_ENDPOINT: '127.0.0.1:9' },
  });
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await collector?.process.stop();
  await receiver?.close();
});

const TRACE = '"traceId":"0102030405060708090a0b0c0d0e0f10"';
const SPAN = '"spanId":"0102030405060708"';
const spans = (span: string): string =>
  `{"resourceSpans":[{"scopeSpans":[{"spans":[{${span}}]}]}]}`;

/** Requests a trace exporter (or a stranger) may send, each answered by both servers. */
const REQUESTS: { what: string; path?: string; init: RequestInit }[] = [
  { what: 'an empty JSON request', init: json('{}') },
  { what: 'a span without ids', init: json(spans('"name":"x"')) },
  { what: 'an unknown field', init: json(spans(`${TRACE},${SPAN},"name":"x","bogus":1`)) },
  {
    what: 'times as numbers',
    init: json(spans(`${TRACE},${SPAN},"name":"x","startTimeUnixNano":1700000000000000000`)),
  },
  {
    what: 'enum names',
    init: json(spans(`${TRACE},${SPAN},"name":"x","kind":"SPAN_KIND_SERVER"`)),
  },
  { what: 'resourceSpans null', init: json('{"resourceSpans":null}') },
  {
    what: 'JSON with a charset',
    init: json('{}', { 'content-type': 'application/json; charset=utf-8' }),
  },
  { what: 'gzipped JSON', init: json(gzipSync('{}'), { 'content-encoding': 'gzip' }) },
  { what: 'an empty protobuf request', init: protobuf(new Uint8Array(0)) },
  { what: 'malformed JSON', init: json('{nope') },
  { what: 'a JSON array', init: json('[]') },
  {
    what: 'a trace id that is not hex',
    init: json(spans(`"traceId":"zz${'0'.repeat(30)}",${SPAN}`)),
  },
  { what: 'a 4-byte span id', init: json(spans(`${TRACE},"spanId":"01020304"`)) },
  {
    what: 'an int attribute that is not a number',
    init: json(spans(`${TRACE},${SPAN},"attributes":[{"key":"a","value":{"intValue":"x1"}}]`)),
  },
  { what: 'malformed protobuf', init: protobuf(Uint8Array.of(0xff, 0xff, 0xff)) },
  { what: 'a body that is not gzip', init: json('{}', { 'content-encoding': 'gzip' }) },
  { what: 'an unknown content encoding', init: json('{}', { 'content-encoding': 'br' }) },
  { what: 'text/plain', init: json('{}', { 'content-type': 'text/plain' }) },
  { what: 'a GET', init: { method: 'GET' } },
  { what: 'another path', path: '/v1/nothing', init: json('{}') },
];

function json(body: string | Uint8Array, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body };
}

function protobuf(body: Uint8Array): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body };
}

/** Status, and for an OTLP answer (200 or 400) the body as the client reads it. */
async function answer(base: string, path: string, init: RequestInit): Promise<unknown> {
  const response = await fetch(`${base}${path}`, init);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200 && response.status !== 400) return { status: response.status };
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    const body = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    // The messages are each program's own words; the gRPC code is the contract.
    return { status: response.status, type, body: 'code' in body ? { code: body.code } : body };
  }
  return {
    status: response.status,
    type,
    body: response.status === 200 ? [...bytes] : `google.rpc.Status code ${bytes[1]}`,
  };
}

describe("tooltrace/testing's OTLP/HTTP receiver against the real Collector's", () => {
  for (const request of REQUESTS) {
    it(`answers ${request.what} as the Collector does`, async () => {
      const path = request.path ?? '/v1/traces';
      const real = await answer(collector.otlpHttpUrl, path, request.init);
      const ours = await answer(receiver.url, path, request.init);
      expect(ours).toEqual(real);
    });
  }
});
