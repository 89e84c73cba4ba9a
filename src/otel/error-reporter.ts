import { diag } from '@opentelemetry/api';

/** What kind of failure the subscriber swallowed. */
export type SwallowedErrorKind = 'tracer' | 'redact' | 'hook' | 'export';

const DESCRIPTIONS: Record<SwallowedErrorKind, string> = {
  tracer: 'recording a tool call failed (the tracer or the span threw)',
  redact: 'the redact hook failed; the value it was given was dropped',
  hook: 'an option hook (parentContext, stableEventId or onSpanEnd) threw',
  export:
    'flushing the tracer provider failed (an export failed or timed out); forceFlush and shutdown resolve anyway',
};

/**
 * Counts the failures the subscriber swallows so they never reach the bus, and reports the
 * first of each kind once through OpenTelemetry's `diag` logger; the rest only count. Code that
 * may throw into the bus runs through {@link ErrorReporter.contain}.
 */
export class ErrorReporter {
  readonly counts: Record<SwallowedErrorKind, number> = {
    tracer: 0,
    redact: 0,
    hook: 0,
    export: 0,
  };

  /**
   * Runs `action(subject)`, containing what it throws: counted under `kind` and reported once.
   * Takes its subject as an argument so that hot paths can pass a function made once instead of
   * a closure per call. Returns whether the action completed.
   */
  contain<T>(kind: SwallowedErrorKind, action: (subject: T) => void, subject?: T): boolean {
    try {
      action(subject as T);
      return true;
    } catch (error) {
      this.report(kind, error);
      return false;
    }
  }

  /** Counts a failure already caught under `kind`; the first of its kind goes to `diag`. */
  report(kind: SwallowedErrorKind, error: unknown): void {
    this.counts[kind] += 1;
    if (this.counts[kind] !== 1) return;
    try {
      diag.error(
        `tooltrace: ${DESCRIPTIONS[kind]}; further failures of this kind are only counted in stats().errors.${kind}`,
        error,
      );
    } catch {
      // A logger that throws has nowhere left to report to.
    }
  }
}
