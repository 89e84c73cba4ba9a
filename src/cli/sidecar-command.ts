import { counted } from '../errors/index.js';
import { runSidecar, SIDECAR_EXIT_CODE } from '../sidecar/index.js';
import type { CliStreams } from './cli-streams.js';
import { parseSidecarArgs, SIDECAR_USAGE } from './parse-sidecar-args.js';

/** `tooltrace sidecar [sources] [options]`: runs until the input ends or a signal stops it. */
export async function sidecarCommand(
  argv: readonly string[],
  streams: CliStreams,
): Promise<number> {
  const parsed = parseSidecarArgs(argv);
  if (parsed.help) {
    streams.stdout.write(SIDECAR_USAGE);
    return 0;
  }
  const sidecar = await runSidecar({
    ...parsed.options,
    stdout: streams.stdout,
    log: (line) => void streams.stderr.write(`${line}\n`),
  });
  // A second signal means the operator will not wait for the flush: exit now, saying what is
  // lost (the checkpoint saved last stays, so a followed file is read again from there).
  const onSecondSignal = (signal: NodeJS.Signals): void => {
    const pending = sidecar.pendingSpans;
    const code = pending > 0 ? SIDECAR_EXIT_CODE.undelivered : SIDECAR_EXIT_CODE.ok;
    streams.stderr.write(
      `tooltrace sidecar: received ${signal} again; exiting now: ${counted(pending, 'span was', 'spans were')} not delivered; exit code ${code}\n`,
    );
    process.exit(code);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.once('SIGTERM', onSecondSignal);
    process.once('SIGINT', onSecondSignal);
    void sidecar.stop(`received ${signal}`);
  };
  const onHangUp = (): void => void sidecar.reloadTokens();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onHangUp);
  try {
    return await sidecar.done;
  } finally {
    for (const handler of [onSignal, onSecondSignal]) {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    }
    process.off('SIGHUP', onHangUp);
  }
}
