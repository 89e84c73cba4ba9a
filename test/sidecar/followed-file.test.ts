import {
  appendFileSync,
  existsSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { journalText } from './journal-lines.js';
import { distinctCallIds, divergentDuplicates } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('tooltrace sidecar --file', () => {
  const testbed = useReceiver({ directory: 'tooltrace-follow-' });
  let journal: string;

  beforeEach(() => {
    journal = join(testbed.directory, 'journal.jsonl');
  });

  const follow = (extra: string[] = []) =>
    startSidecar(['--file', journal, '--status-interval', '0', ...extra], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
  const waitForCalls = async (count: number): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (distinctCallIds(testbed.receiver.spans).size < count) {
      if (Date.now() > deadline) {
        throw new Error(
          `${distinctCallIds(testbed.receiver.spans).size} of ${count} calls arrived`,
        );
      }
      await sleep(50);
    }
  };

  it('reads lines appended to the file, even a line written in two parts', async () => {
    writeFileSync(journal, journalText({ calls: 10 }));
    follow();
    await waitForCalls(10);
    const more = journalText({ calls: 10, firstCall: 10 });
    appendFileSync(journal, more.slice(0, 1000));
    // Two polls of the file (250 ms apart) read the first part alone; no event marks them.
    await sleep(600);
    appendFileSync(journal, more.slice(1000));
    await waitForCalls(20);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
  });

  it('follows the path across rotation (rename, then a new file)', async () => {
    writeFileSync(journal, journalText({ calls: 10 }));
    const sidecar = follow();
    await waitForCalls(10);
    appendFileSync(journal, journalText({ calls: 5, firstCall: 10 }));
    renameSync(journal, `${journal}.1`);
    writeFileSync(journal, journalText({ calls: 10, firstCall: 100 }));

    await waitForCalls(25);
    expect(sidecar.stderr()).toMatch(/was rotated/);
    expect(testbed.receiver.spans).toHaveLength(25);
  });

  it('starts over when the file is truncated', async () => {
    writeFileSync(journal, journalText({ calls: 20 }));
    const sidecar = follow();
    await waitForCalls(20);
    truncateSync(journal, 0);
    await sidecar.waitForStderr(/was truncated/);
    appendFileSync(journal, journalText({ calls: 3, firstCall: 50 }));

    await waitForCalls(23);
    expect(testbed.receiver.spans).toHaveLength(23);
  });

  it('waits for a file that does not exist yet', async () => {
    const sidecar = follow();
    // Started, and following a path with no file behind it yet.
    await sidecar.waitForStderr(/does not exist yet; waiting for it/);
    expect(sidecar.stderr()).toContain(`${journal} does not exist yet; waiting for it`);
    expect(sidecar.child.exitCode).toBeNull();
    writeFileSync(journal, journalText({ calls: 4 }));

    await waitForCalls(4);
    // Said once, however many polls found nothing.
    expect(sidecar.stderr().match(/does not exist yet/g)).toHaveLength(1);
  });

  it('writes the checkpoint atomically, always at a line boundary', async () => {
    const checkpoint = join(testbed.directory, 'checkpoint.json');
    writeFileSync(journal, '');
    const sidecar = follow(['--checkpoint', checkpoint]);
    const offsets: number[] = [];
    for (let round = 0; round < 30; round += 1) {
      appendFileSync(journal, journalText({ calls: 20, firstCall: round * 20 }));
      for (let look = 0; look < 10; look += 1) {
        if (existsSync(checkpoint)) {
          // Never empty, never torn: the rename replaces the whole file at once.
          const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as {
            path: string;
            inode: number;
            offset: number;
          };
          expect(saved.path).toBe(journal);
          expect(saved.inode).toBe(statSync(journal).ino);
          offsets.push(saved.offset);
        }
        await sleep(10);
      }
    }
    await waitForCalls(600);
    sidecar.child.kill('SIGTERM');
    expect((await sidecar.exited).code).toBe(0);

    const final = JSON.parse(readFileSync(checkpoint, 'utf8')) as { offset: number };
    expect(final.offset).toBe(statSync(journal).size);
    const bytes = readFileSync(journal);
    for (const offset of [...offsets, final.offset]) {
      expect(offset === 0 || bytes[offset - 1] === 0x0a).toBe(true);
    }
    expect(offsets).toEqual([...offsets].sort((left, right) => left - right));
    expect(new Set(offsets).size).toBeGreaterThan(1);
    expect(existsSync(join(testbed.directory, '.checkpoint.json.tmp'))).toBe(false);
  });
});
