import { counted } from '../../errors/index.js';

/** How many rejected lines of one source are named on the log before the rest are only counted. */
export const NAMED_REJECTIONS = 5;

/**
 * Names the rejected lines of one source on the log, as `tooltrace view` names a journal's bad
 * lines: the first {@link NAMED_REJECTIONS} by number, with the reason and what was wrong; after
 * that one line saying the rest are counted; at the end of the source, how many more there were.
 * Every rejection is counted in the metrics whatever is said here.
 */
export class RejectedLines {
  readonly #label: string;
  readonly #log: (line: string) => void;
  #rejected = 0;

  /** @param label How the source is named on the log: `stdin`, `--file agent.jsonl`, … */
  constructor(label: string, log: (line: string) => void) {
    this.#label = label;
    this.#log = log;
  }

  /** A line of the source was rejected: `where` names it (`line 12`, `line 3 of a request`). */
  rejected(where: string, reason: string, message: string): void {
    this.#rejected += 1;
    if (this.#rejected <= NAMED_REJECTIONS) {
      this.#log(`tooltrace sidecar: ${this.#label} ${where}: rejected (${reason}): ${message}`);
    } else if (this.#rejected === NAMED_REJECTIONS + 1) {
      this.#log(
        `tooltrace sidecar: ${this.#label}: more rejected lines are counted, not named (tooltrace_events_rejected_total, the status line)`,
      );
    }
  }

  /** The source ended: says how many rejected lines were not named, if any. */
  ended(): void {
    const unnamed = this.#rejected - NAMED_REJECTIONS;
    if (unnamed > 0) {
      this.#log(
        `tooltrace sidecar: ${this.#label}: ${counted(unnamed, 'more line was', 'more lines were')} rejected (${counted(this.#rejected, 'line')} in all)`,
      );
    }
  }
}
