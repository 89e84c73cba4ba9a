/** What became of one request body: lines replayed, and lines rejected by reason. */
export interface IntakeOutcome {
  accepted: number;
  rejected: Record<string, number>;
}
