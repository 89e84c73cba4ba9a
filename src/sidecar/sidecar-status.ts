import { counted } from '../errors/index.js';
import type { SidecarParts } from './sidecar-shutdown.js';

/**
 * What the sidecar says about itself: the `/metrics` gauges (open spans, queue depth, calls
 * holding the checkpoint back) and a status line on the log every `intervalMs` when it changed
 * (`0`: never), and once more at {@link stop}. The timer is unref'ed.
 */
export class SidecarStatus {
  readonly #sources: SidecarParts;
  #timer: NodeJS.Timeout | undefined;

  constructor(sources: SidecarParts, intervalMs: number) {
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
   * any), calls open, spans exported (with several destinations, what each took: the file
   * holds every span while the collector is down) and waiting.
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
        : `${counted(dropped, 'field')} dropped (${fields.map(([key, count]) => `${key}=${count}`).join(', ')}), `;
    return (
      `tooltrace sidecar: ${counted(snapshot.received, 'event')}, ${rejected} rejected${reasons === '' ? '' : ` (${reasons})`}, ${droppedText}` +
      `${counted(tracing.stats().openSpans, 'call')} open, ${this.#delivered(snapshot.spansExported)}, ${processor.pending} waiting`
    );
  }

  /** `12 spans exported`; with several destinations `12 spans written to s.jsonl, 0 exported to …`. */
  #delivered(exported: number): string {
    const { destinations } = this.#sources.processor;
    if (destinations.length === 1) return `${counted(exported, 'span')} exported`;
    const parts = destinations.map((destination, index) => {
      const taken =
        index === 0
          ? counted(destination.processor.stats().exported, 'span')
          : `${destination.processor.stats().exported}`;
      if (destination.kind === 'console') return `${taken} printed`;
      if (destination.kind === 'file') return `${taken} written to ${destination.description}`;
      return `${taken} exported to ${destination.description}`;
    });
    return parts.join(', ');
  }

  /**
   * Stops the periodic line, at the start of shutdown: a tick while flushing would print the
   * line {@link stop} prints once more at the end.
   */
  pause(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Stops the periodic line and logs the last one. */
  stop(): void {
    this.pause();
    this.#sources.log(this.line());
  }
}
