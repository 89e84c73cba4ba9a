import { runSidecar } from '../sidecar/index.js';
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
    log: (line) => void streams.stderr.write(`${line}\n`),
  });
  const onSignal = (signal: NodeJS.Signals): void => void sidecar.stop(`received ${signal}`);
  const onHangUp = (): void => void sidecar.reloadTokens();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.on('SIGHUP', onHangUp);
  try {
    return await sidecar.done;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGHUP', onHangUp);
  }
}
