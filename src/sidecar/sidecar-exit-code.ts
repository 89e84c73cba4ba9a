/**
 * The exit codes of `tooltrace sidecar`, and what {@link Sidecar.done} resolves with. A sidecar
 * never exits 0 having lost spans: the code says how they were lost, and standard error says
 * how many.
 */
export const SIDECAR_EXIT_CODE = {
  /** Everything was delivered. */
  ok: 0,
  /** A bad flag or setting; nothing was started (set by the CLI). */
  configuration: 2,
  /**
   * The endpoint refused spans for good: a status OTLP says not to retry (404, 401, 400, …), or
   * a `partial_success` naming rejected spans.
   */
  refused: 3,
  /**
   * The shutdown deadline (`--shutdown-timeout`) passed with spans not yet delivered (the
   * endpoint was down or slow). Wins over {@link SIDECAR_EXIT_CODE.refused}.
   */
  undelivered: 4,
} as const;
