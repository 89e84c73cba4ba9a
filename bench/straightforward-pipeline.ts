/**
 * The program `tooltrace sidecar` has to beat, run as a child process by `sidecar.bench.ts`
 * (compiled to plain JavaScript first, so no TypeScript loader runs in it): read NDJSON from
 * stdin, `JSON.parse` each line, one SDK span per tool call, `BatchSpanProcessor`, the stock
 * OTLP/HTTP exporter for `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` or `http/json`) to
 * `OTEL_EXPORTER_OTLP_ENDPOINT`. It writes the same span content as the sidecar: the same span
 * attribute keys, the same span events with their attributes, the same status, and a resource
 * from the same detectors. Its batch queue is raised so a burst drops nothing, as the sidecar
 * drops nothing; it exits once `shutdown()` exported everything.
 *
 *   node straightforward-pipeline.mjs pipeline < journal.jsonl
 *   node straightforward-pipeline.mjs floor < journal.jsonl   # read lines and JSON.parse only
 */
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** The envelope keys the pipeline reads (Nexus journal lines, as the bench generates them). */
interface Envelope {
  seq: number;
  ts: string;
  type: string;
  event_id: string;
  source: string;
  session_id: string;
  agent_id: string;
  depth: number;
  payload: {
    ID?: string;
    Name?: string;
    TurnID?: string;
    Error?: string;
    tool_id?: string;
    sequence?: number;
    progress?: number;
    payload?: string;
  };
}

/** What the pipeline keeps per open call to write the same stream summary as the sidecar. */
interface OpenCall {
  span: Span;
  startMs: number;
  partials: number;
  progresses: number;
  partialBytes: number;
  firstPartialMs: number;
  lastProgress: number;
}

/** Calls each line of stdin with the line, as they come; resolves at the end of input. */
function readLines(onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let carry = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      const lines = (carry + chunk).split('\n');
      carry = lines.pop()!;
      for (const line of lines) if (line !== '') onLine(line);
    });
    process.stdin.on('end', () => {
      if (carry !== '') onLine(carry);
      resolve();
    });
    process.stdin.on('error', reject);
  });
}

async function floor(): Promise<void> {
  let odd = 0;
  await readLines((line) => {
    odd += (JSON.parse(line) as Envelope).seq & 1;
  });
  if (odd < 0) console.log(odd);
}

async function pipeline(): Promise<void> {
  const protocol = process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  const url = `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318'}/v1/traces`;
  // The stock exporter refuses more than 30 requests in flight, which a flush of a large backlog
  // exceeds (and the refusal, unhandled, ends the process): raised, so nothing is lost.
  const options = { url, concurrencyLimit: 100_000 };
  const exporter =
    protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
  const detected = detectResources({
    detectors: [hostDetector, processDetector, serviceInstanceIdDetector],
  });
  await detected.waitForAsyncAttributes?.();
  const provider = new BasicTracerProvider({
    resource: defaultResource()
      .merge(detected)
      .merge(resourceFromAttributes({ 'service.name': 'straightforward' })),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        maxQueueSize: 1_000_000,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 200,
      }),
    ],
  });
  const tracer = provider.getTracer('straightforward', '0.1.0');
  const open = new Map<string, OpenCall>();
  await readLines((line) => handleLine(JSON.parse(line) as Envelope, tracer, open));
  await provider.shutdown();
}

function handleLine(event: Envelope, tracer: Tracer, open: Map<string, OpenCall>): void {
  const payload = event.payload;
  const time = new Date(event.ts);
  if (event.type === 'tool.invoke') {
    const span = tracer.startSpan(`execute_tool ${payload.Name!}`, {
      kind: SpanKind.INTERNAL,
      startTime: time,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': payload.Name!,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': payload.ID!,
        'gen_ai.conversation.id': event.session_id,
        'gen_ai.agent.id': event.agent_id,
        'gen_ai.agent.name': event.agent_id,
        'tooltrace.depth': event.depth,
        'tooltrace.event.id': event.event_id,
        'tooltrace.event.sequence': event.seq,
        'tooltrace.event.source': event.source,
        'tooltrace.turn.id': payload.TurnID!,
      },
    });
    open.set(`${event.session_id}\u0000${payload.ID!}`, {
      span,
      startMs: time.getTime(),
      partials: 0,
      progresses: 0,
      partialBytes: 0,
      firstPartialMs: -1,
      lastProgress: -1,
    });
  } else if (event.type === 'tool.result') {
    const key = `${event.session_id}\u0000${payload.ID!}`;
    const call = open.get(key);
    if (call === undefined) return;
    open.delete(key);
    call.span.setAttributes({
      'tooltrace.stream.partial.count': call.partials,
      'tooltrace.stream.progress.count': call.progresses,
      'tooltrace.stream.partial.bytes': call.partialBytes,
      'tooltrace.stream.time_to_first_partial_ms': call.firstPartialMs,
      'tooltrace.stream.last_progress': call.lastProgress,
      'tooltrace.stream.events.recorded': call.partials + call.progresses,
      'tooltrace.stream.events.coalesced': 0,
      'tooltrace.end_reason': 'result',
      'tooltrace.result.event.id': event.event_id,
    });
    call.span.setStatus({ code: payload.Error ? SpanStatusCode.ERROR : SpanStatusCode.OK });
    call.span.end(time);
  } else {
    const call = open.get(`${event.session_id}\u0000${payload.tool_id!}`);
    if (call === undefined) return;
    const bytes = Buffer.byteLength(payload.payload ?? '');
    if (event.type === 'tool.stream.progress') {
      call.progresses += 1;
      call.lastProgress = payload.progress!;
      call.span.addEvent(
        event.type,
        {
          'tooltrace.stream.sequence': payload.sequence!,
          'tooltrace.stream.progress': payload.progress!,
        },
        time,
      );
    } else {
      call.partials += 1;
      call.partialBytes += bytes;
      if (call.firstPartialMs < 0) call.firstPartialMs = time.getTime() - call.startMs;
      call.span.addEvent(
        event.type,
        { 'tooltrace.stream.sequence': payload.sequence!, 'tooltrace.stream.payload.bytes': bytes },
        time,
      );
    }
  }
}

await (process.argv[2] === 'floor' ? floor() : pipeline());
