/**
 * What OTLP encoding costs per span, measured side by side in one run (`npm run bench:encoder`):
 * the stock serializers the OTLP exporters run (`ProtobufTraceSerializer`, `JsonTraceSerializer`
 * of `@opentelemetry/otlp-transformer`) against the sidecar's own encoders (`OtlpTraceEncoder`,
 * `OtlpJsonTraceEncoder`), on the same SDK spans, in batches of 512 as the sidecar exports them.
 *
 *   npx tsx bench/encoder.bench.ts [spans] [--against <checkout>]
 *
 * The spans are what the sidecar makes of a tool call: `execute_tool search`, 21 attributes
 * (strings, ints, doubles), 10 span events of 2 attributes each, status OK, under the resource
 * the sidecar detects (process, host, SDK: 17 attributes). With `--against`, the encoders of
 * another built checkout (`<checkout>/dist/sidecar/export/`) run in the same rounds, so a change
 * to the encoders is measured A/B in one process; but the copy loaded second can run slower for
 * that alone (protobuf about 1.5× slower either way round, 2026-12-04), so swap the two
 * checkouts too, or compare each encoder's ratio to the stock serializer over separate runs
 * (what the merge of the two encoders into one walk was judged by). Every row is the median time of interleaved
 * rounds (a noisy neighbour slows every row alike), after a warm-up round.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { OtlpJsonTraceEncoder, OtlpTraceEncoder, type SpanBatch } from '../src/otlp/index.js';
import { tooltraceNumberTypes } from '../src/sidecar/export/tooltrace-number-types.js';
import { detectResource } from '../src/sidecar/pipeline/detect-resource.js';

const BATCH = 512;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const againstAt = process.argv.indexOf('--against');
const AGAINST = againstAt === -1 ? undefined : process.argv[againstAt + 1];
const positional = process.argv.slice(2).filter((_, index, all) => {
  return all[index] !== '--against' && all[index - 1] !== '--against';
});
const SPANS = Number(positional[0] ?? 10 * BATCH);

/** Anything that turns a batch of spans into a request body. */
interface Encoder {
  encode(spans: readonly ReadableSpan[]): Uint8Array;
  /** Takes a body back once it was sent (the exporters do), where the encoder reuses memory. */
  release?(body: Uint8Array): void;
}

/** Our encoders: a batch opened per request, its body given back once sent (as the exporters do). */
interface BatchingEncoder {
  openBatch(): SpanBatch<Uint8Array>;
  release(body: Uint8Array): void;
}

/** `encoder` as the bench calls it; a checkout from before `openBatch` has `encode` itself. */
function perRequest(encoder: BatchingEncoder | Encoder): Encoder {
  if (!('openBatch' in encoder)) return encoder;
  return {
    encode: (spans) => {
      const batch = encoder.openBatch();
      for (const span of spans) batch.add(span);
      return batch.close();
    },
    release: (body) => encoder.release(body),
  };
}

interface Row {
  name: string;
  encoder: Encoder;
  /** Seconds per round. */
  times: number[];
  bytes: number;
}

async function generateSpans(count: number): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: await detectResource({ 'service.name': 'tooltrace-sidecar' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('tooltrace', '0.1.0');
  const start = Date.parse('2026-05-01T12:00:00Z');
  for (let call = 0; call < count; call += 1) {
    const startMs = start + call * 20;
    const span = tracer.startSpan('execute_tool search', {
      kind: SpanKind.INTERNAL,
      startTime: startMs,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': `tc_${call}`,
        'gen_ai.conversation.id': 's1',
        'gen_ai.agent.id': 'a1',
        'gen_ai.agent.name': 'a1',
        'tooltrace.depth': 0,
        'tooltrace.event.id': eventId(call * 12),
        'tooltrace.event.sequence': call * 100,
        'tooltrace.event.source': 'search',
        'tooltrace.turn.id': 't1',
      },
    });
    let partialBytes = 0;
    for (let sequence = 1; sequence <= 10; sequence += 1) {
      const progress = sequence % 2 === 1;
      const attributes: Attributes = { 'tooltrace.stream.sequence': sequence };
      if (progress) {
        attributes['tooltrace.stream.progress'] = sequence / 10;
      } else {
        const bytes = `chunk ${sequence} of ${call}`.length;
        partialBytes += bytes;
        attributes['tooltrace.stream.payload.bytes'] = bytes;
      }
      const type = progress ? 'tool.stream.progress' : 'tool.stream.partial';
      span.addEvent(type, attributes, startMs + sequence + sequence / 1e6);
    }
    span.setAttributes({
      'tooltrace.stream.partial.count': 5,
      'tooltrace.stream.progress.count': 5,
      'tooltrace.stream.partial.bytes': partialBytes,
      'tooltrace.stream.time_to_first_partial_ms': 2.000002,
      'tooltrace.stream.last_progress': 0.9,
      'tooltrace.stream.events.recorded': 10,
      'tooltrace.stream.events.coalesced': 0,
      'tooltrace.end_reason': 'result',
      'tooltrace.result.event.id': eventId(call * 12 + 11),
    });
    span.setStatus({ code: SpanStatusCode.OK });
    span.end(startMs + 11.000011);
  }
  // Shutting the provider down would clear the exporter: the spans are taken first.
  const finished = memory.getFinishedSpans();
  await provider.shutdown();
  return finished;
}

function eventId(index: number): string {
  return (index * 2_654_435_761).toString(16).padStart(32, '0').slice(-32);
}

/** The encoders of another built checkout, for an A/B run. */
async function encodersOf(checkout: string): Promise<{ protobuf: Encoder; json: Encoder }> {
  // The encoders live in dist/otlp; a checkout from before that has them in the sidecar's export.
  const folder = existsSync(resolve(checkout, 'dist/otlp/otlp-trace-encoder.js'))
    ? 'dist/otlp'
    : 'dist/sidecar/export';
  const at = (file: string): string => pathToFileURL(resolve(checkout, folder, file)).href;
  const protobuf = (await import(at('otlp-trace-encoder.js'))) as {
    OtlpTraceEncoder: new () => BatchingEncoder | Encoder;
  };
  const json = (await import(at('otlp-json-encoder.js'))) as {
    OtlpJsonTraceEncoder: new () => BatchingEncoder | Encoder;
  };
  return {
    protobuf: perRequest(new protobuf.OtlpTraceEncoder()),
    json: perRequest(new json.OtlpJsonTraceEncoder()),
  };
}

function row(name: string, encoder: Encoder): Row {
  return { name, encoder, times: [], bytes: 0 };
}

/** Encodes every batch once; returns the bytes written. */
function encodeAll(encoder: Encoder, batches: readonly ReadableSpan[][]): number {
  let bytes = 0;
  for (const batch of batches) {
    const body = encoder.encode(batch);
    bytes += body.byteLength;
    encoder.release?.(body);
  }
  return bytes;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const spans = await generateSpans(SPANS);
const batches: ReadableSpan[][] = [];
for (let index = 0; index < spans.length; index += BATCH) {
  batches.push(spans.slice(index, index + BATCH));
}
const stock = {
  protobuf: { encode: (batch: ReadableSpan[]) => ProtobufTraceSerializer.serializeRequest(batch)! },
  json: { encode: (batch: ReadableSpan[]) => JsonTraceSerializer.serializeRequest(batch)! },
};
const against = AGAINST === undefined ? undefined : await encodersOf(AGAINST);
const tables = {
  'http/protobuf': [
    row('stock ProtobufTraceSerializer', stock.protobuf),
    ...(against === undefined ? [] : [row(`OtlpTraceEncoder of ${AGAINST}`, against.protobuf)]),
    row('OtlpTraceEncoder', perRequest(new OtlpTraceEncoder(tooltraceNumberTypes()))),
  ],
  'http/json': [
    row('stock JsonTraceSerializer', stock.json),
    ...(against === undefined ? [] : [row(`OtlpJsonTraceEncoder of ${AGAINST}`, against.json)]),
    row('OtlpJsonTraceEncoder', perRequest(new OtlpJsonTraceEncoder(tooltraceNumberTypes()))),
  ],
};
const rows = [...tables['http/protobuf'], ...tables['http/json']];

for (const entry of rows) entry.bytes = encodeAll(entry.encoder, batches);
for (let round = 0; round < ROUNDS; round += 1) {
  for (const entry of rows) {
    const started = process.hrtime.bigint();
    encodeAll(entry.encoder, batches);
    entry.times.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

console.log(
  `encoder bench: ${spans.length} spans (21 attributes, 10 events of 2 attributes) in batches ` +
    `of ${BATCH}, median of ${ROUNDS} interleaved rounds, Node ${process.version}\n`,
);
const width = Math.max(...rows.map((entry) => entry.name.length));
for (const [protocol, table] of Object.entries(tables)) {
  console.log(protocol);
  const stockTime = median(table[0]!.times);
  for (const entry of table) {
    const time = median(entry.times);
    const microseconds = ((time / spans.length) * 1e6).toFixed(2).padStart(6);
    const bytesPerSpan = Math.round(entry.bytes / spans.length);
    console.log(
      `  ${entry.name.padEnd(width)}  ${microseconds} µs/span  ${String(bytesPerSpan).padStart(5)} B/span  ` +
        `${(stockTime / time).toFixed(2)}x the stock serializer's speed`,
    );
  }
  if (against !== undefined) {
    const before = median(table[1]!.times);
    const after = median(table[2]!.times);
    console.log(`  this checkout: ${(before / after).toFixed(2)}x the speed of ${AGAINST}`);
  }
  console.log('');
}
