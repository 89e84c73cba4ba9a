import { describe, expect, it } from 'vitest';
import { parseSidecarArgs } from '../../src/cli/parse-sidecar-args.js';
import { ConfigurationError } from '../../src/errors/index.js';

describe('parseSidecarArgs()', () => {
  it('maps every flag onto its option', () => {
    const parsed = parseSidecarArgs([
      '--stdin',
      '--file',
      'a.jsonl',
      '--file',
      'b.jsonl',
      '--checkpoint',
      'cp.json',
      '--checkpoint-reset',
      '--listen',
      '127.0.0.1:4319',
      '--listen',
      '[::1]:4320',
      '--token',
      't',
      '--otlp-endpoint',
      'http://collector:4318',
      '--otlp-protocol',
      'http/json',
      '--otlp-header',
      'x-a=1',
      '--otlp-header',
      'X-B=two%20words',
      '--otlp-compression',
      'gzip',
      '--max-retry-after',
      '2m',
      '--service-name',
      'svc',
      '--capture-content',
      '--max-queue-spans',
      '1000',
      '--max-line-bytes',
      '4096',
      '--max-body-bytes',
      '65536',
      '--max-connections',
      '32',
      '--header-timeout',
      '2s',
      '--body-timeout',
      '5s',
      '--max-inflight-bytes',
      '1048576',
      '--idle-timeout',
      '2m',
      '--shutdown-timeout',
      '1.5s',
      '--status-interval',
      '0',
      '--out',
      'spans.jsonl',
      '--out-max-bytes',
      '1048576',
      '--out-backups',
      '0',
    ]);

    expect(parsed).toEqual({
      help: false,
      options: {
        stdin: true,
        files: ['a.jsonl', 'b.jsonl'],
        checkpoint: 'cp.json',
        checkpointReset: true,
        listen: ['127.0.0.1:4319', '[::1]:4320'],
        tokens: ['t'],
        otlpEndpoint: 'http://collector:4318',
        otlpProtocol: 'http/json',
        otlpHeaders: { 'x-a': '1', 'x-b': 'two words' },
        otlpCompression: 'gzip',
        maxRetryAfterMs: 120_000,
        serviceName: 'svc',
        captureContent: true,
        maxQueueSpans: 1000,
        maxLineBytes: 4096,
        maxBodyBytes: 65536,
        maxConnections: 32,
        headersTimeoutMs: 2000,
        bodyTimeoutMs: 5000,
        maxInflightBytes: 1048576,
        idleTimeoutMs: 120_000,
        shutdownTimeoutMs: 1500,
        statusIntervalMs: 0,
        out: 'spans.jsonl',
        outMaxBytes: 1048576,
        outBackups: 0,
      },
    });
  });

  it('reads a bare duration as milliseconds, and hours and sums of units', () => {
    expect(parseSidecarArgs(['--shutdown-timeout', '250'])).toEqual({
      help: false,
      options: { shutdownTimeoutMs: 250 },
    });
    const ms = (text: string) => {
      const parsed = parseSidecarArgs(['--idle-timeout', text]);
      return parsed.help ? undefined : parsed.options.idleTimeoutMs;
    };
    expect(ms('1h')).toBe(3_600_000);
    expect(ms('1m30s')).toBe(90_000);
    expect(ms('1h0m2s500ms')).toBe(3_602_500);
    expect(ms('1.5s')).toBe(1500);
    for (const bad of ['', '1m30', 'm', '1d', '30s1']) {
      expect(() => ms(bad), bad).toThrow(/--idle-timeout must be a duration/);
    }
    expect(() => ms('-1s')).toThrow(
      "--idle-timeout needs a value; '-1s' was taken for a flag (write --idle-timeout=-1s)",
    );
    expect(() => parseSidecarArgs(['--idle-timeout=-1s'])).toThrow(
      /--idle-timeout must be a duration .* got '-1s'/,
    );
  });

  it('answers --help and -h', () => {
    expect(parseSidecarArgs(['--help'])).toEqual({ help: true });
    expect(parseSidecarArgs(['-h', '--stdin'])).toEqual({ help: true });
  });

  it('refuses unknown flags, positionals and bad values, naming the flag', () => {
    const refusal = (argv: string[]) => {
      try {
        parseSidecarArgs(argv);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${argv.join(' ')}`);
    };

    expect(refusal(['--stidn'])).toMatch(/--stidn/);
    expect(refusal(['journal.jsonl'])).toMatch(/journal\.jsonl/);
    expect(refusal(['--max-queue-spans', '0'])).toMatch(
      /--max-queue-spans must be an integer >= 1/,
    );
    expect(refusal(['--max-line-bytes', 'lots'])).toMatch(/--max-line-bytes/);
    expect(refusal(['--idle-timeout', '5 minutes'])).toMatch(/--idle-timeout must be a duration/);
    expect(refusal(['--otlp-header', 'novalue'])).toMatch(/--otlp-header/);
    expect(refusal(['--exclude-events', 'plan.*,llm.*.chunk'])).toMatch(
      /--exclude-events takes event types or prefixes ending in \*, got 'llm\.\*\.chunk'/,
    );
    expect(refusal(['--out-backups', 'three'])).toMatch(/--out-backups must be an integer >= 0/);
    expect(refusal(['--trace-by', 'turn'])).toMatch(
      /--trace-by must be causal-root, session or call/,
    );
  });

  it('splits --exclude-events on commas, across repeats', () => {
    const parsed = parseSidecarArgs([
      '--exclude-events',
      'llm.stream.*, plan.*',
      '--exclude-events',
      'io.output',
    ]);
    expect(parsed.help === false && parsed.options.excludeEvents).toEqual([
      'llm.stream.*',
      'plan.*',
      'io.output',
    ]);
  });
});
