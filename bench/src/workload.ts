/**
 * The work both sides do, written once: the raw-client baseline (in the bench process) and the SDK bundle
 * (a child of a runtime host) call the same loops with their own `op`, so they differ only in the path.
 */

/** MEASURED.md §7 used 256-byte JSON values; so do both sides here. */
export const VALUE_BYTES = 256;

/** A JSON value whose encoding is exactly `bytes` long (at least 40). */
export function benchValue(index: number, bytes = VALUE_BYTES): { n: number; kind: string; pad: string } {
  const bare = JSON.stringify({ n: index, kind: "bench", pad: "" }).length;
  return { n: index, kind: "bench", pad: "x".repeat(Math.max(0, bytes - bare)) };
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes of one machine. */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}

export interface SequentialRun {
  /** Per-operation latency in ms, in order. */
  latencies: number[];
  elapsedMs: number;
}

/** `count` operations one after another, each timed. */
export async function runSequential(count: number, op: (index: number) => Promise<unknown>): Promise<SequentialRun> {
  const latencies = new Array<number>(count);
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    const before = performance.now();
    await op(index);
    latencies[index] = performance.now() - before;
  }
  return { latencies, elapsedMs: performance.now() - started };
}

/** `count` operations with `inFlight` of them outstanding at any time; returns the elapsed ms. */
export async function runPipelined(
  count: number,
  inFlight: number,
  op: (index: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return performance.now() - started;
}

/** The q-quantile (0..1) of unsorted samples, nearest rank. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** An empty series of per-run figures under each name, filled run by run. */
export function series<Name extends string>(...names: Name[]): Record<Name, number[]> {
  return Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Name, number[]>;
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

export interface SequentialFigures {
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export function sequentialFigures(run: SequentialRun): SequentialFigures {
  return {
    opsPerSecond: (run.latencies.length / run.elapsedMs) * 1000,
    p50Ms: quantile(run.latencies, 0.5),
    p99Ms: quantile(run.latencies, 0.99),
  };
}

/** The large ordinary value: 2,600 small objects, about 200 KiB of JSON (no field looks like a secret). */
export const LARGE_ITEMS = 2_600;
/** A type, not an interface, so it stays assignable to a JSON value. */
export type LargeItem = { id: number; name: string; tags: string[]; price: number; qty: number; active: boolean };
export function largeValue(index: number): { n: number; items: LargeItem[] } {
  return {
    n: index,
    items: Array.from({ length: LARGE_ITEMS }, (_, item) => ({
      id: item,
      name: `item-${item}`,
      tags: ["red"],
      price: item * 0.25,
      qty: item % 10,
      active: item % 2 === 0,
    })),
  };
}
