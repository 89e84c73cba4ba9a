/**
 * A count and its noun, singular for one (`1 span`, `2 spans`, `0 spans`): every count the
 * commands print goes through it, so none says `1 spans`. `plural` is for nouns that do not
 * take an `s` (`1 progress`, `2 progress`); `format` writes the number (`12,345` in summaries).
 */
export function counted(
  count: number,
  singular: string,
  plural = `${singular}s`,
  format: (value: number) => string = String,
): string {
  return `${format(count)} ${count === 1 ? singular : plural}`;
}
