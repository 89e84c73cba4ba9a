import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../../src/testing/index.js';
import { journalText } from '../sidecar/journal-lines.js';
import { killSidecars, startSidecar } from '../sidecar/sidecar-process.js';
import { sidecarCommand } from './compose-command.js';

let receiver: OtlpReceiver | undefined;

afterEach(async () => {
  await killSidecars();
  await receiver?.close();
  receiver = undefined;
});

describe('docker-compose.yml sidecar', () => {
  it('exports a forwarded tool call when started exactly as the compose file says', async () => {
    receiver = await startOtlpReceiver();
    const port = Number(new URL(receiver.url).port);
    // Hosts become 127.0.0.1; the collector's 4318 becomes the receiver; the intake a free port.
    const command = sidecarCommand({ ports: { 4318: port, 4319: 0 } });
    expect(command.entrypoint).toEqual(['tooltrace']);
    const [subcommand, ...args] = command.args;
    expect(subcommand).toBe('sidecar');
    expect(args).toEqual(['--listen', '127.0.0.1:0']);
    expect(command.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(receiver.url);

    const sidecar = startSidecar(args, { env: command.env });
    const url = await sidecar.listenUrl();
    const token = command.env.TOOLTRACE_TOKEN;
    expect(token).toBeTruthy();

    const unauthorized = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: journalText({ calls: 1 }),
    });
    expect(unauthorized.status).toBe(401);

    const response = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
      body: journalText({ calls: 2 }),
    });
    expect(response.status).toBe(200);

    const spans = await receiver.waitForSpans(2, 20_000);
    expect(spans.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual([
      'tc_0',
      'tc_1',
    ]);
    for (const span of spans) {
      expect(span.encoding).toBe('protobuf');
      expect(span.resource['service.name']).toBe(command.env.OTEL_SERVICE_NAME);
      expect(span.resource['service.namespace']).toBe('tooltrace');
      expect(span.resource['deployment.environment.name']).toBe('local');
    }

    sidecar.child.kill('SIGTERM');
    expect((await sidecar.exited).code).toBe(0);
  });
});
