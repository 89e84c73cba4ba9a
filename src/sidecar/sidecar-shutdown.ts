import type { ToolCallTracing } from '../otel/index.js';
import type { Deadline } from './deadline.js';
import type { ReliableSpanProcessor } from './export/index.js';
import type { Intakes } from './intake/index.js';

/** The parts of a running sidecar that shutdown stops, in order. */
export interface SidecarParts {
  intakes: Intakes;
  tracing: ToolCallTracing;
  processor: ReliableSpanProcessor;
  checkpointing: boolean;
  log: (line: string) => void;
}

/**
 * Stops a sidecar in the order that loses nothing: 1. intake (no new events; open HTTP requests
 * get up to a second), 2. open calls ended (marked `shutdown`), 3. everything exported before
 * `deadline`, 4. the checkpoint saved at the first call that was not exported, 5. the exporter
 * shut down.
 */
export async function shutDownSidecar(
  parts: SidecarParts,
  deadline: Deadline,
  graceMs: number,
): Promise<void> {
  const { intakes, tracing, processor, log } = parts;
  await intakes.stop(Math.min(1000, graceMs));
  await tracing.shutdown();
  if (!(await deadline.race(processor.forceFlush()))) {
    const where = parts.checkpointing ? '; the checkpoint stays before them' : '';
    log(
      `tooltrace sidecar: shutdown timeout: ${processor.pending} spans were not exported${where}`,
    );
  }
  await intakes.saveCheckpoints();
  await deadline.race(processor.shutdown(0).catch(() => undefined));
}
