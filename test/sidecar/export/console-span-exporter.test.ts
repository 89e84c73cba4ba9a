import { Writable } from 'node:stream';
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ConsoleSpanExporter, ReliableSpanProcessor } from '../../../src/sidecar/export/index.js';
import { printable } from '../../../src/sidecar/pipeline/printable.js';

/** A stream that keeps what is written; `closed` makes every write fail, as a closed pipe does. */
function collector(closed = false): Writable & { text: string } {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (closed) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
        return;
      }
      stream.text += chunk.toString('utf8');
      callback();
    },
  }) as Writable & { text: string };
  stream.text = '';
  return stream;
}

describe('ConsoleSpanExporter', () => {
  it('prints each span as a block: name, duration, status, ids, attributes, events from its start', async () => {
    const stream = collector();
    const processor = new ReliableSpanProcessor(new ConsoleSpanExporter(stream, printable));
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    const span = tracer.startSpan('execute_tool search', {
      startTime: [1_777_636_800, 0],
      attributes: { 'gen_ai.tool.name': 'search', 'tooltrace.depth': 0, tags: ['a', 'b'] },
    });
    span.addEvent(
      'tool.stream.progress',
      { 'tooltrace.stream.progress': 0.5 },
      [1_777_636_800, 1_500_000],
    );
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'disk full' });
    span.end([1_777_636_800, 12_300_000]);
    // Input with a terminal escape and a forged line: printed escaped, on its own line.
    tracer
      .startSpan('execute_tool \u001b[2Jevil\nforged', {
        attributes: { 'gen_ai.tool.call.arguments': 'a\u001b[31mred\u2028b' },
      })
      .end();
    await processor.forceFlush();
    await processor.shutdown();

    const { traceId, spanId } = span.spanContext();
    const [first, second] = stream.text.split('\n\n');
    expect(first).toBe(
      [
        `execute_tool search  12.3 ms  ERROR "disk full"  trace=${traceId} span=${spanId}`,
        '  gen_ai.tool.name="search"',
        '  tooltrace.depth=0',
        '  tags=["a","b"]',
        '  event +1.5 ms tool.stream.progress tooltrace.stream.progress=0.5',
      ].join('\n'),
    );
    expect(second).toMatch(/^execute_tool \\x1b\[2Jevil\\nforged {2}\d+ µs {2}UNSET {2}trace=/);
    expect(second).toContain('gen_ai.tool.call.arguments="a\\u001b[31mred\\u2028b"');
    expect(stream.text).not.toContain('\u001b');
    expect(stream.text).not.toContain('\u2028');
  });

  it('refuses a batch for good when standard output is closed, instead of ending the process', async () => {
    const dropped: string[] = [];
    const processor = new ReliableSpanProcessor(
      new ConsoleSpanExporter(collector(true), printable),
      { onDropped: (_batch, status, reason) => dropped.push(`${status}: ${reason}`) },
    );
    new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test').startSpan('a').end();
    await processor.forceFlush();
    expect(dropped).toEqual([
      'console: standard output was closed (EPIPE: its reader stopped reading, as `| head` does)',
    ]);
    expect(processor.stats().dropped).toBe(1);
  });

  it('names any other write error of standard output with its message', async () => {
    const dropped: string[] = [];
    const broken = new Writable({
      write(_chunk: Buffer, _encoding, callback) {
        callback(Object.assign(new Error('write ENOSPC'), { code: 'ENOSPC' }));
      },
    });
    const processor = new ReliableSpanProcessor(new ConsoleSpanExporter(broken, printable), {
      onDropped: (_batch, status, reason) => dropped.push(`${status}: ${reason}`),
    });
    new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test').startSpan('a').end();
    await processor.forceFlush();
    expect(dropped).toEqual(['console: standard output cannot be written: write ENOSPC']);
  });
});
