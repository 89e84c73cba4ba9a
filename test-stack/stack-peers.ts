import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { decodeTraceRequest, type ReceivedSpan } from '../src/otlp/index.js';
import {
  parentOf,
  ROOT,
  tagOf,
  type JaegerSpan,
  type JaegerTrace,
} from '../scripts/stack/stack.js';

/** Runs `node dist/cli.js …args` to its end (killed after `timeoutMs`), with `env` over a clean one. */
export async function runTooltrace(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 90_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('OTEL_') && !name.startsWith('TOOLTRACE_')) {
      clean[name] = value;
    }
  }
  const child = spawn(process.execPath, ['dist/cli.js', ...args], {
    cwd: ROOT,
    env: { ...clean, COLUMNS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The spans of an OTLP JSON lines file (`tooltrace demo --out`, the sidecar's `--out`). */
export function readOtlpJsonLines(path: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    spans.push(...decodeTraceRequest(Buffer.from(line), 'application/json'));
  }
  return spans;
}

const STATUS = ['UNSET', 'OK', 'ERROR'] as const;

/**
 * What a span looks like in a trace viewer, independent of ids and times: the names from its
 * root down to it, its status code, its status message and its events' names (sorted: events
 * of one instant have no order). Two runs
 * of the same scenario, one read from the demo's own OTLP file and one from Jaeger, give the same
 * shapes when nothing was lost, renamed, re-parented or re-statused on the way.
 */
export interface SpanShape {
  path: string;
  status: (typeof STATUS)[number];
  message: string;
  events: string;
}

function shapes<T>(
  spans: readonly T[],
  id: (span: T) => string,
  parent: (span: T) => string | undefined,
  describe: (span: T) => Omit<SpanShape, 'path'> & { name: string },
): SpanShape[] {
  const byId = new Map(spans.map((span) => [id(span), span]));
  const pathOf = (span: T): string => {
    const names: string[] = [];
    for (let at: T | undefined = span; at !== undefined;) {
      names.unshift(describe(at).name);
      const parentId = parent(at);
      at = parentId === undefined ? undefined : byId.get(parentId);
    }
    return names.join(' > ');
  };
  return spans
    .map((span) => {
      const { name: _name, ...rest } = describe(span);
      return { path: pathOf(span), ...rest };
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** The shapes of OTLP spans (in-flight snapshots left out: how many there are depends on timing). */
export function otlpShapes(spans: readonly ReceivedSpan[]): SpanShape[] {
  const finals = spans.filter((span) => span.attributes['tooltrace.inflight'] !== true);
  return shapes(
    finals,
    (span) => span.spanId,
    (span) => (span.parentSpanId === '' ? undefined : span.parentSpanId),
    (span) => ({
      name: span.name,
      status: STATUS[span.status.code] ?? 'UNSET',
      message: span.status.message,
      events: span.events
        .map((event) => event.name)
        .sort()
        .join(','),
    }),
  );
}

/** The shapes of the spans of Jaeger traces (in-flight snapshots left out). */
export function jaegerShapes(traces: readonly JaegerTrace[]): SpanShape[] {
  const finals = traces
    .flatMap((trace) => trace.spans)
    .filter((span) => tagOf(span, 'tooltrace.inflight') !== true);
  return shapes(
    finals,
    (span) => span.spanID,
    (span) => parentOf(span),
    (span) => ({
      name: span.operationName,
      status: (tagOf(span, 'otel.status_code') as SpanShape['status'] | undefined) ?? 'UNSET',
      message: String(tagOf(span, 'otel.status_description') ?? ''),
      events: span.logs
        .map((log) => String(tagOf(log, 'event')))
        .sort()
        .join(','),
    }),
  );
}

/** Every span of the traces, in-flight snapshots included. */
export function allSpans(traces: readonly JaegerTrace[]): JaegerSpan[] {
  return traces.flatMap((trace) => trace.spans);
}
