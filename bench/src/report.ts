/** The bench's printed output, shared by its sections: figure rows (table.ts) and notes under them. */
import { writeFileSync } from "node:fs";
import { formatRow, type Row } from "./table.js";

export const MiB = 1024 * 1024;
export const count = (n: number) => n.toLocaleString("en-US");
export const bytes = (n: number) => (n >= MiB ? `${n / MiB} MiB` : `${Math.round(n / 1024)} KiB`);

/** Every row printed so far, for the targets' summary and `--json`. */
export const rows: Row[] = [];

export function emit(row: Row): void {
  rows.push(row);
  console.log(formatRow(row));
}

export function note(text: string): void {
  console.log(`  · ${text}`);
}

/** The targets' summary under the table; with `--json`, every row and the machine into that file. */
export function finish(json: string | undefined, machine: Record<string, string>): void {
  const targets = rows.filter((row) => row.target);
  const missed = targets.filter((row) => !row.target!.met);
  console.log(
    `\ntargets: ${targets.length - missed.length} met, ${missed.length} missed${missed.length ? ` (${missed.map((row) => row.metric).join("; ")})` : ""}`,
  );
  if (json) writeFileSync(json, `${JSON.stringify({ machine, rows }, null, 2)}\n`);
}
