import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReliableSpanProcessor } from './reliable-span-processor.js';

/** What a {@link SpanDestination} is, for the words the logs use about it. */
export type SpanDestinationKind = 'otlp' | 'file' | 'console' | 'none';

/** One place spans are delivered to, with a processor (queue, retries, counts) of its own. */
export interface SpanDestination {
  readonly kind: SpanDestinationKind;
  /** `http://collector:4318/v1/traces (http/protobuf)`, `spans.jsonl (OTLP JSON lines)`. */
  readonly description: string;
  readonly processor: ReliableSpanProcessor;
  /** Why spans were first refused for good here (for the exit summary), if they were. */
  refusal: string | undefined;
}

/**
 * The sidecar's span processor: every ended span goes to each destination's own
 * {@link ReliableSpanProcessor}, so that each gets every batch as soon as it is ready, whatever
 * the others do: the `--out` file and the console are written while the collector is down or
 * slow, not held behind its retries; a retry goes only to the destination that failed. Intake
 * pushes back when any destination's queue is full (the memory budget holds per destination);
 * `pending` is the most any destination still waits for.
 */
export class SpanDestinations implements SpanProcessor {
  /** In the order the start-up line names them. */
  readonly destinations: readonly SpanDestination[];

  constructor(destinations: readonly SpanDestination[]) {
    this.destinations = destinations;
  }

  /** True while a destination's spans waiting for export exceed its memory budget. */
  get full(): boolean {
    return this.destinations.some((destination) => destination.processor.full);
  }

  /** Spans some destination has not taken yet (queued, waiting for a retry, or in flight). */
  get pending(): number {
    return Math.max(0, ...this.destinations.map((destination) => destination.processor.pending));
  }

  onStart(span: Span, _parentContext: Context): void {
    for (const destination of this.destinations) destination.processor.onStart(span);
  }

  onEnd(span: ReadableSpan): void {
    for (const destination of this.destinations) destination.processor.onEnd(span);
  }

  /** Resolves once every destination took (or gave up on) every span ended so far. */
  async forceFlush(): Promise<void> {
    await Promise.all(this.destinations.map((destination) => destination.processor.forceFlush()));
  }

  /** Flushes each destination within `timeoutMs`, then shuts it down. Safe to call twice. */
  async shutdown(timeoutMs?: number): Promise<void> {
    await Promise.all(
      this.destinations.map((destination) => destination.processor.shutdown(timeoutMs)),
    );
  }
}
