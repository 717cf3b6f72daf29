/**
 * The bench's output: one row per figure, the mesh path beside the raw client measured in the same run,
 * and their ratio (always mesh / raw). Where the design has a floor for the figure (the raw client plus one
 * stdio round trip of the echo, measured in the same run), it is printed between raw and the ratio; blank
 * elsewhere. The smoke test reads these rows back, so the shape is a contract: columns are separated by at
 * least two spaces; mesh, raw, floor and ratio are plain numbers, the ratio alone ends in `x`.
 */

export interface Target {
  text: string;
  met: boolean;
}

export interface Row {
  metric: string;
  unit: string;
  mesh: number;
  raw: number;
  /** What the design allows at best for the mesh figure: raw + the echo's round trip (see getput.ts). */
  floor?: number;
  target?: Target;
}

const METRIC_WIDTH = 84;

export function header(): string {
  return `${"metric (unit)".padEnd(METRIC_WIDTH)}  ${"mesh".padStart(11)}  ${"raw".padStart(11)}  ${"floor".padStart(11)}  ${"ratio".padStart(8)}  target`;
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ratio(mesh: number, raw: number): number {
  return raw === 0 ? (mesh === 0 ? 1 : Number.POSITIVE_INFINITY) : mesh / raw;
}

export function formatRow(row: Row): string {
  const metric = `${row.metric} (${row.unit})`.padEnd(METRIC_WIDTH);
  const target = row.target ? `${row.target.text}: ${row.target.met ? "met" : "MISSED"}` : "";
  return `${metric}  ${formatNumber(row.mesh).padStart(11)}  ${formatNumber(row.raw).padStart(11)}  ${(row.floor === undefined ? "" : formatNumber(row.floor)).padStart(11)}  ${`${ratio(row.mesh, row.raw).toFixed(2)}x`.padStart(8)}  ${target}`.trimEnd();
}

/** Parses a row printed by `formatRow`; `undefined` for any other line. */
export function parseRow(
  line: string,
): { metric: string; mesh: number; raw: number; floor?: number; ratio: number } | undefined {
  const match = /^(.+?\))\s{2,}(\S+)\s{2,}(\S+)(?:\s{2,}([\d,.]+|NaN|-?Infinity))?\s{2,}(\S+)x(?:\s{2,}.*)?$/.exec(
    line,
  );
  if (!match) return undefined;
  const number = (text: string) => Number(text.replaceAll(",", ""));
  return {
    metric: match[1]!.trim(),
    mesh: number(match[2]!),
    raw: number(match[3]!),
    ...(match[4] === undefined ? {} : { floor: number(match[4]) }),
    ratio: Number(match[5]),
  };
}
