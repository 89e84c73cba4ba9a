import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { printable } from '../../../src/sidecar/pipeline/printable.js';
import { eventIdFor, eventLine } from '../journal-lines.js';
import { killSidecars, startSidecar } from '../sidecar-process.js';

describe('printable()', () => {
  it('escapes control characters, separators and bidirectional overrides', () => {
    expect(printable('a\x1b[2J\nb\r\tc\u0000\u007f\u009b\u2028\u202e\\d')).toBe(
      'a\\x1b[2J\\nb\\r\\tc\\x00\\x7f\\x9b\\u2028\\u202e\\\\d',
    );
  });

  it('keeps printable text as it is, non-ASCII letters included', () => {
    expect(printable('résumé 東京 "quoted" {json}')).toBe('résumé 東京 "quoted" {json}');
  });

  it('cuts long values and says how much was left out', () => {
    expect(printable('x'.repeat(50), 10)).toBe(`${'x'.repeat(10)}…(+40 chars)`);
  });
});

describe('tooltrace sidecar log lines', () => {
  let endpoint: Server | undefined;
  afterEach(async () => {
    await killSidecars();
    await new Promise((resolve) => endpoint?.close(resolve) ?? resolve(undefined));
    endpoint = undefined;
  });

  it('escapes a tool name with a terminal escape and a newline on stderr', async () => {
    // An OTLP endpoint that refuses every span for good: the sidecar names the span it lost.
    endpoint = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(400).end('bad span'));
    });
    await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as AddressInfo;
    const name = 'evil\x1b[2J\nFAKE: tooltrace sidecar: all good';
    const invoke = eventLine({
      type: 'tool.invoke',
      eventId: eventIdFor('evil-invoke'),
      seq: 1,
      payload: { id: 'tc_evil', name, arguments: {} },
    });
    const result = eventLine({
      type: 'tool.result',
      eventId: eventIdFor('evil-result'),
      parentId: eventIdFor('evil-invoke'),
      seq: 2,
      payload: { id: 'tc_evil', name, output: 'done' },
    });
    const sidecar = startSidecar(['--stdin', '--status-interval', '0', '--no-live-updates'], {
      input: `${invoke}\n${result}\n`,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    });
    await sidecar.exited;
    const stderr = sidecar.stderr();
    expect(stderr).toContain('execute_tool evil\\x1b[2J\\nFAKE: tooltrace sidecar: all good');
    expect(stderr).not.toContain('\x1b');
    expect(stderr.split('\n').filter((line) => line.startsWith('FAKE'))).toEqual([]);
  });
});
