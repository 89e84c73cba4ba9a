import { describe, expect, it } from 'vitest';
import { LineSplitter, type LineSplitterOptions } from '../../src/wire/index.js';

interface Seen {
  lines: string[];
  endOffsets: number[];
  oversized: { byteLength: number; endOffset: number }[];
}

function recorder(options: Omit<LineSplitterOptions, 'onLine' | 'onOversizedLine'> = {}): {
  splitter: LineSplitter;
  seen: Seen;
} {
  const seen: Seen = { lines: [], endOffsets: [], oversized: [] };
  const splitter = new LineSplitter({
    ...options,
    onLine: (line, endOffset) => {
      seen.lines.push(Buffer.from(line).toString('utf8'));
      seen.endOffsets.push(endOffset);
    },
    onOversizedLine: (byteLength, endOffset) => seen.oversized.push({ byteLength, endOffset }),
  });
  return { splitter, seen };
}

function split(
  input: string | Buffer,
  chunkSizes: number[],
  options?: Omit<LineSplitterOptions, 'onLine' | 'onOversizedLine'>,
): Seen {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const { splitter, seen } = recorder(options);
  let offset = 0;
  let index = 0;
  while (offset < bytes.length) {
    const size = chunkSizes[index % chunkSizes.length]!;
    splitter.push(bytes.subarray(offset, offset + size));
    offset += size;
    index += 1;
  }
  splitter.end();
  return seen;
}

const SAMPLE = '{"a":1}\n{"b":"é2"}\r\n\n\r\n{"c":3}\n{"d":"last, no newline"}';
const SAMPLE_LINES = ['{"a":1}', '{"b":"é2"}', '{"c":3}', '{"d":"last, no newline"}'];
/** Byte offsets just past each line's LF (the last: end of input). */
const SAMPLE_END_OFFSETS = [8, 21, 32, Buffer.byteLength(SAMPLE)];

describe('LineSplitter', () => {
  describe('push() and end()', () => {
    it('splits lines, strips CRLF, skips empty lines and delivers a final line without LF', () => {
      const seen = split(SAMPLE, [Buffer.byteLength(SAMPLE)]);
      expect(seen.lines).toEqual(SAMPLE_LINES);
      expect(seen.endOffsets).toEqual(SAMPLE_END_OFFSETS);
    });

    it('gives the same lines and offsets for a chunk boundary at every byte position', () => {
      const bytes = Buffer.from(SAMPLE);
      for (let cut = 0; cut <= bytes.length; cut += 1) {
        const { splitter, seen } = recorder();
        splitter.push(bytes.subarray(0, cut));
        splitter.push(bytes.subarray(cut));
        splitter.end();
        expect(seen.lines, `cut at ${cut}`).toEqual(SAMPLE_LINES);
        expect(seen.endOffsets, `cut at ${cut}`).toEqual(SAMPLE_END_OFFSETS);
      }
    });

    it('gives the same lines for every chunk size, down to one byte', () => {
      for (let size = 1; size <= 12; size += 1) {
        const seen = split(SAMPLE, [size]);
        expect(seen.lines, `chunks of ${size}`).toEqual(SAMPLE_LINES);
        expect(seen.endOffsets, `chunks of ${size}`).toEqual(SAMPLE_END_OFFSETS);
      }
    });

    it('strips a CR that ends a chunk when the LF starts the next', () => {
      expect(split('abc\r\ndef\r\n', [4, 1, 5]).lines).toEqual(['abc', 'def']);
      expect(split('abc\r\n', [4]).lines).toEqual(['abc']);
    });

    it('strips the CR of a final line without LF', () => {
      expect(split('abc\ndef\r', [5, 1, 2]).lines).toEqual(['abc', 'def']);
    });

    it('keeps a lone CR inside a line', () => {
      expect(split('a\rb\n', [2]).lines).toEqual(['a\rb']);
    });

    it('counts offsets from startOffset', () => {
      const seen = split('a\nbb\n', [3], { startOffset: 1000 });
      expect(seen.endOffsets).toEqual([1002, 1005]);
    });

    it('ignores empty chunks and an end() without pending bytes', () => {
      const { splitter, seen } = recorder();
      splitter.push(new Uint8Array(0));
      splitter.end();
      splitter.end();
      expect(seen.lines).toEqual([]);
      expect(splitter.position).toBe(0);
    });

    it('accepts plain Uint8Array chunks', () => {
      const { splitter, seen } = recorder();
      const bytes = new TextEncoder().encode('one\ntwo\n');
      splitter.push(new Uint8Array(bytes.buffer, 0, 5));
      splitter.push(new Uint8Array(bytes.buffer, 5));
      expect(seen.lines).toEqual(['one', 'two']);
    });

    it('hands out lines that stay valid after later pushes', () => {
      const lines: Uint8Array[] = [];
      const splitter = new LineSplitter({ onLine: (line) => lines.push(line) });
      splitter.push(Buffer.from('first-par'));
      splitter.push(Buffer.from('t\nsecond-par'));
      splitter.push(Buffer.from('t\nthird\n'));
      expect(lines.map((line) => Buffer.from(line).toString())).toEqual([
        'first-part',
        'second-part',
        'third',
      ]);
    });

    it('counts the lines it delivered and tracks its position', () => {
      const { splitter } = recorder();
      splitter.push(Buffer.from('a\n\nb\nc'));
      expect(splitter.lines).toBe(2);
      expect(splitter.position).toBe(6);
      expect(splitter.bufferedBytes).toBe(1);
      splitter.end();
      expect(splitter.lines).toBe(3);
      expect(splitter.bufferedBytes).toBe(0);
    });
  });

  describe('with lines over maxLineBytes', () => {
    const input = `ok-1\n${'x'.repeat(25)}\nok-2\r\n${'y'.repeat(40)}\r\nok-3\n${'z'.repeat(21)}`;

    it('skips them, reports them and goes on, whatever the chunking', () => {
      for (const sizes of [[input.length], [1], [3], [7, 2], [16], [19, 1, 33]]) {
        const seen = split(input, sizes, { maxLineBytes: 20 });
        expect(seen.lines, `chunks ${sizes.join(',')}`).toEqual(['ok-1', 'ok-2', 'ok-3']);
        expect(seen.endOffsets).toEqual([5, 37, 84]);
        expect(seen.oversized, `chunks ${sizes.join(',')}`).toEqual([
          { byteLength: 25, endOffset: 31 },
          { byteLength: 41, endOffset: 79 },
          { byteLength: 21, endOffset: 105 },
        ]);
      }
    });

    it('counts them', () => {
      const { splitter } = recorder({ maxLineBytes: 20 });
      splitter.push(Buffer.from(input));
      splitter.end();
      expect(splitter.oversizedLines).toBe(3);
      expect(splitter.lines).toBe(3);
    });

    it('accepts a line of exactly maxLineBytes, with or without CRLF, in any chunking', () => {
      const exact = 'e'.repeat(20);
      for (const sizes of [[100], [1], [20], [21], [22]]) {
        const seen = split(`${exact}\r\n${exact}\n${exact}\r`, sizes, { maxLineBytes: 20 });
        expect(seen.lines, `chunks ${sizes.join(',')}`).toEqual([exact, exact, exact]);
        expect(seen.oversized).toEqual([]);
      }
      const over = split(`${exact}e\r\n${exact}e`, [1], { maxLineBytes: 20 });
      expect(over.lines).toEqual([]);
      expect(over.oversized.map((entry) => entry.endOffset)).toEqual([23, 44]);
    });

    it('never buffers more than maxLineBytes + 1 bytes of a 10 MB line', () => {
      const maxLineBytes = 1024 * 1024;
      const { splitter, seen } = recorder({ maxLineBytes });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      splitter.push(Buffer.from('{"before":1}\n'));
      let largest = 0;
      for (let pushed = 0; pushed < 10 * 1024 * 1024; pushed += chunk.length) {
        splitter.push(chunk);
        largest = Math.max(largest, splitter.bufferedBytes);
      }
      splitter.push(Buffer.from('\n{"after":2}\n'));
      expect(largest).toBeLessThanOrEqual(maxLineBytes + 1);
      expect(splitter.bufferedBytes).toBe(0);
      expect(seen.lines).toEqual(['{"before":1}', '{"after":2}']);
      expect(seen.oversized).toEqual([
        { byteLength: 10 * 1024 * 1024, endOffset: 13 + 10 * 1024 * 1024 + 1 },
      ]);
    });

    it('never copies an oversized line that arrives in one chunk', () => {
      const { splitter, seen } = recorder({ maxLineBytes: 1024 });
      splitter.push(Buffer.alloc(10 * 1024 * 1024, 'b'));
      expect(splitter.bufferedBytes).toBe(0);
      splitter.push(Buffer.from('tail\nnext\n'));
      expect(seen.lines).toEqual(['next']);
      expect(seen.oversized).toEqual([
        { byteLength: 10 * 1024 * 1024 + 4, endOffset: 10 * 1024 * 1024 + 5 },
      ]);
    });

    it('reports an oversized final line without LF at end()', () => {
      const seen = split(`ok\n${'q'.repeat(50)}`, [4], { maxLineBytes: 10 });
      expect(seen.lines).toEqual(['ok']);
      expect(seen.oversized).toEqual([{ byteLength: 50, endOffset: 53 }]);
    });
  });

  describe('constructor', () => {
    it('refuses bad options', () => {
      const onLine = (): void => {};
      expect(() => new LineSplitter(undefined as unknown as LineSplitterOptions)).toThrow(
        TypeError,
      );
      expect(() => new LineSplitter({} as LineSplitterOptions)).toThrow(/onLine/);
      expect(() => new LineSplitter({ onLine, maxLineBytes: 0 })).toThrow(/maxLineBytes/);
      expect(() => new LineSplitter({ onLine, maxLineBytes: 1.5 })).toThrow(/maxLineBytes/);
      expect(() => new LineSplitter({ onLine, startOffset: -1 })).toThrow(/startOffset/);
      expect(
        () => new LineSplitter({ onLine, onOversizedLine: 'no' as unknown as () => void }),
      ).toThrow(/onOversizedLine/);
    });
  });
});
