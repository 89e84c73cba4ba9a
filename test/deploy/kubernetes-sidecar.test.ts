import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../../src/testing/index.js';
import { journalText } from '../sidecar/journal-lines.js';
import { killSidecars, startSidecar } from '../sidecar/sidecar-process.js';
import {
  containersOf,
  loadKustomization,
  loadManifests,
  objectNamed,
} from './kubernetes-manifests.js';
import { mapAt, stringAt } from './yaml-shape.js';

let receiver: OtlpReceiver | undefined;

afterEach(async () => {
  await killSidecars();
  await receiver?.close();
  receiver = undefined;
});

const objects = loadManifests(loadKustomization());
const sidecar = containersOf(objectNamed(objects, 'Deployment', 'example-agent')).find(
  (container) => container.name === 'tooltrace-sidecar',
)!;

/**
 * The sidecar container's environment as the kubelet would give it: Secret values read from the
 * base's Secret, `fieldRef`s as the pod would have them, `$(NAME)` references expanded.
 */
function containerEnvironment(overrides: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { K8S_POD_NAME: 'example-agent-7d9f-abcde' };
  for (const [name, variable] of Object.entries(sidecar.env)) {
    if (variable.secret !== undefined) {
      const secret = objectNamed(objects, 'Secret', variable.secret.name);
      env[name] = stringAt(mapAt(secret.raw.stringData, 'stringData')[variable.secret.key], name);
    } else if (variable.value !== undefined) {
      env[name] = variable.value.replace(
        /\$\(([A-Z_][A-Z0-9_]*)\)/g,
        (_match, ref: string) => env[ref] ?? '',
      );
    }
  }
  return { ...env, ...overrides };
}

describe('deploy/kubernetes tooltrace sidecar', () => {
  it("starts with the manifest's arguments and environment, answers the probes, and exports forwarded calls", async () => {
    receiver = await startOtlpReceiver();
    const env = containerEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    // The pod's 0.0.0.0:4319 becomes a free loopback port; everything else is as written.
    const args = sidecar.args.slice(1).map((arg) => (arg === '0.0.0.0:4319' ? '127.0.0.1:0' : arg));
    expect(sidecar.args[0]).toBe('sidecar');
    expect(args).toContain('127.0.0.1:0');
    const running = startSidecar(args, { env });
    const url = await running.listenUrl();

    for (const [path, body] of [
      ['/healthz', 'ok\n'],
      ['/readyz', 'ready\n'],
    ] as const) {
      const response = await fetch(`${url}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text()).toBe(body);
    }

    const post = (token: string | undefined): Promise<Response> =>
      fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-ndjson',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: journalText({ calls: 2 }),
      });
    expect((await post(undefined)).status).toBe(401);
    expect((await post(env.TOOLTRACE_TOKEN)).status).toBe(200);

    const spans = await receiver.waitForSpans(2, 20_000);
    for (const span of spans) {
      expect(span.encoding).toBe('protobuf');
      expect(span.resource['service.name']).toBe('example-agent');
      expect(span.resource['k8s.pod.name']).toBe('example-agent-7d9f-abcde');
    }
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });
});
