import type { ProofRow } from "./types.js";

/** The proof's rows as a plain-text table, failures marked; for a terminal or a test's failure message. */
export function formatProofTable(rows: readonly ProofRow[]): string {
  const header = ["pass", "role", "operation", "bucket", "expected", "actual", "detail"];
  const lines = rows.map((row) => [
    row.pass ? "ok" : "FAIL",
    row.role,
    row.operation,
    row.bucket,
    row.expected,
    row.actual,
    row.detail,
  ]);
  const widths = header
    .slice(0, -1)
    .map((title, column) => Math.min(60, Math.max(title.length, ...lines.map((line) => line[column]!.length))));
  const render = (cells: string[]) =>
    cells
      .map((cell, column) => (column < widths.length ? cell.padEnd(widths[column]!) : cell))
      .join("  ")
      .trimEnd();
  return [render(header), ...lines.map(render)].join("\n");
}
