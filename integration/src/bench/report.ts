/** The bench's printed output, shared by its sections: figure rows (table.ts) and notes under them. */
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
