import type { Meter } from '@opentelemetry/api';
import { REJECT_REASONS } from '../../wire/index.js';

/** Upper bounds, in seconds, of the export latency histogram buckets. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Most (event type, field) pairs whose dropped fields are counted apart; beyond them (only a
 * producer inventing event types could get there) they are counted under `OTHER`.
 */
const MAX_DROPPED_FIELD_SERIES = 200;
const OTHER = '(other)';

/** Values read at scrape time rather than counted. */
export interface SidecarGauges {
  openSpans: () => number;
  queueDepth: () => number;
  pinnedCalls: () => number;
}

/**
 * The sidecar's counters, rendered as Prometheus text for `GET /metrics`. Every rejected line
 * is counted by reason, so a bad producer shows up in a dashboard rather than in silence.
 */
export class SidecarMetrics {
  readonly #received = new Map<string, number>();
  /** Every known reason from the start, so each series exists before its first rejection. */
  readonly #rejected = new Map<string, number>(REJECT_REASONS.map((reason) => [reason, 0]));
  #spansExported = 0;
  readonly #spansDropped = new Map<string, number>();
  #spansRejected = 0;
  #exportFailures = 0;
  #spansInFailedExports = 0;
  /** Whether the last export attempt failed (and none succeeded since). */
  #exportFailing = false;
  readonly #latencyBuckets = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  #latencyCount = 0;
  #latencySum = 0;
  #gauges: SidecarGauges | undefined;
  /** Ids used again, by `kind` (`event_id`, `call_id`) and client (or source). */
  readonly #reused = new Map<string, number>();
  /** HTTP answers other than 200, by status. */
  readonly #httpRefused = new Map<number, number>();
  #httpConnections = 0;
  #httpInflightBytes = 0;
  readonly #httpDropped = { evicted: 0, turned_away: 0 };
  /** Fields left out of accepted lines, by event type and field (`type` NUL `field`). */
  readonly #fieldsDropped = new Map<string, number>();

  /** Connects the gauges read at scrape time. */
  setGauges(gauges: SidecarGauges): void {
    this.#gauges = gauges;
  }

  /** Counts one line accepted from `source` (`stdin`, `file`, `http`). */
  received(source: string, count = 1): void {
    this.#received.set(source, (this.#received.get(source) ?? 0) + count);
  }

  /** Counts an event id or tool call id that `client` (a token's name, or the source) used again. */
  reused(kind: 'event_id' | 'call_id', client: string): void {
    const key = `${kind}\u0000${client}`;
    this.#reused.set(key, (this.#reused.get(key) ?? 0) + 1);
  }

  /** Counts an HTTP request answered with `status` instead of taking its events. */
  httpRefused(status: number): void {
    this.#httpRefused.set(status, (this.#httpRefused.get(status) ?? 0) + 1);
  }

  /** Tracks open HTTP connections. */
  httpConnections(delta: 1 | -1): void {
    this.#httpConnections += delta;
  }

  /** Tracks request body bytes held (being received, inflated or replayed). */
  httpInflightBytes(delta: number): void {
    this.#httpInflightBytes += delta;
  }

  /** Counts a connection closed to make room, or turned away because every one was busy. */
  httpConnectionDropped(reason: 'evicted' | 'turned_away'): void {
    this.#httpDropped[reason] += 1;
  }

  /** Counts one line rejected for `reason`. */
  rejected(reason: string, count = 1): void {
    this.#rejected.set(reason, (this.#rejected.get(reason) ?? 0) + count);
  }

  /**
   * Counts a field of the wrong type left out of an accepted line of `type` (see the wire's
   * `DroppedField`); `true` the first time this type and field were counted, for a report once.
   */
  fieldDropped(type: string, field: string): boolean {
    let key = `${type}\u0000${field}`;
    let count = this.#fieldsDropped.get(key);
    if (count === undefined && this.#fieldsDropped.size >= MAX_DROPPED_FIELD_SERIES) {
      key = `${OTHER}\u0000${OTHER}`;
      count = this.#fieldsDropped.get(key);
    }
    this.#fieldsDropped.set(key, (count ?? 0) + 1);
    return count === undefined;
  }

  /** Counts spans the exporter accepted, with how long the request took. */
  exported(spans: number, latencyMs: number): void {
    this.#spansExported += spans;
    this.#exportFailing = false;
    const seconds = latencyMs / 1000;
    this.#latencyCount += 1;
    this.#latencySum += seconds;
    for (let index = 0; index < LATENCY_BUCKETS.length; index += 1) {
      if (seconds <= LATENCY_BUCKETS[index]!) this.#latencyBuckets[index]! += 1;
    }
  }

  /** Counts one retryable failed export attempt of `spans` spans (they are retried). */
  exportFailed(spans: number): void {
    this.#exportFailures += 1;
    this.#exportFailing = true;
    this.#spansInFailedExports += spans;
  }

  /** Whether the last export attempt failed and none has succeeded since (`/readyz` is 503). */
  get exportFailing(): boolean {
    return this.#exportFailing;
  }

  /** Counts spans in a batch the endpoint refused for good, by status (`404`, `UNAUTHENTICATED`). */
  dropped(status: string, spans: number): void {
    this.#exportFailing = true;
    this.#spansDropped.set(status, (this.#spansDropped.get(status) ?? 0) + spans);
  }

  /** Counts spans the endpoint accepted but rejected (its `partial_success`). */
  rejectedSpans(spans: number): void {
    this.#spansRejected += spans;
  }

  /** Totals, for logs and tests; rejection reasons only once they happened. */
  snapshot(): {
    received: number;
    rejected: Record<string, number>;
    spansExported: number;
    /**
     * Fields of the wrong type left out of accepted lines, by `"{event type} {field}"`
     * (`"subagent.complete payload.Iterations"`); the events themselves went through.
     */
    fieldsDropped: Record<string, number>;
    /** Spans dropped after a permanent export failure, by status. */
    spansDropped: Record<string, number>;
    spansRejected: number;
    exportFailures: number;
  } {
    let received = 0;
    for (const count of this.#received.values()) received += count;
    return {
      received,
      rejected: Object.fromEntries([...this.#rejected].filter(([, count]) => count > 0)),
      fieldsDropped: Object.fromEntries(
        [...this.#fieldsDropped].map(([key, count]) => [key.replace('\u0000', ' '), count]),
      ),
      spansExported: this.#spansExported,
      spansDropped: Object.fromEntries(this.#spansDropped),
      spansRejected: this.#spansRejected,
      exportFailures: this.#exportFailures,
    };
  }

  /**
   * Registers the sidecar's own health as OpenTelemetry instruments on `meter`, read at each
   * collection: the same counters as {@link SidecarMetrics.render}, so they go out over OTLP
   * beside the tool-call metrics. `tooltrace.sidecar.spans.dropped` and `.rejected` must stay 0.
   */
  observe(meter: Meter): void {
    const counter = (name: string, unit: string, description: string) =>
      meter.createObservableCounter(name, { unit, description });
    const received = counter(
      'tooltrace.sidecar.events.received',
      '{event}',
      'Event lines accepted, by source.',
    );
    const rejected = counter(
      'tooltrace.sidecar.events.rejected',
      '{event}',
      'Event lines rejected, by reason.',
    );
    const fieldsDropped = counter(
      'tooltrace.sidecar.fields.dropped',
      '{field}',
      'Fields of the wrong type left out of accepted event lines, by event type and field.',
    );
    const exported = counter(
      'tooltrace.sidecar.spans.exported',
      '{span}',
      'Spans the OTLP endpoint accepted.',
    );
    const failed = counter(
      'tooltrace.sidecar.exports.failed',
      '{request}',
      'Failed export attempts (retried).',
    );
    const dropped = counter(
      'tooltrace.sidecar.spans.dropped',
      '{span}',
      'Spans the endpoint refused for good, by status; should stay 0.',
    );
    const rejectedSpans = counter(
      'tooltrace.sidecar.spans.rejected',
      '{span}',
      'Spans the endpoint accepted but rejected (partial_success); should stay 0.',
    );
    const queue = meter.createObservableGauge('tooltrace.sidecar.export.queue.depth', {
      unit: '{span}',
      description: 'Ended spans waiting for export.',
    });
    const open = meter.createObservableGauge('tooltrace.sidecar.spans.open', {
      unit: '{span}',
      description: 'Tool calls started and not yet ended.',
    });
    meter.addBatchObservableCallback(
      (result) => {
        for (const [source, count] of this.#received) result.observe(received, count, { source });
        for (const [reason, count] of this.#rejected) result.observe(rejected, count, { reason });
        for (const [key, count] of this.#fieldsDropped) {
          const [type, field] = key.split('\u0000') as [string, string];
          result.observe(fieldsDropped, count, { event_type: type, field });
        }
        result.observe(exported, this.#spansExported);
        result.observe(failed, this.#exportFailures);
        for (const [status, count] of this.#spansDropped) {
          result.observe(dropped, count, { status });
        }
        result.observe(rejectedSpans, this.#spansRejected);
        result.observe(queue, this.#gauges?.queueDepth() ?? 0);
        result.observe(open, this.#gauges?.openSpans() ?? 0);
      },
      [received, rejected, fieldsDropped, exported, failed, dropped, rejectedSpans, queue, open],
    );
  }

  /** The metrics in the Prometheus text exposition format. */
  render(): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    };
    family('tooltrace_events_received_total', 'counter', 'Event lines accepted, by source.');
    for (const [source, count] of this.#received) {
      lines.push(`tooltrace_events_received_total{source="${label(source)}"} ${count}`);
    }
    family('tooltrace_events_rejected_total', 'counter', 'Event lines rejected, by reason.');
    for (const [reason, count] of this.#rejected) {
      lines.push(`tooltrace_events_rejected_total{reason="${label(reason)}"} ${count}`);
    }
    family(
      'tooltrace_fields_dropped_total',
      'counter',
      'Fields of the wrong type left out of accepted event lines, by event type and field.',
    );
    for (const [key, count] of this.#fieldsDropped) {
      const [type, field] = key.split('\u0000') as [string, string];
      lines.push(
        `tooltrace_fields_dropped_total{event_type="${label(type)}",field="${label(field)}"} ${count}`,
      );
    }
    family(
      'tooltrace_ids_reused_total',
      'counter',
      'Event ids and tool call ids (per session) used again, by kind and client or source.',
    );
    for (const [key, count] of this.#reused) {
      const [kind, client] = key.split('\u0000') as [string, string];
      lines.push(
        `tooltrace_ids_reused_total{kind="${label(kind)}",client="${label(client)}"} ${count}`,
      );
    }
    family('tooltrace_http_refused_total', 'counter', 'HTTP requests refused, by status.');
    for (const [status, count] of [...this.#httpRefused].sort(([left], [right]) => left - right)) {
      lines.push(`tooltrace_http_refused_total{status="${status}"} ${count}`);
    }
    family('tooltrace_http_connections', 'gauge', 'HTTP connections open.');
    lines.push(`tooltrace_http_connections ${this.#httpConnections}`);
    family('tooltrace_http_inflight_bytes', 'gauge', 'Request body bytes held right now.');
    lines.push(`tooltrace_http_inflight_bytes ${this.#httpInflightBytes}`);
    family(
      'tooltrace_http_connections_dropped_total',
      'counter',
      'HTTP connections closed to make room (evicted) or refused with all busy (turned_away).',
    );
    for (const [reason, count] of Object.entries(this.#httpDropped)) {
      lines.push(`tooltrace_http_connections_dropped_total{reason="${reason}"} ${count}`);
    }
    family('tooltrace_spans_exported_total', 'counter', 'Spans the OTLP endpoint accepted.');
    lines.push(`tooltrace_spans_exported_total ${this.#spansExported}`);
    family('tooltrace_span_exports_failed_total', 'counter', 'Failed export attempts (retried).');
    lines.push(`tooltrace_span_exports_failed_total ${this.#exportFailures}`);
    family('tooltrace_spans_export_retried_total', 'counter', 'Spans in failed attempts.');
    lines.push(`tooltrace_spans_export_retried_total ${this.#spansInFailedExports}`);
    family('tooltrace_spans_dropped_total', 'counter', 'Spans refused for good, by status.');
    for (const [status, count] of this.#spansDropped) {
      lines.push(`tooltrace_spans_dropped_total{status="${label(status)}"} ${count}`);
    }
    family('tooltrace_spans_rejected_total', 'counter', 'Spans rejected in a partial success.');
    lines.push(`tooltrace_spans_rejected_total ${this.#spansRejected}`);
    const gauges = this.#gauges;
    family('tooltrace_open_spans', 'gauge', 'Tool calls started and not yet ended.');
    lines.push(`tooltrace_open_spans ${gauges?.openSpans() ?? 0}`);
    family('tooltrace_export_queue_depth', 'gauge', 'Ended spans waiting for export.');
    lines.push(`tooltrace_export_queue_depth ${gauges?.queueDepth() ?? 0}`);
    family('tooltrace_checkpoint_pinned_calls', 'gauge', 'Calls holding the checkpoint back.');
    lines.push(`tooltrace_checkpoint_pinned_calls ${gauges?.pinnedCalls() ?? 0}`);
    family('tooltrace_export_duration_seconds', 'histogram', 'OTLP export request latency.');
    LATENCY_BUCKETS.forEach((bound, index) => {
      lines.push(
        `tooltrace_export_duration_seconds_bucket{le="${bound}"} ${this.#latencyBuckets[index]}`,
      );
    });
    lines.push(`tooltrace_export_duration_seconds_bucket{le="+Inf"} ${this.#latencyCount}`);
    lines.push(`tooltrace_export_duration_seconds_sum ${this.#latencySum}`);
    lines.push(`tooltrace_export_duration_seconds_count ${this.#latencyCount}`);
    return `${lines.join('\n')}\n`;
  }
}

function label(value: string): string {
  return value.replace(/[\\"\n]/g, (character) => (character === '\n' ? '\\n' : `\\${character}`));
}
