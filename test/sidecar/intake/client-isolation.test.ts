import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSidecar, type Sidecar } from '../../../src/sidecar/index.js';
import { ClientTokens, HttpIntake } from '../../../src/sidecar/intake/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../src/testing/index.js';
import { eventIdFor } from '../journal-lines.js';
import { parsePrometheusText } from '../prometheus-text.js';
import { finalSpans } from '../received-spans.js';
import { startSidecar, useReceiver } from '../sidecar-process.js';

const BASE_MS = Date.UTC(2026, 4, 1, 12, 0, 0);

/** One envelope line in session `s1`, `offsetMs` after a fixed time. */
function line(fields: {
  type: string;
  eventId: string;
  parentId?: string;
  offsetMs: number;
  payload: unknown;
}): string {
  return JSON.stringify({
    seq: fields.offsetMs,
    ts: new Date(BASE_MS + fields.offsetMs).toISOString(),
    type: fields.type,
    event_id: fields.eventId,
    parent_id: fields.parentId ?? '',
    source: 'search',
    session_id: 's1',
    agent_id: 'a1',
    depth: 0,
    payload: fields.payload,
  });
}

const invoke = (callId: string, eventId: string, offsetMs: number): string =>
  line({
    type: 'tool.invoke',
    eventId,
    offsetMs,
    payload: { id: callId, name: 'search', arguments: {} },
  });
const progress = (callId: string, invokeId: string, sequence: number, offsetMs: number): string =>
  line({
    type: 'tool.stream.progress',
    eventId: eventIdFor(`${invokeId}-progress-${sequence}`),
    parentId: invokeId,
    offsetMs,
    payload: { tool_name: 'search', tool_id: callId, sequence, progress: sequence / 10 },
  });
const result = (callId: string, eventId: string, invokeId: string, offsetMs: number): string =>
  line({
    type: 'tool.result',
    eventId,
    parentId: invokeId,
    offsetMs,
    payload: { id: callId, name: 'search', output: `done at ${offsetMs}` },
  });

describe('tooltrace sidecar --token NAME=SECRET (client isolation)', () => {
  let receiver: OtlpReceiver;
  let directory: string;
  let logs: string[];
  const running = new Set<Sidecar>();

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-clients-'));
    logs = [];
  });
  afterEach(async () => {
    await Promise.all([...running].map((sidecar) => sidecar.stop('test over', 2000)));
    running.clear();
    await receiver.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const listen = async (options: {
    tokens?: string[];
    tokenFile?: string;
    traceBy?: 'session';
  }): Promise<Sidecar> => {
    const sidecar = await runSidecar({
      ...options,
      listen: ['127.0.0.1:0'],
      otlpEndpoint: receiver.url,
      statusIntervalMs: 0,
      liveUpdates: false,
      env: {},
      log: (text) => logs.push(text),
    });
    running.add(sidecar);
    return sidecar;
  };
  const post = (sidecar: Sidecar, secret: string, lines: string[]) =>
    fetch(`${sidecar.urls[0]}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${secret}` },
      body: `${lines.join('\n')}\n`,
    });

  it('says at start that --token replaces TOOLTRACE_TOKEN, whose secret it then refuses', async () => {
    // A shell that exports TOOLTRACE_TOKEN for the agent and starts the sidecar with --token:
    // every request of the agent is refused, and the 401 alone does not say why.
    const sidecar = await runSidecar({
      tokens: ['from-flag'],
      listen: ['127.0.0.1:0'],
      otlpEndpoint: receiver.url,
      statusIntervalMs: 0,
      env: { TOOLTRACE_TOKEN: 'from-env' },
      log: (text) => logs.push(text),
    });
    running.add(sidecar);
    expect(logs).toContainEqual(
      'tooltrace sidecar: --token given, so TOOLTRACE_TOKEN is not used: a client sending its secret is refused',
    );
    expect((await post(sidecar, 'from-env', [])).status).toBe(401);
    expect(JSON.stringify(logs)).not.toContain('from-env');
  });

  it('keeps client B from ending client A’s call: both calls come out whole', async () => {
    const sidecar = await listen({ tokens: ['alice=secret-a', 'bob=secret-b'] });
    const aliceInvoke = eventIdFor('alice-invoke');
    expect(
      (
        await post(sidecar, 'secret-a', [
          invoke('tc_1', aliceInvoke, 0),
          progress('tc_1', aliceInvoke, 1, 10),
          progress('tc_1', aliceInvoke, 2, 20),
        ])
      ).status,
    ).toBe(200);
    // Bob claims Alice's call: her call id, her session, her invoke's event id as parent, and
    // her invoke's event id for a call of his own.
    expect(
      (
        await post(sidecar, 'secret-b', [
          result('tc_1', eventIdFor('bob-forged-result'), aliceInvoke, 30),
          invoke('tc_1', aliceInvoke, 40),
          progress('tc_1', aliceInvoke, 1, 50),
          result('tc_1', eventIdFor('bob-result'), aliceInvoke, 60),
        ])
      ).status,
    ).toBe(200);
    await post(sidecar, 'secret-a', [
      progress('tc_1', aliceInvoke, 3, 70),
      result('tc_1', eventIdFor('alice-result'), aliceInvoke, 100),
    ]);
    await sidecar.stop('test step');
    running.delete(sidecar);

    const spans = finalSpans(receiver.spans).filter(
      (span) => span.attributes['gen_ai.tool.call.id'] === 'tc_1',
    );
    // Alice's call is the one that started with her invoke (Bob's started 40 ms later).
    const alice = spans.filter((span) => span.startTimeUnixNano === BigInt(BASE_MS) * 1_000_000n);
    const bob = spans.filter((span) => span.attributes['tooltrace.client'] === 'bob');
    expect(alice).toHaveLength(1);
    expect(alice[0]!.attributes['tooltrace.stream.progress.count']).toBe(3);
    expect(alice[0]!.endTimeUnixNano - alice[0]!.startTimeUnixNano).toBe(100_000_000n);
    expect(alice[0]!.status.code).toBe(1);
    expect(alice[0]!.attributes['gen_ai.conversation.id']).toBe('s1');
    expect(alice[0]!.attributes['tooltrace.client']).toBe('alice');
    expect(alice[0]!.attributes['tooltrace.end_reason']).toBe('result');
    // Bob's events stayed Bob's: his spans carry his name and none of Alice's ids.
    expect(bob.length).toBeGreaterThanOrEqual(1);
    expect(bob.map((span) => span.spanId)).not.toContain(alice[0]!.spanId);
    expect(spans.every((span) => typeof span.attributes['tooltrace.client'] === 'string')).toBe(
      true,
    );
    // The scoped session ids the tracer keyed calls by never show: not in attributes, not in events.
    const shown = JSON.stringify(receiver.spans, (_key, value: unknown) =>
      typeof value === 'bigint' ? value.toString() : value,
    );
    expect(shown).not.toContain('\\u0001');
    expect(shown).toContain('"gen_ai.conversation.id":"s1"');
  });

  it('names a client’s session root span after the session it sent (--trace-by session)', async () => {
    const sidecar = await listen({ tokens: ['alice=secret-a'], traceBy: 'session' });
    const invokeId = eventIdFor('rooted');
    await post(sidecar, 'secret-a', [
      line({
        type: 'io.session.start',
        eventId: eventIdFor('session-start'),
        offsetMs: 0,
        payload: { session_id: 's1' },
      }),
      invoke('tc_1', invokeId, 1),
      result('tc_1', eventIdFor('rooted-result'), invokeId, 2),
    ]);
    await sidecar.stop('test step');
    running.delete(sidecar);

    const root = receiver.spans.find((span) => span.parentSpanId === '');
    expect(root?.name).toBe('session s1');
    expect(root?.attributes['tooltrace.client']).toBe('alice');
    expect(root?.attributes['gen_ai.conversation.id']).toBe('s1');
  });

  it('counts a client’s reused event ids and call ids in /metrics, and says so once', async () => {
    const sidecar = await listen({ tokens: ['alice=secret-a', 'bob=secret-b'] });
    const first = eventIdFor('first');
    await post(sidecar, 'secret-a', [
      invoke('tc_1', first, 0),
      result('tc_1', eventIdFor('r1'), first, 5),
    ]);
    // Bob's ids are his own: the same event id is no reuse.
    await post(sidecar, 'secret-b', [invoke('tc_1', first, 0)]);
    // Alice sends an event id again, and invokes tc_1 again in the same session.
    await post(sidecar, 'secret-a', [
      invoke('tc_1', first, 0),
      invoke('tc_1', eventIdFor('second'), 10),
      invoke('tc_1', eventIdFor('third'), 20),
    ]);
    const metrics = parsePrometheusText(await (await fetch(`${sidecar.urls[0]}/metrics`)).text());
    expect(metrics.value('tooltrace_ids_reused_total', { kind: 'event_id', client: 'alice' })).toBe(
      1,
    );
    expect(metrics.value('tooltrace_ids_reused_total', { kind: 'call_id', client: 'alice' })).toBe(
      3,
    );
    expect(
      metrics.samples.filter(
        (sample) => sample.name === 'tooltrace_ids_reused_total' && sample.labels.client === 'bob',
      ),
    ).toEqual([]);
    const reports = logs.filter((text) => text.includes('alice reused tool call id tc_1'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('of tool search in session s1');
    expect(logs.filter((text) => text.includes('alice reused event id'))).toEqual([
      expect.stringContaining(`alice reused event id ${first} (tool.invoke)`),
    ]);
  });

  it('does not count a stream event sent again, which changes nothing in the trace, but counts its call replayed', async () => {
    const sidecar = await listen({ tokens: ['alice=secret-a'] });
    const invokeId = eventIdFor('streamed');
    const stream = [progress('tc_5', invokeId, 1, 1), progress('tc_5', invokeId, 2, 2)];
    await post(sidecar, 'secret-a', [invoke('tc_5', invokeId, 0), ...stream]);
    // The same stream events again (same event ids): deduplicated by sequence, not counted.
    await post(sidecar, 'secret-a', stream);
    const reusedEventIds = async (): Promise<number[]> =>
      parsePrometheusText(await (await fetch(`${sidecar.urls[0]}/metrics`)).text())
        .samples.filter(
          (sample) =>
            sample.name === 'tooltrace_ids_reused_total' && sample.labels.kind === 'event_id',
        )
        .map((sample) => sample.value);
    expect(await reusedEventIds()).toEqual([]);
    // The whole call replayed: its invoke's event id is counted.
    await post(sidecar, 'secret-a', [invoke('tc_5', invokeId, 0), ...stream]);
    expect(await reusedEventIds()).toEqual([1]);
  });

  it('reads --token-file again on reload: new tokens in, removed ones out, a bad file ignored', async () => {
    const tokenFile = join(directory, 'tokens');
    writeFileSync(tokenFile, '# clients\nalice=secret-a\n\n');
    const sidecar = await listen({ tokenFile });
    const lines = [invoke('tc_9', eventIdFor('nine'), 0)];
    expect((await post(sidecar, 'secret-a', lines)).status).toBe(200);
    expect((await post(sidecar, 'secret-c', lines)).status).toBe(401);

    writeFileSync(tokenFile, 'carol=secret-c\n');
    await sidecar.reloadTokens();
    expect((await post(sidecar, 'secret-c', lines)).status).toBe(200);
    expect((await post(sidecar, 'secret-a', lines)).status).toBe(401);

    writeFileSync(tokenFile, 'carol=secret-c\njust-a-secret-without-a-name\n');
    await sidecar.reloadTokens();
    expect(logs.join('\n')).toMatch(/tokens not reloaded.*line 2: expected NAME=SECRET/);
    expect(logs.join('\n')).not.toContain('just-a-secret-without-a-name');
    expect((await post(sidecar, 'secret-c', lines)).status).toBe(200);
  });
});

describe('HttpIntake', () => {
  describe('/metrics beyond loopback', () => {
    it('needs a token for /metrics while /healthz stays open', async () => {
      const intake = await HttpIntake.start({
        host: '127.0.0.1',
        port: 0,
        tokens: await ClientTokens.load([{ name: 'scraper', secret: 'scrape-me' }]),
        protectMetrics: true,
        ingest: () => Promise.resolve({ accepted: 0, rejected: {} }),
        isFull: () => false,
        isReady: () => true,
        renderMetrics: () => 'tooltrace_up 1\n',
      });
      try {
        expect((await fetch(`${intake.url}/healthz`)).status).toBe(200);
        expect((await fetch(`${intake.url}/readyz`)).status).toBe(200);
        const anonymous = await fetch(`${intake.url}/metrics`);
        expect(anonymous.status).toBe(401);
        const scraper = await fetch(`${intake.url}/metrics`, {
          headers: { authorization: 'Bearer scrape-me' },
        });
        expect(scraper.status).toBe(200);
        expect(await scraper.text()).toBe('tooltrace_up 1\n');
      } finally {
        await intake.close(0);
      }
    });
  });
});

describe('tooltrace sidecar --token-file (the process)', () => {
  const testbed = useReceiver({ directory: 'tooltrace-token-file-' });

  it('reads the token file again on SIGHUP and keeps running', async () => {
    const tokenFile = join(testbed.directory, 'tokens');
    writeFileSync(tokenFile, 'alice=secret-a\n');
    const sidecar = startSidecar(
      ['--listen', '127.0.0.1:0', '--token-file', tokenFile, '--status-interval', '0'],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url } },
    );
    const url = await sidecar.listenUrl();
    const send = (secret: string) =>
      fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${secret}` },
        body: `${invoke('tc_1', eventIdFor('hup'), 0)}\n`,
      });
    expect((await send('secret-b')).status).toBe(401);

    writeFileSync(tokenFile, 'alice=secret-a\nbob=secret-b\n');
    sidecar.child.kill('SIGHUP');
    await sidecar.waitForStderr(/tokens reloaded; 2 accepted/);
    expect((await send('secret-b')).status).toBe(200);
    expect(sidecar.child.exitCode).toBeNull();
  });
});
