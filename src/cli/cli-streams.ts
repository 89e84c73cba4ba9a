/** Where the CLI writes; tests pass their own streams. */
export interface CliStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Colour and in-place redrawing only on a terminal, and never with `--no-color`/`NO_COLOR`. */
export function useColor(noColor: boolean | undefined, stream: NodeJS.WritableStream): boolean {
  const env = process.env.NO_COLOR;
  return (
    noColor !== true &&
    (env === undefined || env === '') &&
    (stream as { isTTY?: boolean }).isTTY === true
  );
}
