/**
 * How fast the test receiver decodes what the SDK exporters send: `decodeTraceRequest` on
 * protobuf and on JSON bodies, measured side by side in one run, with the bare parse
 * (`Type.decode`, `JSON.parse`) of the same bodies as the floor.
 *
 *   npx tsx bench/receiver.bench.ts [requests]
 *
 * The bodies are real: a BasicTracerProvider feeds 512-span batches to the OTLP/HTTP protobuf
 * and JSON exporters, which post them to a throwaway local server that keeps the bytes. Each
 * span is a tool call (`execute_tool x`) with 15 attributes and 10 stream events. Rounds
 * alternate between the rows so machine noise hits them alike; the best round of each is
 * reported.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { decodeTraceRequest } from '../src/testing/index.js';
import { otlpProtoTypes } from '../test/otlp/otlp-proto-schema.js';

const REQUESTS = Number(process.argv[2] ?? 8);
const SPANS_PER_REQUEST = 512;
const EVENTS_PER_SPAN = 10;
const ROUNDS = 7;
/** The rate benchmarks push through the receiver from a sidecar. */
const TARGET_SPANS_PER_SECOND = 25_000;
const TOOLS = ['search', 'fetch_page', 'run_sql', 'read_file', 'write_file'];

type Encoding = 'protobuf' | 'json';

/** Starts a server that answers every POST with an empty success and keeps its body. */
async function startCapture(encoding: Encoding): Promise<{ server: Server; bodies: Buffer[] }> {
  const bodies: Buffer[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      const answer = encoding === 'json' ? '{}' : '';
      response.writeHead(200, {
        'Content-Type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
        'Content-Length': String(Buffer.byteLength(answer)),
      });
      response.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, bodies };
}

function toolAttributes(call: number): Attributes {
  const tool = TOOLS[call % TOOLS.length]!;
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'gen_ai.tool.call.id': `call_${call.toString(36).padStart(8, '0')}`,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.description': `Runs ${tool} against the workspace and streams partial results`,
    'tooltrace.session.id': 'session-7f3a9c',
    'tooltrace.agent.id': 'agent-planner',
    'tooltrace.turn.id': `turn-${Math.floor(call / 4)}`,
    'tooltrace.causation.depth': call % 3,
    'tooltrace.stream.events': EVENTS_PER_SPAN,
    'tooltrace.stream.bytes': 4096 + (call % 997),
    'tooltrace.duration.ms': 12.5 + (call % 100) / 7,
    'tooltrace.ok': call % 17 !== 0,
    'tooltrace.arguments': JSON.stringify({ query: `flights to Lisbon ${call}`, limit: 5 }),
    'tooltrace.tags': ['streaming', 'retryable', tool],
  };
}

/**
 * Captures `REQUESTS` bodies of 512 spans each per encoding. One provider feeds both exporters,
 * so the protobuf and the JSON bodies carry the same spans.
 */
async function captureBodies(): Promise<Record<Encoding, Buffer[]>> {
  const total = REQUESTS * SPANS_PER_REQUEST;
  const captures = { protobuf: await startCapture('protobuf'), json: await startCapture('json') };
  const processor = (encoding: Encoding): BatchSpanProcessor => {
    const address = captures[encoding].server.address() as AddressInfo;
    const url = `http://127.0.0.1:${address.port}/v1/traces`;
    const exporter =
      encoding === 'json'
        ? new JsonTraceExporter({ url, compression: 'none' as never })
        : new ProtobufTraceExporter({ url, compression: 'none' as never });
    return new BatchSpanProcessor(exporter, {
      maxExportBatchSize: SPANS_PER_REQUEST,
      maxQueueSize: total,
      scheduledDelayMillis: 60_000,
    });
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'tooltrace-bench',
      'service.version': '0.1.0',
      'deployment.environment.name': 'bench',
    }),
    spanProcessors: [processor('protobuf'), processor('json')],
  });
  const tracer = provider.getTracer('tooltrace', '0.1.0');
  for (let call = 0; call < total; call += 1) {
    const tool = TOOLS[call % TOOLS.length]!;
    const span = tracer.startSpan(`execute_tool ${tool}`, {
      kind: SpanKind.INTERNAL,
      attributes: toolAttributes(call),
    });
    for (let event = 0; event < EVENTS_PER_SPAN; event += 1) {
      span.addEvent('tool.stream.partial', {
        'tooltrace.event.id': `evt_${call}_${event}`,
        'tooltrace.stream.sequence': event,
        'tooltrace.stream.bytes': 400 + event,
      });
    }
    if (call % 17 === 0) span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool failed' });
    span.end();
  }
  await provider.forceFlush();
  await provider.shutdown();
  for (const encoding of ['protobuf', 'json'] as const) {
    const { server, bodies } = captures[encoding];
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (bodies.length !== REQUESTS) {
      throw new Error(`expected ${REQUESTS} ${encoding} requests, captured ${bodies.length}`);
    }
  }
  return { protobuf: captures.protobuf.bodies, json: captures.json.bodies };
}

let sink = 0;

interface Row {
  name: string;
  /** Decodes every body once and returns how many spans that was. */
  run: () => number;
}

function nanosPerSpan(row: Row): number {
  const start = process.hrtime.bigint();
  const spans = row.run();
  return Number(process.hrtime.bigint() - start) / spans;
}

async function main(): Promise<void> {
  const { protobuf: protobufBodies, json: jsonBodies } = await captureBodies();
  const spansPerRound = REQUESTS * SPANS_PER_REQUEST;
  const { exportTraceServiceRequest } = otlpProtoTypes();

  const decode = (bodies: Buffer[], contentType: string): number => {
    let spans = 0;
    for (const body of bodies) spans += decodeTraceRequest(body, contentType).length;
    return spans;
  };
  const rows: Row[] = [
    { name: 'decodeTraceRequest protobuf', run: () => decode(protobufBodies, 'protobuf') },
    { name: 'decodeTraceRequest JSON', run: () => decode(jsonBodies, 'json') },
    {
      name: '  floor: Type.decode alone',
      run: () => {
        for (const body of protobufBodies) sink += exportTraceServiceRequest.decode(body) ? 1 : 0;
        return spansPerRound;
      },
    },
    {
      name: '  floor: JSON.parse alone',
      run: () => {
        for (const body of jsonBodies) {
          sink += (JSON.parse(body.toString('utf8')) as object) ? 1 : 0;
        }
        return spansPerRound;
      },
    },
  ];

  // Both encodings of the same spans must decode alike; a fast decoder that is wrong is no use.
  // The exporters send batches concurrently, so requests may arrive in either order: match
  // spans by id.
  const fromJson = new Map(
    jsonBodies
      .flatMap((body) => decodeTraceRequest(body, 'json'))
      .map((span) => [span.spanId, span]),
  );
  const fromProtobuf = protobufBodies.flatMap((body) => decodeTraceRequest(body, 'protobuf'));
  const same =
    fromProtobuf.length === fromJson.size &&
    fromProtobuf.every((span) =>
      isDeepStrictEqual({ ...span, encoding: 'json' }, fromJson.get(span.spanId)),
    );

  for (const row of rows) row.run(); // warm-up
  const best = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const row of rows) {
      best.set(row.name, Math.min(best.get(row.name) ?? Infinity, nanosPerSpan(row)));
    }
  }

  const kib = (bodies: Buffer[]): string =>
    (bodies.reduce((sum, body) => sum + body.length, 0) / bodies.length / 1024).toFixed(0);
  console.log(
    `${REQUESTS} requests of ${SPANS_PER_REQUEST} spans (15 attributes, ${EVENTS_PER_SPAN} events each); ` +
      `protobuf ${kib(protobufBodies)} KiB, JSON ${kib(jsonBodies)} KiB a request; best of ${ROUNDS} rounds`,
  );
  console.log(`${''.padEnd(30)} ${'µs/span'.padStart(8)} ${'spans/s'.padStart(10)}`);
  for (const [name, nanos] of best) {
    const rate = Math.round(1e9 / nanos).toLocaleString('en-US');
    console.log(`${name.padEnd(30)} ${(nanos / 1000).toFixed(2).padStart(8)} ${rate.padStart(10)}`);
  }
  const protobuf = best.get('decodeTraceRequest protobuf')!;
  const json = best.get('decodeTraceRequest JSON')!;
  const protobufFloor = best.get('  floor: Type.decode alone')!;
  const jsonFloor = best.get('  floor: JSON.parse alone')!;
  console.log(`ratio JSON / protobuf:         ${(json / protobuf).toFixed(2)}x`);
  console.log(
    `ratio decode / bare parse:     protobuf ${(protobuf / protobufFloor).toFixed(2)}x, ` +
      `JSON ${(json / jsonFloor).toFixed(2)}x`,
  );
  const share = (nanos: number): string =>
    `${((TARGET_SPANS_PER_SECOND * nanos) / 1e7).toFixed(0)}%`;
  console.log(
    `one core's time at ${TARGET_SPANS_PER_SECOND.toLocaleString('en-US')} spans/s: ` +
      `protobuf ${share(protobuf)}, JSON ${share(json)}`,
  );
  console.log(`protobuf and JSON decode alike: ${same ? 'yes' : 'NO'}`);
  if (sink === 0) console.log('(nothing was decoded)');
}

await main();
