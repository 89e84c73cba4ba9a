import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { TraceBy } from '../otel/index.js';
import { decodeTraceRequest, type ReceivedSpan } from '../testing/index.js';
import { printable } from '../sidecar/printable.js';
import { decodeEnvelope, LineSplitter } from '../wire/index.js';
import { DrawnSpans, type DrawnSpansLimits, type SpansLeftOut } from './drawn-spans.js';
import { readJournalSpans } from './read-journal-spans.js';
import { terminalWidth } from './terminal-width.js';
import { renderWaterfall } from './waterfall.js';

/** Options for {@link runView}. */
export interface ViewOptions {
  /** @default false */
  color?: boolean;
  /**
   * How a journal's calls are grouped into traces, as the sidecar's `--trace-by`, so that the
   * trace ids drawn are the ones the sidecar exports.
   * @default 'causal-root'
   */
  traceBy?: TraceBy;
  /** How many spans are held for drawing; the rest are counted and named. */
  limits?: DrawnSpansLimits;
  /** Read for `OTEL_SERVICE_NAME` only: view never exports anywhere. @default process.env */
  env?: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Largest OTLP JSON document read whole when it is not one request per line. */
const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;
const SHOWN_PROBLEMS = 5;
/** How many leading lines may be looked at to tell a journal from a file of neither kind. */
const JOURNAL_PROBE_LINES = 10;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * `tooltrace view FILE`: draws the waterfall of an OTLP JSON file (one request, or one per line
 * as the Collector's file exporter writes) or of an NDJSON event journal (tooltrace's or a Nexus
 * journal), which is replayed through the same subscriber the sidecar runs, with its default
 * trace grouping (`traceBy`), in this process only (`OTEL_EXPORTER_OTLP_ENDPOINT` is ignored:
 * looking at a file sends nothing; the sidecar's `--stdin` exports a journal). The file is read
 * as a stream: memory is bounded by the spans held for drawing, and what is not drawn is named.
 * Returns the exit code; problems are named with their line number.
 */
export async function runView(path: string, options: ViewOptions): Promise<number> {
  // Messages quote the file (a path, a field's value): escaped, so none can drive the terminal.
  const say = (line: string): void => void options.stderr.write(`${printable(line)}\n`);
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) {
      say(`tooltrace view: ${path} is not a file`);
      return 2;
    }
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    say(
      `tooltrace view: cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : String(error)}`,
    );
    return 2;
  }
  const file = createReadStream(path);
  const chunks = file[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    const probe = await probeLines(chunks);
    const first = probe.lines.find((line) => line.trim() !== '');
    if (first === undefined) {
      say(`tooltrace view: ${path} is empty`);
      return 2;
    }
    const firstNumber = probe.lines.indexOf(first) + 1;
    let drawn: Drawn;
    if (looksLikeOtlp(first)) {
      const read = await readOtlpLines(probe.replay(chunks), options.limits);
      if (typeof read === 'string') {
        say(`tooltrace view: ${path}: ${read}`);
        return 2;
      }
      drawn = read;
    } else if (
      !parsesAsJson(first) &&
      size <= MAX_DOCUMENT_BYTES &&
      probe.lines.some((line) => line.includes('"resourceSpans"'))
    ) {
      // A pretty-printed OTLP JSON document spans many lines: it is read whole.
      const document = withoutByteOrderMark(await readFile(path));
      if (!looksLikeOtlp(document.toString('utf8'))) return neither(path, first, firstNumber, say);
      const spans = new DrawnSpans(options.limits);
      try {
        for (const span of decodeTraceRequest(document, 'application/json')) spans.add(span);
      } catch (error) {
        say(`tooltrace view: ${path}: ${(error as Error).message}`);
        return 2;
      }
      drawn = { spans: spans.spans, leftOut: spans.leftOut() };
    } else {
      // A journal cut mid-line (rotated, or copied while written) starts with a torn line: one
      // event among the first few lines is enough to read it as a journal.
      if (!probe.lines.some((line) => line.trim() !== '' && decodeEnvelope(line).ok)) {
        return neither(path, first, firstNumber, say);
      }
      let shown = 0;
      const journal = await readJournalSpans(probe.replay(chunks), {
        ...(options.traceBy === undefined ? {} : { traceBy: options.traceBy }),
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.limits === undefined ? {} : { limits: options.limits }),
        onBadLine: (number, failure) => {
          shown += 1;
          if (shown > SHOWN_PROBLEMS) return;
          say(
            `tooltrace view: ${path}: line ${number}: skipped (${failure.reason}): ${failure.message}`,
          );
        },
      });
      if (journal.badLines > SHOWN_PROBLEMS) {
        say(`tooltrace view: ${path}: ${journal.badLines - SHOWN_PROBLEMS} more bad lines skipped`);
      }
      const fields = Object.entries(journal.fieldsDropped);
      if (fields.length > 0) {
        const list = fields.map(([field, count]) => `${field}=${count}`).join(', ');
        say(`tooltrace view: ${path}: fields of the wrong type left out, events kept: ${list}`);
      }
      drawn = journal;
    }
    if (drawn.spans.length === 0) {
      say(`tooltrace view: ${path} holds no spans or tool calls`);
      return 1;
    }
    options.stdout.write(
      renderWaterfall(drawn.spans, {
        color: options.color ?? false,
        width: terminalWidth(options.stdout),
      }),
    );
    for (const line of leftOutLines(drawn.leftOut)) say(`tooltrace view: ${path}: ${line}`);
    return 0;
  } finally {
    await chunks.return?.();
    file.destroy();
  }
}

/** The spans held for drawing, and what was left out. */
interface Drawn {
  spans: readonly ReceivedSpan[];
  leftOut: SpansLeftOut;
}

/** The first lines of a file, and a way to read the whole of it again from its start. */
interface Probe {
  /** Up to {@link JOURNAL_PROBE_LINES} complete lines (a byte order mark left out). */
  lines: string[];
  /** The bytes read so far, then the rest of `chunks`. */
  replay(chunks: AsyncIterator<Buffer>): AsyncIterable<Buffer>;
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
    async *replay(rest) {
      yield* read;
      for (let next = await rest.next(); next.done !== true; next = await rest.next()) {
        yield next.value;
      }
    },
  };
}

/** Spans of a file of OTLP JSON requests, one per line; or what was wrong, naming the line. */
async function readOtlpLines(
  chunks: AsyncIterable<Buffer>,
  limits: DrawnSpansLimits | undefined,
): Promise<Drawn | string> {
  const drawn = new DrawnSpans(limits);
  let number = 0;
  let problem: string | undefined;
  const splitter = new LineSplitter({
    maxLineBytes: MAX_DOCUMENT_BYTES,
    onLine: (line) => {
      number += 1;
      if (problem !== undefined) return;
      const view = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
      const bytes = number === 1 ? withoutByteOrderMark(view) : view;
      if (bytes.toString('utf8').trim() === '') return;
      try {
        for (const span of decodeTraceRequest(bytes, 'application/json')) drawn.add(span);
      } catch (error) {
        problem = `line ${number}: ${(error as Error).message}`;
      }
    },
  });
  for await (const chunk of chunks) {
    splitter.push(chunk);
    if (problem !== undefined) return problem;
  }
  splitter.end();
  return problem ?? { spans: drawn.spans, leftOut: drawn.leftOut() };
}

/** What the drawing left out, one line per trace drawn in part and one for traces not drawn. */
function leftOutLines(leftOut: SpansLeftOut): string[] {
  const lines = leftOut.traces.map(({ traceId, drawn, leftOut: count, limit }) =>
    limit === 'trace'
      ? `trace ${traceId} is too large to draw whole: ${drawn} spans drawn, ${count} more left out`
      : `trace ${traceId} is drawn in part (the waterfall is full): ${drawn} spans drawn, ${count} more left out`,
  );
  if (leftOut.tracesNotDrawn > 0) {
    lines.push(
      `${leftOut.tracesNotDrawn} more traces (${leftOut.spansNotDrawn} spans) not drawn: the waterfall holds the first ones only`,
    );
  }
  return lines;
}

function neither(path: string, first: string, number: number, say: (line: string) => void): number {
  const decoded = decodeEnvelope(first);
  const why = decoded.ok ? '' : decoded.message;
  say(
    `tooltrace view: ${path} is neither OTLP JSON nor an NDJSON event journal: line ${number}: ${why}`,
  );
  return 2;
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
