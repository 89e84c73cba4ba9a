import { describe, expect, it, vi } from 'vitest';
import {
  EventBus,
  TOOL_RESULT,
  bridge,
  toChannelTool,
  type RequestResponseTool,
  type ToolEvent,
  type ToolResult,
} from '../../src/index.js';

const CALL = { id: 'tc_1', name: 'fetch', arguments: { url: 'https://example.test' } };

describe('toChannelTool()', () => {
  it('streams exactly one complete event carrying what execute() returned', async () => {
    const tool = toChannelTool({ name: 'fetch', execute: (input) => ({ fetched: input.url }) });
    const events: ToolEvent[] = [];
    for await (const event of await tool.stream(new AbortController().signal, { url: 'u' })) {
      events.push(event);
    }
    expect(tool.name).toBe('fetch');
    expect(events).toEqual([{ kind: 'complete', payload: { fetched: 'u' } }]);
  });

  it('cancels an execute() that ignores its signal without waiting for it', async () => {
    vi.useFakeTimers();
    try {
      const bus = new EventBus();
      const results: ToolResult[] = [];
      bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
      const slow: RequestResponseTool = {
        name: 'fetch',
        // A 10-minute download that never looks at the signal.
        execute: () => new Promise((resolve) => setTimeout(() => resolve('body'), 600_000)),
      };
      const controller = new AbortController();
      const running = bridge(bus, toChannelTool(slow), CALL, { signal: controller.signal });
      await vi.advanceTimersByTimeAsync(5_000);
      controller.abort(new Error('request timed out'));
      await expect(running).rejects.toThrow('request timed out');
      await vi.advanceTimersByTimeAsync(600_000);
      expect(results).toEqual([
        { id: 'tc_1', name: 'fetch', output: '', error: 'request timed out', cancelled: true },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects something that is not a request-response tool', () => {
    expect(() => toChannelTool({ name: 'fetch' } as unknown as RequestResponseTool)).toThrow(
      'tool must be an object with an execute(input, signal) method',
    );
  });
});
