import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBus } from '../src/bus/index.js';
import { TOOL_RESULT, type ToolResult } from '../src/events/index.js';
import { ROOT } from '../test/demo/cli-process.js';
import {
  startConformanceServer,
  startSdkAloneServer,
  type ConformanceServer,
  type SdkLine,
} from './conformance-servers.js';

const run = promisify(execFile);

/**
 * The conformance suite's command, installed by `scripts/conformance.sh` (`npm run
 * test:conformance`), which runs this file under Node 24. Missing, every test fails saying so:
 * the suite is never skipped.
 */
const CLI = process.env.MCP_CONFORMANCE_CLI;
/** The 0.2.0 prerelease, which has the MCP 2026-07-28 requirements (installed beside 0.1.16). */
const CLI_2026 = process.env.MCP_CONFORMANCE_CLI_2026;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** One check of a scenario's `checks.json`. */
interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

let output: string;
beforeAll(() => {
  output = mkdtempSync(join(tmpdir(), 'tooltrace-conformance-'));
});
afterAll(() => rmSync(output, { recursive: true, force: true }));

/** Runs the suite's command; resolves with the checks it wrote and its exit code. */
async function conformance(
  args: string[],
  cli: string | undefined = CLI,
): Promise<{ checks: Check[]; code: number }> {
  if (cli === undefined) {
    throw new Error(
      'MCP_CONFORMANCE_CLI(_2026) is not set: run the suite with npm run test:conformance',
    );
  }
  if (NODE_MAJOR < 22) {
    throw new Error(`the conformance suite needs Node 22 or later, this is ${process.version}`);
  }
  const outputDir = mkdtempSync(join(output, 'run-'));
  let code = 0;
  try {
    await run(process.execPath, [cli, ...args, '--output-dir', outputDir], {
      cwd: ROOT,
      timeout: 90_000,
    });
  } catch (error) {
    code = (error as { code?: number }).code ?? 1;
  }
  const checks = readdirSync(outputDir).flatMap(
    (folder) => JSON.parse(readFileSync(join(outputDir, folder, 'checks.json'), 'utf8')) as Check[],
  );
  return { checks, code };
}

/** Each check's id and status, failures with their message, to read in an assertion diff. */
function outcomes(checks: readonly Check[]): string[] {
  return checks
    .filter((check) => check.status !== 'INFO')
    .map((check) =>
      check.status === 'SUCCESS'
        ? `${check.id}: SUCCESS`
        : `${check.id}: ${check.status} ${check.errorMessage ?? ''}`,
    );
}

/** The server scenarios of the suite's tools: the handshake, ping, listing and each call. */
const SERVER_SCENARIOS: readonly [scenario: string, tool: string | undefined][] = [
  ['server-initialize', undefined],
  ['ping', undefined],
  ['tools-list', undefined],
  ['tools-call-simple-text', 'test_simple_text'],
  ['tools-call-image', 'test_image_content'],
  ['tools-call-audio', 'test_audio_content'],
  ['tools-call-embedded-resource', 'test_embedded_resource'],
  ['tools-call-mixed-content', 'test_multiple_content_types'],
  ['tools-call-error', 'test_error_handling'],
  ['tools-call-with-progress', 'test_tool_with_progress'],
];

describe.each<SdkLine>(['1.x', '2.x'])(
  'ChannelTools served by serveMcpTools on the %s McpServer over Streamable HTTP',
  (line) => {
    const bus = new EventBus();
    const results: ToolResult[] = [];
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    let server: ConformanceServer;
    beforeAll(async () => {
      server = await startConformanceServer(line, bus);
    });
    afterAll(() => server.close());

    it.each(SERVER_SCENARIOS)('passes the suite’s %s scenario', async (scenario, tool) => {
      results.length = 0;
      const { checks, code } = await conformance([
        'server',
        '--url',
        server.url,
        '--scenario',
        scenario,
      ]);
      expect(outcomes(checks)).toEqual([`${scenario}: SUCCESS`]);
      expect(code).toBe(0);
      if (tool !== undefined) {
        // The call ran as a tooltrace tool call: one tool.result on the server's bus.
        expect(results.map((result) => [result.name, result.error !== undefined])).toEqual([
          [tool, tool === 'test_error_handling'],
        ]);
      }
    });
  },
);

describe.each<SdkLine>(['1.x', '2.x'])('an mcpTools client on the %s Client', (line) => {
  const command = [
    process.execPath,
    '--import',
    'tsx',
    'test-conformance/conformance-client.ts',
    line,
  ].join(' ');

  it.each(['initialize', 'tools_call'])(
    'passes the suite’s %s client scenario',
    async (scenario) => {
      const { checks, code } = await conformance([
        'client',
        '--command',
        command,
        '--scenario',
        scenario,
      ]);
      const judged = outcomes(checks);
      expect(judged.length).toBeGreaterThan(0);
      expect(judged.filter((outcome) => !outcome.endsWith(': SUCCESS'))).toEqual([]);
      expect(code).toBe(0);
    },
  );
});

/**
 * The server scenarios MCP 2026-07-28 requires (the suite's `--requirements 2026-07-28` list)
 * that a tools-only server can pass: all but those of prompts, resources and completion (which
 * serveMcpTools does not serve). With the number of tooltrace tool calls each makes: a call that
 * took several requests (input rounds) is still one call. A scenario passes as the suite scores
 * it: no check FAILED (server-stateless WARNs that no tools/list_changed arrives on a
 * subscription, a SHOULD of a server whose tool list never changes).
 */
const SERVER_SCENARIOS_2026: readonly [
  scenario: string,
  tool: string | undefined,
  calls: number,
][] = [
  ['server-stateless', undefined, -1],
  ['tools-list', undefined, 0],
  ['tools-call-simple-text', 'test_simple_text', 1],
  ['tools-call-image', 'test_image_content', 1],
  ['tools-call-audio', 'test_audio_content', 1],
  ['tools-call-embedded-resource', 'test_embedded_resource', 1],
  ['tools-call-mixed-content', 'test_multiple_content_types', 1],
  ['tools-call-error', 'test_error_handling', 1],
  ['tools-call-with-progress', 'test_tool_with_progress', 1],
  ['server-sse-multiple-streams', undefined, -1],
  ['sep-2164-resource-not-found', undefined, 0],
  ['dns-rebinding-protection', undefined, -1],
  ['input-required-result-basic-elicitation', 'test_input_required_result_elicitation', 1],
  ['input-required-result-basic-sampling', 'test_input_required_result_sampling', 1],
  ['input-required-result-basic-list-roots', 'test_input_required_result_list_roots', 1],
  ['input-required-result-request-state', 'test_input_required_result_request_state', 1],
  [
    'input-required-result-multiple-input-requests',
    'test_input_required_result_multiple_inputs',
    1,
  ],
  ['input-required-result-multi-round', 'test_input_required_result_multi_round', 1],
  ['input-required-result-missing-input-response', undefined, -1],
  ['input-required-result-result-type', undefined, -1],
  ['input-required-result-unsupported-methods', undefined, -1],
  ['input-required-result-tampered-state', undefined, -1],
  ['input-required-result-capability-check', undefined, -1],
  ['input-required-result-ignore-extra-params', undefined, -1],
  ['input-required-result-validate-input', undefined, -1],
];

describe('ChannelTools served by serveMcpTools on the 2.x McpServer, MCP 2026-07-28', () => {
  const bus = new EventBus();
  const results: ToolResult[] = [];
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
  let server: ConformanceServer;
  beforeAll(async () => {
    server = await startConformanceServer('2.x', bus);
  });
  afterAll(() => server.close());

  it.each(SERVER_SCENARIOS_2026)(
    'passes the suite’s %s scenario',
    async (scenario, tool, calls) => {
      results.length = 0;
      const { checks, code } = await conformance(
        ['server', '--url', server.url, '--scenario', scenario, '--spec-version', '2026-07-28'],
        CLI_2026,
      );
      const judged = outcomes(checks);
      expect(judged.length).toBeGreaterThan(0);
      expect(judged.filter((outcome) => outcome.includes(': FAILURE'))).toEqual([]);
      expect(code).toBe(0);
      if (calls >= 0) {
        expect(results.filter((result) => result.name === tool)).toHaveLength(calls);
        expect(results).toHaveLength(calls);
      }
    },
  );
});

/**
 * The baseline: the same tools registered on the 2.x `McpServer` alone (no tooltrace) pass the
 * same tools-scope scenarios, so "through serveMcpTools" and "on the SDK alone" are one list. (Of
 * the 37 server scenarios the 2026-07-28 requirements list, the other 12 need prompts, resources
 * or completions: neither server has them.)
 */
describe('the same tools on the 2.x McpServer alone (no tooltrace), MCP 2026-07-28', () => {
  let server: ConformanceServer;
  beforeAll(async () => {
    server = await startSdkAloneServer();
  });
  afterAll(() => server.close());

  it.each(SERVER_SCENARIOS_2026.map(([scenario]) => scenario))(
    'passes the suite’s %s scenario',
    async (scenario) => {
      const { checks, code } = await conformance(
        ['server', '--url', server.url, '--scenario', scenario, '--spec-version', '2026-07-28'],
        CLI_2026,
      );
      const judged = outcomes(checks);
      expect(judged.length).toBeGreaterThan(0);
      expect(judged.filter((outcome) => outcome.includes(': FAILURE'))).toEqual([]);
      expect(code).toBe(0);
    },
  );
});

/**
 * The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663; the suite runs them
 * unscored, `--force` at 2026-07-28), tasks-mrtr-composition among them: its tool asks as its
 * first act, so its question is an input_required round of tools/call and the task comes after.
 */
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

describe('ChannelTools served as MCP 2026-07-28 tasks (the extension) on the 2.x McpServer', () => {
  let server: ConformanceServer;
  beforeAll(async () => {
    server = await startConformanceServer('2.x', new EventBus());
  });
  afterAll(() => server.close());

  it.each(TASK_SCENARIOS)('passes the suite’s %s scenario', async (scenario) => {
    const { checks, code } = await conformance(
      [
        'server',
        '--url',
        server.url,
        '--scenario',
        scenario,
        '--spec-version',
        '2026-07-28',
        '--force',
      ],
      CLI_2026,
    );
    expect(outcomes(checks).filter((outcome) => outcome.includes(': FAILURE'))).toEqual([]);
    expect(code).toBe(0);
  });
});

describe('an mcpTools client on the 2.x Client, MCP 2026-07-28', () => {
  const command = [
    process.execPath,
    '--import',
    'tsx',
    'test-conformance/conformance-client.ts',
    '2026',
  ].join(' ');

  /** The 2026-07-28 client scenarios without authorization (json-schema-2020-12-preservation,
   * added after the revision shipped, asks a client to echo a tool's schema back: not scored). */
  it.each([
    'tools_call',
    'request-metadata',
    'sep-2322-client-request-state',
    'http-standard-headers',
    'http-custom-headers',
    'http-invalid-tool-headers',
    'json-schema-ref-no-deref',
  ])('passes the suite’s %s client scenario', async (scenario) => {
    const { checks, code } = await conformance(
      ['client', '--command', command, '--scenario', scenario, '--spec-version', '2026-07-28'],
      CLI_2026,
    );
    const judged = outcomes(checks);
    expect(judged.length).toBeGreaterThan(0);
    expect(judged.filter((outcome) => !/: (SUCCESS|SKIPPED)/.test(outcome))).toEqual([]);
    expect(code).toBe(0);
  });
});
