import { counted } from '../errors/index.js';
import { constants } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TraceBy } from '../otel/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { printable } from '../sidecar/pipeline/index.js';
import { DrawnSpans, type DrawnSpansLimits, type SpansLeftOut } from './drawn-spans.js';
import { renderHtmlPage } from './html-page.js';
import type { ReadProgress } from './read-journal-spans.js';
import { readViewFile, type ViewFile } from './read-view-file.js';
import { terminalWidth } from './terminal-width.js';
import { ViewProgress } from './view-progress.js';
import { ViewSummary } from './view-summary.js';
import { outcomeOf, renderWaterfall } from './waterfall.js';

/** Which traces `tooltrace view` draws; every filter given must hold. */
export interface ViewFilter {
  /** The trace with this id (32 hex digits, lower case). */
  traceId?: string;
  /** Traces of this session (`gen_ai.conversation.id`). */
  sessionId?: string;
  /** Traces with a call of this tool. */
  tool?: string;
  /** Traces with a failed call. */
  errors?: boolean;
  /** The traces of the N slowest calls (of `tool`, failed ones with `errors`). */
  slowest?: number;
}

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
  /** Read for `OTEL_SERVICE_NAME`, `COLUMNS` and `LINES` only: view never exports anywhere. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Which traces to draw. @default every trace */
  filter?: ViewFilter;
  /** Draw every trace selected even when they fill more than a screen (after the summary). */
  all?: boolean;
  /** Write a self-contained HTML page of the selected traces here instead of drawing them. */
  html?: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const SHOWN_PROBLEMS = 5;
const DEFAULT_ROWS = 24;
/** Spans a `--html` page holds at most (about 1.3 KB each on the page). */
const HTML_MAX_SPANS = 5_000;
/** Traces a call filter (`--tool`, `--errors`) selects at most; the rest are counted. */
const MAX_SELECTED_TRACES = 10_000;

/**
 * `tooltrace view FILE`: draws the waterfall of an OTLP JSON file or of an NDJSON event journal
 * (tooltrace's or a Nexus journal), replayed through the subscriber the sidecar runs, in this
 * process only (`OTEL_EXPORTER_OTLP_ENDPOINT` is ignored: looking at a file sends nothing).
 * The file is read as a stream, with a progress line on a terminal past a second. More traces
 * than the screen has rows get a summary instead (traces, calls, errors, a per-tool table, the
 * slowest and failed calls), `all` draws them after it; `filter` picks traces; `html` writes a
 * page to share. Returns the exit code: 0 drawn, 1 nothing to draw or nothing matched, 2 the
 * file could not be read. Every problem is one line on stderr, never a stack trace.
 */
export async function runView(path: string, options: ViewOptions): Promise<number> {
  const progress: ReadProgress = { bytes: 0, lines: 0, calls: 0 };
  let shown: ViewProgress | undefined;
  // Messages quote the file (a path, a field's value): escaped, so none can drive the terminal.
  const say = (line: string): void => {
    shown?.interrupt();
    options.stderr.write(`${printable(line.replace(/\s*\n\s*/g, ' '))}\n`);
  };
  try {
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
    if (options.html !== undefined) {
      // Said before the journal is read, not after a minute of reading a large one.
      const problem = await pageProblem(options.html);
      if (problem !== undefined) {
        say(`tooltrace view: --html ${options.html}: cannot write the page: ${problem}`);
        return 2;
      }
    }
    const filter = options.filter ?? {};
    const byCall =
      filter.tool !== undefined || filter.errors === true || filter.slowest !== undefined;
    shown = new ViewProgress({
      stream: options.stderr,
      progress,
      totalBytes: byCall ? size * 2 : size,
    });
    const inScope = (span: ReceivedSpan): boolean =>
      (filter.traceId === undefined || span.traceId === filter.traceId) &&
      (filter.sessionId === undefined ||
        span.attributes['gen_ai.conversation.id'] === filter.sessionId);
    // A page holds fewer spans than a terminal drawing: each carries its attributes and events.
    const limits =
      options.limits ?? (options.html === undefined ? undefined : { maxSpans: HTML_MAX_SPANS });
    let badShown = 0;
    const read = (
      onSpan: (span: ReceivedSpan) => void,
      hold: (span: ReceivedSpan) => boolean,
      first: boolean,
      held?: DrawnSpans,
    ): Promise<ViewFile | string> =>
      readViewFile(path, {
        size,
        ...(options.traceBy === undefined ? {} : { traceBy: options.traceBy }),
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(held === undefined ? {} : { held }),
        progress,
        onSpan,
        hold,
        // A second reading finds the same bad lines: they are told once.
        onBadLine: (number, failure) => {
          if (!first) return;
          badShown += 1;
          if (badShown > SHOWN_PROBLEMS) return;
          say(
            `tooltrace view: ${path}: line ${number}: skipped (${failure.reason}): ${failure.message}`,
          );
        },
      });
    let selected: ((span: ReceivedSpan) => boolean) | undefined;
    let selectedLeftOut = 0;
    if (byCall) {
      // Which traces hold the calls asked for is known only once the file is read: a first
      // reading finds them, holding nothing, and a second one holds their spans.
      const traces = new Set<string>();
      const finder = new ViewSummary({ slowest: filter.slowest ?? 0, failed: 0 });
      const found = await read(
        (span) => {
          if (!inScope(span) || !isWantedCall(span, filter)) return;
          finder.add(span);
          if (filter.slowest !== undefined) return;
          if (traces.has(span.traceId)) return;
          if (traces.size < MAX_SELECTED_TRACES) traces.add(span.traceId);
          else selectedLeftOut += 1;
        },
        () => false,
        true,
      );
      if (typeof found === 'string') {
        shown.stop();
        say(`tooltrace view: ${found}`);
        return 2;
      }
      if (!reportRead(path, found, say)) return 2;
      for (const call of finder.slowest) traces.add(call.traceId);
      selected = (span) => traces.has(span.traceId);
    }
    const summary = new ViewSummary();
    const wanted = (span: ReceivedSpan): boolean => inScope(span) && (selected?.(span) ?? true);
    const rows = screenRows(options.stdout, options.env ?? process.env);
    // Without --all or --html, more traces than rows are summarised, not drawn: once the summary
    // has seen that many, the spans held are let go and the rest of the file is only counted.
    const drawsAScreenAtMost = options.html === undefined && options.all !== true;
    const held = new DrawnSpans(limits);
    const result = await read(
      (span) => {
        if (wanted(span)) summary.add(span);
      },
      (span) => {
        if (!wanted(span) || held.released) return false;
        if (drawsAScreenAtMost && summary.traces > rows) {
          held.release();
          return false;
        }
        return true;
      },
      !byCall,
      held,
    );
    shown.stop();
    if (typeof result === 'string') {
      say(`tooltrace view: ${result}`);
      return 2;
    }
    if (!byCall && !reportRead(path, result, say)) return 2;
    if (result.spans.length === 0 && summary.spans === 0) {
      const filters = describeFilter(filter);
      say(
        filters === ''
          ? `tooltrace view: ${path} holds no spans or tool calls`
          : `tooltrace view: ${path}: no trace matches ${filters}`,
      );
      return 1;
    }
    if (selectedLeftOut > 0) {
      say(
        `tooltrace view: ${path}: ${selectedLeftOut} more traces matched; the first ${MAX_SELECTED_TRACES} are shown`,
      );
    }
    let summaryOnly = false;
    if (options.html !== undefined) {
      const page = renderHtmlPage(result.spans, summary, { title: path });
      try {
        await writeFile(options.html, page);
      } catch (error) {
        say(
          `tooltrace view: --html ${options.html}: cannot write the page: ${(error as Error).message}`,
        );
        return 2;
      }
      options.stdout.write(
        `wrote ${printable(options.html)}: ${counted(new Set(result.spans.map((span) => span.traceId)).size, 'trace')}, ${counted(result.spans.length, 'span')}, ${Math.ceil(Buffer.byteLength(page) / 1024)} KB\n`,
      );
    } else {
      const manyTraces = summary.traces > rows;
      if (manyTraces) options.stdout.write(`${summary.render()}\n`);
      summaryOnly = manyTraces && options.all !== true;
      if (summaryOnly) {
        options.stdout.write(
          `${summary.tracesEstimated ? 'about ' : ''}${summary.traces.toLocaleString('en-US')} traces are more than a screen: --all draws every one, or pick with --trace ID, --session ID, --tool NAME, --errors, --slowest N (or --html FILE)\n`,
        );
      } else {
        options.stdout.write(
          renderWaterfall(result.spans, {
            color: options.color ?? false,
            width: terminalWidth(options.stdout, options.env ?? process.env),
            snapshots: result.snapshots,
          }),
        );
      }
    }
    // What a drawing or a page left out; a summary alone leaves out nothing it showed.
    if (!summaryOnly) {
      for (const line of leftOutLines(result.leftOut)) say(`tooltrace view: ${path}: ${line}`);
    }
    return 0;
  } catch (error) {
    // Whatever went wrong inside (a read error half-way, a bug) is one line, not a stack trace.
    say(`tooltrace view: ${path}: ${(error as Error).message ?? String(error)}`);
    return 2;
  } finally {
    shown?.stop();
  }
}

/**
 * Why a page could not be written at `path`, or `undefined`: its folder must exist and be
 * writable, and the path must not be a folder itself.
 */
async function pageProblem(path: string): Promise<string | undefined> {
  try {
    if ((await stat(path)).isDirectory()) return 'it is a directory';
  } catch {
    // Not there yet: the page makes it.
  }
  const folder = dirname(path);
  try {
    if (!(await stat(folder)).isDirectory()) return `${folder} is not a directory`;
    await access(folder, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `no directory ${folder}` : (error as Error).message;
  }
  return undefined;
}

/** Whether `span` is a tool call the call filters (`--tool`, `--errors`, `--slowest`) ask for. */
function isWantedCall(span: ReceivedSpan, filter: ViewFilter): boolean {
  const attributes = span.attributes;
  if (attributes['gen_ai.operation.name'] !== 'execute_tool') return false;
  if (filter.tool !== undefined && attributes['gen_ai.tool.name'] !== filter.tool) return false;
  return filter.errors !== true || outcomeOf(span) === 'ERROR';
}

/**
 * Says what reading skipped; false when nothing at all could be read (exit code 2): a journal
 * whose every line was bad is not a journal with nothing in it.
 */
function reportRead(path: string, read: ViewFile, say: (line: string) => void): boolean {
  if (read.badLines > SHOWN_PROBLEMS) {
    say(`tooltrace view: ${path}: ${read.badLines - SHOWN_PROBLEMS} more bad lines skipped`);
  }
  const fields = Object.entries(read.fieldsDropped);
  if (fields.length > 0) {
    const list = fields.map(([field, count]) => `${field}=${count}`).join(', ');
    say(`tooltrace view: ${path}: fields of the wrong type left out, events kept: ${list}`);
  }
  if (read.events === 0 && read.badLines > 0) {
    say(
      `tooltrace view: ${path}: ${read.badLines === 1 ? 'its one line' : `none of its ${read.badLines} lines`} could be read`,
    );
    return false;
  }
  return true;
}

function describeFilter(filter: ViewFilter): string {
  const parts: string[] = [];
  if (filter.traceId !== undefined) parts.push(`--trace ${filter.traceId}`);
  if (filter.sessionId !== undefined) parts.push(`--session ${filter.sessionId}`);
  if (filter.tool !== undefined) parts.push(`--tool ${filter.tool}`);
  if (filter.errors === true) parts.push('--errors');
  if (filter.slowest !== undefined) parts.push(`--slowest ${filter.slowest}`);
  return parts.join(' ');
}

/** Rows of the screen: a terminal's own, else `LINES`, else 24. */
function screenRows(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv): number {
  const rows = (stream as { rows?: unknown }).rows;
  if (typeof rows === 'number' && rows > 0) return rows;
  const fromEnv = Number(env.LINES);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_ROWS;
}

/** What the drawing left out, one line per trace drawn in part and one for traces not drawn. */
function leftOutLines(leftOut: SpansLeftOut): string[] {
  const lines = leftOut.traces.map(({ traceId, drawn, leftOut: count, limit }) =>
    limit === 'trace'
      ? `trace ${traceId} is too large to draw whole: ${counted(drawn, 'span')} drawn, ${count} more left out`
      : `trace ${traceId} is drawn in part (the waterfall is full): ${counted(drawn, 'span')} drawn, ${count} more left out`,
  );
  if (leftOut.tracesNotDrawn > 0) {
    lines.push(
      `${leftOut.tracesNotDrawnEstimated ? 'about ' : ''}${counted(leftOut.tracesNotDrawn, 'more trace', 'more traces')} (${counted(leftOut.spansNotDrawn, 'span')}) not drawn: the waterfall holds the first ones only`,
    );
  }
  return lines;
}
