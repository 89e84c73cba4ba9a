import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { DrawnSpans } from '../../src/view/drawn-spans.js';
import { readJournalSpans } from '../../src/view/read-journal-spans.js';
import { runView } from '../../src/view/run-view.js';
import type { ReceivedSpan } from '../../src/otlp/index.js';
import { journalLines, journalText } from '../sidecar/journal-lines.js';
import { delegateJournal } from '../sidecar/nexus-journal.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `text` as chunks of `size` bytes, cut wherever that falls (mid-line, mid-character). */
function* chunksOf(text: string, size: number): Iterable<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let start = 0; start < bytes.length; start += size) {
    yield bytes.subarray(start, start + size);
  }
}

function span(traceId: string, spanId: string, parentSpanId = 'parent'): ReceivedSpan {
  return { traceId, spanId, parentSpanId } as ReceivedSpan;
}

describe('readJournalSpans()', () => {
  it('takes no in-flight snapshot while a slow read waits between chunks: what it draws does not depend on read speed', async () => {
    // A journal read slowly (a network disk, a pipe): each chunk comes seconds after the last,
    // long past the live-update interval, while calls are open.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    try {
      const lines = journalLines({ calls: 3 });
      async function* slowly(): AsyncIterable<Uint8Array> {
        for (const line of lines) {
          yield Buffer.from(`${line}\n`);
          await vi.advanceTimersByTimeAsync(5_000);
        }
      }
      const seen: ReceivedSpan[] = [];
      const journal = await readJournalSpans(slowly(), {
        onSpan: (received) => seen.push(received),
      });
      expect(seen.filter((received) => received.attributes['tooltrace.inflight'] === true)).toEqual(
        [],
      );
      expect(
        journal.spans.filter((received) => received.name === 'execute_tool search'),
      ).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('streams a journal cut at any byte into the spans of its calls', async () => {
    const journal = await readJournalSpans(chunksOf(journalText({ calls: 40 }), 97));
    expect(journal.events).toBe(40 * 12);
    expect(journal.badLines).toBe(0);
    const tools = journal.spans.filter((received) => received.name === 'execute_tool search');
    expect(tools).toHaveLength(40);
    expect(tools.every((received) => received.status.code === 1)).toBe(true);
  });

  it('skips bad lines with their numbers, counts dropped fields, and ends the sub-agent at its own time', async () => {
    const text = `${delegateJournal()}not json\n{"type":"x"}\n`;
    const bad: string[] = [];
    const journal = await readJournalSpans(chunksOf(text, 50), {
      onBadLine: (number, failure) => bad.push(`${number} ${failure.reason}`),
    });
    expect(bad).toEqual(['7 not_json', '8 missing_field']);
    expect(journal.badLines).toBe(2);
    expect(journal.fieldsDropped).toEqual({ 'subagent.complete payload.Iterations': 2 });
    const subagent = journal.spans.find((received) => received.name === 'invoke_agent summarise');
    expect(subagent?.attributes['tooltrace.end_reason']).toBe('result');
  });

  it('ends calls still open when the journal ends, without waiting for anything', async () => {
    const journal = await readJournalSpans(
      chunksOf(journalText({ calls: 3, leaveLastOpen: true }), 4096),
    );
    const ends = journal.spans.map((received) => received.attributes['tooltrace.end_reason']);
    expect(ends.filter((reason) => reason === 'shutdown')).toHaveLength(1);
  });

  it('reads what a stream gives as it gives it', async () => {
    const stream = new PassThrough();
    const reading = readJournalSpans(stream);
    const lines = journalText({ calls: 2 });
    stream.write(lines.slice(0, 100));
    stream.end(lines.slice(100));
    expect((await reading).spans).toHaveLength(2);
  });
});

describe('DrawnSpans', () => {
  it('holds a trace up to its bound, keeps its root, and counts the rest of it', () => {
    const drawn = new DrawnSpans({ maxSpansPerTrace: 2 });
    for (const id of ['a', 'b', 'c', 'd']) drawn.add(span('t1', id));
    drawn.add(span('t1', 'root', ''));
    expect(drawn.spans.map((held) => held.spanId)).toEqual(['a', 'b', 'root']);
    expect(drawn.leftOut().traces).toEqual([
      { traceId: 't1', drawn: 3, leftOut: 2, limit: 'trace' },
    ]);
  });

  it('takes no new trace past its total bound, counting those traces and their spans', () => {
    const drawn = new DrawnSpans({ maxSpans: 2 });
    drawn.add(span('t1', 'a'));
    drawn.add(span('t2', 'b'));
    drawn.add(span('t3', 'c'));
    drawn.add(span('t3', 'd'));
    drawn.add(span('t4', 'e'));
    drawn.add(span('t1', 'f'));
    drawn.add(span('t1', 'root', ''));
    expect(drawn.spans.map((held) => held.spanId)).toEqual(['a', 'b', 'root']);
    expect(drawn.leftOut()).toEqual({
      traces: [{ traceId: 't1', drawn: 2, leftOut: 1, limit: 'total' }],
      tracesNotDrawn: 2,
      tracesNotDrawnEstimated: false,
      spansNotDrawn: 3,
    });
  });
});

describe('DrawnSpans release()', () => {
  it('lets go of every span held and holds none of those that come after', () => {
    const drawn = new DrawnSpans({ maxSpans: 2 });
    drawn.add(span('t1', 'a'));
    drawn.add(span('t2', 'b'));
    drawn.add(span('t3', 'c'));
    drawn.release();
    drawn.add(span('t1', 'root', ''));
    drawn.add(span('t4', 'd'));
    expect(drawn.released).toBe(true);
    expect(drawn.spans).toEqual([]);
    expect(drawn.leftOut()).toEqual({
      traces: [],
      tracesNotDrawn: 0,
      tracesNotDrawnEstimated: false,
      spansNotDrawn: 0,
    });
  });
});

describe('runView()', () => {
  it('refuses an --html page it cannot write before reading the journal, naming the flag', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'tooltrace-view-html-'));
    try {
      const path = join(directory, 'journal.ndjson');
      await writeFile(path, journalText({ calls: 3 }));
      const attempts = [
        [join(directory, 'missing', 'page.html'), `no directory ${join(directory, 'missing')}`],
        [directory, 'it is a directory'],
      ] as const;
      for (const [page, why] of attempts) {
        const stdout = new PassThrough();
        const stderr = new PassThrough();
        const code = await runView(path, { html: page, stdout, stderr });
        expect(code).toBe(2);
        expect(String(stderr.read())).toBe(
          `tooltrace view: --html ${page}: cannot write the page: ${why}\n`,
        );
        expect(stdout.read()).toBeNull();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('draws the part of a trace too large to draw whole, and says so', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'tooltrace-view-limits-'));
    try {
      const path = join(directory, 'nested.ndjson');
      await writeFile(path, journalText({ calls: 30, nested: true }));
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const code = await runView(path, { limits: { maxSpansPerTrace: 10 }, stdout, stderr });
      expect(code).toBe(0);
      expect(String(stdout.read())).toMatch(/^trace [0-9a-f]{32} {2}11 spans /);
      expect(String(stderr.read())).toMatch(
        /^tooltrace view: .*nested\.ndjson: trace [0-9a-f]{32} is too large to draw whole: 11 spans drawn, 19 more left out\n$/,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
