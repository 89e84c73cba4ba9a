import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { journalText } from './journal-lines.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('tooltrace sidecar: the resource of exported spans', () => {
  const testbed = useReceiver();

  /** Runs `sidecar --stdin …args` over a small journal; returns the spans it exported. */
  async function exported(
    args: string[],
    env: Record<string, string>,
  ): Promise<readonly ReceivedSpan[]> {
    const sidecar = startSidecar(['--stdin', ...args], {
      input: journalText({ calls: 3 }),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, ...env },
    });
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(testbed.receiver.spans).toHaveLength(3);
    return testbed.receiver.spans;
  }

  it('carries service.name, OTEL_RESOURCE_ATTRIBUTES, the host, the process and an instance id', async () => {
    const spans = await exported([], {
      OTEL_SERVICE_NAME: 'agent-from-env',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,team=tools%20and%20agents',
    });

    const resource = spans[0]!.resource;
    expect(resource).toMatchObject({
      'service.name': 'agent-from-env',
      'deployment.environment.name': 'staging',
      team: 'tools and agents',
      'host.name': hostname(),
      'process.runtime.name': 'nodejs',
      'process.runtime.version': process.versions.node,
      'telemetry.sdk.language': 'nodejs',
    });
    expect(resource['process.pid']).toEqual(expect.any(Number));
    expect(resource['process.pid']).not.toBe(process.pid);
    expect(resource['service.instance.id']).toMatch(UUID);
    for (const span of spans) expect(span.resource).toEqual(resource);
  });

  it('takes service.name from --service-name over OTEL_SERVICE_NAME', async () => {
    const spans = await exported(['--service-name', 'agent-from-flag'], {
      OTEL_SERVICE_NAME: 'agent-from-env',
    });
    expect(spans[0]!.resource['service.name']).toBe('agent-from-flag');
  });

  it('draws a new service.instance.id per process unless OTEL_RESOURCE_ATTRIBUTES sets one', async () => {
    const first = (await exported([], {}))[0]!.resource['service.instance.id'];
    testbed.receiver.clear();
    const second = (await exported([], {}))[0]!.resource['service.instance.id'];
    testbed.receiver.clear();
    const fixed = (
      await exported([], { OTEL_RESOURCE_ATTRIBUTES: 'service.instance.id=sidecar-7' })
    )[0]!.resource['service.instance.id'];

    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
    expect(fixed).toBe('sidecar-7');
  });

  it('keeps one service.instance.id for the life of the process', async () => {
    const sidecar = startSidecar(['--stdin'], {
      keepStdinOpen: true,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const lines = journalText({ calls: 4 }).trimEnd().split('\n');
    sidecar.child.stdin!.write(`${lines.slice(0, lines.length / 2).join('\n')}\n`);
    await testbed.receiver.waitForSpans(2);
    sidecar.child.stdin!.end(`${lines.slice(lines.length / 2).join('\n')}\n`);
    expect((await sidecar.exited).code).toBe(0);

    const ids = new Set(testbed.receiver.spans.map((span) => span.resource['service.instance.id']));
    expect(testbed.receiver.requests.length).toBeGreaterThan(1);
    expect(ids.size).toBe(1);
  });

  it('masks secret flag values in process.command_args', async () => {
    const spans = await exported(
      ['--token', 's3cret', '--otlp-header=authorization=Bearer s3cret'],
      {},
    );
    const args = spans[0]!.resource['process.command_args'] as string[];
    expect(args).toEqual(
      expect.arrayContaining(['--token', '***', '--otlp-header=***', '--stdin']),
    );
    expect(JSON.stringify(args)).not.toContain('s3cret');
  });

  it('masks the credentials of an endpoint URL on the command line and in the log', async () => {
    const endpoint = testbed.receiver.url.replace('://', '://agent:s3cret@');
    const sidecar = startSidecar(['--stdin', '--otlp-endpoint', endpoint], {
      input: journalText({ calls: 1 }),
      env: { OTEL_METRICS_EXPORTER: 'none' },
    });
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    const masked = testbed.receiver.url.replace('://', '://***@');
    expect(sidecar.stderr()).toContain(`exporting to ${masked}/v1/traces`);
    expect(sidecar.stderr()).not.toContain('s3cret');
    const args = testbed.receiver.spans[0]!.resource['process.command_args'] as string[];
    expect(args).toEqual(expect.arrayContaining(['--otlp-endpoint', masked]));
    expect(JSON.stringify(args)).not.toContain('s3cret');
    // The credentials themselves still went to the endpoint.
    expect(testbed.receiver.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('agent:s3cret').toString('base64')}`,
    );
  });
});
