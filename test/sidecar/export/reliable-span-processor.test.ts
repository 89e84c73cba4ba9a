import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OtlpHttpSpanExporter, ReliableSpanProcessor } from '../../../src/sidecar/export/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../src/testing/index.js';

interface Kept {
  name: string;
}

describe('ReliableSpanProcessor', () => {
  let receiver: OtlpReceiver;
  const processors: ReliableSpanProcessor[] = [];

  afterEach(async () => {
    for (const processor of processors.splice(0)) await processor.shutdown(0);
    await receiver.close();
  });

  async function start(
    options: ConstructorParameters<typeof ReliableSpanProcessor>[1] = {},
    encoding: 'protobuf' | 'json' = 'protobuf',
  ): Promise<ReliableSpanProcessor> {
    receiver = await startOtlpReceiver();
    const exporter = new OtlpHttpSpanExporter({ url: receiver.tracesUrl, encoding });
    const processor = new ReliableSpanProcessor(exporter, {
      initialBackoffMs: 5,
      maxBackoffMs: 20,
      ...options,
    });
    processors.push(processor);
    return processor;
  }

  function spansThrough(processor: ReliableSpanProcessor, names: string[]): void {
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    for (const name of names) tracer.startSpan(name).end();
  }

  const names = (count: number, prefix = 'span'): string[] =>
    Array.from({ length: count }, (_, index) => `${prefix} ${index}`);

  it('sends a batch once it holds maxBatchBytes (3 MiB), so a few large spans do not make a request the collector refuses', async () => {
    // A collector that takes at most 4 MiB per request (gRPC's default), and spans of about
    // 1.8 MB (a long tool name, as the span name and an attribute): three of them in one batch
    // were 413 and took every span of it along.
    const limited = await startOtlpReceiver({ maxBodyBytes: 4 * 1024 * 1024 });
    const dropped: string[] = [];
    const processor = new ReliableSpanProcessor(
      new OtlpHttpSpanExporter({ url: limited.tracesUrl }),
      { onDropped: (_spans, status) => dropped.push(status) },
    );
    processors.push(processor);
    receiver = limited;
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    const long = 'x'.repeat(900_000);
    for (let index = 0; index < 53; index += 1) {
      const huge = index >= 25 && index < 28;
      tracer
        .startSpan(huge ? `${long} ${index}` : `span ${index}`, {
          attributes: huge ? { 'gen_ai.tool.name': long } : {},
        })
        .end();
    }
    await processor.forceFlush();
    expect(dropped).toEqual([]);
    expect(limited.spans).toHaveLength(53);
    expect(limited.requests.every((request) => request.status === 200)).toBe(true);
    expect(limited.requests.length).toBeGreaterThan(1);
  });

  describe('a permanent failure', () => {
    it.each([400, 401, 403, 404, 405, 413, 415, 500, 501])(
      'drops a batch answered %i after one attempt, counted by status',
      async (status) => {
        const dropped: { spans: number; status: string; reason: string }[] = [];
        const processor = await start({
          batchSize: 4,
          maxConcurrentExports: 1,
          onDropped: (spans, code, reason) =>
            dropped.push({ spans: spans.length, status: code, reason }),
        });
        receiver.answerNext({ status, message: `scripted ${status}` });

        spansThrough(processor, names(6));
        await processor.forceFlush();

        expect(receiver.requests.map((request) => request.status)).toEqual([status, 200]);
        expect(receiver.spans.map((span) => span.name)).toEqual(['span 4', 'span 5']);
        expect(dropped).toHaveLength(1);
        expect(dropped[0]).toMatchObject({ spans: 4, status: String(status) });
        expect(dropped[0]!.reason).toContain(`scripted ${status}`);
        expect(processor.stats()).toMatchObject({
          exported: 2,
          dropped: 4,
          droppedByStatus: { [String(status)]: 4 },
          failedAttempts: 0,
        });
      },
    );

    it('says the status, the endpoint and the google.rpc.Status message, protobuf and JSON', async () => {
      for (const encoding of ['protobuf', 'json'] as const) {
        const reasons: string[] = [];
        const processor = await start(
          { onDropped: (_, __, reason) => reasons.push(reason) },
          encoding,
        );
        receiver.answerNext({ status: 404, message: 'no traces here' });

        spansThrough(processor, ['lost']);
        await processor.forceFlush();

        expect(reasons).toEqual([
          `404 Not Found from ${receiver.tracesUrl} — is the endpoint path right?: no traces here`,
        ]);
        await processor.shutdown(0);
        await receiver.close();
      }
      receiver = await startOtlpReceiver();
    });
  });

  describe('a retryable failure', () => {
    it.each([429, 502, 503, 504])(
      'keeps a batch answered %i whole and sends it again first',
      async (status) => {
        const processor = await start({ batchSize: 4, maxConcurrentExports: 1 });
        receiver.answerNext({ status });

        spansThrough(processor, names(6));
        await processor.forceFlush();

        expect(receiver.requests.map((request) => [request.status, request.itemCount])).toEqual([
          [status, 0],
          [200, 4],
          [200, 2],
        ]);
        expect(processor.stats()).toMatchObject({ exported: 6, dropped: 0, failedAttempts: 1 });
      },
    );

    it('waits until the HTTP date a Retry-After names', async () => {
      const processor = await start({ batchSize: 2 });
      // HTTP dates have whole seconds: two seconds ahead is between one and two from now.
      receiver.answerNext({
        status: 503,
        retryAfter: new Date(Date.now() + 2000).toUTCString(),
      });
      const began = Date.now();

      spansThrough(processor, ['a', 'b']);
      await processor.forceFlush();

      const [first, second] = await receiver.waitForRequests(2);
      expect(first!.status).toBe(503);
      expect(second!.status).toBe(200);
      expect(Date.now() - began).toBeGreaterThanOrEqual(950);
      expect(receiver.spans).toHaveLength(2);
    });

    it('waits no longer than maxRetryAfterMs, whatever Retry-After says', async () => {
      const processor = await start({ batchSize: 2, maxRetryAfterMs: 30 });
      receiver.answerNext({ status: 429, retryAfter: '3600' });
      const began = Date.now();

      spansThrough(processor, ['a', 'b']);
      await processor.forceFlush();

      expect(Date.now() - began).toBeLessThan(10_000);
      expect(receiver.spans).toHaveLength(2);
    });

    it('retries when the endpoint cannot be reached', async () => {
      receiver = await startOtlpReceiver();
      const failures: string[] = [];
      const exporter = new OtlpHttpSpanExporter({ url: 'http://127.0.0.1:1/v1/traces' });
      const unreachable = new ReliableSpanProcessor(exporter, {
        initialBackoffMs: 5,
        maxBackoffMs: 10,
        onFailed: (reason) => failures.push(reason),
      });
      processors.push(unreachable);

      spansThrough(unreachable, ['a']);
      await expect.poll(() => failures.length).toBeGreaterThanOrEqual(3);

      expect(failures[0]).toContain('ECONNREFUSED');
      // Between attempts the span waits in the queue, during one it is in flight: held either way.
      const stats = unreachable.stats();
      expect(stats).toMatchObject({ exported: 0, dropped: 0 });
      expect(stats.queued + stats.inFlight).toBe(1);
    });
  });

  describe('partial_success', () => {
    it.each(['protobuf', 'json'] as const)(
      'counts spans a %s answer rejected as rejected, with the message',
      async (encoding) => {
        const rejections: [number, string][] = [];
        const processor = await start(
          { batchSize: 5, onRejected: (count, message) => rejections.push([count, message]) },
          encoding,
        );
        receiver.answerNext({ partialSuccess: { rejectedSpans: 2, errorMessage: 'too old' } });

        spansThrough(processor, names(5));
        await processor.forceFlush();

        expect(rejections).toEqual([[2, 'too old']]);
        expect(processor.stats()).toMatchObject({ exported: 3, rejected: 2, dropped: 0 });
      },
    );
  });

  it('says it is full at its budget and never drops past it', async () => {
    const processor = await start({ maxQueueSpans: 10 });
    receiver.setAvailable(false);

    spansThrough(processor, names(25));
    expect(processor.full).toBe(true);
    expect(processor.pending).toBe(25);
    await receiver.waitForRequests(3);
    expect(processor.pending).toBe(25);
    expect(processor.stats().dropped).toBe(0);
  });

  describe('what it keeps of a span', () => {
    it('hands back what onEnd kept with the batch it went out in, exported or dropped', async () => {
      const exported: string[][] = [];
      const dropped: string[][] = [];
      const processor = await start({
        batchSize: 2,
        maxConcurrentExports: 1,
        onEnd: (span) => (span.name.startsWith('kept') ? { name: span.name } : undefined),
        onExported: (batch) => exported.push(batch.kept.map((kept) => (kept as Kept).name)),
        onDropped: (batch) => dropped.push(batch.kept.map((kept) => (kept as Kept).name)),
      });
      receiver.answerNext({ status: 400 });

      spansThrough(processor, ['kept 1', 'other', 'kept 2', 'kept 3']);
      await processor.forceFlush();

      expect(dropped).toEqual([['kept 1']]);
      expect(exported).toEqual([['kept 2', 'kept 3']]);
    });

    it('names a dropped batch by its first span', async () => {
      const named: string[] = [];
      const processor = await start({
        batchSize: 3,
        onDropped: (batch) => named.push(`${batch.length} ${batch.firstSpanName}`),
      });
      receiver.answerNext({ status: 403 });

      spansThrough(processor, ['first', 'second', 'third']);
      await processor.forceFlush();

      expect(named).toEqual(['3 first']);
    });

    it('drops alone a span that cannot be encoded', async () => {
      const dropped: { spans: number; status: string; name: string }[] = [];
      const processor = await start({
        onDropped: (batch, status) =>
          dropped.push({ spans: batch.length, status, name: batch.firstSpanName }),
      });
      const broken: ReadableSpan[] = [];
      const tracer = new BasicTracerProvider({
        spanProcessors: [
          {
            onStart: () => {},
            onEnd: (span) => {
              // Not a span the SDK makes: its events cannot be walked.
              if (span.name === 'broken')
                broken.push(Object.create(span, { events: { value: null } }) as ReadableSpan);
              else processor.onEnd(span);
            },
            forceFlush: () => Promise.resolve(),
            shutdown: () => Promise.resolve(),
          },
        ],
      }).getTracer('test');
      tracer.startSpan('before').end();
      tracer.startSpan('broken').end();
      processor.onEnd(broken[0]!);
      tracer.startSpan('after').end();
      await processor.forceFlush();

      expect(dropped).toEqual([{ spans: 1, status: 'encoding', name: 'broken' }]);
      expect(receiver.spans.map((span) => span.name)).toEqual(['before', 'after']);
      expect(processor.stats()).toMatchObject({ exported: 2, dropped: 1 });
    });

    it('drops alone, with what its hook kept, a span no batch could be opened for', async () => {
      receiver = await startOtlpReceiver();
      const exporter = new OtlpHttpSpanExporter({ url: receiver.tracesUrl });
      let failNextOpen = true;
      // The transport as the exporter is, but the first batch cannot be had (no memory for it).
      const transport = {
        openBatch: () => {
          if (failNextOpen) {
            failNextOpen = false;
            throw new RangeError('Array buffer allocation failed');
          }
          return exporter.openBatch();
        },
        send: (body: Uint8Array) => exporter.send(body),
        releaseBatch: (body: Uint8Array) => exporter.releaseBatch(body),
        shutdown: () => exporter.shutdown(),
      };
      const dropped: { status: string; kept: readonly object[] }[] = [];
      const processor = new ReliableSpanProcessor(transport, {
        onEnd: (span) => ({ receiptOf: span.name }),
        onDropped: (batch, status) => dropped.push({ status, kept: batch.kept }),
      });
      processors.push(processor);

      expect(() => spansThrough(processor, ['unlucky', 'next'])).not.toThrow();
      await processor.forceFlush();

      expect(dropped).toEqual([{ status: 'encoding', kept: [{ receiptOf: 'unlucky' }] }]);
      expect(receiver.spans.map((span) => span.name)).toEqual(['next']);
    });
  });

  it('keeps every span through a minute-long outage, backing off, then delivers them all', async () => {
    // Only the processor's clock is fake; sockets and the receiver run on real I/O.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      receiver = await startOtlpReceiver();
      receiver.setAvailable(false);
      const processor = new ReliableSpanProcessor(
        new OtlpHttpSpanExporter({ url: receiver.tracesUrl }),
      );
      processors.push(processor);
      const names = Array.from({ length: 2000 }, (_, index) => `call ${index}`);
      spansThrough(processor, names);
      /** Advances the fake clock, then lets the requests it started be answered. */
      const elapse = async (ms: number): Promise<void> => {
        await vi.advanceTimersByTimeAsync(ms);
        while (processor.stats().inFlight > 0) await new Promise((done) => setImmediate(done));
      };

      for (let second = 0; second < 60; second += 1) await elapse(1000);
      const down = processor.stats();
      expect(down).toMatchObject({ exported: 0, queued: 2000, inFlight: 0, dropped: 0 });
      expect(receiver.spans).toHaveLength(0);
      // 500 ms doubling up to 10 s, each wait drawn between half and all of it: about a dozen
      // rounds of two batches in a minute, not one per tick.
      expect(down.failedAttempts).toBeGreaterThanOrEqual(2 * 8);
      expect(down.failedAttempts).toBeLessThanOrEqual(2 * 16);

      receiver.setAvailable(true);
      for (let second = 0; second < 15 && processor.pending > 0; second += 1) await elapse(1000);
      expect(processor.stats()).toMatchObject({ exported: 2000, queued: 0, inFlight: 0 });
      expect(new Set(receiver.spans.map((span) => span.name))).toEqual(new Set(names));
      expect(receiver.spans).toHaveLength(2000);
    } finally {
      vi.useRealTimers();
    }
  });
});
