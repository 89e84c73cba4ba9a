import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSidecar, type Sidecar } from '../../../src/sidecar/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../src/testing/index.js';
import { journalText } from '../journal-lines.js';
import { finalSpans } from '../received-spans.js';

/** How many times each tool call's own span arrived, by call id. */
function exportsPerCall(receiver: OtlpReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const span of finalSpans(receiver.spans)) {
    const id = span.attributes['gen_ai.tool.call.id'];
    if (typeof id === 'string') counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Call ids `tc_{first}` … `tc_{first + count - 1}`. */
function callIds(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `tc_${first + index}`);
}

/** Polls real state until `ready()` holds; fails with `describe()` after a generous deadline. */
async function until(ready: () => boolean, describe: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(describe());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('FollowedFile', () => {
  describe('logrotate', () => {
    let directory: string;
    let journal: string;
    let checkpoint: string;
    let receiver: OtlpReceiver;
    let logs: string[];
    const running = new Set<Sidecar>();

    beforeEach(async () => {
      directory = mkdtempSync(join(tmpdir(), 'tooltrace-rotation-'));
      journal = join(directory, 'journal.jsonl');
      checkpoint = join(directory, 'checkpoint.json');
      receiver = await startOtlpReceiver();
      logs = [];
    });

    afterEach(async () => {
      await Promise.all([...running].map((sidecar) => sidecar.stop('test over', 2000)));
      running.clear();
      await receiver.close();
      rmSync(directory, { recursive: true, force: true });
    });

    const follow = async (): Promise<Sidecar> => {
      const sidecar = await runSidecar({
        files: [journal],
        checkpoint,
        otlpEndpoint: receiver.url,
        statusIntervalMs: 0,
        env: {},
        log: (line) => logs.push(line),
      });
      running.add(sidecar);
      return sidecar;
    };
    const stop = async (sidecar: Sidecar): Promise<void> => {
      expect(await sidecar.stop('test step')).toBe(0);
      running.delete(sidecar);
    };
    const waitForCalls = (ids: readonly string[]): Promise<void> =>
      until(
        () => ids.every((id) => exportsPerCall(receiver).has(id)),
        () => `${ids.filter((id) => exportsPerCall(receiver).has(id)).length} of ${ids.length}`,
      );
    const waitForLog = (pattern: RegExp): Promise<void> =>
      until(
        () => logs.some((line) => pattern.test(line)),
        () => `no log line matches ${String(pattern)}:\n${logs.join('\n')}`,
      );
    /** Every call written exported exactly once, and nothing else. */
    const expectEachOnce = (ids: readonly string[]): void => {
      const counts = exportsPerCall(receiver);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
      expect([...counts.values()].filter((count) => count !== 1)).toEqual([]);
    };

    it('copytruncate while running: reads the truncated file again from the start', async () => {
      writeFileSync(journal, journalText({ calls: 200 }));
      const sidecar = await follow();
      await waitForCalls(callIds(0, 200));
      copyFileSync(journal, `${journal}.1`);
      truncateSync(journal, 0);
      await waitForLog(/was truncated/);
      appendFileSync(journal, journalText({ calls: 150, firstCall: 200 }));
      await waitForCalls(callIds(200, 150));
      await stop(sidecar);
      expectEachOnce(callIds(0, 350));
    });

    it('copytruncate within one poll: notices the regrown file by its first bytes', async () => {
      writeFileSync(journal, journalText({ calls: 100 }));
      const sidecar = await follow();
      await waitForCalls(callIds(0, 100));
      copyFileSync(journal, `${journal}.1`);
      // Truncated and written again, longer than before, before the next poll can see it shrink.
      writeFileSync(journal, journalText({ calls: 300, firstCall: 100 }));
      await waitForCalls(callIds(100, 300));
      await stop(sidecar);
      expect(logs.join('\n')).toMatch(/was truncated/);
      expectEachOnce(callIds(0, 400));
    });

    it('copytruncate while the sidecar is down: the checkpoint no longer fits, so from 0', async () => {
      writeFileSync(journal, journalText({ calls: 100 }));
      const first = await follow();
      await waitForCalls(callIds(0, 100));
      await stop(first);
      writeFileSync(journal, journalText({ calls: 250, firstCall: 100 }));

      const second = await follow();
      await waitForCalls(callIds(100, 250));
      await stop(second);
      expect(logs.join('\n')).toMatch(/was truncated/);
      expectEachOnce(callIds(0, 350));
    });

    it('resumes at the checkpoint when the file is the one it describes', async () => {
      writeFileSync(journal, journalText({ calls: 100 }));
      const first = await follow();
      await waitForCalls(callIds(0, 100));
      await stop(first);
      appendFileSync(journal, journalText({ calls: 50, firstCall: 100 }));

      const second = await follow();
      await waitForCalls(callIds(100, 50));
      await stop(second);
      expect(logs.join('\n')).toMatch(/resuming .* at byte \d+/);
      expectEachOnce(callIds(0, 150));
    });

    it('rename and create: reads the renamed file to its end, and the new one', async () => {
      writeFileSync(journal, journalText({ calls: 100 }));
      const sidecar = await follow();
      await waitForCalls(callIds(0, 100));
      renameSync(journal, `${journal}.1`);
      writeFileSync(journal, journalText({ calls: 100, firstCall: 100 }));
      await waitForLog(/was rotated/);
      // The writer has not reopened yet: it still appends to the renamed file.
      appendFileSync(`${journal}.1`, journalText({ calls: 50, firstCall: 200 }));
      await waitForCalls(callIds(100, 150));
      await stop(sidecar);
      expectEachOnce(callIds(0, 250));
    });
  });
});
