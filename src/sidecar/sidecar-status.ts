import type { ToolCallTracing } from '../otel/index.js';
import type { ReliableSpanProcessor } from './export/index.js';
import type { Intakes } from './intake/index.js';
import type { SidecarMetrics } from './pipeline/index.js';

/** What the sidecar reports on: its metrics, and the parts the gauges read. */
export interface StatusSources {
  metrics: SidecarMetrics;
  tracing: ToolCallTracing;
  processor: ReliableSpanProcessor;
  intakes: Intakes;
  log: (line: string) => void;
}

/**
 * What the sidecar says about itself: the `/metrics` gauges (open spans, queue depth, calls
 * holding the checkpoint back) and a status line on the log every `intervalMs` when it changed
 * (`0`: never), and once more at {@link stop}. The timer is unref'ed.
 */
export class SidecarStatus {
  readonly #sources: StatusSources;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(sources: StatusSources, intervalMs: number) {
    this.#sources = sources;
    const { metrics, tracing, processor, intakes } = sources;
    metrics.setGauges({
      openSpans: () => tracing.stats().openSpans,
      queueDepth: () => processor.pending,
      pinnedCalls: () => intakes.pinnedSpans,
    });
    if (intervalMs > 0) {
      let last = '';
      this.#timer = setInterval(() => {
        const line = this.line();
        if (line !== last) sources.log(line);
        last = line;
      }, intervalMs);
      this.#timer.unref();
    }
  }

  /**
   * Events received and rejected (by reason), fields dropped (by event type and field, when
   * any), calls open, spans exported and waiting.
   */
  line(): string {
    const { metrics, tracing, processor } = this.#sources;
    const snapshot = metrics.snapshot();
    const rejected = Object.values(snapshot.rejected).reduce((sum, count) => sum + count, 0);
    const reasons = Object.entries(snapshot.rejected)
      .map(([reason, count]) => `${reason}=${count}`)
      .join(' ');
    const fields = Object.entries(snapshot.fieldsDropped);
    const dropped = fields.reduce((sum, [, count]) => sum + count, 0);
    const droppedText =
      fields.length === 0
        ? ''
        : `${dropped} fields dropped (${fields.map(([key, count]) => `${key}=${count}`).join(', ')}), `;
    return (
      `tooltrace sidecar: ${snapshot.received} events, ${rejected} rejected${reasons === '' ? '' : ` (${reasons})`}, ${droppedText}` +
      `${tracing.stats().openSpans} calls open, ${snapshot.spansExported} spans exported, ${processor.pending} waiting`
    );
  }

  /** Stops the periodic line and logs the last one. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#sources.log(this.line());
  }
}
