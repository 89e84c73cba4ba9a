import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './processes.js';

/** Where the stack's programs are. */
export interface StackBinaries {
  collector: string;
  jaeger: string;
  prometheus: string;
}

/**
 * The stack's programs, from `scripts/stack/build.sh` (built once and cached outside the repo;
 * a cached run answers at once, a first build takes minutes and is bounded to 40).
 */
export async function stackBinaries(): Promise<StackBinaries> {
  const { stdout } = await promisify(execFile)('bash', ['scripts/stack/build.sh'], {
    cwd: ROOT,
    timeout: 40 * 60_000,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  const paths = Object.fromEntries(
    stdout
      .split('\n')
      .map((line) => /^(collector|jaeger|prometheus)=(.+)$/.exec(line.trim()))
      .filter((match) => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
  if (paths.collector === undefined || paths.jaeger === undefined) {
    throw new Error(`scripts/stack/build.sh named no binaries:\n${stdout}`);
  }
  return paths as unknown as StackBinaries;
}
