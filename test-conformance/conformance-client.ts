/**
 * The MCP client the conformance suite's client scenarios run: `mcpTools` on a `Client` of the
 * SDK line given first (`1.x`, `2.x`, or `2026`: the 2.x line negotiating MCP 2026-07-28),
 * connected over Streamable HTTP to the URL the suite appends, its tools called through the bus
 * as an agent calls them. The suite names the scenario in `MCP_CONFORMANCE_SCENARIO`:
 * `initialize` lists the tools (and so initializes), `tools_call` calls `add_numbers`; on
 * `2026` any other scenario calls the tools its `MCP_CONFORMANCE_CONTEXT` names, or every tool
 * listed, answering input requests through `inputHandler`. Prints each result; exits 1 when a
 * call of `tools_call` fails.
 */
import {
  Client as Client2,
  StreamableHTTPClientTransport as Transport2,
} from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EventBus } from '../src/bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT, type ToolResult } from '../src/events/index.js';
import { mcpTools } from '../src/mcp/index.js';
import { StreamingToolPlugin } from '../src/streamtool/index.js';

const [line, url] = [process.argv[2], process.argv.at(-1)];
if (
  (line !== '1.x' && line !== '2.x' && line !== '2026') ||
  url === undefined ||
  !url.startsWith('http')
) {
  console.error('usage: conformance-client.ts 1.x|2.x|2026 <server url>');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';

const client =
  line === '2026'
    ? new Client2(
        { name: 'tooltrace-conformance', version: '2.0.0' },
        {
          capabilities: { elicitation: {}, sampling: {}, roots: {} },
          versionNegotiation: { mode: 'auto' },
        },
      )
    : line === '2.x'
      ? new Client2({ name: 'tooltrace-conformance', version: '2.0.0' })
      : new Client1({ name: 'tooltrace-conformance', version: '1.0.0' });
if (client instanceof Client2) await client.connect(new Transport2(new URL(url)));
else await client.connect(new Transport1(new URL(url)));

const bus = new EventBus();
const tools = await mcpTools(client, {
  // What an application's user and model would answer.
  inputHandler: (question) =>
    question.method === 'elicitation/create'
      ? { action: 'accept', content: { confirmed: true } }
      : question.method === 'sampling/createMessage'
        ? { role: 'assistant', content: { type: 'text', text: 'Hello' }, model: 'conformance' }
        : { roots: [] },
});
for (const tool of tools) new StreamingToolPlugin(tool.name, () => tool).attach(bus);
console.log(`${scenario}: ${tools.length} tools (${tools.map((tool) => tool.name).join(', ')})`);

/** Calls `name` through the bus as an agent does; resolves with its result. */
let calls = 0;
function call(name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const id = `tc_${++calls}`;
  return new Promise<ToolResult>((resolve) => {
    const stop = bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
      if (event.payload.id !== id) return;
      stop();
      resolve(event.payload);
    });
    bus.emit(TOOL_INVOKE, { id, name, arguments: input });
  });
}

if (line === '2026' && scenario !== 'tools_call' && scenario !== 'initialize') {
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    toolCalls?: { name: string; arguments?: Record<string, unknown> }[];
  };
  const planned = context.toolCalls ?? tools.map((tool) => ({ name: tool.name, arguments: {} }));
  for (const planned_ of planned) {
    const result = await call(planned_.name, planned_.arguments ?? {});
    console.log(`${planned_.name}: ${result.error ?? result.output}`);
  }
}

if (scenario === 'tools_call') {
  const result = await new Promise<ToolResult>((resolve) => {
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => resolve(event.payload));
    bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'add_numbers', arguments: { a: 2, b: 3 } });
  });
  console.log(result.error ?? result.output);
  if (result.error !== undefined && result.error !== '') process.exitCode = 1;
}
await client.close();
