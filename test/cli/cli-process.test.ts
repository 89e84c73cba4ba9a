import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv, ROOT, runCli } from '../demo/cli-process.js';

const run = promisify(execFile);

describe('tooltrace (the built CLI, as a user runs it)', () => {
  describe('COMMAND --help', () => {
    it.each([
      ['demo', /^Usage: tooltrace demo \[options\]\n[\s\S]*--out FILE/],
      ['view', /^Usage: tooltrace view FILE \[options\]\n[\s\S]*--no-color/],
      ['sidecar', /^Usage: tooltrace sidecar \[sources\] \[options\]\n[\s\S]*--listen HOST:PORT/],
    ])('%s --help prints its usage, exits 0 and starts nothing', async (command, usage) => {
      for (const flag of ['--help', '-h']) {
        const result = await runCli([command, flag]);
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(usage);
        // No demo ran (it draws a trace) and no sidecar started (it logs to stderr).
        expect(result.stdout).not.toMatch(/^trace [0-9a-f]{32}/m);
      }
    });

    it('tooltrace --help lists every command and how to get its options', async () => {
      const result = await runCli(['--help']);
      expect(result.code).toBe(0);
      for (const command of ['demo', 'view', 'sidecar']) {
        expect(result.stdout).toMatch(new RegExp(`tooltrace ${command} `));
      }
      expect(result.stdout).toMatch(/tooltrace COMMAND --help/);
    });
  });

  describe('a bad flag', () => {
    it.each([
      [
        ['demo', '--fsat'],
        /^tooltrace demo: unknown flag --fsat; accepted: --fast, --no-color, --out FILE, --forward URL, --help\n$/,
      ],
      [['demo', '--out'], /^tooltrace demo: --out needs a value \(tooltrace demo --help\)\n$/],
      [
        ['demo', '--fast=yes'],
        /^tooltrace demo: --fast takes no value \(tooltrace demo --help\)\n$/,
      ],
      [['demo', 'now'], /^tooltrace demo: unexpected argument 'now' \(tooltrace demo --help\)\n$/],
      [
        ['view', '--colour', 'trace.json'],
        /^tooltrace view: unknown flag --colour; accepted: --no-color, --trace-by MODE, --all, --trace ID, --session ID, --tool NAME, --errors, --slowest N, --html FILE, --help\n$/,
      ],
      [
        ['sidecar', '--stdn'],
        /^tooltrace sidecar: unknown flag --stdn; accepted: --stdin, --file PATH, [^\n]*--status-interval DURATION, --help\n$/,
      ],
      [
        ['sidecar', '--stdin', '--idle-timeout', 'soon'],
        /^tooltrace sidecar: --idle-timeout must be a duration such as 500ms, 10s, 2m, 1h or 1m30s, got 'soon'\n$/,
      ],
    ])('%j is named on one line with what is accepted, exit 2', async (argv, message) => {
      const result = await runCli(argv);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  });

  it('loads no OpenTelemetry package for --help or --version: commands load when they run', async () => {
    const script = `
      import { createRequire } from 'node:module';
      import { PassThrough } from 'node:stream';
      const { runCli } = await import('./dist/cli/run-cli.js');
      const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
      await runCli(['--version'], streams);
      await runCli(['demo', '--help'], streams);
      await runCli(['view', '--help'], streams);
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify(loaded.filter((path) => path.includes('@opentelemetry'))));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      env: childEnv(),
    });
    expect(JSON.parse(stdout)).toEqual([]);
  });
});
