import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { callLines, eventIdFor, eventLine, journalText, resultLine } from './journal-lines.js';
import { distinctCallIds, divergentDuplicates } from './received-spans.js';
import { startSidecar, type SidecarProcess, useReceiver } from './sidecar-process.js';

interface SavedCheckpoint {
  path: string;
  inode: number;
  offset: number;
  read: number;
  fingerprint: { bytes: number; sha256: string };
}

/** What the checkpoint should say of `path`: the digest of its first KiB. */
function fingerprintOf(path: string): { bytes: number; sha256: string } {
  const head = readFileSync(path).subarray(0, 1024);
  return { bytes: head.length, sha256: createHash('sha256').update(head).digest('hex') };
}

describe('tooltrace sidecar --file --checkpoint, killed and restarted', () => {
  const testbed = useReceiver({ directory: 'tooltrace-crash-' });
  let journal: string;
  let checkpoint: string;

  beforeEach(() => {
    journal = join(testbed.directory, 'journal.jsonl');
    checkpoint = join(testbed.directory, 'checkpoint.json');
  });

  const follow = (extra: string[] = []): SidecarProcess =>
    startSidecar(
      ['--file', journal, '--checkpoint', checkpoint, '--status-interval', '0', ...extra],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url } },
    );
  const readCheckpoint = (): SavedCheckpoint =>
    JSON.parse(readFileSync(checkpoint, 'utf8')) as SavedCheckpoint;
  const kill = async (sidecar: SidecarProcess): Promise<void> => {
    sidecar.child.kill('SIGKILL');
    expect((await sidecar.exited).signal).toBe('SIGKILL');
  };
  /** Polls `condition` (a child process's doing, so no fake clock can drive it). */
  const until = async (what: string, condition: () => boolean): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const savedOffset = (): number | undefined =>
    existsSync(checkpoint) ? readCheckpoint().offset : undefined;
  const waitForCalls = async (count: number): Promise<void> => {
    const deadline = Date.now() + 60_000;
    while (distinctCallIds(testbed.receiver.spans).size < count) {
      if (Date.now() > deadline) {
        throw new Error(
          `${distinctCallIds(testbed.receiver.spans).size} of ${count} calls arrived`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('exports every call, duplicates only as identical spans', async () => {
    writeFileSync(journal, journalText({ calls: 1000 }));
    const first = follow(['--max-queue-spans', '100']);
    await testbed.receiver.waitForSpans(200, 30_000);
    await kill(first);
    appendFileSync(journal, journalText({ calls: 1000, firstCall: 1000 }));

    const second = follow();
    await waitForCalls(2000);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    expect(distinctCallIds(testbed.receiver.spans).size).toBe(2000);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
    const saved = readCheckpoint();
    expect(saved).toEqual({
      path: journal,
      inode: statSync(journal).ino,
      offset: statSync(journal).size,
      read: statSync(journal).size,
      fingerprint: fingerprintOf(journal),
    });
  });

  it('keeps one causal tree whole: a restart re-reads it from its root', async () => {
    writeFileSync(journal, journalText({ calls: 600, nested: true }));
    const first = follow(['--max-queue-spans', '50']);
    await testbed.receiver.waitForSpans(100, 30_000);
    await kill(first);
    // Every call descends from the first line, and some were not exported: stay at 0.
    expect(existsSync(checkpoint) ? readCheckpoint().offset : 0).toBe(0);

    const second = follow();
    await waitForCalls(600);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
    expect(new Set(testbed.receiver.spans.map((span) => span.traceId)).size).toBe(1);
  });

  it('never moves the checkpoint past a call whose span was not exported', async () => {
    const firstPart = journalText({ calls: 100 });
    writeFileSync(journal, firstPart);
    const first = follow();
    await waitForCalls(100);
    // Everything so far was exported: the checkpoint gets to the end of the first part.
    await until('the checkpoint at the first part', () => savedOffset() === firstPart.length);
    testbed.receiver.setAvailable(false);
    appendFileSync(journal, journalText({ calls: 100, firstCall: 100 }));
    await first.waitForStderr(/retrying, nothing is dropped/);
    const failedBefore = testbed.receiver.requests.length;
    // Two more failed exports (3 s of backoff, three checkpoint periods) with the receiver down.
    await until(
      'two more failed exports',
      () => testbed.receiver.requests.length >= failedBefore + 2,
    );
    expect(savedOffset()).toBe(Buffer.byteLength(firstPart));
    await kill(first);

    const second = follow();
    await second.waitForStderr(/resuming .* at byte \d+/);
    await second.waitForStderr(/retrying, nothing is dropped/);
    expect(savedOffset()).toBe(Buffer.byteLength(firstPart));
    testbed.receiver.setAvailable(true);
    await waitForCalls(200);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
    expect(readCheckpoint().offset).toBe(statSync(journal).size);
  });

  it('does not stop between a call and the line its parentage came from', async () => {
    // tc_a (exported), tc_y (still open, pins its own line), tc_b: a child of tc_a and an
    // llm.response caused by it. Restarting at tc_y's line would lose both links of tc_b.
    const lines = [
      ...callLines('tc_a', { seq: 1 }),
      eventLine({
        type: 'llm.response',
        eventId: eventIdFor('llm'),
        parentId: eventIdFor('result-tc_a'),
        seq: 3,
      }),
      ...callLines('tc_y', { seq: 4, open: true }),
      ...callLines('tc_b', { seq: 5, parentId: eventIdFor('invoke-tc_a') }),
      ...callLines('tc_c', { seq: 7, parentId: eventIdFor('llm') }),
    ];
    writeFileSync(journal, `${lines.join('\n')}\n`);
    const first = follow();
    await testbed.receiver.waitForSpans(3, 30_000);
    // The first periodic write (offset 0) may come before or after the exports; either way no
    // write may pass tc_y's line. Wait for one, so that it is read, not an absent file.
    await until('a checkpoint', () => savedOffset() !== undefined);
    await kill(first);
    expect(readCheckpoint().offset).toBe(0);
    appendFileSync(journal, `${resultLine('tc_y', 9)}\n`);

    const second = follow();
    await waitForCalls(4);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
    const spanOf = (callId: string) =>
      testbed.receiver.spans.find((span) => span.attributes['gen_ai.tool.call.id'] === callId)!;
    expect(spanOf('tc_b').parentSpanId).toBe(spanOf('tc_a').spanId);
  });

  it('reads a file replaced while it was down from the start, with its own offsets', async () => {
    writeFileSync(journal, journalText({ calls: 50 }));
    const first = follow();
    await waitForCalls(50);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const before = readCheckpoint();
    expect(before.offset).toBe(statSync(journal).size);

    // Rotated while the sidecar was down: same path, another inode, other content.
    writeFileSync(`${journal}.new`, journalText({ calls: 30, firstCall: 50 }));
    renameSync(`${journal}.new`, journal);
    const second = follow();
    await waitForCalls(80);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(readCheckpoint()).toEqual({
      path: journal,
      inode: statSync(journal).ino,
      offset: statSync(journal).size,
      read: statSync(journal).size,
      fingerprint: fingerprintOf(journal),
    });
  });

  it('resumes a file without event ids at its checkpoint', async () => {
    writeFileSync(journal, journalText({ calls: 300, withoutEventIds: true }));
    const first = follow(['--max-queue-spans', '50']);
    await testbed.receiver.waitForSpans(60, 30_000);
    await kill(first);
    appendFileSync(journal, journalText({ calls: 100, firstCall: 300, withoutEventIds: true }));

    const second = follow();
    await waitForCalls(400);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
    expect(readCheckpoint().offset).toBe(statSync(journal).size);
  });
});
