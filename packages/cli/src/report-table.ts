/**
 * A report as a person reads it: a title, then one line per row of three columns (what, which bucket, detail),
 * the first two padded to their widest cell. `empty` stands in for no rows at all.
 */
export function formatReportTable(title: string, rows: readonly [string, string, string][], empty: string): string {
  const first = Math.max(...rows.map((row) => row[0].length), 0);
  const second = Math.max(...rows.map((row) => row[1].length), 0);
  const lines = rows.map(([what, bucket, detail]) =>
    `${what.padEnd(first)}  ${bucket.padEnd(second)}  ${detail}`.trimEnd(),
  );
  return `${[title, ...(lines.length > 0 ? lines : [empty])].join("\n")}\n`;
}
