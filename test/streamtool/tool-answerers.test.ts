import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  declareAnsweredTools,
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  UnknownToolError,
  type BusEvent,
  type ChannelTool,
  type ToolResult,
} from '../../src/index.js';
import { runAsInvokeHandler } from '../../src/streamtool/run-as-invoke-handler.js';
import { startTracingHarness } from '../otel/tracing-harness.js';

const searchTool: ChannelTool = {
  name: 'search',
  async *stream() {
    await nextTurn();
    yield { kind: 'complete', payload: 'found' };
  },
};

function results(bus: EventBus): BusEvent<ToolResult>[] {
  const seen: BusEvent<ToolResult>[] = [];
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void seen.push(event));
  return seen;
}

describe('declareAnsweredTools()', () => {
  it('fails a call for a tool no plugin answers at once, naming the known tools, as a child of its invoke', async () => {
    const bus = new EventBus();
    new StreamingToolPlugin('search', () => searchTool).attach(bus);
    new StreamingToolPlugin('read_file', () => searchTool).attach(bus);
    const seen = results(bus);

    const invoke = bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'serach', arguments: {} });
    await nextTurn();

    expect(seen.map((event) => event.payload)).toEqual([
      {
        id: 'tc_1',
        name: 'serach',
        output: '',
        error: 'no tool named "serach" is answered on this bus; the tools are: read_file, search',
        errorType: 'unknown_tool',
      },
    ]);
    expect(seen[0]!.causation.parentId).toBe(invoke.id);
  });

  it('ends the span of the unknown call with status ERROR and error.type=unknown_tool', async () => {
    const harness = await startTracingHarness();
    try {
      new StreamingToolPlugin('search', () => searchTool).attach(harness.bus);
      harness.bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'nope', arguments: {} });
      await nextTurn();
      const span = await harness.span('execute_tool nope');
      expect(span.status.code).toBe(2);
      expect(span.attributes['error.type']).toBe('unknown_tool');
    } finally {
      await harness.close();
    }
  });

  it('leaves names declared by other answerers, by list or predicate, until their undo', async () => {
    const bus = new EventBus();
    new StreamingToolPlugin('search', () => searchTool).attach(bus);
    const undo = declareAnsweredTools(bus, ['remote_lookup']);
    declareAnsweredTools(bus, (name) => name.startsWith('mcp__'));
    const seen = results(bus);

    bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'remote_lookup', arguments: {} });
    bus.emit(TOOL_INVOKE, { id: 'tc_2', name: 'mcp__files', arguments: {} });
    await nextTurn();
    expect(seen).toHaveLength(0);

    undo();
    bus.emit(TOOL_INVOKE, { id: 'tc_3', name: 'remote_lookup', arguments: {} });
    await nextTurn();
    expect(seen.map((event) => [event.payload.id, event.payload.errorType])).toEqual([
      ['tc_3', 'unknown_tool'],
    ]);
  });

  it('answers nothing on a bus where no plugin is attached', async () => {
    const bus = new EventBus();
    declareAnsweredTools(bus, ['search']);
    const seen = results(bus);
    bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'other', arguments: {} });
    await nextTurn();
    expect(seen).toHaveLength(0);
  });

  it('leaves a call an adapter answers itself (runAsInvokeHandler) alone', async () => {
    const bus = new EventBus();
    new StreamingToolPlugin('search', () => searchTool).attach(bus);
    const seen = results(bus);
    const call = { id: 'tc_1', name: 'served_elsewhere', arguments: {} };
    runAsInvokeHandler(bus, call, 'test', () => undefined);
    await nextTurn();
    expect(seen).toHaveLength(0);
  });

  it('gives an UnknownToolError with typed fields, and refuses bad arguments', () => {
    const error = new UnknownToolError('nope', ['a', 'b']);
    expect(error).toMatchObject({
      name: 'UnknownToolError',
      toolName: 'nope',
      knownTools: ['a', 'b'],
    });
    expect(() => declareAnsweredTools(new EventBus(), 'search' as never)).toThrow(
      'tools must be an array of tool names or a function of the name',
    );
    expect(() => declareAnsweredTools(new EventBus(), [1] as never)).toThrow('(strings)');
  });
});
