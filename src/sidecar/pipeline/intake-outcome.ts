/**
 * What became of one request body: lines replayed, lines rejected by reason, and lines left
 * unread because the export queue reached its budget (the last `unread` lines of the body; the
 * sender sends them again later).
 */
export interface IntakeOutcome {
  accepted: number;
  rejected: Record<string, number>;
  /** @default 0 */
  unread?: number;
}
