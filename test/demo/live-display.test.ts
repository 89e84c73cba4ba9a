import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LiveDisplay } from '../../src/demo/live-display.js';
import {
  EventBus,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type ToolCall,
  type ToolResult,
  type ToolStreamPartial,
  type ToolStreamProgress,
} from '../../src/index.js';

/** A plain-mode display on a fresh bus, and what it wrote so far (without the elapsed time). */
function plainDisplay(): { bus: EventBus; display: LiveDisplay; lines: () => string[] } {
  const bus = new EventBus();
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const display = new LiveDisplay(bus, { stream, live: false, color: false });
  return {
    bus,
    display,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => line.replace(/^ *\+\d+\.\d\ds {2}/, '')),
  };
}

function invoke(bus: EventBus, id: string, name: string): void {
  bus.emit<ToolCall>(TOOL_INVOKE, { id, name, arguments: {} });
}

function stream(id: string, name: string, sequence: number, payload: unknown): ToolStreamPartial {
  return { tool_id: id, tool_name: name, turn_id: '', sequence, payload };
}

describe('LiveDisplay', () => {
  describe('in plain mode', () => {
    it('logs the start, every partial, progress in quarter steps and the outcome', () => {
      const { bus, display, lines } = plainDisplay();
      bus.setDefaultCausation({ agentId: 'planner' });
      invoke(bus, 'tc_1', 'index_files');
      for (let index = 1; index <= 8; index += 1) {
        bus.emit<ToolStreamProgress>(TOOL_STREAM_PROGRESS, {
          ...stream('tc_1', 'index_files', index, `file-${index}`),
          progress: index / 8,
        });
      }
      bus.emit<ToolStreamPartial>(TOOL_STREAM_PARTIAL, stream('tc_1', 'index_files', 9, 'done'));
      bus.emit<ToolResult>(TOOL_RESULT, { id: 'tc_1', name: 'index_files', output: '{"n":8}' });
      display.stop();
      expect(lines()).toEqual([
        'index_files  started (tc_1, agent planner, agent depth 0)',
        'index_files  progress 13%',
        'index_files  progress 25%',
        'index_files  progress 50%',
        'index_files  progress 75%',
        'index_files  progress 100%',
        'index_files  partial #9: done',
        'index_files  ok: {"n":8}',
      ]);
    });

    it('indents a sub-agent call by its depth', () => {
      const { bus, display, lines } = plainDisplay();
      bus.withCausation({ agentId: 'researcher', depth: 1 }, () =>
        invoke(bus, 'tc_2', 'summarize'),
      );
      display.stop();
      expect(lines()).toEqual(['  summarize  started (tc_2, agent researcher, agent depth 1)']);
    });

    it('nests a call made by another call under it and names its caller, the agent depth labelled as such', () => {
      const { bus, display, lines } = plainDisplay();
      bus.setDefaultCausation({ agentId: 'planner' });
      // plan_trip's code calls lookup_weather: its invoke is emitted inside plan_trip's dispatch.
      bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
        if (event.payload.name === 'plan_trip') invoke(bus, 'tc_6', 'lookup_weather');
      });
      invoke(bus, 'tc_5', 'plan_trip');
      display.stop();
      expect(lines()).toEqual([
        'plan_trip  started (tc_5, agent planner, agent depth 0)',
        '  lookup_weather  started (tc_6, agent planner, agent depth 0, called by plan_trip)',
      ]);
    });

    it('marks failed and cancelled calls and folds a multi-line error onto one line', () => {
      const { bus, display, lines } = plainDisplay();
      invoke(bus, 'tc_f', 'fetch_prices');
      invoke(bus, 'tc_c', 'slow_search');
      invoke(bus, 'tc_q', 'quiet_cancel');
      bus.emit<ToolResult>(TOOL_RESULT, {
        id: 'tc_f',
        name: 'fetch_prices',
        output: '',
        error: 'HTTP 503\n    at fetch (prices.ts:1:1)',
      });
      bus.emit<ToolResult>(TOOL_RESULT, {
        id: 'tc_c',
        name: 'slow_search',
        output: '',
        error: 'The operation was aborted due to timeout',
        cancelled: true,
      });
      bus.emit<ToolResult>(TOOL_RESULT, {
        id: 'tc_q',
        name: 'quiet_cancel',
        output: '',
        cancelled: true,
      });
      display.stop();
      expect(lines().slice(3)).toEqual([
        'fetch_prices  failed: HTTP 503 at fetch (prices.ts:1:1)',
        'slow_search  cancelled: The operation was aborted due to timeout',
        'quiet_cancel  cancelled: cancelled',
      ]);
    });

    it("shows the output of a call whose result carries Go's empty Error", () => {
      const { bus, display, lines } = plainDisplay();
      invoke(bus, 'call_1', 'read_file');
      bus.emit<ToolResult>(TOOL_RESULT, {
        id: 'call_1',
        name: 'read_file',
        output: 'hello',
        error: '',
      });
      display.stop();
      expect(lines().at(-1)).toBe('read_file  ok: hello');
    });

    it('writes no escape codes and stops listening on stop()', () => {
      const { bus, display, lines } = plainDisplay();
      invoke(bus, 'tc_1', 'write_report');
      display.stop();
      display.stop();
      invoke(bus, 'tc_2', 'after_stop');
      expect(lines()).toHaveLength(1);
      expect(lines().join('\n')).not.toContain('\x1b');
    });
  });
});
