import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { EventBus } from '../bus/index.js';
import { traceToolCalls } from '../otel/index.js';
import { decodeTraceRequest, type ReceivedSpan } from '../testing/index.js';
import { EventPipeline } from '../sidecar/pipeline/index.js';
import { SidecarMetrics } from '../sidecar/index.js';
import { printable } from '../sidecar/printable.js';
import { decodeEnvelope, DEFAULT_MAX_LINE_BYTES, LineSplitter } from '../wire/index.js';
import { startTraceSink } from './trace-sink.js';
import { terminalWidth } from './terminal-width.js';
import { renderWaterfall } from './waterfall.js';

/** Options for {@link runView}. */
export interface ViewOptions {
  /** @default false */
  color?: boolean;
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
 * journal), which is replayed through the same subscriber the sidecar runs, into the embedded
 * receiver only (`OTEL_EXPORTER_OTLP_ENDPOINT` is ignored: looking at a file sends nothing; the
 * sidecar's `--stdin` exports a journal). Returns the exit code; problems are named with their
 * line number.
 */
export async function runView(path: string, options: ViewOptions): Promise<number> {
  const env = options.env ?? process.env;
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
  const lines = await readLines(path);
  const first = lines.find((line) => line.text.trim() !== '');
  if (first === undefined) {
    say(`tooltrace view: ${path} is empty`);
    return 2;
  }
  let spans: ReceivedSpan[];
  const perLine = looksLikeOtlp(first.text);
  // A pretty-printed OTLP JSON document spans many lines: read once, decoded from these bytes.
  const document = perLine || parsesAsJson(first.text) ? undefined : await otlpDocument(path, size);
  if (perLine) {
    spans = [];
    for (const line of lines) {
      if (line.text.trim() === '') continue;
      try {
        spans.push(...decodeTraceRequest(Buffer.from(line.text), 'application/json'));
      } catch (error) {
        say(`tooltrace view: ${path}: line ${line.number}: ${(error as Error).message}`);
        return 2;
      }
    }
  } else if (document !== undefined) {
    try {
      spans = decodeTraceRequest(document, 'application/json');
    } catch (error) {
      say(`tooltrace view: ${path}: ${(error as Error).message}`);
      return 2;
    }
  } else {
    // A journal cut mid-line (rotated, or copied while written) starts with a torn line: one
    // event among the first few lines is enough to read it as a journal.
    const probe = lines.filter((line) => line.text.trim() !== '').slice(0, JOURNAL_PROBE_LINES);
    if (!probe.some((line) => decodeEnvelope(line.text).ok)) {
      const firstDecoded = decodeEnvelope(first.text);
      const why = firstDecoded.ok ? '' : firstDecoded.message;
      say(
        `tooltrace view: ${path} is neither OTLP JSON nor an NDJSON event journal: line ${first.number}: ${why}`,
      );
      return 2;
    }
    spans = await replayJournal(lines, env, (problem) => {
      say(`tooltrace view: ${path}: ${problem}`);
    });
  }
  if (spans.length === 0) {
    say(`tooltrace view: ${path} holds no spans or tool calls`);
    return 1;
  }
  options.stdout.write(
    renderWaterfall(spans, { color: options.color ?? false, width: terminalWidth(options.stdout) }),
  );
  return 0;
}

interface NumberedLine {
  number: number;
  text: string;
}

async function readLines(path: string): Promise<NumberedLine[]> {
  const lines: NumberedLine[] = [];
  let number = 0;
  const splitter = new LineSplitter({
    maxLineBytes: MAX_DOCUMENT_BYTES,
    onLine: (line) => {
      number += 1;
      const bytes = number === 1 ? withoutByteOrderMark(Buffer.from(line)) : Buffer.from(line);
      lines.push({ number, text: bytes.toString('utf8') });
    },
  });
  for await (const chunk of createReadStream(path)) splitter.push(chunk as Buffer);
  splitter.end();
  return lines;
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

/** The file's bytes (byte order mark removed) when it is one OTLP JSON document of `size`. */
async function otlpDocument(path: string, size: number): Promise<Buffer | undefined> {
  if (size > MAX_DOCUMENT_BYTES) return undefined;
  const bytes = withoutByteOrderMark(await readFile(path));
  return looksLikeOtlp(bytes.toString('utf8')) ? bytes : undefined;
}

/** Editors on Windows start UTF-8 files with a byte order mark, which `JSON.parse` refuses. */
function withoutByteOrderMark(bytes: Buffer): Buffer {
  return bytes.subarray(0, 3).equals(BYTE_ORDER_MARK) ? bytes.subarray(3) : bytes;
}

/** Replays journal lines onto a bus traced by `traceToolCalls`, exported through the real SDK. */
async function replayJournal(
  lines: readonly NumberedLine[],
  env: NodeJS.ProcessEnv,
  onSkipped: (problem: string) => void,
): Promise<ReceivedSpan[]> {
  const sink = await startTraceSink({ env, serviceName: 'tooltrace-view', exportElsewhere: false });
  const bus = new EventBus({ ringSize: 0 });
  // The sidecar's own replay: lines without event_id pair by tool call id, traceparents parent.
  const pipeline = new EventPipeline({
    bus,
    metrics: new SidecarMetrics(),
    maxLineBytes: DEFAULT_MAX_LINE_BYTES,
  });
  const tracing = traceToolCalls(bus, {
    tracerProvider: sink.tracerProvider,
    idGenerator: sink.idGenerator,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    // A journal is read as a whole: each session drawn as one tree, as the Go original does.
    traceBy: 'session',
  });
  let skipped = 0;
  for (const line of lines) {
    if (line.text.trim() === '') continue;
    const result = pipeline.replayLine(line.text, 'file');
    if (result !== true) {
      skipped += 1;
      if (skipped <= SHOWN_PROBLEMS) {
        onSkipped(`line ${line.number}: skipped (${result.reason}): ${result.message}`);
      }
    }
  }
  if (skipped > SHOWN_PROBLEMS) onSkipped(`${skipped - SHOWN_PROBLEMS} more bad lines skipped`);
  await tracing.shutdown();
  const stats = tracing.stats();
  const started = stats.spansStarted + stats.agent.spansStarted;
  try {
    return started === 0 ? [] : await sink.collect(started);
  } finally {
    await sink.close();
  }
}
