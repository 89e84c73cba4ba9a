import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/errors/index.js';
import { CheckpointFile } from '../../../src/sidecar/intake/index.js';
import { runSidecar } from '../../../src/sidecar/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../src/testing/index.js';
import { journalText } from '../journal-lines.js';
import { distinctCallIds } from '../received-spans.js';
import { startSidecar, useReceiver } from '../sidecar-process.js';

const CHECKPOINT = { path: '/var/log/agent.jsonl', inode: 42, offset: 1000 };

describe('CheckpointFile', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-checkpoint-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  describe('write()', () => {
    it('stores the checkpoint readable by its owner only, and reads it back', async () => {
      const path = join(directory, 'agent.ckpt');
      const fingerprint = { bytes: 3, sha256: 'a'.repeat(64) };
      await new CheckpointFile(path).write({ ...CHECKPOINT, fingerprint });
      expect(await new CheckpointFile(path).read()).toEqual({ ...CHECKPOINT, fingerprint });
      expect(statSync(path).mode & 0o777).toBe(0o600);
    });

    it('never writes through a symbolic link planted at its temporary path', async () => {
      const path = join(directory, 'agent.ckpt');
      const victim = join(directory, 'victim');
      writeFileSync(victim, 'precious\n');
      symlinkSync(victim, join(directory, '.agent.ckpt.tmp'));
      await new CheckpointFile(path).write(CHECKPOINT);
      expect(readFileSync(victim, 'utf8')).toBe('precious\n');
      expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(CHECKPOINT);
    });
  });

  describe('read()', () => {
    it('returns undefined when there is no checkpoint yet', async () => {
      expect(await new CheckpointFile(join(directory, 'none')).read()).toBeUndefined();
    });

    it.each([
      ['not JSON', '{"path":"/x","ino'],
      ['a negative offset', '{"path":"/x","inode":1,"offset":-5}'],
      ['a malformed fingerprint', '{"path":"/x","inode":1,"offset":5,"fingerprint":{"bytes":5}}'],
    ])('refuses a corrupt checkpoint (%s), naming the path', async (_what, text) => {
      const path = join(directory, 'agent.ckpt');
      writeFileSync(path, text);
      const reading = new CheckpointFile(path).read();
      await expect(reading).rejects.toThrow(ConfigurationError);
      await expect(reading).rejects.toThrow(`${path} is corrupt`);
    });
  });

  describe('checkWritable()', () => {
    it('refuses a checkpoint whose directory does not exist', async () => {
      const path = join(directory, 'missing', 'agent.ckpt');
      await expect(new CheckpointFile(path).checkWritable()).rejects.toThrow(
        `--checkpoint ${path} cannot be used: its directory ${join(directory, 'missing')} does not exist`,
      );
    });

    it('refuses a directory as the checkpoint', async () => {
      const path = join(directory, 'a-directory');
      mkdirSync(path);
      await expect(new CheckpointFile(path).checkWritable()).rejects.toThrow(
        `--checkpoint ${path} cannot be used: it exists and is not a regular file`,
      );
    });

    it('leaves no file open and no temporary file behind', async () => {
      const path = join(directory, 'agent.ckpt');
      const before = readdirSync('/proc/self/fd').length;
      for (let check = 0; check < 5; check += 1) await new CheckpointFile(path).checkWritable();
      expect(readdirSync('/proc/self/fd').length).toBe(before);
      expect(readdirSync(directory)).toEqual([]);
    });

    it('refuses a directory no file can be created in', async () => {
      await expect(new CheckpointFile('/proc/tooltrace.ckpt').checkWritable()).rejects.toThrow(
        /--checkpoint \/proc\/tooltrace\.ckpt cannot be used: cannot create a file in \/proc/,
      );
    });
  });
});

describe('runSidecar() start-up checks', () => {
  let directory: string;
  let receiver: OtlpReceiver;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-startup-'));
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const start = (options: { files: string[]; checkpoint?: string; checkpointReset?: boolean }) =>
    runSidecar({
      ...options,
      otlpEndpoint: receiver.url,
      statusIntervalMs: 0,
      env: {},
      log: () => {},
    });

  it('refuses a directory given to --file', async () => {
    await expect(start({ files: [directory] })).rejects.toThrow(
      `--file ${directory} cannot be followed: it is a directory`,
    );
  });

  it('refuses a --file whose directory does not exist', async () => {
    const path = join(directory, 'no-such-dir', 'agent.jsonl');
    await expect(start({ files: [path] })).rejects.toThrow(
      `--file ${path} cannot be followed: its directory`,
    );
  });

  it('reads the file from the start over a corrupt checkpoint with checkpointReset', async () => {
    const journal = join(directory, 'agent.jsonl');
    const checkpoint = join(directory, 'agent.ckpt');
    writeFileSync(journal, journalText({ calls: 20 }));
    writeFileSync(checkpoint, 'garbage');
    await expect(start({ files: [journal], checkpoint })).rejects.toThrow(/is corrupt/);

    const sidecar = await start({ files: [journal], checkpoint, checkpointReset: true });
    const deadline = Date.now() + 20_000;
    while (distinctCallIds(receiver.spans).size < 20 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await sidecar.stop()).toBe(0);
    expect(distinctCallIds(receiver.spans).size).toBe(20);
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { offset: number };
    expect(saved.offset).toBe(statSync(journal).size);
  });
});

describe('runSidecar() checkpoint writes at run time', () => {
  let directory: string;
  let receiver: OtlpReceiver;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-ckpt-runtime-'));
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A sidecar following a journal of 5 calls, its checkpoint in a directory of its own. */
  async function follow(checkpointIntervalMs?: number) {
    const journal = join(directory, 'agent.jsonl');
    const checkpointDirectory = join(directory, 'state');
    mkdirSync(checkpointDirectory);
    const checkpoint = join(checkpointDirectory, 'agent.ckpt');
    writeFileSync(journal, journalText({ calls: 5 }));
    const logs: string[] = [];
    const sidecar = await runSidecar({
      files: [journal],
      checkpoint,
      ...(checkpointIntervalMs === undefined ? {} : { checkpointIntervalMs }),
      otlpEndpoint: receiver.url,
      statusIntervalMs: 0,
      env: {},
      log: (line) => logs.push(line),
    });
    return { sidecar, journal, checkpointDirectory, checkpoint, logs };
  }

  it('reports a checkpoint it cannot write once, and again when it can', async () => {
    const { sidecar, journal, checkpointDirectory, checkpoint, logs } = await follow(20);
    const until = async (ready: () => boolean): Promise<void> => {
      const deadline = Date.now() + 20_000;
      while (!ready() && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      await until(() => existsSync(checkpoint));
      rmSync(checkpointDirectory, { recursive: true });
      appendFileSync(journal, journalText({ calls: 5, firstCall: 5 }));
      await until(() => logs.some((line) => line.includes('cannot write checkpoint')));
      // Many periods later, still one report.
      const failedAt = Date.now();
      await until(() => Date.now() - failedAt > 300);
      expect(logs.filter((line) => line.includes('cannot write checkpoint'))).toHaveLength(1);
      mkdirSync(checkpointDirectory);
      await until(() => logs.some((line) => line.includes('is written again')));
      expect(logs.filter((line) => line.includes('is written again'))).toHaveLength(1);
    } finally {
      await sidecar.stop();
    }
    expect(logs.some((line) => line.includes('not saved at shutdown'))).toBe(false);
  });

  it('says at shutdown when the last checkpoint could not be written, and what a restart does', async () => {
    const { sidecar, journal, checkpointDirectory, checkpoint, logs } = await follow();
    await receiver.waitForSpans(5);
    rmSync(checkpointDirectory, { recursive: true });
    expect(await sidecar.stop()).toBe(0);
    expect(logs.filter((line) => line.includes('not saved at shutdown'))).toEqual([
      `tooltrace sidecar: checkpoint ${checkpoint} was not saved at shutdown; a restart reads ${journal} again from the last one saved, and exports those calls again as identical spans`,
    ]);
  });
});

describe('tooltrace sidecar --checkpoint (the process)', () => {
  const testbed = useReceiver({ directory: 'tooltrace-startup-process-' });

  it.each([
    ['a corrupt checkpoint', 'corrupt', /agent\.ckpt is corrupt/],
    ['an unwritable checkpoint path', 'unwritable', /\/proc\/agent\.ckpt cannot be used/],
  ])('stops start-up with exit code 2 on %s', async (_what, kind, message) => {
    const journal = join(testbed.directory, 'agent.jsonl');
    writeFileSync(journal, journalText({ calls: 2 }));
    let checkpoint = '/proc/agent.ckpt';
    if (kind === 'corrupt') {
      checkpoint = join(testbed.directory, 'agent.ckpt');
      writeFileSync(checkpoint, '{"path":');
    }
    const sidecar = startSidecar(['--file', journal, '--checkpoint', checkpoint], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    expect((await sidecar.exited).code).toBe(2);
    expect(sidecar.stderr()).toMatch(message);
    expect(testbed.receiver.spans).toEqual([]);
  });
});
