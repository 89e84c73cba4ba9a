import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OtlpFileExporter,
  OtlpHttpSpanExporter,
  ReliableSpanProcessor,
  SpanDestinations,
} from '../../../src/sidecar/export/index.js';
import { decodeTraceRequest, startOtlpReceiver } from '../../../src/testing/index.js';

/** The span names of each line of `path`: one export request a line, each decoded on its own. */
function linesOf(path: string): string[][] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) =>
      decodeTraceRequest(Buffer.from(line), 'application/json').map((span) => span.name),
    );
}

describe('OtlpFileExporter', () => {
  let directory: string;
  const processors: ReliableSpanProcessor[] = [];
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-out-'));
  });
  afterEach(async () => {
    for (const processor of processors.splice(0)) await processor.shutdown(0);
    rmSync(directory, { recursive: true, force: true });
  });

  function through(
    transport: ConstructorParameters<typeof ReliableSpanProcessor>[0],
    options: ConstructorParameters<typeof ReliableSpanProcessor>[1] = {},
  ): (names: string[]) => Promise<void> {
    const processor = new ReliableSpanProcessor(transport, options);
    processors.push(processor);
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    return async (names) => {
      for (const name of names) tracer.startSpan(name).end();
      await processor.forceFlush();
    };
  }

  it('writes each export request as one line of OTLP JSON, over what the file held unless appending', async () => {
    const path = join(directory, 'spans.jsonl');
    writeFileSync(path, 'left over from an earlier run\n');
    const file = await OtlpFileExporter.open({ path });
    const send = through(file, { batchSize: 2 });
    await send(['a', 'b', 'c']);
    await file.shutdown();
    expect(linesOf(path)).toEqual([['a', 'b'], ['c']]);

    const resumed = await OtlpFileExporter.open({ path, append: true });
    await through(resumed)(['d']);
    await resumed.shutdown();
    expect(linesOf(path)).toEqual([['a', 'b'], ['c'], ['d']]);
  });

  it('rotates at maxBytes to FILE.1, FILE.2, deleting the oldest past maxBackups, never splitting a request', async () => {
    // Each span its own request, all of one size: three fit under the limit, a fourth not.
    const probe = join(directory, 'probe.jsonl');
    const probing = await OtlpFileExporter.open({ path: probe });
    await through(probing)(['span 00']);
    await probing.shutdown();
    const lineBytes = readFileSync(probe).length;
    rmSync(probe);
    const maxBytes = Math.floor(3.5 * lineBytes);
    const path = join(directory, 'spans.jsonl');
    const logged: string[] = [];
    const file = await OtlpFileExporter.open({
      path,
      maxBytes,
      maxBackups: 2,
      log: (line) => logged.push(line),
    });
    const send = through(file, { batchSize: 1 });
    await send(Array.from({ length: 12 }, (_, index) => `span ${String(index).padStart(2, '0')}`));
    // A request larger than the limit is written whole, in a file of its own.
    await send(['x'.repeat(maxBytes)]);
    await file.shutdown();

    expect(readdirSync(directory).sort()).toEqual([
      'spans.jsonl',
      'spans.jsonl.1',
      'spans.jsonl.2',
    ]);
    expect(linesOf(path)).toEqual([['x'.repeat(maxBytes)]]);
    expect(linesOf(`${path}.1`).flat()).toEqual(['span 09', 'span 10', 'span 11']);
    expect(linesOf(`${path}.2`).flat()).toEqual(['span 06', 'span 07', 'span 08']);
    for (const name of ['spans.jsonl.1', 'spans.jsonl.2']) {
      expect(readFileSync(join(directory, name)).length).toBe(3 * lineBytes);
    }
    // Each rotation is said once.
    expect(logged.filter((line) => line.includes(' reached '))).toHaveLength(4);
    // Nothing was deleted until there were two backups to keep.
    expect(logged[0]).toMatch(
      /spans\.jsonl reached \d+ bytes \(--out-max-bytes \d+\); rotated to .*spans\.jsonl\.1, keeping 2 \(--out-backups\)$/,
    );
    expect(logged[1]).toMatch(/keeping 2 \(--out-backups\)$/);
    expect(logged[2]).toMatch(
      /keeping 2 \(--out-backups\); the oldest, .*spans\.jsonl\.2, deleted$/,
    );
  });

  it('beside OTLP, writes a batch once, at once, while the collector refuses it (503), which gets it on retry', async () => {
    const receiver = await startOtlpReceiver({ failNext: 2 });
    try {
      const path = join(directory, 'spans.jsonl');
      const file = new ReliableSpanProcessor(await OtlpFileExporter.open({ path }));
      const otlp = new ReliableSpanProcessor(
        new OtlpHttpSpanExporter({ url: receiver.tracesUrl }),
        {
          initialBackoffMs: 5,
          maxBackoffMs: 10,
        },
      );
      processors.push(file, otlp);
      const destinations = new SpanDestinations(
        [file, otlp].map((processor, index) => ({
          kind: index === 0 ? ('file' as const) : ('otlp' as const),
          description: String(index),
          processor,
          refusal: undefined,
        })),
      );
      const tracer = new BasicTracerProvider({ spanProcessors: [destinations] }).getTracer('t');
      for (const name of ['a', 'b', 'c']) tracer.startSpan(name).end();
      await file.forceFlush();
      expect(linesOf(path)).toEqual([['a', 'b', 'c']]);
      await destinations.forceFlush();
      expect(receiver.spans.map((span) => span.name)).toEqual(['a', 'b', 'c']);
      expect(receiver.requests.map((request) => request.status)).toEqual([503, 503, 200]);
      await destinations.shutdown(0);
      expect(linesOf(path)).toEqual([['a', 'b', 'c']]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses, naming --out, a file it cannot write', async () => {
    await expect(
      OtlpFileExporter.open({ path: join(directory, 'missing', 'spans.jsonl') }),
    ).rejects.toThrow(/^--out .*missing\/spans\.jsonl: cannot write the file: ENOENT/);
  });

  it('writes to a device such as /dev/null without emptying or rotating it', async () => {
    // `--out /dev/null` (a dry run) was refused: a device cannot be truncated. Rotating would
    // rename it. The link keeps a wrong rename inside the test's directory.
    const path = join(directory, 'null');
    symlinkSync('/dev/null', path);
    const logged: string[] = [];
    const file = await OtlpFileExporter.open({
      path,
      maxBytes: 10,
      log: (line) => logged.push(line),
    });
    await through(file, { batchSize: 1 })(['a', 'b', 'c']);
    await file.shutdown();
    expect(logged).toEqual([]);
    expect(readdirSync(directory)).toEqual(['null']);
  });
});
