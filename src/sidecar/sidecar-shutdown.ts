import { counted } from '../errors/index.js';
import type { ToolCallTracing } from '../otel/index.js';
import type { Deadline } from './deadline.js';
import type { SpanDestinations } from './export/index.js';
import type { Intakes } from './intake/index.js';
import type { SidecarMetrics } from './pipeline/index.js';

/** The parts of a running sidecar that shutdown stops, in order, and its status reports on. */
export interface SidecarParts {
  metrics: SidecarMetrics;
  intakes: Intakes;
  tracing: ToolCallTracing;
  processor: SpanDestinations;
  checkpointing: boolean;
  log: (line: string) => void;
}

/**
 * Stops a sidecar in the order that loses nothing: 1. intake (no new events; open HTTP requests
 * get up to a second), 2. open calls ended (marked `shutdown`), 3. everything exported before
 * `deadline`, each destination on its own (the file and the console are written in full while
 * the collector is still retried), 4. the checkpoint saved at the first call that was not
 * exported everywhere, 5. the exporters shut down (requests still in flight are cut). Resolves
 * with how many spans each destination (in `processor.destinations` order) had not taken by the
 * deadline (`0` where the flush finished).
 */
export async function shutDownSidecar(
  parts: SidecarParts,
  deadline: Deadline,
  graceMs: number,
): Promise<number[]> {
  const { intakes, tracing, processor, log } = parts;
  await intakes.stop(Math.min(1000, graceMs));
  await tracing.shutdown();
  const several = processor.destinations.length > 1;
  const undelivered = await Promise.all(
    processor.destinations.map(async (destination) => {
      if (await deadline.race(destination.processor.forceFlush())) return 0;
      return destination.processor.pending;
    }),
  );
  processor.destinations.forEach((destination, index) => {
    const count = undelivered[index]!;
    if (count === 0) return;
    const to = several ? ` to ${destination.description}` : '';
    const where = parts.checkpointing ? '; the checkpoint stays before them' : '';
    log(
      `tooltrace sidecar: shutdown timeout: ${counted(count, 'span was', 'spans were')} not delivered${to}${where}`,
    );
  });
  await intakes.saveCheckpoints();
  await deadline.race(processor.shutdown(0).catch(() => undefined));
  return undelivered;
}
