import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv, ROOT } from '../demo/cli-process.js';
import { startSidecar, useReceiver } from '../sidecar/sidecar-process.js';

const run = promisify(execFile);

/**
 * An agent script as a user writes one, against the built package: forwards 11 events to
 * `argv[1]` (with the token `argv[2]`, if any), awaits `close(2000)` and then prints what it got,
 * how long it took and the stats. It has no other work pending: only the forwarder keeps it alive.
 */
const AGENT_SCRIPT = `
import { EventBus } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/index.js')).href)};
import { forwardEvents } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/forward/index.js')).href)};
const [url, token] = process.argv.slice(1);
const bus = new EventBus();
const forwarder = forwardEvents(bus, { url, ...(token === undefined ? {} : { token }) });
for (let index = 0; index < 11; index += 1) bus.emit('note', { index });
const began = performance.now();
const delivered = await forwarder.close(2000);
console.log(JSON.stringify({ delivered, ms: performance.now() - began, stats: forwarder.stats() }));
`;

interface AgentRun {
  delivered: boolean;
  ms: number;
  stats: { sent: number; refused: number; abandoned: number; lastError: string };
  stderr: string;
}

/** Runs {@link AGENT_SCRIPT} as a child process; rejects when it does not exit 0. */
async function runAgent(...args: string[]): Promise<AgentRun> {
  const { stdout, stderr } = await run(
    process.execPath,
    ['--input-type=module', '-e', AGENT_SCRIPT, ...args],
    { cwd: ROOT, env: childEnv(), timeout: 20_000 },
  );
  return { ...(JSON.parse(stdout) as Omit<AgentRun, 'stderr'>), stderr };
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('forwardEvents in an agent process', () => {
  const testbed = useReceiver();

  it('close(2000) resolves false after about 2 s when nothing listens, and the script runs on', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;

    const agent = await runAgent(url);

    expect(agent.delivered).toBe(false);
    expect(agent.ms).toBeGreaterThanOrEqual(1900);
    expect(agent.ms).toBeLessThan(3000);
    expect(agent.stats).toMatchObject({ sent: 0, abandoned: 11 });
    // Named once when first seen, once more when close() gave up: two lines, not one per retry.
    const lines = agent.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^tooltrace forwarder: cannot reach the sidecar at ${url}/v1/events: fetch failed: connect ECONNREFUSED .*; retrying$`,
        ),
      ),
      expect.stringMatching(
        /^tooltrace forwarder: close\(\) gave up after 2000 ms: 11 events not delivered \(sent 0, refused 0, dropped 0, abandoned 11\); last error: fetch failed: connect ECONNREFUSED /,
      ),
    ]);
  });

  it('close() resolves false with a wrong token, and stderr names the 401 and the reason', async () => {
    const sidecar = startSidecar(['--listen', '127.0.0.1:0', '--token', 'right-token'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const url = await sidecar.listenUrl();

    const agent = await runAgent(url, 'wrong-token');

    expect(agent.delivered).toBe(false);
    expect(agent.stats).toMatchObject({ sent: 0, refused: 11, abandoned: 0 });
    expect(agent.stderr).toBe(
      `tooltrace forwarder: the sidecar at ${url}/v1/events refused 11 events: HTTP 401: missing or wrong bearer token (check options.token or TOOLTRACE_TOKEN)\n`,
    );
    // The sidecar says so too, once, naming who was refused.
    await sidecar.waitForStderr(/refused POST \/v1\/events/);
    expect(sidecar.stderr()).toMatch(
      /tooltrace sidecar: refused POST \/v1\/events from 127\.0\.0\.1 \(no valid token\): 401 missing or wrong bearer token; further refusals like it are only counted/,
    );
  });
});
