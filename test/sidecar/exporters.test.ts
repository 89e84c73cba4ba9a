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
