import type { OpenSpan } from './open-span.js';

/**
 * An open span that holds other spans' work (a turn, a sub-agent, a session root): it counts as
 * active while a child starts or ends, and is not ended for being idle while a child is open.
 */
export interface ContainerSpan extends OpenSpan {
  /** A child started at `unixNano` (subscriber clock `now`). */
  childStarted(unixNano: bigint, now: number): void;
  /** A child ended at `unixNano` (subscriber clock `now`). */
  childEnded(unixNano: bigint, now: number): void;
  /** Whether a child started under it is still open. */
  readonly hasOpenChildren: boolean;
}
