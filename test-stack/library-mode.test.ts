import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  EventBus,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../src/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import {
  eventually,
  JaegerQuery,
  startCollector,
  startJaeger,
  tagOf,
  type Collector,
  type Jaeger,
  type JaegerTrace,
} from '../scripts/stack/stack.js';
import { allSpans, jaegerShapes, otlpShapes } from './stack-peers.js';
import type { ReceivedSpan } from '../src/otlp/index.js';

const binaries = inject('stackBinaries');
const SERVICE = 'library-mode';
const BEARER = 'Bearer eyZ0aGlzIGlzIGEgdG9rZW4abc123';
const SK_KEY = 'sk-proj4f9a8b7c6d5e4f3a2b1c0d9e8f7';

let jaeger: Jaeger;
let collector: Collector;
let sdkSpans: ReadableSpan[];
let traces: JaegerTrace[];

/**
 * An application in library mode, as users set it up: NodeSDK with the stock OTLP/HTTP protobuf
 * exporter pointed at the real Collector (the repo's config: masking, batching, on to Jaeger), and
 * tooltrace's subscriber on its bus, capturing content with tooltrace's own redaction turned off
 * so that only the Collector's masking stands between the secrets and Jaeger. A second span
 * processor keeps what the SDK exported, to compare with what Jaeger stores.
 */
async function runApplication(): Promise<void> {
  process.env.OTEL_METRICS_EXPORTER = 'none';
  process.env.OTEL_LOGS_EXPORTER = 'none';
  const memory = new InMemorySpanExporter();
  const sdk = new NodeSDK({
    serviceName: SERVICE,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${collector.otlpHttpUrl}/v1/traces` })),
      new SimpleSpanProcessor(memory),
    ],
    instrumentations: [],
  });
  sdk.start();
  const bus = new EventBus();
  const tracing = traceToolCalls(bus, { captureContent: true, redact: (_key, value) => value });

  // A progress event, then a partial one; a call's stream events are numbered from 1.
  const stream = (id: string, name: string, step: number, payload: string): void => {
    const base = { tool_name: name, tool_id: id, turn_id: 't1', payload };
    bus.emit(TOOL_STREAM_PROGRESS, { ...base, sequence: 2 * step - 1, progress: step / 3 });
    bus.emit(TOOL_STREAM_PARTIAL, { ...base, sequence: 2 * step });
  };
  // A call that streams and succeeds, with a nested call inside it.
  bus.emit(TOOL_INVOKE, { id: 'tc_ok', name: 'search', arguments: { query: 'spans' } });
  stream('tc_ok', 'search', 1, 'first page');
  bus.emit(TOOL_INVOKE, {
    id: 'tc_inner',
    name: 'fetch',
    arguments: { url: 'https://example.invalid/a' },
    parentCallId: 'tc_ok',
  });
  bus.emit(TOOL_RESULT, { id: 'tc_inner', name: 'fetch', output: 'page a' });
  stream('tc_ok', 'search', 2, 'second page');
  bus.emit(TOOL_RESULT, { id: 'tc_ok', name: 'search', output: '2 pages' });
  // A call that fails, with credentials in its arguments, its partial output and its error.
  bus.emit(TOOL_INVOKE, {
    id: 'tc_fail',
    name: 'call_api',
    arguments: { headers: { authorization: BEARER }, key: SK_KEY },
  });
  stream('tc_fail', 'call_api', 1, `retrying with ${SK_KEY}`);
  bus.emit(TOOL_RESULT, {
    id: 'tc_fail',
    name: 'call_api',
    output: '',
    error: `upstream refused ${BEARER}`,
    errorType: 'http_401',
  });
  // A call cancelled by its caller.
  bus.emit(TOOL_INVOKE, { id: 'tc_cancel', name: 'slow_search', arguments: { query: 'all' } });
  stream('tc_cancel', 'slow_search', 1, 'still looking');
  bus.emit(TOOL_RESULT, {
    id: 'tc_cancel',
    name: 'slow_search',
    output: '',
    error: 'the caller gave up',
    cancelled: true,
  });

  await tracing.shutdown();
  // Read before the SDK shuts down: shutting the in-memory exporter down empties it.
  sdkSpans = [...memory.getFinishedSpans()];
  await sdk.shutdown();
}

/** The SDK's spans in the read model's form, to share the shape function with OTLP files. */
function asReceived(spans: readonly ReadableSpan[]): ReceivedSpan[] {
  return spans.map(
    (span) =>
      ({
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId ?? '',
        name: span.name,
        status: { code: span.status.code, message: span.status.message ?? '' },
        events: span.events.map((event) => ({ name: event.name })),
        attributes: span.attributes,
      }) as unknown as ReceivedSpan,
  );
}

beforeAll(async () => {
  jaeger = await startJaeger(binaries.jaeger);
  collector = await startCollector(binaries.collector, {
    env: { JAEGER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint },
    // No Tempo; no Prometheus either (the metrics pipeline's exporter resolves its host only
    // when a metric comes, and this application sends none).
    overrides: ['service::pipelines::traces::exporters: [otlp_grpc/jaeger]'],
  });
  await runApplication();
  const query = new JaegerQuery(jaeger.queryUrl);
  const expected = sdkSpans.length;
  traces = await eventually(`${expected} spans of ${SERVICE} in Jaeger`, async () => {
    const found = await query.traces(SERVICE);
    return allSpans(found).length >= expected ? found : undefined;
  });
});
afterAll(async () => {
  await collector?.process.stop();
  await jaeger?.process.stop();
});

describe('library mode: NodeSDK exporting straight to the real Collector', () => {
  it('arrives in Jaeger with the shape the SDK exported', () => {
    // Three calls and the one nested in the first.
    expect(sdkSpans).toHaveLength(4);
    expect(allSpans(traces)).toHaveLength(sdkSpans.length);
    // The same, but for the error message the Collector masks (checked on its own below).
    const masked = otlpShapes(asReceived(sdkSpans)).map((shape) => ({
      ...shape,
      message: shape.message.replace(BEARER, 'Bearer [REDACTED]'),
    }));
    expect(jaegerShapes(traces)).toEqual(masked);
  });

  it('tells the OK, failed and cancelled calls apart', () => {
    const byCall = new Map(
      allSpans(traces).map((span) => [String(tagOf(span, 'gen_ai.tool.call.id')), span]),
    );
    expect(tagOf(byCall.get('tc_ok')!, 'otel.status_code')).toBe('OK');
    expect(tagOf(byCall.get('tc_fail')!, 'otel.status_code')).toBe('ERROR');
    expect(tagOf(byCall.get('tc_fail')!, 'error.type')).toBe('http_401');
    expect(tagOf(byCall.get('tc_cancel')!, 'otel.status_code')).toBe('ERROR');
    expect(tagOf(byCall.get('tc_cancel')!, 'tooltrace.tool.cancelled')).toBe(true);
    expect(tagOf(byCall.get('tc_fail')!, 'tooltrace.tool.cancelled')).not.toBe(true);
  });
});

describe("the Collector's credential masking (transform/mask-credentials, real OTTL and RE2)", () => {
  const failed = (): ReturnType<typeof allSpans>[number] =>
    allSpans(traces).find((span) => tagOf(span, 'gen_ai.tool.call.id') === 'tc_fail')!;

  it('received the secrets unmasked (tooltrace redaction off), so what Jaeger shows is its work', () => {
    const sent = JSON.stringify(
      sdkSpans.map((span) => [span.attributes, span.events, span.status]),
    );
    expect(sent).toContain(BEARER);
    expect(sent).toContain(SK_KEY);
  });

  it('masks the bearer token and the sk- key in the tool arguments', () => {
    const argumentsText = String(tagOf(failed(), 'gen_ai.tool.call.arguments'));
    expect(argumentsText).toContain('Bearer [REDACTED]');
    expect(argumentsText).toContain('sk-[REDACTED]');
  });

  it('masks the sk- key in the partial output event', () => {
    const partial = failed().logs.find((log) => tagOf(log, 'event') === 'tool.stream.partial');
    expect(JSON.stringify(partial?.fields)).toContain('retrying with sk-[REDACTED]');
  });

  it('masks the bearer token in the error message: the status and the exception event', () => {
    expect(tagOf(failed(), 'otel.status_description')).toBe('upstream refused Bearer [REDACTED]');
    const exception = failed().logs.find((log) => tagOf(log, 'event') === 'exception');
    expect(tagOf(exception!, 'exception.message')).toBe('upstream refused Bearer [REDACTED]');
  });

  it('leaves neither secret anywhere in what Jaeger stores', () => {
    const stored = JSON.stringify(traces);
    expect(stored).not.toContain(BEARER.slice('Bearer '.length));
    expect(stored).not.toContain(SK_KEY.slice('sk-'.length));
  });
});
