/** One row of a per-tool table, its durations already formatted. */
export interface ToolTableRow {
  tool: string;
  calls: number;
  errors: number;
  /** The median duration; the column is left out when no row has one. */
  p50?: string;
  p95: string;
  /** Mean time to first partial, `—` when no call streamed. */
  firstPartial: string;
}

/**
 * The per-tool table the demo ends with and `tooltrace view` summarises with, one row per tool
 * in name order: calls, errors, p50 (when known), p95 and mean time to first partial.
 */
export function formatToolTable(rows: readonly ToolTableRow[]): string {
  const withP50 = rows.some((row) => row.p50 !== undefined);
  const line = (cells: readonly string[]): string => {
    const [tool, calls, errors, ...rest] = cells;
    return `  ${tool!.padEnd(16)} ${calls!.padStart(5)} ${errors!.padStart(6)} ${rest
      .map((cell, index) => cell.padStart(index === rest.length - 1 ? 14 : 8))
      .join(' ')}`;
  };
  const header = withP50
    ? ['tool', 'calls', 'errors', 'p50', 'p95', 'first partial']
    : ['tool', 'calls', 'errors', 'p95 ≤', 'first partial'];
  const lines = [line(header)];
  for (const row of [...rows].sort((left, right) => left.tool.localeCompare(right.tool))) {
    const p50 = withP50 ? [row.p50 ?? '—'] : [];
    lines.push(
      line([row.tool, String(row.calls), String(row.errors), ...p50, row.p95, row.firstPartial]),
    );
  }
  return `${lines.join('\n')}\n`;
}
