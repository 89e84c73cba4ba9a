import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { decodeTraceRequest, type ReceivedSpan } from '../otlp/index.js';
import { decodeEnvelope, LineSplitter, type DecodeFailure } from '../wire/index.js';
import { DrawnSpans } from './drawn-spans.js';
import { InFlightSnapshots } from './in-flight-snapshots.js';
import {
  readJournalSpans,
  type JournalSpans,
  type ReadJournalOptions,
} from './read-journal-spans.js';

/**
 * Options for {@link readViewFile}: where each span goes, and how a journal is replayed (an OTLP
 * file's spans go to the same `held`, `onSpan`, `hold`, `onBadLine` and `progress`).
 */
export interface ReadViewFileOptions extends ReadJournalOptions {
  /** The file's size in bytes. */
  size: number;
}

/**
 * What {@link readViewFile} read: the spans held, and its counts (`events` are spans read for an
 * OTLP file).
 */
export interface ViewFile extends JournalSpans {
  /** In-flight snapshots read (an OTLP file); only those of calls that never ended are held. */
  snapshots: number;
}

/** Largest OTLP JSON document read whole when it is not one request per line. */
const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;
/** How many leading lines may be looked at to tell a journal from a file of neither kind. */
const JOURNAL_PROBE_LINES = 10;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Reads the file `tooltrace view` was given, as a stream: an OTLP JSON file (one request, or
 * one per line as the Collector's file exporter writes) or an NDJSON event journal, replayed
 * through the sidecar's subscriber. Returns the spans held, or what was wrong with the file as
 * one line (for exit code 2). May be called again on the same file: a filter that selects
 * traces by their calls reads it twice rather than holding it.
 */
export async function readViewFile(
  path: string,
  options: ReadViewFileOptions,
): Promise<ViewFile | string> {
  const file = createReadStream(path);
  const chunks = file[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const counted = (chunk: Buffer): Buffer => {
    if (options.progress !== undefined) options.progress.bytes += chunk.length;
    return chunk;
  };
  try {
    const probe = await probeLines(chunks);
    const first = probe.lines.find((line) => line.trim() !== '');
    if (first === undefined) return `${path} is empty`;
    const firstNumber = probe.lines.indexOf(first) + 1;
    const held = options.held ?? new DrawnSpans();
    let spansRead = 0;
    // The one place snapshots are taken out: what is read past here is drawn as it is.
    const snapshots = new InFlightSnapshots();
    const take = (span: ReceivedSpan): void => {
      spansRead += 1;
      if (!snapshots.take(span)) use(span);
    };
    const use = (span: ReceivedSpan): void => {
      if (
        options.progress !== undefined &&
        span.attributes['gen_ai.operation.name'] === 'execute_tool'
      ) {
        options.progress.calls += 1;
      }
      options.onSpan?.(span);
      if (options.hold?.(span) ?? true) held.add(span);
    };
    const otlp = (badLines = 0): ViewFile => {
      for (const snapshot of snapshots.unended(held.spans)) use(snapshot);
      return {
        spans: held.spans,
        leftOut: held.leftOut(),
        events: spansRead,
        badLines,
        fieldsDropped: {},
        snapshots: snapshots.count,
      };
    };
    if (looksLikeOtlp(first)) {
      const onBadLine = options.onBadLine ?? (() => {});
      return otlp(await readOtlpLines(probe.replay(chunks, counted), take, onBadLine));
    }
    if (
      !parsesAsJson(first) &&
      options.size <= MAX_DOCUMENT_BYTES &&
      probe.lines.some((line) => line.includes('"resourceSpans"'))
    ) {
      // A pretty-printed OTLP JSON document spans many lines: it is read whole.
      const document = withoutByteOrderMark(await readFile(path));
      if (options.progress !== undefined) options.progress.bytes += document.length;
      if (!looksLikeOtlp(document.toString('utf8'))) return neither(path, first, firstNumber);
      try {
        for (const span of decodeTraceRequest(document, 'application/json')) take(span);
      } catch (error) {
        return `${path}: ${(error as Error).message}`;
      }
      return otlp();
    }
    // A journal cut mid-line (rotated, or copied while written) starts with a torn line: one
    // event among the first few lines is enough to read it as a journal.
    if (!probe.lines.some((line) => line.trim() !== '' && decodeEnvelope(line).ok)) {
      return neither(path, first, firstNumber);
    }
    // A journal's replay ends every call it reads: it makes no snapshot.
    const journal = await readJournalSpans(
      probe.replay(chunks, (chunk) => chunk),
      { ...options, held },
    );
    return { ...journal, snapshots: 0 };
  } finally {
    await chunks.return?.();
    file.destroy();
  }
}

/** The first lines of a file, and a way to read the whole of it again from its start. */
interface Probe {
  /** Up to {@link JOURNAL_PROBE_LINES} complete lines (a byte order mark left out). */
  lines: string[];
  /** The bytes read so far, then the rest of `chunks`, each passed through `each`. */
  replay(chunks: AsyncIterator<Buffer>, each: (chunk: Buffer) => Buffer): AsyncIterable<Buffer>;
}

/**
 * Reads chunks until the first {@link JOURNAL_PROBE_LINES} lines are in (or the file ends, or
 * {@link MAX_DOCUMENT_BYTES} were read), to tell what kind of file it is before reading on.
 */
async function probeLines(chunks: AsyncIterator<Buffer>): Promise<Probe> {
  const read: Buffer[] = [];
  let bytes = 0;
  let newlines = 0;
  let ended = false;
  while (newlines < JOURNAL_PROBE_LINES && bytes < MAX_DOCUMENT_BYTES) {
    const next = await chunks.next();
    if (next.done === true) {
      ended = true;
      break;
    }
    read.push(next.value);
    bytes += next.value.length;
    for (let at = next.value.indexOf(0x0a); at !== -1; at = next.value.indexOf(0x0a, at + 1)) {
      newlines += 1;
    }
  }
  const text = withoutByteOrderMark(Buffer.concat(read)).toString('utf8');
  const lines = text.split('\n');
  // The last piece is a line only when the file ended there.
  if (!ended) lines.pop();
  return {
    lines: lines.slice(0, JOURNAL_PROBE_LINES).map((line) => line.replace(/\r$/, '')),
    async *replay(rest, each) {
      for (const chunk of read) yield each(chunk);
      for (let next = await rest.next(); next.done !== true; next = await rest.next()) {
        yield each(next.value);
      }
    },
  };
}

/**
 * Reads a file of OTLP JSON requests, one per line, as a journal is read: a line that is not a
 * request (torn by a crash or a copy made while it was written) is told to `onBadLine` with its
 * number and skipped, and the rest are drawn. Returns how many lines were skipped.
 */
async function readOtlpLines(
  chunks: AsyncIterable<Buffer>,
  take: (span: ReceivedSpan) => void,
  onBadLine: (lineNumber: number, failure: DecodeFailure) => void,
): Promise<number> {
  let number = 0;
  let bad = 0;
  const splitter = new LineSplitter({
    maxLineBytes: MAX_DOCUMENT_BYTES,
    onLine: (line) => {
      number += 1;
      const view = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
      const bytes = number === 1 ? withoutByteOrderMark(view) : view;
      const text = bytes.toString('utf8');
      if (text.trim() === '') return;
      // Decoded whole before any span is taken: a bad line adds nothing half way.
      let spans: ReceivedSpan[];
      try {
        spans = decodeTraceRequest(bytes, 'application/json');
      } catch (error) {
        bad += 1;
        const message = (error as Error).message.slice(0, 300);
        onBadLine(number, {
          ok: false,
          reason: parsesAsJson(text) ? 'wrong_type' : 'not_json',
          message,
        });
        return;
      }
      for (const span of spans) take(span);
    },
  });
  for await (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return bad;
}

function neither(path: string, first: string, number: number): string {
  const decoded = decodeEnvelope(first);
  const why = decoded.ok ? '' : decoded.message;
  return `${path} is neither OTLP JSON nor an NDJSON event journal: line ${number}: ${why}`;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function looksLikeOtlp(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && 'resourceSpans' in value;
  } catch {
    return false;
  }
}

/** Editors on Windows start UTF-8 files with a byte order mark, which `JSON.parse` refuses. */
function withoutByteOrderMark(bytes: Buffer): Buffer {
  return bytes.subarray(0, 3).equals(BYTE_ORDER_MARK) ? bytes.subarray(3) : bytes;
}
