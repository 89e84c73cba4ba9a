import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OtlpHttpSpanExporter, ReliableSpanProcessor } from '../../../src/sidecar/export/index.js';
import { decodeTraceRequest, startOtlpReceiver } from '../../../src/testing/index.js';

/** A real OTLP/HTTP endpoint whose answer to each request a test decides. */
interface ScriptedEndpoint {
  url: string;
  /** Span names of every request, in arrival order, and when it came. */
  requests: { names: string[]; at: number }[];
}

describe('ReliableSpanProcessor', () => {
  const servers: Server[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function endpoint(
    answer: (
      names: string[],
      index: number,
    ) => { status: number; headers?: Record<string, string> },
  ): Promise<ScriptedEndpoint> {
    const requests: ScriptedEndpoint['requests'] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const names = decodeTraceRequest(Buffer.concat(chunks), 'protobuf').map(
          (span) => span.name,
        );
        const { status, headers } = answer(names, requests.length);
        requests.push({ names, at: Date.now() });
        response.writeHead(status, headers).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
      requests,
    };
  }

  function spansThrough(processor: ReliableSpanProcessor, names: string[]): void {
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    for (const name of names) tracer.startSpan(name).end();
  }

  it('splits a refused batch until only the bad span is given up on', async () => {
    const target = await endpoint((names) => ({ status: names.includes('poison') ? 400 : 200 }));
    const refused: ReadableSpan[] = [];
    const exported: string[] = [];
    const processor = new ReliableSpanProcessor(new OtlpHttpSpanExporter({ url: target.url }), {
      batchSize: 16,
      onRefused: (span) => refused.push(span),
      onExported: (spans) => exported.push(...spans.map((span) => span.name)),
    });
    const names = Array.from({ length: 16 }, (_, index) =>
      index === 11 ? 'poison' : `ok ${index}`,
    );

    spansThrough(processor, names);
    await processor.forceFlush();

    expect(refused.map((span) => span.name)).toEqual(['poison']);
    expect(exported.sort()).toEqual(names.filter((name) => name !== 'poison').sort());
    expect(processor.stats()).toMatchObject({ exported: 15, refused: 1, queued: 0, inFlight: 0 });
    await processor.shutdown();
  });

  it('keeps a failed batch whole and retries it first, no sooner than Retry-After', async () => {
    const target = await endpoint((_, index) =>
      index === 0 ? { status: 503, headers: { 'Retry-After': '1' } } : { status: 200 },
    );
    const processor = new ReliableSpanProcessor(new OtlpHttpSpanExporter({ url: target.url }), {
      batchSize: 4,
      maxConcurrentExports: 1,
      initialBackoffMs: 10,
    });

    spansThrough(processor, ['a', 'b', 'c', 'd', 'e', 'f']);
    await processor.forceFlush();

    expect(target.requests.map((request) => request.names)).toEqual([
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
      ['e', 'f'],
    ]);
    expect(target.requests[1]!.at - target.requests[0]!.at).toBeGreaterThanOrEqual(900);
    expect(processor.stats()).toMatchObject({ exported: 6, failedAttempts: 1 });
    await processor.shutdown();
  });

  it('says it is full at its budget and never drops past it', async () => {
    const target = await endpoint(() => ({ status: 503 }));
    const processor = new ReliableSpanProcessor(new OtlpHttpSpanExporter({ url: target.url }), {
      maxQueueSpans: 10,
      initialBackoffMs: 5,
      maxBackoffMs: 20,
    });

    spansThrough(
      processor,
      Array.from({ length: 25 }, (_, index) => `span ${index}`),
    );
    expect(processor.full).toBe(true);
    expect(processor.pending).toBe(25);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processor.pending).toBe(25);
    expect(target.requests.length).toBeGreaterThan(2);
    await processor.shutdown(0);
  });

  it('keeps every span through a minute-long outage, backing off, then delivers them all', async () => {
    // Only the processor's clock is fake; sockets and the receiver run on real I/O.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const receiver = await startOtlpReceiver();
    try {
      receiver.setAvailable(false);
      const processor = new ReliableSpanProcessor(
        new OtlpHttpSpanExporter({ url: receiver.tracesUrl }),
      );
      const names = Array.from({ length: 2000 }, (_, index) => `call ${index}`);
      spansThrough(processor, names);
      /** Advances the fake clock, then lets the requests it started be answered. */
      const elapse = async (ms: number): Promise<void> => {
        await vi.advanceTimersByTimeAsync(ms);
        while (processor.stats().inFlight > 0) await new Promise((done) => setImmediate(done));
      };

      for (let second = 0; second < 60; second += 1) await elapse(1000);
      const down = processor.stats();
      expect(down).toMatchObject({ exported: 0, queued: 2000, inFlight: 0, refused: 0 });
      expect(receiver.spans).toHaveLength(0);
      // 500 ms doubling up to 10 s: a dozen rounds of two batches in a minute, not one per tick.
      expect(down.failedAttempts).toBeGreaterThanOrEqual(2 * 8);
      expect(down.failedAttempts).toBeLessThanOrEqual(2 * 14);

      receiver.setAvailable(true);
      for (let second = 0; second < 15 && processor.pending > 0; second += 1) await elapse(1000);
      expect(processor.stats()).toMatchObject({ exported: 2000, queued: 0, inFlight: 0 });
      expect(new Set(receiver.spans.map((span) => span.name))).toEqual(new Set(names));
      expect(receiver.spans).toHaveLength(2000);
      await processor.shutdown(0);
    } finally {
      vi.useRealTimers();
      await receiver.close();
    }
  });
});
