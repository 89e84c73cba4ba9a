import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EventBus } from '../bus/index.js';
import type { TraceBy } from '../otel/index.js';
import {
  detectResourceFromEnv,
  EventPipeline,
  SidecarMetrics,
  traceSidecarBus,
} from '../sidecar/pipeline/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { DEFAULT_MAX_LINE_BYTES, type DecodeFailure } from '../wire/index.js';
import { DrawnSpans, type SpansLeftOut } from './drawn-spans.js';
import { receivedSpanOf } from './received-span-of.js';

/** Options for {@link readJournalSpans}. */
export interface ReadJournalOptions {
  /**
   * How calls are grouped into traces, as the sidecar's `--trace-by`.
   * @default 'causal-root' (the sidecar's default: a trace per turn)
   */
  traceBy?: TraceBy;
  /** Read for `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * Where the spans are held for drawing, within its bounds; the caller may
   * {@link DrawnSpans.release | release} them half-way.
   * @default a new DrawnSpans with its default limits
   */
  held?: DrawnSpans;
  /** Told about each line skipped, with its number (1-based) and why. */
  onBadLine?: (lineNumber: number, failure: DecodeFailure) => void;
  /** Told about every span as it ends, held or not (the summary counts them all). */
  onSpan?: (span: ReceivedSpan) => void;
  /** Which spans are held for drawing. @default every span */
  hold?: (span: ReceivedSpan) => boolean;
  /** Kept up to date while reading, for a progress line. */
  progress?: ReadProgress;
}

/** How far reading went: updated as each chunk is read, so a timer can show it. */
export interface ReadProgress {
  bytes: number;
  lines: number;
  /** Tool calls whose span ended. (Both add up over two readings of one file.) */
  calls: number;
}

/** What {@link readJournalSpans} made of a journal. */
export interface JournalSpans {
  /** The spans held for drawing, in the order they ended. */
  spans: readonly ReceivedSpan[];
  /** What was not held (see {@link DrawnSpans}). */
  leftOut: SpansLeftOut;
  /** Lines replayed as events. */
  events: number;
  /** Lines skipped as bad. */
  badLines: number;
  /** Fields of the wrong type left out of accepted lines, by `"{event type} {field}"`. */
  fieldsDropped: Record<string, number>;
}

const SERVICE_NAME = 'tooltrace-view';

/**
 * Streams an NDJSON event journal (tooltrace's or a Nexus journal) through the sidecar's
 * pipeline and tracer wiring (`traceSidecarBus`, the function the sidecar itself calls), into
 * spans: the reading
 * half of `tooltrace view`. The bytes are read chunk by chunk and each line is replayed as it
 * arrives, so memory is bounded by the spans held for drawing (see {@link DrawnSpans}) and the
 * subscriber's own bounds, not by the size of the journal. Spans are taken as they end, in this
 * process: nothing is exported, and nothing is waited for once the input ends (open calls are
 * ended as at a sidecar's shutdown). Bad lines are skipped and counted, each told to
 * `onBadLine` with its number; every valid line around them still goes through.
 */
export async function readJournalSpans(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: ReadJournalOptions = {},
): Promise<JournalSpans> {
  const env = options.env ?? process.env;
  const resource = await detectResourceFromEnv(env, SERVICE_NAME);
  const drawn = options.held ?? new DrawnSpans();
  const progress = options.progress;
  const collector: SpanProcessor = {
    onStart: () => {},
    onEnd: (ended: ReadableSpan) => {
      const span = receivedSpanOf(ended);
      if (progress !== undefined && span.attributes['gen_ai.operation.name'] === 'execute_tool') {
        progress.calls += 1;
      }
      options.onSpan?.(span);
      if (options.hold?.(span) ?? true) drawn.add(span);
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const metrics = new SidecarMetrics();
  const bus = new EventBus({ ringSize: 0, dispatchFrames: false });
  // The sidecar's own replay: lines without event_id pair by tool call id, traceparents parent.
  const pipeline = new EventPipeline({ bus, metrics, maxLineBytes: DEFAULT_MAX_LINE_BYTES });
  // The sidecar's own tracer wiring, the collector in place of its export processor: trace ids,
  // span ids and attributes (the client's name among them) are the sidecar's by construction.
  const tracing = traceSidecarBus({
    bus,
    pipeline,
    processor: collector,
    resource,
    traceBy: options.traceBy ?? 'causal-root',
    // A snapshot timer firing while a slow file is read would make the drawing depend on read
    // speed; every call ends (or is ended at the input's end) anyway.
    liveUpdates: false,
  });
  let events = 0;
  let badLines = 0;
  // The sidecar's own line path: lines split, numbered, blank ones skipped, bad ones counted.
  const source = pipeline.source('file', undefined, 'file', (lineNumber, failure) => {
    if (progress !== undefined) progress.lines += 1;
    if (failure === undefined) {
      events += 1;
      return;
    }
    badLines += 1;
    options.onBadLine?.(lineNumber, failure);
  });
  try {
    for await (const chunk of chunks) {
      if (progress !== undefined) progress.bytes += chunk.length;
      source.push(chunk);
    }
    source.end();
  } finally {
    // Ends what is still open, as a sidecar does at shutdown; the spans reach `drawn` at once.
    await tracing.shutdown();
  }
  return {
    spans: drawn.spans,
    leftOut: drawn.leftOut(),
    events,
    badLines,
    fieldsDropped: metrics.snapshot().fieldsDropped,
  };
}
