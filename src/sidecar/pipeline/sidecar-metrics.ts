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

/**
 * The help text of each family `GET /metrics` shows, by its Prometheus name: a name ending in
 * `_total` is a counter, any other a gauge.
 */
const HELP: Readonly<Record<string, string>> = {
  tooltrace_events_received_total: 'Event lines accepted, by source.',
  tooltrace_events_rejected_total: 'Event lines rejected, by reason.',
  tooltrace_fields_dropped_total:
    'Fields of the wrong type left out of accepted event lines, by event type and field.',
  tooltrace_ids_reused_total:
    'Event ids and tool call ids (per session) used again, by kind and client or source.',
  tooltrace_http_refused_total: 'HTTP requests refused, by status.',
  tooltrace_http_connections: 'HTTP connections open.',
  tooltrace_http_inflight_bytes: 'Request body bytes held right now.',
  tooltrace_http_connections_dropped_total:
    'HTTP connections closed to make room (evicted) or refused with all busy (turned_away).',
  tooltrace_spans_exported_total: 'Spans the OTLP endpoint accepted.',
  tooltrace_span_exports_failed_total: 'Failed export attempts (retried).',
  tooltrace_spans_export_retried_total: 'Spans in failed attempts.',
  tooltrace_spans_dropped_total: 'Spans the endpoint refused for good, by status; should stay 0.',
  tooltrace_spans_rejected_total:
    'Spans the endpoint accepted but rejected (partial_success); should stay 0.',
  tooltrace_open_spans: 'Tool calls started and not yet ended.',
  tooltrace_export_queue_depth: 'Ended spans waiting for export.',
  tooltrace_checkpoint_pinned_calls: 'Calls holding the checkpoint back.',
};

/** The families that also go out over OTLP, as instruments: their name and unit. */
const OVER_OTLP: Readonly<Record<string, readonly [name: string, unit: string]>> = {
  tooltrace_events_received_total: ['tooltrace.sidecar.events.received', '{event}'],
  tooltrace_events_rejected_total: ['tooltrace.sidecar.events.rejected', '{event}'],
  tooltrace_fields_dropped_total: ['tooltrace.sidecar.fields.dropped', '{field}'],
  tooltrace_spans_exported_total: ['tooltrace.sidecar.spans.exported', '{span}'],
  tooltrace_span_exports_failed_total: ['tooltrace.sidecar.exports.failed', '{request}'],
  tooltrace_spans_dropped_total: ['tooltrace.sidecar.spans.dropped', '{span}'],
  tooltrace_spans_rejected_total: ['tooltrace.sidecar.spans.rejected', '{span}'],
  tooltrace_export_queue_depth: ['tooltrace.sidecar.export.queue.depth', '{span}'],
  tooltrace_open_spans: ['tooltrace.sidecar.spans.open', '{span}'],
};

/** A family's series: each its labels and value. */
type Series = [labels: Record<string, string>, value: number][];

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

  /** Every family's series, in the order `GET /metrics` shows them (see {@link HELP}). */
  #series(): Record<string, Series> {
    const one = (value: number): Series => [[{}, value]];
    return {
      tooltrace_events_received_total: labelled(this.#received, 'source'),
      tooltrace_events_rejected_total: labelled(this.#rejected, 'reason'),
      tooltrace_fields_dropped_total: labelled(this.#fieldsDropped, 'event_type', 'field'),
      tooltrace_ids_reused_total: labelled(this.#reused, 'kind', 'client'),
      tooltrace_http_refused_total: labelled(
        [...this.#httpRefused].sort(([left], [right]) => left - right),
        'status',
      ),
      tooltrace_http_connections: one(this.#httpConnections),
      tooltrace_http_inflight_bytes: one(this.#httpInflightBytes),
      tooltrace_http_connections_dropped_total: labelled(
        Object.entries(this.#httpDropped),
        'reason',
      ),
      tooltrace_spans_exported_total: one(this.#spansExported),
      tooltrace_span_exports_failed_total: one(this.#exportFailures),
      tooltrace_spans_export_retried_total: one(this.#spansInFailedExports),
      tooltrace_spans_dropped_total: labelled(this.#spansDropped, 'status'),
      tooltrace_spans_rejected_total: one(this.#spansRejected),
      tooltrace_open_spans: one(this.#gauges?.openSpans() ?? 0),
      tooltrace_export_queue_depth: one(this.#gauges?.queueDepth() ?? 0),
      tooltrace_checkpoint_pinned_calls: one(this.#gauges?.pinnedCalls() ?? 0),
    };
  }

  /**
   * Registers the sidecar's own health as OpenTelemetry instruments on `meter`, read at each
   * collection: the same counters as {@link SidecarMetrics.render} (those in {@link OVER_OTLP}),
   * so they go out over OTLP beside the tool-call metrics. `tooltrace.sidecar.spans.dropped` and
   * `.rejected` must stay 0.
   */
  observe(meter: Meter): void {
    const instruments = Object.entries(OVER_OTLP).map(([family, [name, unit]]) => {
      const options = { unit, description: HELP[family] };
      const counter = family.endsWith('_total');
      return {
        family,
        instrument: counter
          ? meter.createObservableCounter(name, options)
          : meter.createObservableGauge(name, options),
      };
    });
    meter.addBatchObservableCallback(
      (result) => {
        const series = this.#series();
        for (const { family, instrument } of instruments) {
          for (const [labels, value] of series[family]!) result.observe(instrument, value, labels);
        }
      },
      instruments.map(({ instrument }) => instrument),
    );
  }

  /** The metrics in the Prometheus text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const [name, series] of Object.entries(this.#series())) {
      const type = name.endsWith('_total') ? 'counter' : 'gauge';
      lines.push(`# HELP ${name} ${HELP[name]}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of series) {
        const text = Object.entries(labels).map(([key, item]) => `${key}="${label(item)}"`);
        lines.push(`${name}${text.length === 0 ? '' : `{${text.join(',')}}`} ${value}`);
      }
    }
    const histogram = 'tooltrace_export_duration_seconds';
    lines.push(`# HELP ${histogram} OTLP export request latency.`, `# TYPE ${histogram} histogram`);
    LATENCY_BUCKETS.forEach((bound, index) => {
      lines.push(`${histogram}_bucket{le="${bound}"} ${this.#latencyBuckets[index]}`);
    });
    lines.push(`${histogram}_bucket{le="+Inf"} ${this.#latencyCount}`);
    lines.push(`${histogram}_sum ${this.#latencySum}`, `${histogram}_count ${this.#latencyCount}`);
    return `${lines.join('\n')}\n`;
  }
}

/**
 * A series per key of `counts`, under the label `name`; with a `second` label, each key is two
 * values joined by NUL (the event type and field, the kind and client).
 */
function labelled(
  counts: Iterable<readonly [string | number, number]>,
  name: string,
  second?: string,
): Series {
  return [...counts].map(([key, count]) => {
    if (second === undefined) return [{ [name]: String(key) }, count];
    const [first, other] = String(key).split('\u0000') as [string, string];
    return [{ [name]: first, [second]: other }, count];
  });
}

function label(value: string): string {
  return value.replace(/[\\"\n]/g, (character) => (character === '\n' ? '\\n' : `\\${character}`));
}
