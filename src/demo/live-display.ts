import { createLogUpdate } from 'log-update';
import { createColors } from 'picocolors';
import { nowUnixNano, type BusEvent, type EventBus } from '../bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type ToolCall,
  type ToolResult,
  type ToolStreamPartial,
  type ToolStreamProgress,
} from '../events/index.js';

/** Options for {@link LiveDisplay}. */
export interface LiveDisplayOptions {
  /** Where to draw. */
  stream: NodeJS.WritableStream;
  /** Redraw live lines in place (a terminal); otherwise print one plain line per change. */
  live: boolean;
  /** Colour the output; off, nothing but plain text is written. */
  color: boolean;
}

type CallState = 'running' | 'ok' | 'failed' | 'cancelled';

interface CallView {
  name: string;
  /** The agent's depth (a sub-agent's calls are 1 deeper), as the bus's causation has it. */
  agentDepth: number;
  /** The call that made this one (its invoke is a causal ancestor), for a nested call. */
  caller: CallView | undefined;
  /** How far to indent: the agent's depth plus how many calls this one is nested in. */
  depth: number;
  progress: number;
  latest: string;
  state: CallState;
  message: string;
}

const BAR_WIDTH = 20;
/** How often live lines are redrawn. */
const REFRESH_MS = 80;
const PREVIEW = 48;

/**
 * Shows tool calls while they run. In a terminal, one line per call redrawn in place (through
 * log-update): a progress bar, the latest partial output and the state. Elsewhere (a pipe, a
 * file, `--no-color`), plain log lines without escape codes: start, every partial, progress in
 * quarter steps, and the outcome.
 */
export class LiveDisplay {
  readonly #options: LiveDisplayOptions;
  readonly #colors: ReturnType<typeof createColors>;
  readonly #calls = new Map<string, CallView>();
  /** The call each invoke and stream event belongs to, by event id: a nested call's caller. */
  readonly #callOfEvent = new Map<string, CallView>();
  readonly #started = nowUnixNano();
  readonly #unsubscribe: (() => void)[] = [];
  #update: ReturnType<typeof createLogUpdate> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;

  constructor(bus: EventBus, options: LiveDisplayOptions) {
    this.#options = options;
    this.#colors = createColors(options.color);
    if (options.live) this.#update = createLogUpdate(options.stream);
    const on = <T>(type: string, handler: (event: BusEvent<T>) => void): void => {
      this.#unsubscribe.push(bus.subscribe<T>(type, handler, { source: 'demo.display' }));
    };
    on<ToolCall>(TOOL_INVOKE, (event) => this.#invoked(event));
    on<ToolStreamProgress>(TOOL_STREAM_PROGRESS, (event) => this.#progress(event));
    on<ToolStreamPartial>(TOOL_STREAM_PARTIAL, (event) => this.#partial(event));
    on<ToolResult>(TOOL_RESULT, (event) => this.#result(event));
    if (this.#update !== undefined) {
      this.#timer = setInterval(() => this.#redraw(), REFRESH_MS);
      this.#timer.unref();
    }
  }

  /** Draws the final state and stops listening. Safe to call twice. */
  stop(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#update !== undefined) {
      this.#dirty = true;
      this.#redraw();
      this.#update.done();
      this.#update = undefined;
    }
  }

  #invoked(event: BusEvent<ToolCall>): void {
    const caller = this.#callOfEvent.get(event.causation.parentId);
    const view: CallView = {
      name: event.payload.name,
      agentDepth: event.causation.depth,
      caller,
      depth: caller === undefined ? event.causation.depth : caller.depth + 1,
      progress: -1,
      latest: '',
      state: 'running',
      message: '',
    };
    this.#calls.set(event.payload.id, view);
    this.#callOfEvent.set(event.id, view);
    // The depth the bus carries is the agent's (a sub-agent is 1), not how deep the call is
    // nested: a call made by another call says by which.
    const calledBy = caller === undefined ? '' : `, called by ${caller.name}`;
    this.#line(
      view,
      `started (${event.payload.id}, agent ${event.causation.agentId || '-'}, agent depth ${view.agentDepth}${calledBy})`,
    );
  }

  #progress(event: BusEvent<ToolStreamProgress>): void {
    const view = this.#calls.get(event.payload.tool_id);
    if (view === undefined) return;
    this.#callOfEvent.set(event.id, view);
    const before = view.progress;
    view.progress = event.payload.progress;
    if (typeof event.payload.payload === 'string') view.latest = event.payload.payload;
    if (Math.floor(before * 4) !== Math.floor(view.progress * 4) || view.progress === 1) {
      this.#line(view, `progress ${Math.round(view.progress * 100)}%`);
    }
  }

  #partial(event: BusEvent<ToolStreamPartial>): void {
    const view = this.#calls.get(event.payload.tool_id);
    if (view === undefined) return;
    this.#callOfEvent.set(event.id, view);
    view.latest = preview(event.payload.payload);
    this.#line(view, `partial #${event.payload.sequence}: ${view.latest}`);
  }

  #result(event: BusEvent<ToolResult>): void {
    const view = this.#calls.get(event.payload.id);
    if (view === undefined) return;
    const { cancelled, error, output } = event.payload;
    // A Go tool.result carries `Error: ""` on success; an error may span lines (a stack trace).
    const failed = error !== undefined && error !== '';
    view.state = cancelled === true ? 'cancelled' : failed ? 'failed' : 'ok';
    view.message = preview(view.state === 'ok' ? output : failed ? error : 'cancelled');
    this.#line(view, `${view.state}${view.message === '' ? '' : `: ${view.message}`}`);
  }

  /** Plain mode prints the change; live mode marks the lines for the next redraw. */
  #line(view: CallView, text: string): void {
    if (this.#update !== undefined) {
      this.#dirty = true;
      return;
    }
    const elapsed = `+${(Number(nowUnixNano() - this.#started) / 1e9).toFixed(2)}s`;
    const indent = '  '.repeat(view.depth);
    this.#options.stream.write(`${elapsed.padStart(7)}  ${indent}${view.name}  ${text}\n`);
  }

  #redraw(): void {
    if (!this.#dirty || this.#update === undefined) return;
    this.#dirty = false;
    const colors = this.#colors;
    const width = Math.max(
      ...[...this.#calls.values()].map((view) => view.name.length + view.depth * 2),
      8,
    );
    const lines = [...this.#calls.values()].map((view) => {
      const name = `${'  '.repeat(view.depth)}${view.name}`.padEnd(width);
      const state =
        view.state === 'running'
          ? colors.cyan('running  ')
          : view.state === 'ok'
            ? colors.green('ok       ')
            : view.state === 'failed'
              ? colors.red('failed   ')
              : colors.yellow('cancelled');
      const detail = view.state === 'running' || view.state === 'ok' ? view.latest : view.message;
      return `${name}  ${bar(view)}  ${state}  ${colors.dim(truncate(detail, PREVIEW))}`;
    });
    this.#update(lines.join('\n'));
  }
}

function bar(view: CallView): string {
  if (view.progress < 0) {
    return view.state === 'running'
      ? `[${'·'.repeat(BAR_WIDTH)}]     `
      : `[${'█'.repeat(BAR_WIDTH)}]     `;
  }
  const filled = Math.round(view.progress * BAR_WIDTH);
  return `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${String(Math.round(view.progress * 100)).padStart(3)}%`;
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return truncate(text.replace(/\s+/g, ' ').trim(), PREVIEW);
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
