/**
 * The secret rule's cost on a put: `findCredential` (field names and string shapes, one walk) over a
 * 200 KiB ordinary value of 2,600 small objects. There is no raw client for this; the baseline is
 * `JSON.stringify` of the same value, which every put pays anyway (the runtime encodes the value once).
 * A ratio near or under 1 means the check costs no more than encoding the value.
 */
import { findCredential } from "@mesh/state-protocol/secrets";
import { count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import { median } from "./workload.js";

export const ORDINARY_OBJECTS = 2_600;

/** Objects like a module's records (about 79 bytes each): an id, a name, a count, a flag, tags. */
export function ordinaryValue(objects = ORDINARY_OBJECTS): unknown[] {
  return Array.from({ length: objects }, (_, index) => ({
    id: `i-${String(index).padStart(5, "0")}`,
    name: `widget ${index}`,
    n: index * 7,
    on: index % 3 !== 0,
    tags: ["blue", index % 2 === 0 ? "even" : "odd"],
  }));
}

export interface SecretScanFigures {
  scanMicros: number;
  stringifyMicros: number;
  bytes: number;
}

export function benchSecretScan(runs: number, iterations: number): SecretScanFigures {
  const value = ordinaryValue();
  if (findCredential(value) !== undefined) throw new Error("the ordinary value was refused by the secret rule");
  const bytes = Buffer.byteLength(JSON.stringify(value));
  const time = (work: () => unknown) => {
    const started = performance.now();
    for (let index = 0; index < iterations; index++) work();
    return ((performance.now() - started) * 1000) / iterations;
  };
  // Alternate rounds so both see the same machine load; the first round of each only warms up.
  const scans: number[] = [];
  const stringifies: number[] = [];
  for (let round = 0; round <= runs; round++) {
    scans.push(time(() => findCredential(value)));
    stringifies.push(time(() => JSON.stringify(value)));
  }
  return { scanMicros: median(scans.slice(1)), stringifyMicros: median(stringifies.slice(1)), bytes };
}

/** The secrets section's row. */
export function secrets(sizes: Sizes): void {
  const figures = benchSecretScan(sizes.runs, sizes.secretScanIterations);
  emit({
    metric: `secret scan, ${Math.round(figures.bytes / 1024)} KiB ordinary value (${count(ORDINARY_OBJECTS)} objects), vs JSON.stringify`,
    unit: "µs",
    mesh: figures.scanMicros,
    raw: figures.stringifyMicros,
  });
  note("findCredential: field names and string shapes in one walk; the baseline encodes the same value once");
}
