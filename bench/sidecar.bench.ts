/**
 * How fast `tooltrace sidecar` turns a journal into exported spans, against the floor and a
 * straightforward pipeline, side by side in one run on the same NDJSON:
 *
 * - `JSON.parse` alone: the floor, no span work at all;
 * - straightforward: parse → SDK spans (BasicTracerProvider, BatchSpanProcessor with its queue
 *   raised so it does not drop) → stock OTLP/HTTP protobuf exporter → the test receiver;
 * - `tooltrace sidecar --stdin < journal.jsonl` as a child process (the real CLI) → the test
 *   receiver, timed from spawn to exit (which comes after the last export was accepted) minus
 *   the same command over an empty file, so Node and tsx starting up are not counted.
 *
 *   npx tsx bench/sidecar.bench.ts [calls]
 *
 * Each tool call is 12 lines (invoke, 10 stream events, result) of about 345 bytes. The real
 * test receiver runs in a worker thread, so decoding what arrives costs neither pipeline its
 * own thread; every run must deliver every span (counted by distinct span id) or the bench
 * fails. Rounds alternate between the rows; the median round is reported.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startOtlpReceiver } from '../src/testing/index.js';
import { journalText } from '../test/sidecar/journal-lines.js';

const CALLS = Number(process.argv[2] ?? 25_000);
const LINES = CALLS * 12;
const ROUNDS = 5;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
let EMPTY_FILE = '';

/** What the receiver worker is asked and answers. */
type Request =
  { id: number; kind: 'url' | 'clear' | 'close' } | { id: number; kind: 'wait'; spans: number };
interface Answer {
  id: number;
  url?: string;
  spans?: number;
  distinct?: number;
  error?: string;
}

/** The main thread's handle on the receiver worker. */
class ReceiverWorker {
  // The worker loads this same file through tsx, as the main thread was (workers do not
  // inherit the loader that `npx tsx` registered).
  readonly #worker = new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`,
    { eval: true },
  );
  #next = 0;
  readonly #pending = new Map<number, (answer: Answer) => void>();

  constructor() {
    this.#worker.on('message', (answer: Answer) => {
      this.#pending.get(answer.id)?.(answer);
      this.#pending.delete(answer.id);
    });
  }

  ask(request: Omit<Request, 'id'> & { spans?: number }): Promise<Answer> {
    const id = (this.#next += 1);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (answer) =>
        answer.error === undefined ? resolve(answer) : reject(new Error(answer.error)),
      );
      this.#worker.postMessage({ id, ...request });
    });
  }

  /** Waits for `spans` spans; returns how many arrived and how many distinct span ids. */
  async expect(spans: number): Promise<{ spans: number; distinct: number }> {
    const answer = await this.ask({ kind: 'wait', spans });
    return { spans: answer.spans!, distinct: answer.distinct! };
  }
}

interface Row {
  name: string;
  linesPerSecond: number[];
  delivered: string;
}

async function main(): Promise<void> {
  const text = journalText({ calls: CALLS });
  const bytes = Buffer.from(text);
  const directory = mkdtempSync(join(tmpdir(), 'tooltrace-bench-'));
  const journal = join(directory, 'journal.jsonl');
  EMPTY_FILE = join(directory, 'empty.jsonl');
  writeFileSync(journal, bytes);
  writeFileSync(EMPTY_FILE, '');
  const lines = text.slice(0, -1).split('\n');
  console.log(
    `sidecar bench: ${CALLS} tool calls, ${LINES} lines of ${(bytes.length / LINES).toFixed(0)} bytes (${(bytes.length / 1e6).toFixed(1)} MB), Node ${process.version}`,
  );
  const receiver = new ReceiverWorker();
  const url = (await receiver.ask({ kind: 'url' })).url!;

  const floor: Row = { name: 'JSON.parse alone (floor)', linesPerSecond: [], delivered: '-' };
  const plain: Row = { name: 'straightforward SDK pipeline', linesPerSecond: [], delivered: '' };
  const sidecar: Row = { name: 'tooltrace sidecar --stdin', linesPerSecond: [], delivered: '' };
  for (let round = 0; round < ROUNDS; round += 1) {
    floor.linesPerSecond.push(parseAll(lines));

    await receiver.ask({ kind: 'clear' });
    const straightforward = await runStraightforward(bytes, url, receiver);
    plain.linesPerSecond.push(straightforward.linesPerSecond);
    plain.delivered = `${straightforward.distinct}/${CALLS} spans`;

    await receiver.ask({ kind: 'clear' });
    const child = await runSidecar(journal, url, receiver);
    sidecar.linesPerSecond.push(child.linesPerSecond);
    sidecar.delivered = `${child.distinct}/${CALLS} spans`;
    console.log(
      `  round ${round + 1}: floor ${format(floor.linesPerSecond[round]!)}, straightforward ${format(straightforward.linesPerSecond)}, sidecar ${format(child.linesPerSecond)} lines/s`,
    );
  }
  await receiver.ask({ kind: 'close' });
  rmSync(directory, { recursive: true, force: true });

  const rows = [floor, plain, sidecar];
  console.log('');
  console.log(
    `${'pipeline'.padEnd(32)}${'lines/s'.padStart(12)}${'calls/s'.padStart(11)}  delivered`,
  );
  for (const row of rows) {
    const rate = median(row.linesPerSecond);
    console.log(
      `${row.name.padEnd(32)}${format(rate).padStart(12)}${format(rate / 12).padStart(11)}  ${row.delivered}`,
    );
  }
  const ratio = (left: Row, right: Row) =>
    (median(left.linesPerSecond) / median(right.linesPerSecond)).toFixed(2);
  console.log('');
  console.log(`sidecar / straightforward: ${ratio(sidecar, plain)}x (target >= 1, goal 2)`);
  console.log(`sidecar / floor:           ${ratio(sidecar, floor)}x`);
  console.log(`straightforward / floor:   ${ratio(plain, floor)}x`);
}

/** Lines per second of `JSON.parse` over every line. */
function parseAll(lines: readonly string[]): number {
  let keep = 0;
  const started = performance.now();
  for (const line of lines) keep += (JSON.parse(line) as { seq: number }).seq & 1;
  const seconds = (performance.now() - started) / 1000;
  if (keep < 0) console.log(keep);
  return lines.length / seconds;
}

interface Envelope {
  seq: number;
  ts: string;
  type: string;
  event_id: string;
  source: string;
  session_id: string;
  agent_id: string;
  depth: number;
  payload: {
    ID?: string;
    Name?: string;
    TurnID?: string;
    Error?: string;
    tool_id?: string;
    sequence?: number;
    progress?: number;
    payload?: string;
  };
}

/** What the straightforward pipeline keeps per open call to write the same summary. */
interface OpenCall {
  span: Span;
  startMs: number;
  partials: number;
  progresses: number;
  partialBytes: number;
  firstPartialMs: number;
  lastProgress: number;
}

/**
 * Parse → SDK spans → stock OTLP protobuf exporter, as someone would write it in an afternoon:
 * a span per call with the same attributes and span events as the sidecar writes, the queue
 * raised so a burst does not drop. Reads the journal in 64 KB chunks, as from a file, so the
 * processor gets event-loop turns.
 */
async function runStraightforward(
  bytes: Buffer,
  url: string,
  receiver: ReceiverWorker,
): Promise<{ linesPerSecond: number; distinct: number }> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'straightforward' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces` }), {
        maxQueueSize: CALLS * 2,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 50,
      }),
    ],
  });
  const tracer = provider.getTracer('straightforward');
  const open = new Map<string, OpenCall>();
  const started = performance.now();
  let carry = '';
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) {
    const chunk =
      carry + bytes.toString('utf8', offset, Math.min(offset + 64 * 1024, bytes.length));
    const lines = chunk.split('\n');
    carry = lines.pop()!;
    for (const line of lines) handleLine(JSON.parse(line) as Envelope, tracer, open);
    // A file read hands the loop back between chunks.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const arrived = await receiver.expect(CALLS);
  const seconds = (performance.now() - started) / 1000;
  await provider.shutdown();
  if (arrived.distinct !== CALLS)
    throw new Error(`straightforward: ${arrived.distinct} of ${CALLS} spans arrived`);
  return { linesPerSecond: LINES / seconds, distinct: arrived.distinct };
}

function handleLine(event: Envelope, tracer: Tracer, open: Map<string, OpenCall>): void {
  const payload = event.payload;
  const time = new Date(event.ts);
  if (event.type === 'tool.invoke') {
    const span = tracer.startSpan(`execute_tool ${payload.Name!}`, {
      kind: SpanKind.INTERNAL,
      startTime: time,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': payload.Name!,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': payload.ID!,
        'gen_ai.conversation.id': event.session_id,
        'gen_ai.agent.id': event.agent_id,
        'tooltrace.depth': event.depth,
        'tooltrace.event.id': event.event_id,
        'tooltrace.event.sequence': event.seq,
        'tooltrace.event.source': event.source,
        'tooltrace.turn.id': payload.TurnID!,
      },
    });
    open.set(payload.ID!, {
      span,
      startMs: time.getTime(),
      partials: 0,
      progresses: 0,
      partialBytes: 0,
      firstPartialMs: -1,
      lastProgress: -1,
    });
  } else if (event.type === 'tool.result') {
    const call = open.get(payload.ID!);
    if (call === undefined) return;
    open.delete(payload.ID!);
    call.span.setAttributes({
      'tooltrace.stream.partial.count': call.partials,
      'tooltrace.stream.progress.count': call.progresses,
      'tooltrace.stream.partial.bytes': call.partialBytes,
      'tooltrace.stream.events.recorded': call.partials + call.progresses,
      'tooltrace.stream.events.coalesced': 0,
      'tooltrace.stream.time_to_first_partial_ms': call.firstPartialMs,
      'tooltrace.stream.last_progress': call.lastProgress,
      'tooltrace.end_reason': 'result',
      'tooltrace.result.event.id': event.event_id,
    });
    call.span.setStatus({ code: payload.Error ? SpanStatusCode.ERROR : SpanStatusCode.OK });
    call.span.end(time);
  } else {
    const call = open.get(payload.tool_id!);
    if (call === undefined) return;
    if (event.type === 'tool.stream.progress') {
      call.progresses += 1;
      call.lastProgress = payload.progress!;
      call.span.addEvent(
        event.type,
        {
          'tooltrace.stream.sequence': payload.sequence!,
          'tooltrace.stream.progress': payload.progress!,
        },
        time,
      );
    } else {
      call.partials += 1;
      call.partialBytes += Buffer.byteLength(payload.payload!);
      if (call.firstPartialMs < 0) call.firstPartialMs = time.getTime() - call.startMs;
      call.span.addEvent(
        event.type,
        {
          'tooltrace.stream.sequence': payload.sequence!,
          'tooltrace.stream.payload.bytes': Buffer.byteLength(payload.payload!),
        },
        time,
      );
    }
  }
}

/**
 * The real CLI as a child process, `tooltrace sidecar --stdin < journal.jsonl` as a user runs
 * it, timed from spawn to exit (which follows the last accepted export) minus the same command's
 * time over empty input (Node and tsx starting, the sidecar starting and stopping).
 */
async function runSidecar(
  journal: string,
  url: string,
  receiver: ReceiverWorker,
): Promise<{ linesPerSecond: number; distinct: number }> {
  const empty = await timeCli(EMPTY_FILE, url);
  const full = await timeCli(journal, url);
  const arrived = await receiver.expect(CALLS);
  if (arrived.distinct !== CALLS)
    throw new Error(`sidecar: ${arrived.distinct} of ${CALLS} spans arrived`);
  return { linesPerSecond: LINES / (full - empty), distinct: arrived.distinct };
}

/** Seconds `tooltrace sidecar --stdin < input` takes, spawn to exit. */
async function timeCli(input: string, url: string): Promise<number> {
  const stdin = openSync(input, 'r');
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'sidecar', '--stdin', '--status-interval', '0'],
    {
      cwd: ROOT,
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: url },
      stdio: [stdin, 'inherit', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  closeSync(stdin);
  if (code !== 0) throw new Error(`the sidecar exited with ${code}:\n${stderr}`);
  return seconds;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function format(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

// Run last, once every declaration above exists.
if (!isMainThread) {
  // The receiver worker: the real test receiver, answering the main thread's questions.
  const receiver = await startOtlpReceiver();
  parentPort!.on('message', (request: Request) => {
    const answer = (fields: Omit<Answer, 'id'>) =>
      parentPort!.postMessage({ id: request.id, ...fields });
    if (request.kind === 'url') answer({ url: receiver.url });
    else if (request.kind === 'clear') {
      receiver.clear();
      answer({});
    } else if (request.kind === 'wait') {
      receiver.waitForSpans(request.spans, 120_000).then(
        (spans) =>
          answer({ spans: spans.length, distinct: new Set(spans.map((span) => span.spanId)).size }),
        (error: unknown) => answer({ error: String(error) }),
      );
    } else {
      void receiver.close().then(() => {
        answer({});
        parentPort!.close();
      });
    }
  });
} else {
  await main();
}
