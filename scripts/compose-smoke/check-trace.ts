import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { checkBackend, passed, type CheckBackendOptions } from './check-backend.js';
import { formatReport } from './format-report.js';
import { JaegerBackend } from './jaeger-backend.js';
import { TempoBackend } from './tempo-backend.js';
import type { Fetch, TraceBackend } from './trace-backend.js';
import { DEMO_TRACE } from './trace-expectation.js';

/** The service the compose stack's sidecar exports the demo's spans under (OTEL_SERVICE_NAME). */
export const DEFAULT_SERVICE = 'demo-agent';

const USAGE = `usage: check-trace [--jaeger URL] [--tempo URL] [--service NAME] [--since TIME]
                   [--timeout SECONDS] [--interval SECONDS]

Asks Jaeger (api_v3) and/or Tempo (search, then trace by id) for the demo's trace and checks its
shape: one execute_tool span per demo call, nested calls under their caller, fetch_prices ERROR,
slow_search cancelled. Exits 0 when every backend asked has it, 1 when one does not, 2 on bad usage.

  --jaeger URL       Jaeger query base URL, e.g. http://127.0.0.1:16686
  --tempo URL        Tempo HTTP API base URL, e.g. http://127.0.0.1:3200 (or Grafana's data source
                     proxy: http://127.0.0.1:3000/api/datasources/proxy/uid/tempo)
  --service NAME     service.name of the spans (default ${DEFAULT_SERVICE})
  --since TIME       RFC 3339 start of the search window (default 15 minutes ago)
  --timeout SECONDS  keep asking this long for a trace with the right shape (default 120)
  --interval SECONDS between attempts (default 3)
`;

/** Where {@link runTraceCheck} writes, and what it uses to reach the backends. */
export interface TraceCheckIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** @default globalThis.fetch */
  fetch?: Fetch;
  /** @default timers/promises setTimeout */
  wait?: CheckBackendOptions['wait'];
  /** @default () => new Date() */
  now?: () => Date;
}

/**
 * The `check-trace` command: parses `args`, checks every backend named, prints each report and
 * resolves the exit code. Tests call it directly; the file runs it when executed.
 */
export async function runTraceCheck(args: readonly string[], io: TraceCheckIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        jaeger: { type: 'string' },
        tempo: { type: 'string' },
        service: { type: 'string', default: DEFAULT_SERVICE },
        since: { type: 'string' },
        timeout: { type: 'string', default: '120' },
        interval: { type: 'string', default: '3' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    io.stderr.write(`check-trace: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const now = io.now ?? (() => new Date());
  const timeoutSeconds = Number(values.timeout);
  const intervalSeconds = Number(values.interval);
  const since =
    values.since === undefined ? new Date(now().getTime() - 15 * 60_000) : new Date(values.since);
  const problems = [
    values.jaeger === undefined && values.tempo === undefined
      ? 'name --jaeger or --tempo (or both)'
      : '',
    Number.isNaN(since.getTime()) ? `--since ${values.since}: not a date` : '',
    !(timeoutSeconds >= 0) ? `--timeout ${values.timeout}: not a number of seconds` : '',
    !(intervalSeconds > 0) ? `--interval ${values.interval}: not a positive number of seconds` : '',
  ].filter((problem) => problem !== '');
  if (problems.length > 0) {
    io.stderr.write(`check-trace: ${problems.join('; ')}\n${USAGE}`);
    return 2;
  }
  const backendOptions = io.fetch === undefined ? {} : { fetch: io.fetch };
  const backends: TraceBackend[] = [];
  if (values.jaeger !== undefined) backends.push(new JaegerBackend(values.jaeger, backendOptions));
  if (values.tempo !== undefined) backends.push(new TempoBackend(values.tempo, backendOptions));

  const options: CheckBackendOptions = {
    service: values.service,
    expectation: DEMO_TRACE,
    since,
    attempts: Math.floor(timeoutSeconds / intervalSeconds) + 1,
    intervalMs: intervalSeconds * 1000,
    now,
    ...(io.wait === undefined ? {} : { wait: io.wait }),
  };
  io.stdout.write(
    `Looking for ${DEMO_TRACE.description} (service ${values.service}, since ${since.toISOString()}).\n`,
  );
  // One backend after the other: the second is usually ready by the time the first answered.
  let failed = 0;
  for (const backend of backends) {
    const report = await checkBackend(backend, options);
    io.stdout.write(formatReport(report, DEMO_TRACE));
    if (!passed(report)) failed += 1;
  }
  io.stdout.write(
    failed === 0
      ? `PASS: ${backends.map((backend) => backend.name).join(' and ')} hold ${DEMO_TRACE.description} with the expected shape.\n`
      : `FAIL: ${failed} of ${backends.length} backends miss it or show it misshapen.\n`,
  );
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runTraceCheck(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
  });
}
