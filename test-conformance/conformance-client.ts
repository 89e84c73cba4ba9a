/**
 * The MCP client the conformance suite's client scenarios run: `mcpTools` on a `Client` of the
 * SDK line given first (`1.x` or `2.x`), connected over Streamable HTTP to the URL the suite
 * appends, its tools called through the bus as an agent calls them. The suite names the
 * scenario in `MCP_CONFORMANCE_SCENARIO`: `initialize` lists the tools (and so initializes),
 * `tools_call` calls `add_numbers`. Prints each result; exits 1 when a call fails.
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
if ((line !== '1.x' && line !== '2.x') || url === undefined || !url.startsWith('http')) {
  console.error('usage: conformance-client.ts 1.x|2.x <server url>');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';

const client =
  line === '2.x'
    ? new Client2({ name: 'tooltrace-conformance', version: '2.0.0' })
    : new Client1({ name: 'tooltrace-conformance', version: '1.0.0' });
if (client instanceof Client2) await client.connect(new Transport2(new URL(url)));
else await client.connect(new Transport1(new URL(url)));

const bus = new EventBus();
const tools = await mcpTools(client);
for (const tool of tools) new StreamingToolPlugin(tool.name, () => tool).attach(bus);
console.log(`${scenario}: ${tools.length} tools (${tools.map((tool) => tool.name).join(', ')})`);

if (scenario === 'tools_call') {
  const result = await new Promise<ToolResult>((resolve) => {
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => resolve(event.payload));
    bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'add_numbers', arguments: { a: 2, b: 3 } });
  });
  console.log(result.error ?? result.output);
  if (result.error !== undefined && result.error !== '') process.exitCode = 1;
}
await client.close();
