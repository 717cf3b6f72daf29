/**
 * The memory section: what a runtime's RSS grows by, and what it retains, while a slow bundle watches a full
 * bucket, beside a raw client consuming as slowly in a process alike.
 */
import type { Host, StartHost, StopHosts } from "./hosts.js";
import { bytes, emit, MiB, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import { BUCKETS, natsBucket, type World } from "./world.js";

const RETAINED_EVERY_MS = 500;

/** `work`, with the most the host retained (heapUsed + external after a forced GC) while it ran and after. */
async function mostRetained<T>(host: Host, work: () => Promise<T>): Promise<{ result: T; most: number }> {
  let most = 0;
  let sampling = Promise.resolve();
  const sample = () => {
    sampling = sampling
      .then(() => host.request<{ retained: number }>({ cmd: "memory-retained" }))
      .then(({ retained }) => {
        most = Math.max(most, retained);
      });
  };
  const timer = setInterval(sample, RETAINED_EVERY_MS);
  try {
    const result = await work();
    clearInterval(timer);
    // Once more at current, the watch still open.
    sample();
    await sampling;
    return { result, most };
  } finally {
    clearInterval(timer);
  }
}

/** The slow consumers' pace: `slowDelayMs` per this many values, on both sides. */
const SLOW_PER_VALUES = 256;

/**
 * What runtime-state's README recommends for the runtime's process: a young generation small enough to stay
 * small, large enough that a batch's buffers die in it rather than wait in the old one (docs/perf/0010).
 */
const RUNTIME_MEMORY_FLAGS = ["--max-semi-space-size=2"];

export async function memory(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  type Usage = { rss: number; heapTotal: number; external: number; arrayBuffers: number };
  const meshWatch = (host: Host) =>
    host.bundle<{ ms: number; events: number; batches: number }>("slow", {
      cmd: "slow-watch",
      bucket: BUCKETS.full,
      delayMs: sizes.slowDelayMs,
      perValues: SLOW_PER_VALUES,
    });
  const rawWatch = (host: Host) =>
    host.request<{ ms: number; entries: number }>({
      cmd: "raw-slow-watch",
      bucket: natsBucket(BUCKETS.full),
      expected: world.fullKeys,
      batch: SLOW_PER_VALUES,
      delayMs: sizes.slowDelayMs,
    });
  const startRuntime = async (name: string, nodeFlags: string[]) => {
    const host = await startHost(world.machines[1]!, name, nodeFlags);
    await host.request({ cmd: "start-bundle", bundle: "slow", membership: world.membership, mode: "slow" });
    return host;
  };
  /** The RSS a runtime grows by over the slow watch, in a fresh process started with `nodeFlags`. */
  const meshRss = async (name: string, nodeFlags: string[]) => {
    const runtime = await startRuntime(name, nodeFlags);
    const before = await runtime.request<Usage>({ cmd: "memory-reset" });
    const run = await meshWatch(runtime);
    const peak = await runtime.request<Usage & { peak: number }>({ cmd: "memory-peak" });
    await stopHosts([runtime]);
    return { before, run, peak, growth: (peak.peak - before.rss) / MiB };
  };
  const flagged = await meshRss("runtime-memory", RUNTIME_MEMORY_FLAGS);
  const unflagged = await meshRss("runtime-memory-default", []);
  const rawHost = await startHost(world.raw, "raw-memory");
  const rawBefore = await rawHost.request<{ rss: number }>({ cmd: "memory-reset" });
  const rawRun = await rawWatch(rawHost);
  const rawPeak = await rawHost.request<{ peak: number }>({ cmd: "memory-peak" });
  await stopHosts([rawHost]);
  // Retained memory in fresh processes, apart: the forced GCs it takes would lower the RSS peak above.
  const retained = async (host: Host, watch: (host: Host) => Promise<unknown>) => {
    const { retained: start } = await host.request<{ retained: number }>({ cmd: "memory-retained" });
    const { most } = await mostRetained(host, () => watch(host));
    return (most - start) / MiB;
  };
  const runtime2 = await startRuntime("runtime-retained", RUNTIME_MEMORY_FLAGS);
  const retainedGrowth = await retained(runtime2, meshWatch);
  await stopHosts([runtime2]);
  const rawHost2 = await startHost(world.raw, "raw-retained");
  const rawRetainedGrowth = await retained(rawHost2, rawWatch);
  await stopHosts([rawHost2]);

  const rawGrowth = (rawPeak.peak - rawBefore.rss) / MiB;
  const watching = `bundle taking ${sizes.slowDelayMs} ms per ${SLOW_PER_VALUES} values, watching full ${bytes(sizes.fullBytes)}`;
  emit({
    metric: `memory: runtime peak RSS growth (${RUNTIME_MEMORY_FLAGS.join(" ")}), ${watching}`,
    unit: "MiB",
    mesh: flagged.growth,
    raw: rawGrowth,
    target: { text: "< 32 MiB", met: flagged.growth < 32 },
  });
  emit({
    metric: `memory: runtime peak RSS growth (node's default flags), ${watching}`,
    unit: "MiB",
    mesh: unflagged.growth,
    raw: rawGrowth,
  });
  emit({
    metric: `memory: runtime retained growth (heapUsed + external after a GC, most seen; ${RUNTIME_MEMORY_FLAGS.join(" ")}), that slow watch`,
    unit: "MiB",
    mesh: retainedGrowth,
    raw: rawRetainedGrowth,
    target: { text: "< 16 MiB", met: retainedGrowth < 16 },
  });
  emit({ metric: "memory: that slow watch, time to current", unit: "ms", mesh: flagged.run.ms, raw: rawRun.ms });
  for (const [label, run] of [
    [RUNTIME_MEMORY_FLAGS.join(" "), flagged],
    ["default flags", unflagged],
  ] as const) {
    const grew = (field: keyof Usage) => `${field} +${((run.peak[field] - run.before[field]) / MiB).toFixed(1)}`;
    note(
      `runtime (${label}): RSS ${(run.before.rss / MiB).toFixed(0)} MiB before; at most ${grew("heapTotal")}, ${grew("external")}, ${grew("arrayBuffers")} MiB; ${run.run.events} events in ${run.run.batches} batches`,
    );
  }
  note(
    `raw: kv.watch() in a process alike (node's default flags), its consumer sleeping ${sizes.slowDelayMs} ms every ${SLOW_PER_VALUES} entries`,
  );
  note(
    `retained: the same watch again in a fresh process, heapUsed + external after a forced GC every ${RETAINED_EVERY_MS} ms and once at current`,
  );
}
