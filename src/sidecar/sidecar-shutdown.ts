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
 * shut down (requests still in flight are cut). Resolves with how many spans were not delivered
 * by the deadline (`0` when the flush finished).
 */
export async function shutDownSidecar(
  parts: SidecarParts,
  deadline: Deadline,
  graceMs: number,
): Promise<number> {
  const { intakes, tracing, processor, log } = parts;
  await intakes.stop(Math.min(1000, graceMs));
  await tracing.shutdown();
  let undelivered = 0;
  if (!(await deadline.race(processor.forceFlush()))) {
    undelivered = processor.pending;
    const where = parts.checkpointing ? '; the checkpoint stays before them' : '';
    log(`tooltrace sidecar: shutdown timeout: ${undelivered} spans were not delivered${where}`);
  }
  await intakes.saveCheckpoints();
  await deadline.race(processor.shutdown(0).catch(() => undefined));
  return undelivered;
}
