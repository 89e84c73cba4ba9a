import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { forwardEvents, type ForwardError } from '../../src/forward/index.js';
import { VERSION } from '../../src/version.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startSidecar, useReceiver } from '../sidecar/sidecar-process.js';

/** Tool call `callId` with three stream events, `inside` run before its result. */
function runCall(
  bus: EventBus,
  callId: string,
  parentId = '',
  inside?: (invokeId: string) => void,
): string {
  const invoke = bus.emit(
    'tool.invoke',
    { id: callId, name: 'search', arguments: { query: callId } },
    { causation: { parentId } },
  );
  for (let sequence = 1; sequence <= 3; sequence += 1) {
    bus.emit(
      'tool.stream.partial',
      {
        tool_name: 'search',
        tool_id: callId,
        turn_id: 't1',
        sequence,
        payload: `part ${sequence}`,
      },
      { causation: { parentId: invoke.id } },
    );
  }
  inside?.(invoke.id);
  bus.emit(
    'tool.result',
    { id: callId, name: 'search', output: 'done' },
    { causation: { parentId: invoke.id } },
  );
  return invoke.id;
}

/** An outer call with a nested one inside it. */
function runNestedCalls(bus: EventBus): void {
  bus.setDefaultCausation({ sessionId: 'session-9', agentId: 'agent-9' });
  runCall(bus, 'outer', '', (outerId) => runCall(bus, 'inner', outerId));
}

function expectNested(spans: readonly ReceivedSpan[]): void {
  const byCall = new Map(spans.map((span) => [span.attributes['gen_ai.tool.call.id'], span]));
  const outer = byCall.get('outer')!;
  const inner = byCall.get('inner')!;
  expect(inner.parentSpanId).toBe(outer.spanId);
  expect(inner.traceId).toBe(outer.traceId);
  expect(outer.parentSpanId).toBe('');
  expect(inner.events).toHaveLength(3);
  expect(inner.attributes['gen_ai.conversation.id']).toBe('session-9');
}

describe('forwardEvents', () => {
  const testbed = useReceiver({ directory: 'tooltrace-forward-' });
  const servers: Server[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends bus events to a sidecar over HTTP, spans nested as the calls were', async () => {
    const sidecar = startSidecar(['--listen', '127.0.0.1:0', '--token', 'tkn'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const url = await sidecar.listenUrl();
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, { url, token: 'tkn', compress: true });

    runNestedCalls(bus);
    expect(await forwarder.close(10_000)).toBe(true);

    expectNested(await testbed.receiver.waitForSpans(2));
    expect(forwarder.stats()).toMatchObject({ sent: 10, dropped: 0, refused: 0, queued: 0 });
  });

  it('appends to a journal file that sidecar --stdin then exports', async () => {
    const file = join(testbed.directory, 'journal.jsonl');
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, { file });
    runNestedCalls(bus);
    expect(await forwarder.close()).toBe(true);

    const sidecar = startSidecar(['--stdin'], {
      input: readFileSync(file),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expectNested(testbed.receiver.spans);
  });

  it('drops and counts an event over maxLineBytes, and events past maxQueueBytes', async () => {
    const file = join(testbed.directory, 'bytes.jsonl');
    const bus = new EventBus();
    const told: ForwardError[] = [];
    const forwarder = forwardEvents(bus, {
      file,
      maxQueueBytes: 64 * 1024,
      batchSize: 1_000,
      onError: (error) => told.push(error),
    });
    bus.emit('tool.result', { id: 'tc_big', output: 'z'.repeat(2 * 1024 * 1024) });
    for (let index = 0; index < 10; index += 1) bus.emit('note', { text: 'y'.repeat(10_000) });
    // Not everything was taken: close() says so.
    expect(await forwarder.close()).toBe(false);

    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.every((line) => !line.includes('tc_big'))).toBe(true);
    // 64 KiB holds six lines of about 10 KB; the other four are dropped, with the big one.
    expect(lines).toHaveLength(6);
    expect(forwarder.stats()).toMatchObject({ sent: 6, dropped: 5 });
    expect(told.map((error) => error.message).join('\n')).toMatch(
      /tool.result is \d+ bytes encoded/,
    );
  });

  it('retries with growing waits, drops and counts past its queue, never throws', async () => {
    const attempts: number[] = [];
    let answer = 503;
    const server = createServer((request, response) => {
      attempts.push(Date.now());
      request.resume();
      request.on('end', () => response.writeHead(answer).end());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const bus = new EventBus();
    const errors: unknown[] = [];
    bus.subscribe('core.error', (event) => void errors.push(event.payload));
    const told: ForwardError[] = [];
    const forwarder = forwardEvents(bus, {
      url,
      batchSize: 10,
      maxQueueSize: 100,
      initialBackoffMs: 50,
      maxBackoffMs: 400,
      onError: (error) => told.push(error),
    });

    // Events keep coming during the outage: they must not cut the waits short.
    let emitted = 0;
    const emitting = setInterval(() => {
      for (let index = 0; index < 5; index += 1) bus.emit('note', { index: emitted++ });
    }, 5);
    bus.emit('note', { tooBig: 10n });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    clearInterval(emitting);

    expect(forwarder.stats().dropped).toBe(emitted - 100 + 1);
    const gaps = attempts.slice(1).map((time, index) => time - attempts[index]!);
    expect(attempts.length).toBeGreaterThanOrEqual(4);
    expect(attempts.length).toBeLessThan(12);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(errors).toEqual([]);

    expect(forwarder.stats().lastError).toBe('HTTP 503');
    answer = 200;
    // Everything queued went out, but not every event: the dropped ones make it false.
    expect(await forwarder.close(10_000)).toBe(false);
    expect(forwarder.stats()).toMatchObject({ sent: 100, dropped: emitted - 99, queued: 0 });
    // Still there once sends go through: it tells what went wrong, not whether it still does.
    expect(forwarder.stats().lastError).toBe('HTTP 503');
    expect(forwarder.stats().retries).toBe(attempts.length - 10);
    // Each kind told once, however often it happened.
    expect(told.map((error) => [error.kind, error.status, error.message])).toEqual([
      [
        'dropped',
        undefined,
        'event note cannot be encoded: TypeError: Do not know how to serialize a BigInt; dropping events, see stats().dropped',
      ],
      ['unavailable', 503, `the sidecar at ${url}/v1/events answered HTTP 503; retrying`],
    ]);
  });

  it('close() and flush() resolve false when the sidecar refuses, and onError hears why once', async () => {
    const sidecar = startSidecar(['--listen', '127.0.0.1:0', '--token', 'tkn'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    // A user who copied the whole endpoint: the forwarder appends /v1/events once more.
    const url = `${await sidecar.listenUrl()}/v1/events`;
    const bus = new EventBus();
    const told: ForwardError[] = [];
    const forwarder = forwardEvents(bus, {
      url,
      token: 'tkn',
      batchSize: 4,
      onError: (error) => told.push(error),
    });
    for (let index = 0; index < 11; index += 1) bus.emit('note', { index });

    expect(await forwarder.flush()).toBe(false);
    expect(await forwarder.close()).toBe(false);

    expect(forwarder.stats()).toMatchObject({ sent: 0, refused: 11, abandoned: 0, queued: 0 });
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      name: 'ForwardError',
      kind: 'refused',
      status: 404,
      events: 4,
    });
    expect(told[0]!.message).toBe(
      `the sidecar at ${url}/v1/events refused 4 events: HTTP 404: no route for POST /v1/events/v1/events (options.url is the sidecar's base URL, such as http://127.0.0.1:4319: /v1/events is appended)`,
    );
  });

  it('tells onError that nothing listens within a second, and once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const told: ForwardError[] = [];
      const bus = new EventBus();
      const forwarder = forwardEvents(bus, {
        url: 'http://127.0.0.1:1',
        onError: (error) => told.push(error),
      });
      bus.emit('note', { index: 0 });
      const began = Date.now();
      // The first send goes out after flushIntervalMs (100 ms); fetch fails without waiting.
      for (let step = 0; step < 20 && told.length === 0; step += 1) {
        await vi.advanceTimersByTimeAsync(50);
      }
      expect(Date.now() - began).toBeLessThanOrEqual(1000);
      expect(told.map((error) => error.kind)).toEqual(['unreachable']);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(forwarder.stats().retries).toBeGreaterThan(3);
      expect(told.map((error) => error.kind)).toEqual(['unreachable']);
      const closing = forwarder.close(1000);
      await vi.advanceTimersByTimeAsync(1000);
      expect(await closing).toBe(false);
      expect(told.map((error) => error.kind)).toEqual(['unreachable', 'gave-up']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('close() resolves within its timeout when the sidecar hangs, and counts what was left', async () => {
    const agents: string[] = [];
    const server = createServer((request) => {
      agents.push(request.headers['user-agent'] ?? '');
      request.resume(); // and never answer
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const bus = new EventBus();
    const told: ForwardError[] = [];
    const forwarder = forwardEvents(bus, {
      url,
      batchSize: 5,
      requestTimeoutMs: 60_000,
      onError: (error) => told.push(error),
    });
    for (let index = 0; index < 12; index += 1) bus.emit('note', { index });
    const began = Date.now();

    expect(await forwarder.close(300)).toBe(false);

    expect(Date.now() - began).toBeLessThan(10_000);
    expect(forwarder.stats()).toMatchObject({ sent: 0, queued: 0, abandoned: 12 });
    expect(agents[0]).toBe(`tooltrace/${VERSION}`);
    expect(told.map((error) => [error.kind, error.events])).toEqual([['gave-up', 12]]);
  });

  it('close() resolves within its timeout when nothing listens any more', async () => {
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, {
      url: 'http://127.0.0.1:1',
      initialBackoffMs: 10,
      onError: () => {},
    });
    for (let index = 0; index < 3; index += 1) bus.emit('note', { index });

    expect(await forwarder.close(300)).toBe(false);
    expect(forwarder.stats()).toMatchObject({ sent: 0, queued: 0, abandoned: 3 });
    expect(forwarder.stats().retries).toBeGreaterThan(0);
    // Why, as fetch tells it only in its cause (port 1 is one fetch refuses to use).
    expect(forwarder.stats().lastError).toBe('fetch failed: bad port');
  });

  it('refuses a URL no send could use, at once', () => {
    for (const url of ['notaurl', 'ftp://sidecar:4319', '']) {
      expect(() => forwardEvents(new EventBus(), { url }), url).toThrow(
        `options.url must be an http:// or https:// URL, got '${url}'`,
      );
    }
    expect(() =>
      forwardEvents(new EventBus(), { url: 'http://agent:s3cret@sidecar:4319' }),
    ).toThrow('options.url must not hold a user name or password: give the token as options.token');
  });

  it('waits until the HTTP date a 503 Retry-After names', async () => {
    // HTTP dates have whole seconds: the date about 1.5 s ahead, as it is sent.
    const retryAt = Math.floor((Date.now() + 1500) / 1000) * 1000;
    const attempts: number[] = [];
    const server = createServer((request, response) => {
      attempts.push(Date.now());
      request.resume();
      request.on('end', () =>
        attempts.length === 1
          ? response.writeHead(503, { 'Retry-After': new Date(retryAt).toUTCString() }).end()
          : response.writeHead(200).end(),
      );
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      initialBackoffMs: 10,
      onError: () => {},
    });
    bus.emit('note', { index: 0 });

    expect(await forwarder.close(10_000)).toBe(true);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!).toBeGreaterThanOrEqual(retryAt);
  });
});
