import { counted } from '../errors/index.js';
import { createColors } from 'picocolors';
import type { ReceivedSpan } from '../otlp/index.js';
import { printable } from '../sidecar/pipeline/index.js';

/** Options for {@link renderWaterfall}. */
export interface WaterfallOptions {
  /**
   * Colour the output with ANSI codes. Off, the text has no escape codes at all.
   * @default false
   */
  color?: boolean;
  /**
   * Width of the duration bar column, in characters.
   * @default 32, or what fits in `width`
   */
  barWidth?: number;
  /**
   * Columns every line must fit in (see {@link terminalWidth}): the bar narrows first, then
   * long names, and what still does not fit is cut with `…`.
   * @default unlimited
   */
  width?: number;
  /** In-flight snapshots read and not drawn (their calls ended), told in a closing line. @default 0 */
  snapshots?: number;
}

/** A piece of a row and the colour it is painted with once it has been cut to fit. */
interface Segment {
  text: string;
  paint?: (text: string) => string;
}

/** Narrowest and widest bar drawn, and the columns kept for duration and status (and a `…`). */
const MIN_BAR = 8;
const MAX_BAR = 32;
const STATUS_ROOM = 20;

/** A span and the spans under it, as {@link buildTree} makes them. */
export interface SpanNode {
  span: ReceivedSpan;
  children: SpanNode[];
}

const STATUS_ERROR = 2;
const STATUS_OK = 1;

/**
 * How a span ended, by one rule for the waterfall, the page, the summary and `--errors`: a
 * cancelled call (the caller stopped it, though its `error.type` is `cancelled`) is not a failure.
 */
export function outcomeOf(span: ReceivedSpan): 'CANCELLED' | 'ERROR' | 'OK' | 'UNSET' {
  const attributes = span.attributes;
  if (attributes['tooltrace.tool.cancelled'] === true || attributes['error.type'] === 'cancelled') {
    return 'CANCELLED';
  }
  return span.status.code === STATUS_ERROR
    ? 'ERROR'
    : span.status.code === STATUS_OK
      ? 'OK'
      : 'UNSET';
}

/** One trace of the spans drawn: its spans, first start and last end. */
export interface DrawnTrace {
  spans: ReceivedSpan[];
  start: bigint;
  end: bigint;
}

/** `spans` grouped by trace, the traces in order of their first start. */
export function tracesOf(spans: readonly ReceivedSpan[]): DrawnTrace[] {
  const traces = new Map<string, DrawnTrace>();
  for (const span of spans) {
    const trace = traces.get(span.traceId);
    if (trace === undefined) {
      traces.set(span.traceId, {
        spans: [span],
        start: span.startTimeUnixNano,
        end: span.endTimeUnixNano,
      });
      continue;
    }
    trace.spans.push(span);
    if (span.startTimeUnixNano < trace.start) trace.start = span.startTimeUnixNano;
    if (span.endTimeUnixNano > trace.end) trace.end = span.endTimeUnixNano;
  }
  return [...traces.values()].sort((left, right) => compareBigint(left.start, right.start));
}

/**
 * Draws spans as a waterfall, one block per trace: an indented tree (children under their
 * parent, by start time) with a duration bar placed on the trace's time line, the status (a
 * cancelled call is told apart from a failure), the error message, and the stream summary
 * tooltrace records on every tool span. A call that never ended (its process died) is drawn
 * from its latest in-flight snapshot, as an `(in flight)` row; the other snapshots, taken out
 * while the file was read, are only counted in a closing line.
 */
export function renderWaterfall(
  spans: readonly ReceivedSpan[],
  options: WaterfallOptions = {},
): string {
  const colors = createColors(options.color ?? false);
  const width = options.width ?? Number.POSITIVE_INFINITY;
  const snapshots = options.snapshots ?? 0;
  const blocks: string[] = [];
  for (const { spans: traceSpans, start, end } of tracesOf(spans)) {
    const roots = buildTree(traceSpans);
    // An end before the start (a clock gone back) draws as a trace of no length.
    const total = end > start ? end - start : 0n;
    const rows: { label: string; span: ReceivedSpan }[] = [];
    let drawn = 0;
    const visit = (node: SpanNode, prefix: string, last: boolean, depth: number): void => {
      const connector = depth === 0 ? '' : last ? '└─ ' : '├─ ';
      const span = node.span;
      drawn += 1;
      // Names and messages come from the file: escaped, so none can drive the terminal.
      rows.push({ label: `${prefix}${connector}${printable(span.name)}`, span });
      const childPrefix = depth === 0 ? '' : `${prefix}${last ? '   ' : '│  '}`;
      node.children.forEach((child, index) =>
        visit(child, childPrefix, index === node.children.length - 1, depth + 1),
      );
    };
    roots.forEach((root, index) => visit(root, '', index === roots.length - 1, 0));
    // Indent, label, bar and the gaps between them, then duration and status must fit.
    const labelWidth = Math.min(
      Math.max(...rows.map((row) => row.label.length)),
      Math.max(12, width - 2 - 2 - MIN_BAR - 2 - STATUS_ROOM),
    );
    const barWidth =
      options.barWidth ??
      Math.max(MIN_BAR, Math.min(MAX_BAR, width - 2 - labelWidth - 2 - 2 - STATUS_ROOM));
    const header = `trace ${traceSpans[0]!.traceId}  ${drawn} span${drawn === 1 ? '' : 's'}  ${formatDuration(total)}`;
    blocks.push(
      [
        fit([{ text: header, paint: colors.bold }], width),
        ...rows.map((row) =>
          fit(
            [
              { text: `  ${cut(row.label, labelWidth).padEnd(labelWidth)}  ` },
              { text: drawBar(row.span, start, total, barWidth), paint: colors.cyan },
              { text: '  ' },
              ...describe(row.span, colors),
            ],
            width,
          ),
        ),
      ].join('\n'),
    );
  }
  const footer =
    snapshots === 0
      ? ''
      : `\n${snapshots} in-flight update${snapshots === 1 ? ' was' : 's were'} exported while calls ran.\n`;
  return `${blocks.join('\n\n')}\n${footer}`;
}

/**
 * The spans of one trace as trees. A span whose parent is missing is a root; a span id seen
 * twice (an export retried, a file concatenated with itself) is drawn once; spans whose parent
 * links form a cycle, which no tracer writes but a hand-edited file may hold, are drawn as roots
 * rather than left out. The waterfall and the `--html` page draw these trees.
 */
export function buildTree(spans: readonly ReceivedSpan[]): SpanNode[] {
  const nodes = new Map<string, SpanNode>();
  for (const span of spans) {
    if (!nodes.has(span.spanId)) nodes.set(span.spanId, { span, children: [] });
  }
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parent = nodes.get(node.span.parentSpanId);
    if (parent === undefined || parent === node) roots.push(node);
    else parent.children.push(node);
  }
  const reached = new Set<SpanNode>();
  const reach = (node: SpanNode): void => {
    reached.add(node);
    node.children.forEach(reach);
  };
  roots.forEach(reach);
  for (const node of nodes.values()) {
    if (reached.has(node)) continue;
    // In a cycle: cut it here, keeping the rest of the cycle as this node's descendants.
    const parent = nodes.get(node.span.parentSpanId)!;
    parent.children.splice(parent.children.indexOf(node), 1);
    roots.push(node);
    reach(node);
  }
  const byStart = (left: SpanNode, right: SpanNode): number =>
    compareBigint(left.span.startTimeUnixNano, right.span.startTimeUnixNano);
  for (const node of nodes.values()) node.children.sort(byStart);
  return roots.sort(byStart);
}

function drawBar(span: ReceivedSpan, start: bigint, total: bigint, width: number): string {
  if (total <= 0n) return '█'.padEnd(width, ' ');
  const from = Number(((span.startTimeUnixNano - start) * BigInt(width)) / total);
  const to = Number(((span.endTimeUnixNano - start) * BigInt(width)) / total);
  const length = Math.max(1, to - from);
  const offset = Math.min(from, width - length);
  return `${' '.repeat(offset)}${'█'.repeat(length)}`.padEnd(width, ' ');
}

/**
 * `segments` joined, cut to `width` columns with `…` as the last one when anything was cut;
 * each segment is painted after cutting, so that no escape code is cut in half.
 */
function fit(segments: readonly Segment[], width: number): string {
  const total = segments.reduce((length, segment) => length + segment.text.length, 0);
  let room = total <= width ? total : width - 1;
  let line = '';
  for (const segment of segments) {
    const text = segment.text.slice(0, Math.max(0, room));
    room -= text.length;
    if (text !== '') line += segment.paint === undefined ? text : segment.paint(text);
  }
  return total <= width ? line : `${line}…`;
}

/** `text` in at most `room` columns, ending in `…` when cut. */
function cut(text: string, room: number): string {
  return text.length <= room ? text : `${text.slice(0, Math.max(0, room - 1))}…`;
}

function describe(span: ReceivedSpan, colors: ReturnType<typeof createColors>): Segment[] {
  const attributes = span.attributes;
  const parts: Segment[] = [
    { text: formatDuration(span.endTimeUnixNano - span.startTimeUnixNano).padStart(7) },
  ];
  const outcome = outcomeOf(span);
  const paint =
    outcome === 'CANCELLED'
      ? colors.yellow
      : outcome === 'ERROR'
        ? colors.red
        : outcome === 'OK'
          ? colors.green
          : undefined;
  if (paint !== undefined) parts.push({ text: outcome, paint });
  // Turns and model calls leave the status unset when they succeed, as the conventions ask.
  else if (typeof attributes['tooltrace.span.kind'] !== 'string') parts.push({ text: outcome });
  const endReason = attributes['tooltrace.end_reason'];
  if (typeof endReason === 'string' && endReason !== 'result') {
    parts.push({ text: `(${endReason})` });
  }
  const summary: string[] = [];
  const input = attributes['gen_ai.usage.input_tokens'];
  const output = attributes['gen_ai.usage.output_tokens'];
  if (input !== undefined || output !== undefined) {
    summary.push(
      `${formatCount(numberOf(input))} in / ${formatCount(numberOf(output))} out tokens`,
    );
  }
  const chunks = numberOf(attributes['tooltrace.llm.stream.chunks']);
  if (chunks > 0) {
    const first = attributes['gen_ai.response.time_to_first_chunk'];
    summary.push(
      `${counted(chunks, 'chunk')}${typeof first === 'number' ? `, first after ${formatMilliseconds(first * 1000)}` : ''}`,
    );
  }
  const partials = numberOf(attributes['tooltrace.stream.partial.count']);
  const progress = numberOf(attributes['tooltrace.stream.progress.count']);
  if (partials > 0) {
    const bytes = numberOf(attributes['tooltrace.stream.partial.bytes']);
    summary.push(`${counted(partials, 'partial')} (${formatBytes(bytes)})`);
    const first = attributes['tooltrace.stream.time_to_first_partial_ms'];
    if (typeof first === 'number') summary.push(`first after ${formatMilliseconds(first)}`);
  }
  if (progress > 0) {
    const last = attributes['tooltrace.stream.last_progress'];
    summary.push(
      `${progress} progress${typeof last === 'number' && last >= 0 ? ` to ${Math.round(last * 100)}%` : ''}`,
    );
  }
  const coalesced = numberOf(attributes['tooltrace.stream.events.coalesced']);
  if (coalesced > 0) summary.push(`${coalesced} coalesced`);
  if (span.events.length > 0) summary.push(counted(span.events.length, 'span event'));
  if (summary.length > 0) parts.push({ text: summary.join(', '), paint: colors.dim });
  if (span.status.code === STATUS_ERROR && span.status.message !== '') {
    // One row per span: a multi-line message (a stack trace) is folded onto it.
    const message = printable(span.status.message.replace(/\s+/g, ' ').trim());
    parts.push({ text: `"${message}"`, paint: colors.red });
  }
  return parts.flatMap((part, index) => (index === 0 ? [part] : [{ text: '  ' }, part]));
}

function compareBigint(left: bigint, right: bigint): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : 0;
}

/** A duration in nanoseconds, as `850µs`, `12.3ms` or `1.52s`. */
export function formatDuration(nanos: bigint): string {
  return formatMilliseconds(Number(nanos) / 1e6);
}

function formatMilliseconds(milliseconds: number): string {
  if (milliseconds < 1) return `${Math.round(milliseconds * 1000)}µs`;
  if (milliseconds < 1000) return `${milliseconds.toFixed(milliseconds < 10 ? 1 : 0)}ms`;
  return `${(milliseconds / 1000).toFixed(2)}s`;
}

function formatCount(count: number): string {
  return count < 1000 ? String(count) : `${(count / 1000).toFixed(1)}k`;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}
