/** The outcome of a vetoable emit. */
export interface VetoDecision {
  vetoed: boolean;
  reason: string;
}

/** Payload handlers of a vetoable event see; a handler vetoes by assigning `veto`. */
export interface VetoablePayload<T> {
  original: T;
  veto: VetoDecision;
}
