import type { FoundSpan } from './found-span.js';
import type { CallOutcome, TraceExpectation } from './trace-expectation.js';

/** A tool call span found in the trace, described for the report. */
export interface FoundCall {
  tool: string;
  spanId: string;
  outcome: CallOutcome | 'unset';
  /** The status message (why it failed or was cancelled), or `''`. */
  message: string;
  /** Tools of the enclosing calls, innermost first. */
  callers: string[];
}

/** What {@link checkTraceShape} found in one trace. */
export interface TraceShapeReport {
  traceId: string;
  /** Every span of the trace (agent, chat and snapshot spans included), de-duplicated. */
  spanCount: number;
  calls: FoundCall[];
  /** One sentence per miss; empty when the trace has the expected shape. */
  problems: string[];
}

const OUTCOME_WORDS: Readonly<Record<FoundCall['outcome'], string>> = {
  ok: 'OK',
  error: 'ERROR',
  cancelled: 'cancelled',
  unset: 'no status',
};

/**
 * Checks the spans of one trace against `expectation`: exactly one final `execute_tool` span per
 * expected call (in-flight snapshots, `invoke_agent`, `chat` and any other spans are tolerated),
 * no unexpected calls, each ending the expected way (OK; ERROR for a failure; cancelled, which
 * tooltrace marks with `tooltrace.tool.cancelled=true`), and nested calls under their caller.
 */
export function checkTraceShape(
  spans: readonly FoundSpan[],
  expectation: TraceExpectation,
): TraceShapeReport {
  const byId = new Map<string, FoundSpan>();
  for (const span of spans) byId.set(span.spanId, span);
  const callSpans = [...byId.values()].filter(isFinalCallSpan);
  const order = expectation.calls.map((call) => call.tool);
  const rank = (tool: string): number =>
    order.includes(tool) ? order.indexOf(tool) : order.length;
  const calls = callSpans
    .map((span) => describeCall(span, byId))
    .sort((a, b) => rank(a.tool) - rank(b.tool));
  const problems: string[] = [];
  const expectedTools = new Set(order);

  for (const expected of expectation.calls) {
    const found = calls.filter((call) => call.tool === expected.tool);
    if (found.length === 0) {
      problems.push(`no execute_tool span for ${expected.tool}`);
      continue;
    }
    if (found.length > 1) {
      problems.push(`${found.length} execute_tool spans for ${expected.tool}, expected one`);
    }
    const call = found[0]!;
    if (call.outcome !== expected.outcome) {
      problems.push(
        `${expected.tool} ended ${OUTCOME_WORDS[call.outcome]}, expected ${OUTCOME_WORDS[expected.outcome]}`,
      );
    }
    if (expected.within !== undefined && !call.callers.includes(expected.within)) {
      const callers = call.callers.length === 0 ? 'none' : call.callers.join(' < ');
      problems.push(
        `${expected.tool} is not nested under ${expected.within} (its callers: ${callers})`,
      );
    }
  }
  for (const call of calls) {
    if (!expectedTools.has(call.tool))
      problems.push(`unexpected execute_tool span for ${call.tool}`);
  }
  return { traceId: spans[0]?.traceId ?? '', spanCount: byId.size, calls, problems };
}

/** The tool a span is a call of, when it is a final (not in-flight) `execute_tool` span. */
export function callTool(span: FoundSpan): string | undefined {
  const operation = span.attributes['gen_ai.operation.name'];
  const isCall = operation === 'execute_tool' || span.name.startsWith('execute_tool ');
  if (!isCall) return undefined;
  const tool = span.attributes['gen_ai.tool.name'];
  return typeof tool === 'string' ? tool : span.name.slice('execute_tool '.length);
}

function isFinalCallSpan(span: FoundSpan): boolean {
  const inflight =
    span.attributes['tooltrace.inflight'] === true || span.name.endsWith(' (in flight)');
  return !inflight && callTool(span) !== undefined;
}

function describeCall(span: FoundSpan, byId: ReadonlyMap<string, FoundSpan>): FoundCall {
  const callers: string[] = [];
  const seen = new Set<string>([span.spanId]);
  for (let parent = byId.get(span.parentSpanId); parent !== undefined;) {
    if (seen.has(parent.spanId)) break;
    seen.add(parent.spanId);
    const tool = isFinalCallSpan(parent) ? callTool(parent) : undefined;
    if (tool !== undefined) callers.push(tool);
    parent = byId.get(parent.parentSpanId);
  }
  return {
    tool: callTool(span)!,
    spanId: span.spanId,
    outcome: outcomeOf(span),
    message: span.statusMessage,
    callers,
  };
}

function outcomeOf(span: FoundSpan): FoundCall['outcome'] {
  if (span.attributes['tooltrace.tool.cancelled'] === true) return 'cancelled';
  if (span.status === 'error') {
    return span.attributes['error.type'] === 'cancelled' ? 'cancelled' : 'error';
  }
  return span.status;
}
