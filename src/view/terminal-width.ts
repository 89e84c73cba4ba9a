/** Columns assumed when output is not a terminal and `COLUMNS` says nothing. */
const DEFAULT_COLUMNS = 80;

/**
 * How many columns `stream` shows: a terminal's own width, else `COLUMNS` from `env` (what a
 * shell exports, and how a user asks for a width when piping), else 80.
 */
export function terminalWidth(
  stream: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const columns = (stream as { columns?: unknown }).columns;
  if (typeof columns === 'number' && columns > 0) return columns;
  const fromEnv = Number(env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_COLUMNS;
}
