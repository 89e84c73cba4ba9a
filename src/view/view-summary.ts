import { counted } from '../errors/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { printable } from '../sidecar/pipeline/index.js';
import { DistinctCount } from './distinct-count.js';
import { formatToolTable, type ToolTableRow } from './tool-table.js';
import { formatDuration, outcomeOf } from './waterfall.js';

/** A tool call the summary names: which trace it is in, and how it went. */
export interface SummaryCall {
  traceId: string;
  spanId: string;
  tool: string;
  durationNanos: bigint;
  /** The error message of a failed call, `''` otherwise. */
  message: string;
}

/** Options for {@link ViewSummary}. */
export interface ViewSummaryOptions {
  /**
   * How many of the slowest calls are kept.
   * @default 5
   */
  slowest?: number;
  /**
   * How many failed calls are kept to be named (all are counted).
   * @default 10
   */
  failed?: number;
}

/** Per tool: its calls' durations (a bounded sample past {@link MAX_DURATIONS}) and counts. */
interface ToolStats {
  calls: number;
  errors: number;
  durations: number[];
  firstPartialSum: number;
  firstPartialCount: number;
}

/** Durations held per tool for its percentiles; past it, a uniform sample of that size. */
const MAX_DURATIONS = 100_000;

/**
 * What `tooltrace view` says about a file before (or instead of) drawing it: traces, calls,
 * errors and cancelled calls, a per-tool table (calls, errors, p50/p95 duration, mean time to
 * first partial), the slowest calls and the failed ones with their trace ids. Spans are added
 * as they are read and none is held, so the summary covers a journal of any size in bounded
 * memory: percentiles past 100,000 calls of one tool come from a uniform sample of that size,
 * and past 50,000 traces their number is estimated (within about 2 %, said as `about N traces`).
 */
export class ViewSummary {
  readonly #slowestCount: number;
  readonly #failedCount: number;
  readonly #traces = new DistinctCount();
  #spans = 0;
  #calls = 0;
  #errors = 0;
  #cancelled = 0;
  readonly #tools = new Map<string, ToolStats>();
  /** Slowest first. */
  readonly #slowest: SummaryCall[] = [];
  readonly #failed: SummaryCall[] = [];
  /** Deterministic, so that two runs over one file print the same percentiles. */
  #sampleState = 0x9e3779b9;

  constructor(options: ViewSummaryOptions = {}) {
    this.#slowestCount = options.slowest ?? 5;
    this.#failedCount = options.failed ?? 10;
  }

  /** Counts `span`; tool calls (`execute_tool` spans) go into the per-tool table. */
  add(span: ReceivedSpan): void {
    const attributes = span.attributes;
    this.#spans += 1;
    this.#traces.add(span.traceId);
    if (attributes['gen_ai.operation.name'] !== 'execute_tool') return;
    const name = attributes['gen_ai.tool.name'];
    const tool = typeof name === 'string' ? name : '';
    const outcome = outcomeOf(span);
    const cancelled = outcome === 'CANCELLED';
    const failed = outcome === 'ERROR';
    const call: SummaryCall = {
      traceId: span.traceId,
      spanId: span.spanId,
      tool,
      durationNanos: span.endTimeUnixNano - span.startTimeUnixNano,
      message: failed ? span.status.message : '',
    };
    this.#calls += 1;
    if (cancelled) this.#cancelled += 1;
    if (failed) {
      this.#errors += 1;
      if (this.#failed.length < this.#failedCount) this.#failed.push(call);
    }
    const stats = this.#statsOf(tool);
    stats.calls += 1;
    if (failed) stats.errors += 1;
    this.#sample(stats, Number(call.durationNanos));
    const first = attributes['tooltrace.stream.time_to_first_partial_ms'];
    if (typeof first === 'number') {
      stats.firstPartialSum += first;
      stats.firstPartialCount += 1;
    }
    this.#keepIfSlow(call);
  }

  /** Traces seen (an estimate when {@link tracesEstimated} is true). */
  get traces(): number {
    return this.#traces.size;
  }

  /** Whether more traces were seen than are told apart (50,000): {@link traces} is then estimated. */
  get tracesEstimated(): boolean {
    return this.#traces.estimated;
  }

  get spans(): number {
    return this.#spans;
  }

  get calls(): number {
    return this.#calls;
  }

  /** The slowest calls kept, slowest first. */
  get slowest(): readonly SummaryCall[] {
    return this.#slowest;
  }

  /** The first failed calls, in the order they ended. */
  get failed(): readonly SummaryCall[] {
    return this.#failed;
  }

  /** Failed calls (cancelled ones are counted apart). */
  get errors(): number {
    return this.#errors;
  }

  get cancelled(): number {
    return this.#cancelled;
  }

  /** The per-tool rows: exact p50 and p95 from the durations held. */
  toolRows(): ToolTableRow[] {
    return [...this.#tools].map(([tool, stats]) => {
      const sorted = Float64Array.from(stats.durations).sort();
      return {
        tool,
        calls: stats.calls,
        errors: stats.errors,
        p50: percentile(sorted, 0.5),
        p95: percentile(sorted, 0.95),
        firstPartial:
          stats.firstPartialCount === 0
            ? '—'
            : formatDuration(
                BigInt(Math.round((stats.firstPartialSum / stats.firstPartialCount) * 1e6)),
              ),
      };
    });
  }

  /** The summary as text: counts, the per-tool table, the slowest and the failed calls. */
  render(): string {
    const count = (value: number): string => value.toLocaleString('en-US');
    const lines = [
      `${this.#traces.estimated ? 'about ' : ''}${counted(this.traces, 'trace', 'traces', count)}, ${counted(this.#spans, 'span', 'spans', count)}, ` +
        `${counted(this.#calls, 'tool call', 'tool calls', count)}: ${count(this.#errors)} failed, ${count(this.#cancelled)} cancelled`,
    ];
    if (this.#calls > 0) {
      lines.push('', formatToolTable(this.toolRows()).trimEnd());
      lines.push('', 'slowest calls:');
      for (const call of this.#slowest) lines.push(callLine(call));
    }
    if (this.#errors > 0) {
      const more = this.#errors - this.#failed.length;
      lines.push('', `failed calls${more > 0 ? ` (the first ${this.#failed.length})` : ''}:`);
      for (const call of this.#failed) lines.push(callLine(call));
    }
    return `${lines.join('\n')}\n`;
  }

  #statsOf(tool: string): ToolStats {
    let stats = this.#tools.get(tool);
    if (stats === undefined) {
      stats = { calls: 0, errors: 0, durations: [], firstPartialSum: 0, firstPartialCount: 0 };
      this.#tools.set(tool, stats);
    }
    return stats;
  }

  /** Holds `duration`, or past the bound replaces a held one with the chance a uniform sample needs. */
  #sample(stats: ToolStats, duration: number): void {
    if (stats.durations.length < MAX_DURATIONS) {
      stats.durations.push(duration);
      return;
    }
    this.#sampleState = (Math.imul(this.#sampleState, 1664525) + 1013904223) >>> 0;
    const at = Math.floor((this.#sampleState / 2 ** 32) * stats.calls);
    if (at < MAX_DURATIONS) stats.durations[at] = duration;
  }

  #keepIfSlow(call: SummaryCall): void {
    const list = this.#slowest;
    if (this.#slowestCount === 0) return;
    if (list.length === this.#slowestCount && call.durationNanos <= list.at(-1)!.durationNanos) {
      return;
    }
    let at = list.findIndex((kept) => call.durationNanos > kept.durationNanos);
    if (at === -1) at = list.length;
    list.splice(at, 0, call);
    if (list.length > this.#slowestCount) list.pop();
  }
}

function percentile(sorted: Float64Array, quantile: number): string {
  if (sorted.length === 0) return '—';
  const at = Math.min(sorted.length - 1, Math.ceil(sorted.length * quantile) - 1);
  return formatDuration(BigInt(Math.round(sorted[Math.max(0, at)]!)));
}

function callLine(call: SummaryCall): string {
  const message =
    call.message === '' ? '' : `  "${printable(call.message.replace(/\s+/g, ' ').trim())}"`;
  return `  ${formatDuration(call.durationNanos).padStart(7)}  ${printable(call.tool).padEnd(16)}  trace ${call.traceId}${message}`;
}
