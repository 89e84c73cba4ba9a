import { counted } from '../errors/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { VERSION } from '../version.js';
import { HTML_PAGE_SCRIPT, HTML_PAGE_STYLE } from './html-page-script.js';
import type { SummaryCall, ViewSummary } from './view-summary.js';
import { buildTree, formatDuration, outcomeOf, tracesOf, type SpanNode } from './waterfall.js';

/** Options for {@link renderHtmlPage}. */
export interface HtmlPageOptions {
  /** Shown as the page's title: the file the spans were read from. */
  title: string;
}

/**
 * A span as the page's script reads it: times in microseconds from its trace's start, and how
 * deep it sits in its trace's tree (the spans of a trace come in the order they are drawn).
 */
interface PageSpan {
  depth: number;
  id: string;
  parent: string;
  name: string;
  start: number;
  duration: number;
  state: ReturnType<typeof outcomeOf>;
  message: string;
  note: string;
  attributes: Record<string, unknown>;
  events: { name: string; at: number; attributes: Record<string, unknown> }[];
}

const STATUS_ERROR = 2;

/**
 * One self-contained HTML page of `spans` (the selected traces) and the summary: the
 * waterfall of each trace, each span's attributes and stream events shown on click, failed
 * calls in red, cancelled ones in amber. Everything is inline (style, script, data) and the
 * page's Content-Security-Policy forbids any fetch, so it opens from a file or a CI artifact
 * with no network and no backend. Data from the file is embedded as JSON with `<` escaped and
 * drawn as text only, so a span name cannot inject markup.
 */
export function renderHtmlPage(
  spans: readonly ReceivedSpan[],
  summary: ViewSummary,
  options: HtmlPageOptions,
): string {
  const data = {
    traces: tracesOf(spans).map(({ spans: traceSpans, start, end }) => {
      // The waterfall's trees, walked as it draws them.
      const rows: PageSpan[] = [];
      const visit = (node: SpanNode, depth: number): void => {
        rows.push(pageSpan(node.span, start, depth));
        for (const child of node.children) visit(child, depth + 1);
      };
      for (const root of buildTree(traceSpans)) visit(root, 0);
      return {
        id: traceSpans[0]!.traceId,
        start: micros(start),
        duration: micros(end > start ? end - start : 0n),
        spans: rows,
      };
    }),
  };
  // `<` escaped: no `</script>` inside a name can end the data block.
  const json = JSON.stringify(data, jsonValue).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tooltrace: ${escapeHtml(options.title)}</title>
<style>${HTML_PAGE_STYLE}</style>
</head>
<body>
<h1>tooltrace view <small>${escapeHtml(options.title)}</small></h1>
${summaryHtml(summary)}
<h2>Traces</h2>
<p class="hint">Click a span for its attributes and stream events.</p>
<main id="traces"></main>
<footer>Written by tooltrace ${escapeHtml(VERSION)}. This page loads nothing from the network.</footer>
<script type="application/json" id="tooltrace-data">${json}</script>
<script>${HTML_PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function pageSpan(span: ReceivedSpan, traceStart: bigint, depth: number): PageSpan {
  const message = span.status.code === STATUS_ERROR ? span.status.message : '';
  return {
    depth,
    id: span.spanId,
    parent: span.parentSpanId,
    name: span.name,
    start: micros(span.startTimeUnixNano - traceStart),
    duration: micros(span.endTimeUnixNano - span.startTimeUnixNano),
    state: outcomeOf(span),
    message,
    note: message === '' ? noteOf(span) : message.replace(/\s+/g, ' ').trim(),
    attributes: span.attributes,
    events: span.events.map((event) => ({
      name: event.name,
      at: micros(event.timeUnixNano - span.startTimeUnixNano),
      attributes: event.attributes,
    })),
  };
}

/** A short line after the bar: what the call streamed, or a model call's tokens. */
function noteOf(span: ReceivedSpan): string {
  const attributes = span.attributes;
  const parts: string[] = [];
  const input = attributes['gen_ai.usage.input_tokens'];
  const output = attributes['gen_ai.usage.output_tokens'];
  if (input !== undefined || output !== undefined) {
    parts.push(`${Number(input ?? 0)} in / ${Number(output ?? 0)} out tokens`);
  }
  const partials = attributes['tooltrace.stream.partial.count'];
  if (typeof partials === 'number' && partials > 0) parts.push(counted(partials, 'partial'));
  const progress = attributes['tooltrace.stream.progress.count'];
  if (typeof progress === 'number' && progress > 0) parts.push(`${progress} progress`);
  const reason = attributes['tooltrace.end_reason'];
  if (typeof reason === 'string' && reason !== 'result') parts.push(`(${reason})`);
  return parts.join(', ');
}

function summaryHtml(summary: ViewSummary): string {
  const count = (value: number): string => value.toLocaleString('en-US');
  const rows = summary
    .toolRows()
    .sort((left, right) => left.tool.localeCompare(right.tool))
    .map(
      (row) =>
        `<tr><td>${escapeHtml(row.tool)}</td><td>${row.calls}</td><td>${row.errors}</td><td>${row.p50 ?? '—'}</td><td>${row.p95}</td><td>${row.firstPartial}</td></tr>`,
    )
    .join('\n');
  const calls = (list: readonly SummaryCall[]): string =>
    list
      .map(
        (call) =>
          `<tr><td>${formatDuration(call.durationNanos)}</td><td>${escapeHtml(call.tool)}</td><td><a href="#span=${call.spanId}">${call.traceId}</a></td><td class="message" title="${escapeHtml(call.message)}">${escapeHtml(call.message)}</td></tr>`,
      )
      .join('\n');
  return `<p class="counts">${summary.tracesEstimated ? 'about ' : ''}${counted(summary.traces, 'trace', 'traces', count)} · ${counted(summary.spans, 'span', 'spans', count)} · ${counted(summary.calls, 'tool call', 'tool calls', count)} · <b class="error">${count(summary.errors)} failed</b> · <b class="cancelled">${count(summary.cancelled)} cancelled</b></p>
<div class="summary">
<div><h2>Tools</h2><table class="tools"><tr><th>tool</th><th>calls</th><th>errors</th><th>p50</th><th>p95</th><th>first partial</th></tr>
${rows}</table></div>
<div><h2>Slowest calls</h2><table class="calls">${calls(summary.slowest)}</table>
${summary.failed.length === 0 ? '' : `<h2>Failed calls</h2><table class="calls">${calls(summary.failed)}</table>`}</div>
</div>`;
}

function micros(nanos: bigint): number {
  return Number(nanos / 1000n) + Number(nanos % 1000n) / 1000;
}

/** Attribute values the SDK holds as bigints are written as numbers. */
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
