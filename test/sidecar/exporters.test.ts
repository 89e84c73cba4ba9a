import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, type ReceivedSpan } from '../../src/testing/index.js';
import { childEnv, runCli } from '../demo/cli-process.js';
import { journalText } from './journal-lines.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

/** The spans of an `--out` file, each line decoded on its own: a torn line fails the test. */
function spansOfFile(path: string): ReceivedSpan[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .flatMap((line) => decodeTraceRequest(Buffer.from(line), 'application/json'));
}

describe('tooltrace sidecar exporters (OTEL_TRACES_EXPORTER, --out), with no collector', () => {
  const testbed = useReceiver({ directory: 'tooltrace-exporters-' });

  it('prints each span on stdout with console, writes --out beside it, exits 0; tooltrace view draws the file', async () => {
    const out = join(testbed.directory, 'spans.jsonl');
    const sidecar = startSidecar(['--stdin', '--out', out, '--status-interval', '0'], {
      input: journalText({ calls: 3, streamEvents: 2 }),
      env: { OTEL_TRACES_EXPORTER: 'console' },
    });
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(sidecar.stderr()).toContain(
      `exporting to ${out} (OTLP JSON lines) and standard output (console) as tooltrace-sidecar`,
    );
    // Nothing tried a collector: no metrics either (they follow the spans).
    expect(sidecar.stderr()).not.toMatch(/localhost:4318|metrics to|not delivered/);

    const blocks = sidecar
      .stdout()
      .split('\n\n')
      .filter((block) => block !== '');
    expect(blocks).toHaveLength(3);
    const printed = blocks.map((block) => {
      const match =
        /^execute_tool search {2}\d[\d.]* (µs|ms) {2}OK {2}trace=([0-9a-f]{32}) span=[0-9a-f]{16}\n/.exec(
          block,
        );
      expect(match, block).not.toBeNull();
      expect(block).toMatch(/\n {2}gen_ai\.tool\.call\.id="tc_\d"\n/);
      expect(block).toMatch(/\n {2}event \+\d[\d.]* (µs|ms) tool\.stream\.progress /);
      return match![2]!;
    });

    const written = spansOfFile(out);
    expect(written.map((span) => span.traceId).sort()).toEqual([...printed].sort());
    const view = await runCli(['view', out, '--no-color'], childEnv());
    expect(view.code).toBe(0);
    for (const traceId of printed) {
      expect(view.stdout).toMatch(
        new RegExp(`trace ${traceId} {2}1 span[\\s\\S]*?execute_tool search +█+`),
      );
    }
  });

  it('writes every batch to --out while the collector is down, and the summary counts what reached the file', async () => {
    const out = join(testbed.directory, 'spans.jsonl');
    const dead = 'http://127.0.0.1:9';
    // 1,500 calls: three batches of 512 and more, all held behind a collector that never answers.
    const sidecar = startSidecar(
      ['--stdin', '--out', out, '--otlp-endpoint', dead, '--shutdown-timeout', '2s'],
      { input: journalText({ calls: 1500 }) },
    );
    expect(await sidecar.exited).toEqual({ code: 4, signal: null });
    const spans = spansOfFile(out);
    expect(spans).toHaveLength(1500);
    const calls = new Set(spans.map((span) => span.attributes['gen_ai.tool.call.id']));
    expect(calls.size).toBe(1500);
    const stderr = sidecar.stderr();
    const summary = `1500 spans written to ${out} (OTLP JSON lines), 0 exported to ${dead}/v1/traces (http/protobuf), 1500 waiting`;
    expect(stderr).toContain(summary);
    expect(stderr.split(summary)).toHaveLength(2);
    expect(stderr).toContain(
      `shutdown timeout: 1500 spans were not delivered to ${dead}/v1/traces (http/protobuf)\n`,
    );
    expect(stderr).toMatch(
      /spans were not delivered: 1500 to http:\/\/127\.0\.0\.1:9\/v1\/traces \(http\/protobuf\); exit code 4\n$/,
    );
  });

  it('exports to both with --out and OTEL_EXPORTER_OTLP_ENDPOINT set, and says so at start', async () => {
    const out = join(testbed.directory, 'both.jsonl');
    const sidecar = startSidecar(['--stdin', '--out', out, '--status-interval', '0'], {
      input: journalText({ calls: 4 }),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(sidecar.stderr()).toContain(
      '--out with OTEL_EXPORTER_OTLP_ENDPOINT set: spans go to both (OTEL_TRACES_EXPORTER=none writes only the file)',
    );
    expect(sidecar.stderr()).toContain(
      `exporting to ${out} (OTLP JSON lines) and ${testbed.receiver.url}/v1/traces (http/protobuf)`,
    );
    const written = spansOfFile(out).map((span) => span.spanId);
    expect(written).toHaveLength(4);
    expect(testbed.receiver.spans.map((span) => span.spanId).sort()).toEqual(written.sort());
  });

  it('names a closed standard output as such (exit 3), not as an endpoint refusal; says an unused --otlp-endpoint', async () => {
    const sidecar = startSidecar(
      ['--stdin', '--otlp-endpoint', 'http://127.0.0.1:9', '--status-interval', '0'],
      { keepStdinOpen: true, env: { OTEL_TRACES_EXPORTER: 'console' } },
    );
    await sidecar.waitForStderr(/exporting to standard output/);
    // The reader leaves, as `| head` does, before the spans come.
    sidecar.child.stdout!.destroy();
    sidecar.child.stdin!.end(journalText({ calls: 600 }));
    expect(await sidecar.exited).toEqual({ code: 3, signal: null });
    const stderr = sidecar.stderr();
    expect(stderr).toMatch(
      /^tooltrace sidecar: --otlp-endpoint is not used: OTEL_TRACES_EXPORTER=console sends nothing over OTLP\n/,
    );
    expect(stderr).toContain('600 spans not printed: standard output was closed (EPIPE');
    expect(stderr).not.toMatch(/refused by the endpoint|127\.0\.0\.1:9/);
  });

  it('refuses --out-max-bytes without --out in one line (exit 2)', async () => {
    const sidecar = startSidecar(['--stdin', '--out-max-bytes', '1000']);
    expect(await sidecar.exited).toEqual({ code: 2, signal: null });
    expect(sidecar.stderr()).toBe(
      'tooltrace sidecar: --out-max-bytes needs --out FILE (or TOOLTRACE_OUT): there is no file to rotate\n',
    );
  });

  it('refuses an exporter it does not support in one line with the accepted ones (exit 2); OTEL_SDK_DISABLED=true exports nothing and says so', async () => {
    const refused = startSidecar(['--stdin'], {
      input: journalText({ calls: 1 }),
      env: { OTEL_TRACES_EXPORTER: 'otlp,zipkin' },
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toBe(
      "tooltrace sidecar: OTEL_TRACES_EXPORTER: 'zipkin' is not an exporter the sidecar supports; accepted: otlp, console, none, or a comma-separated list such as otlp,console\n",
    );

    const out = join(testbed.directory, 'disabled.jsonl');
    const disabled = startSidecar(['--stdin', '--out', out, '--status-interval', '0'], {
      input: journalText({ calls: 2 }),
      env: {
        OTEL_SDK_DISABLED: 'true',
        OTEL_TRACES_EXPORTER: 'otlp,console',
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
      },
    });
    expect(await disabled.exited).toEqual({ code: 0, signal: null });
    expect(disabled.stderr()).toContain(
      'OTEL_SDK_DISABLED=true: exporting nothing, neither spans nor metrics; events are still read, checked and counted',
    );
    expect(disabled.stderr()).toContain(`OTEL_SDK_DISABLED=true: ${out} is not written`);
    expect(disabled.stderr()).toContain('24 events, 0 rejected, 0 calls open, 0 spans exported');
    expect(disabled.stdout()).toBe('');
    expect(testbed.receiver.requests).toEqual([]);
    expect(() => statSync(out)).toThrow(/ENOENT/);
  });

  it('leaves the --out file whole on SIGTERM: every call it read written, every line a request', async () => {
    const out = join(testbed.directory, 'spans.jsonl');
    const sidecar = startSidecar(['--stdin', '--out', out, '--status-interval', '0'], {
      keepStdinOpen: true,
    });
    await sidecar.waitForStderr(/exporting to .*spans\.jsonl/);
    sidecar.child.stdin!.write(journalText({ calls: 2000, leaveLastOpen: true }));
    // Stopped while it works: the file has had a write, and stdin is still open.
    while (statSync(out).size === 0) await delay(5);
    sidecar.child.kill('SIGTERM');

    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(sidecar.stderr()).toContain('received SIGTERM; ending open calls and flushing');
    const [, exported] = /(\d+) spans exported, 0 waiting\n$/.exec(sidecar.stderr())!;
    const spans = spansOfFile(out);
    expect(spans).toHaveLength(Number(exported));
    // Intake stopped at the signal: the calls it read are the first ones, each written once.
    const calls = spans.map((span) => span.attributes['gen_ai.tool.call.id'] as string);
    expect(new Set(calls).size).toBe(calls.length);
    expect([...calls].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))).toEqual(
      calls.map((_, index) => `tc_${index}`),
    );
  });
});
