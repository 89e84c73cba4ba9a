import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type ReceivedSpan } from '../../src/testing/index.js';
import { childEnv, ROOT } from '../demo/cli-process.js';
import { startSidecar, useReceiver } from '../sidecar/sidecar-process.js';

const run = promisify(execFile);

/** Inside the package, so that `import … from 'tooltrace'` resolves to the built entry points. */
const BLOCKS_DIR = join(ROOT, '.readme-blocks');

/** The pages whose code blocks are extracted: the README and every page of docs/. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** One code block: the page and line it starts on, its language and its code. */
interface Block {
  page: string;
  line: number;
  language: 'ts' | 'js';
  code: string;
}

/** Every ```ts and ```js block of `page`, with the line it starts on. */
function pageBlocks(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const found: Block[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const language = lines[index] === '```ts' ? 'ts' : lines[index] === '```js' ? 'js' : undefined;
    if (language === undefined) continue;
    const end = lines.indexOf('```', index + 1);
    found.push({ page, line: index + 2, language, code: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return found;
}

const blocks = PAGES.flatMap(pageBlocks);
/** A `.ts` file per TypeScript block; a JavaScript block is checked as the `.mjs` a user saves. */
const fileOf = (index: number): string =>
  join(BLOCKS_DIR, `block-${index + 1}.${blocks[index]!.language === 'js' ? 'mjs' : 'ts'}`);

/**
 * Writes the block that contains `marker` as plain JavaScript (with `replace`'s substitutions)
 * and runs it against the built package; resolves with what it printed.
 */
async function runBlock(
  marker: string,
  env: NodeJS.ProcessEnv = childEnv(),
  replace: [string, string][] = [],
): Promise<{ stdout: string; stderr: string }> {
  const index = blocks.findIndex((block) => block.code.includes(marker));
  expect(index, marker).toBeGreaterThanOrEqual(0);
  let code = blocks[index]!.code;
  for (const [from, to] of replace) {
    expect(code).toContain(from);
    code = code.replaceAll(from, to);
  }
  const script = join(BLOCKS_DIR, `run-${index + 1}.mjs`);
  const { outputText } = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  writeFileSync(script, outputText);
  return run(process.execPath, [script], { cwd: ROOT, env, timeout: 110_000 });
}

describe('README.md and docs/*.md', () => {
  const testbed = useReceiver();
  beforeAll(() => {
    mkdirSync(BLOCKS_DIR, { recursive: true });
    // A module of its own each (top-level await, no shared names); the blocks are modules
    // already when they import, and `export {}` changes nothing else.
    blocks.forEach((block, index) => writeFileSync(fileOf(index), `${block.code}\nexport {};\n`));
  });
  afterAll(() => rmSync(BLOCKS_DIR, { recursive: true, force: true }));

  it('has code blocks in the README and in docs/', () => {
    expect(blocks.filter((block) => block.page === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(blocks.filter((block) => block.page.startsWith('docs/')).length).toBeGreaterThanOrEqual(
      8,
    );
  });

  it('has blocks that type-check against the built package as they are shown (JavaScript with checkJs)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    )!;
    const program = ts.createProgram(
      blocks.map((_, index) => fileOf(index)),
      { ...config.options, noEmit: true, rootDir: ROOT, allowJs: true, checkJs: true },
    );
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      if (diagnostic.file === undefined) return message;
      const index = blocks.findIndex((_, at) => fileOf(at) === diagnostic.file!.fileName);
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      return `${blocks[index]!.page} line ${blocks[index]!.line + line}: ${message}`;
    });
    expect(problems).toEqual([]);
  });

  it('has a first-span block that prints its span on the console, run as the README says, with nothing listening', async () => {
    // The command the README gives, its variables taken as written.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const command = /^((?:OTEL_[A-Z_]+=\S+ )+)node app\.mjs$/m.exec(readme);
    expect(command, 'the README runs app.mjs with OTEL_ variables').not.toBeNull();
    const variables = Object.fromEntries(
      command![1]!
        .trim()
        .split(' ')
        .map((pair) => pair.split('=') as [string, string]),
    );
    expect(variables).toEqual({ OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'none' });
    const { stdout, stderr } = await runBlock('traceToolCalls(bus)', childEnv(variables));
    expect(stderr).toBe('');
    expect(stdout).toContain("name: 'execute_tool search_docs'");
    expect(stdout).toContain("'gen_ai.tool.call.id': 'tc_1'");
    expect(stdout).toMatch(/name: 'tool\.stream\.progress'[\s\S]*name: 'tool\.stream\.partial'/);
    expect(stdout).toContain('status: { code: 1 }');
  });

  it('has a first-span block whose exporter is not hard-wired: OTEL_EXPORTER_OTLP_ENDPOINT sends it over OTLP', async () => {
    await runBlock(
      'traceToolCalls(bus)',
      childEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_METRICS_EXPORTER: 'none',
      }),
    );
    const [span] = await testbed.receiver.waitForSpans(1);
    expect(span).toMatchObject({ name: 'execute_tool search_docs', status: { code: 1 } });
    expect(span!.events.map((event) => event.name)).toEqual([
      'tool.stream.progress',
      'tool.stream.partial',
    ]);
    expect(span!.resource['service.name']).toBe('my-agent');
  });

  it('has a library-mode block that runs: the tool span under the request span', async () => {
    const receiver = await startOtlpReceiver();
    try {
      await runBlock(
        "startActiveSpan('POST /chat'",
        childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'none' }),
      );
      const spans = await receiver.waitForSpans(2);
      const request = spans.find((span) => span.name === 'POST /chat')!;
      const tool = spans.find((span) => span.name === 'execute_tool search_docs')!;
      expect(tool.parentSpanId).toBe(request.spanId);
      expect(tool.traceId).toBe(request.traceId);
      expect(tool.status.code).toBe(1);
      expect(tool.attributes['tooltrace.stream.partial.count']).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it('has a streaming-tool block that prints the stream as it happens, then the result', async () => {
    const { stdout, stderr } = await runBlock("new StreamingToolPlugin('summarize'");
    expect(stderr).toBe('');
    expect(stdout).toBe(
      [
        'progress 0',
        'partial  a.ts: done',
        'progress 0.5',
        'partial  b.ts: done',
        'progress 1',
        'result   {"files":2,"summary":["a.ts: done","b.ts: done"]}',
        '',
      ].join('\n'),
    );
    // The output the page shows under the block is this very output.
    const page = blocks.find((block) =>
      block.code.includes("new StreamingToolPlugin('summarize'"),
    )!;
    expect(readFileSync(join(ROOT, page.page), 'utf8')).toContain(`\`\`\`\n${stdout}\`\`\``);
  });

  it('has a sidecar-mode block whose call the sidecar exports as a span', async () => {
    const sidecar = startSidecar(['--listen', '127.0.0.1:0', '--status-interval', '0'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const url = await sidecar.listenUrl();

    const { stdout, stderr } = await runBlock(
      "forwardEvents(bus, { url: 'http://127.0.0.1:4319' })",
      childEnv(),
      [['http://127.0.0.1:4319', url]],
    );

    expect(stderr).toBe('');
    expect(stdout).toBe('the sidecar took all 4 events\n');
    const [span] = await testbed.receiver.waitForSpans(1);
    expect(span).toMatchObject({ name: 'execute_tool index_files', status: { code: 1 } });
    expect(span!.events.map((event) => event.name)).toEqual(['tool.stream.progress']);
  });

  it('has a traceReplay block that gives a Go-spelled journal the same span ids on every run', async () => {
    const runs = [
      await runBlock('traceReplay(bus, { tracerProvider: provider, idGenerator'),
      await runBlock('traceReplay(bus, { tracerProvider: provider, idGenerator'),
    ];
    for (const { stderr } of runs) expect(stderr).toBe('');
    expect(runs[0]!.stdout).toMatch(/^execute_tool read_file [0-9a-f]{32} [0-9a-f]{16}\n$/);
    expect(runs[1]!.stdout).toBe(runs[0]!.stdout);
  });

  /** Runs the block that contains `marker` against the test's receiver; resolves its spans. */
  async function blockSpans(marker: string, spanCount: number): Promise<ReceivedSpan[]> {
    const { stderr } = await runBlock(
      marker,
      childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url }),
    );
    expect(stderr).toBe('');
    return testbed.receiver.waitForSpans(spanCount);
  }

  it('has an MCP block that runs: the served call under the client call, four progress events each', async () => {
    const spans = await blockSpans("name: 'count_files'", 2);
    const [client, served] = [...spans].sort((a, b) =>
      a.parentSpanId === '' ? -1 : b.parentSpanId === '' ? 1 : 0,
    );
    expect(served!.parentSpanId).toBe(client!.spanId);
    for (const span of [client!, served!]) {
      expect(span.name).toBe('execute_tool count_files');
      expect(span.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(4);
    }
    expect(client!.attributes['mcp.method.name']).toBe('tools/call');
  });

  it('has an MCP stdio block that runs against the reference server: its progress as stream events', async () => {
    // The program has exited: every span it exported, in-flight snapshots included, is here.
    const spans = await blockSpans("name: 'trigger-long-running-operation'", 1);
    const span = spans.find((each) => each.name === 'execute_tool trigger-long-running-operation');
    expect(span, spans.map((each) => each.name).join(', ')).toBeDefined();
    expect(span!.attributes).toMatchObject({
      'network.transport': 'pipe',
      'mcp.method.name': 'tools/call',
    });
    expect(
      span!.events
        .filter((event) => event.name === 'tool.stream.progress')
        .map((event) => event.attributes['tooltrace.stream.progress']),
    ).toEqual([0.25, 0.5, 0.75, 1]);
  });

  it('has an MCP tasks block that runs: one client span for the whole task, the served run under it', async () => {
    const spans = await blockSpans('InMemoryTaskStore', 2);
    const client = spans.find((span) => span.attributes['tooltrace.mcp.task.id'] !== undefined)!;
    const served = spans.find((span) => span !== client)!;
    expect([client.name, served.name]).toEqual(['execute_tool research', 'execute_tool research']);
    expect(served.parentSpanId).toBe(client.spanId);
    expect(client.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'tooltrace.mcp.task.status': 'completed',
    });
    const statuses = client.events
      .filter((event) => event.name === 'tool.stream.progress')
      .map((event) => String(event.attributes['tooltrace.stream.payload']));
    expect(statuses.some((status) => status.includes('writing'))).toBe(true);
    const shown = client.events.map((event) => event.attributes['tooltrace.mcp.task.status']);
    expect([shown[0], shown.at(-1)]).toEqual(['working', 'completed']);
    expect(served.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(3);
  });

  it('has an AI SDK block that runs: a span with the toolCallId and a partial per preliminary result', async () => {
    const [span] = await blockSpans('traceAiSdkTools(', 1);
    expect(span!.name).toBe('execute_tool forecast');
    expect(span!.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(span!.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(2);
  });

  it('has a LangChain block that runs: the turn, a chat per model call, the tool call with its stream', async () => {
    const spans = await blockSpans('new TooltraceCallbackHandler(bus)', 4);
    const turn = spans.find((span) => span.name === 'invoke_agent LangGraph')!;
    const call = spans.find((span) => span.name === 'execute_tool search_docs')!;
    expect(turn.attributes['gen_ai.conversation.id']).toBe('thread-1');
    expect(
      spans
        .filter((span) => span.parentSpanId === turn.spanId)
        .map((span) => span.name)
        .sort(),
    ).toEqual(['chat ScriptedModel', 'chat ScriptedModel', 'execute_tool search_docs']);
    expect(call.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.description': 'Searches the documentation',
    });
    expect(call.events.map((event) => event.name).sort()).toEqual([
      'tool.stream.partial',
      'tool.stream.partial',
      'tool.stream.progress',
    ]);
  });
});
