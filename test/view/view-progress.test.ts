import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ReadProgress } from '../../src/view/read-journal-spans.js';
import { ViewProgress } from '../../src/view/view-progress.js';

/** A stream that says it is a terminal, keeping what is written to it. */
function fakeTerminal(isTTY: boolean): { stream: NodeJS.WritableStream; written: () => string } {
  let written = '';
  const stream = Object.assign(new PassThrough(), { isTTY });
  stream.on('data', (chunk: Buffer) => (written += chunk.toString()));
  return { stream, written: () => written };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ViewProgress', () => {
  it('shows nothing for the first second, then bytes, lines and calls, redrawn in place, and clears the line when stopped', async () => {
    const terminal = fakeTerminal(true);
    const progress: ReadProgress = { bytes: 0, lines: 0, calls: 0 };
    const shown = new ViewProgress({
      stream: terminal.stream,
      progress,
      totalBytes: 200 * 1024 * 1024,
    });
    progress.bytes = 10 * 1024 * 1024;
    progress.lines = 31_000;
    progress.calls = 2_500;
    await vi.advanceTimersByTimeAsync(999);
    expect(terminal.written()).toBe('');
    await vi.advanceTimersByTimeAsync(1);
    expect(terminal.written()).toBe(
      '\r\u001b[2Kreading: 10.0 MB of 200.0 MB (5%), 31,000 lines, 2,500 calls',
    );
    progress.bytes = 100 * 1024 * 1024;
    await vi.advanceTimersByTimeAsync(250);
    expect(
      terminal
        .written()
        .endsWith('\r\u001b[2Kreading: 100.0 MB of 200.0 MB (50%), 31,000 lines, 2,500 calls'),
    ).toBe(true);
    shown.stop();
    expect(terminal.written().endsWith('calls\r\u001b[2K')).toBe(true);
    const length = terminal.written().length;
    shown.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(terminal.written()).toHaveLength(length);
  });

  it('writes nothing when stopped within the first second', async () => {
    const terminal = fakeTerminal(true);
    const shown = new ViewProgress({
      stream: terminal.stream,
      progress: { bytes: 0, lines: 0, calls: 0 },
      totalBytes: 1,
    });
    await vi.advanceTimersByTimeAsync(500);
    shown.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(terminal.written()).toBe('');
  });

  it('writes nothing at all when its stream is no terminal (a pipe, a CI log)', async () => {
    const pipe = fakeTerminal(false);
    const shown = new ViewProgress({
      stream: pipe.stream,
      progress: { bytes: 5, lines: 1, calls: 0 },
      totalBytes: 10,
    });
    await vi.advanceTimersByTimeAsync(10_000);
    shown.stop();
    expect(pipe.written()).toBe('');
  });

  it('clears its line for a message written in between and draws it again on the next tick', async () => {
    const terminal = fakeTerminal(true);
    const shown = new ViewProgress({
      stream: terminal.stream,
      progress: { bytes: 5, lines: 1, calls: 0 },
      totalBytes: 10,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    shown.interrupt();
    terminal.stream.write('line 7: skipped\n');
    await vi.advanceTimersByTimeAsync(250);
    shown.stop();
    expect(terminal.written()).toBe(
      '\r\u001b[2Kreading: 0.0 MB of 0.0 MB (50%), 1 line, 0 calls\r\u001b[2Kline 7: skipped\n' +
        '\r\u001b[2Kreading: 0.0 MB of 0.0 MB (50%), 1 line, 0 calls\r\u001b[2K',
    );
  });
});
