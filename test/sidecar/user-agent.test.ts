import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Server as GrpcServer,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { forwardEvents } from '../../src/forward/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../src/testing/index.js';
import { VERSION } from '../../src/version.js';
import { journalText } from './journal-lines.js';
import { killSidecars, startSidecar } from './sidecar-process.js';

const USER_AGENT = `tooltrace/${VERSION}`;
const INPUT = journalText({ calls: 3 });

const receivers: OtlpReceiver[] = [];
const servers: Server[] = [];
const grpcServers: GrpcServer[] = [];
afterEach(async () => {
  await killSidecars();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const server of grpcServers.splice(0)) server.forceShutdown();
});

/** `User-Agent`s of every request a sidecar sent to an OTLP/HTTP receiver, by path. */
async function httpAgents(protocol: string): Promise<Record<string, string[]>> {
  const receiver = await startOtlpReceiver();
  receivers.push(receiver);
  const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
    input: INPUT,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol },
  });
  expect((await sidecar.exited).code).toBe(0);
  const agents: Record<string, string[]> = {};
  for (const request of receiver.requests) {
    (agents[request.path] ??= []).push(request.headers['user-agent'] ?? '');
  }
  return agents;
}

describe('the User-Agent of every export', () => {
  it.each(['http/protobuf', 'http/json'])(
    'is tooltrace/VERSION on traces and metrics over %s',
    async (protocol) => {
      const agents = await httpAgents(protocol);
      expect(Object.keys(agents).sort()).toEqual(['/v1/metrics', '/v1/traces']);
      for (const sent of Object.values(agents)) {
        expect(new Set(sent)).toEqual(new Set([USER_AGENT]));
      }
    },
  );

  it('is the same on traces and metrics over gRPC, tooltrace/VERSION first', async () => {
    const agents: Record<string, string[]> = {};
    const server = new GrpcServer();
    grpcServers.push(server);
    const passThrough = {
      requestStream: false,
      responseStream: false,
      requestSerialize: (message: Buffer) => message,
      requestDeserialize: (message: Buffer) => message,
      responseSerialize: (message: Buffer) => message,
      responseDeserialize: (message: Buffer) => message,
    } as const;
    for (const [signal, path] of [
      ['traces', '/opentelemetry.proto.collector.trace.v1.TraceService/Export'],
      ['metrics', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'],
    ] as const) {
      server.addService(
        { Export: { path, originalName: 'Export', ...passThrough } },
        {
          Export: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => {
            (agents[signal] ??= []).push(String(call.metadata.get('user-agent')[0] ?? ''));
            done(null, Buffer.alloc(0));
          },
        },
      );
    }
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error === null ? resolve(bound) : reject(error),
      ),
    );
    const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
      input: INPUT,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      },
    });
    expect((await sidecar.exited).code).toBe(0);
    expect(Object.keys(agents).sort()).toEqual(['metrics', 'traces']);
    const all = new Set([...agents.traces!, ...agents.metrics!]);
    // grpc-js puts its own name after ours on every call; nothing comes between.
    expect(all.size).toBe(1);
    expect([...all][0]).toMatch(new RegExp(`^${USER_AGENT} grpc-node-js/`));
  });

  it('is the one the forwarder sends to a sidecar', async () => {
    const agents: string[] = [];
    const server = createServer((request, response) => {
      agents.push(request.headers['user-agent'] ?? '');
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"accepted":1,"rejected":{}}');
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    bus.emit('note', {});
    await forwarder.close(5000);
    expect(agents).toEqual([USER_AGENT]);
  });
});
