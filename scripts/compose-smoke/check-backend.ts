import { setTimeout as sleep } from 'node:timers/promises';
import type { FoundSpan } from './found-span.js';
import type { QueryWindow, TraceBackend } from './trace-backend.js';
import type { TraceExpectation } from './trace-expectation.js';
import { callTool, checkTraceShape, type TraceShapeReport } from './trace-shape.js';

/** Options for {@link checkBackend}. */
export interface CheckBackendOptions {
  /** `service.name` the spans were exported under. */
  service: string;
  expectation: TraceExpectation;
  /** Start of the window: when the run began (minus clock slack). */
  since: Date;
  /** How many times to ask before giving up (spans take a few seconds to become searchable). */
  attempts: number;
  /** Pause between attempts, in milliseconds. */
  intervalMs: number;
  /** How to pause; tests pass one that does not wait. @default timers/promises setTimeout */
  wait?: (milliseconds: number) => Promise<unknown>;
  /** The clock, for the end of the window. @default () => new Date() */
  now?: () => Date;
}

/** What one backend showed: the trace checked, or why there was none to check. */
export type BackendResult =
  | { kind: 'unreachable'; reason: string }
  | { kind: 'no-trace' }
  | { kind: 'checked'; traceCount: number; trace: TraceShapeReport };

/** {@link BackendResult} with which backend and how many attempts it took. */
export interface BackendReport {
  backend: string;
  url: string;
  attempts: number;
  result: BackendResult;
}

/** Whether a report is a pass: a trace was found and it has the expected shape. */
export function passed(report: BackendReport): boolean {
  return report.result.kind === 'checked' && report.result.trace.problems.length === 0;
}

/**
 * Asks `backend` for the service's traces until one has the expected shape or the attempts run
 * out, and reports the last answer. Among several traces it checks the one holding the most of
 * the expected calls, so an unrelated trace of the same service does not hide the right one.
 */
export async function checkBackend(
  backend: TraceBackend,
  options: CheckBackendOptions,
): Promise<BackendReport> {
  const wait = options.wait ?? ((milliseconds: number) => sleep(milliseconds));
  const now = options.now ?? (() => new Date());
  let result: BackendResult = { kind: 'no-trace' };
  let attempt = 0;
  while (attempt < Math.max(1, options.attempts)) {
    if (attempt > 0) await wait(options.intervalMs);
    attempt += 1;
    // A minute past now: the backend's clock may run ahead of this machine's.
    const window: QueryWindow = { since: options.since, until: new Date(now().getTime() + 60_000) };
    const answer = await backend.query(options.service, window);
    result = answer.ok
      ? resultOf(answer.spans, options.expectation)
      : { kind: 'unreachable', reason: answer.reason };
    if (result.kind === 'checked' && result.trace.problems.length === 0) break;
  }
  return { backend: backend.name, url: backend.url, attempts: attempt, result };
}

function resultOf(spans: readonly FoundSpan[], expectation: TraceExpectation): BackendResult {
  const traces = new Map<string, FoundSpan[]>();
  for (const span of spans) {
    const trace = traces.get(span.traceId) ?? [];
    trace.push(span);
    traces.set(span.traceId, trace);
  }
  if (traces.size === 0) return { kind: 'no-trace' };
  const expected = new Set(expectation.calls.map((call) => call.tool));
  const score = (trace: readonly FoundSpan[]): number =>
    new Set(trace.map(callTool).filter((tool) => tool !== undefined && expected.has(tool))).size;
  const best = [...traces.values()].reduce((a, b) => (score(b) > score(a) ? b : a));
  return { kind: 'checked', traceCount: traces.size, trace: checkTraceShape(best, expectation) };
}
