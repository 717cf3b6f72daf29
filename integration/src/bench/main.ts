/**
 * `pnpm bench`: what the runtime hop costs. Every figure is measured twice in the same run against the same
 * nats-server — through a bundle (a child process using @mesh/sdk-ts over NDJSON on its stdio) served by
 * @mesh/runtime-state in a runtime host process, and with the raw @nats-io/kv client doing the same work —
 * and printed with its ratio (mesh / raw). `--smoke` runs every line with tiny sizes (the test suite does).
 *
 *   node dist/bench.js [--smoke] [--only getput,watch,memory,fanout,raise,grants,secrets] [--runs N] [--json file]
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { parseArgs } from "node:util";
import { serverVersion } from "@mesh/local-nats";
import { reapOnSignals } from "@mesh/nats-harness";
import { DEFAULT_LIMITS } from "@mesh/runtime-state";
import { benchComposition } from "./compose.js";
import { hostCpu, meshCpu, perCall, pidCpu } from "./cpu.js";
import { benchFleet, type FleetSizes } from "./fleet.js";
import { getPut } from "./getput.js";
import { Host } from "./hosts.js";
import { phase, writePhases } from "./profile.js";
import { benchRaise } from "./raise.js";
import { bytes, count, emit, MiB, note, rows } from "./report.js";
import { benchSecretScan, ORDINARY_OBJECTS } from "./secrets.js";
import { header } from "./table.js";
import { benchValue, median, quantile, VALUE_BYTES, wallClock } from "./workload.js";
import { BUCKETS, createWorld, fill, natsBucket, type World } from "./world.js";

const SECTIONS = ["grants", "secrets", "getput", "watch", "memory", "fanout", "raise", "fleet"] as const;
/** Sections that start no server of main's own (fleet starts its own). */
const IN_PROCESS: readonly Section[] = ["grants", "secrets", "fleet"];
type Section = (typeof SECTIONS)[number];

const FULL = {
  runs: 3,
  sequential: 3_000,
  warmup: 500,
  pipelined: 20_000,
  inFlight: 64,
  itemKeys: 1_000,
  watchKeys: 10_000,
  fullBytes: 64 * 1024 * 1024,
  fullValueBytes: 1_024,
  runtimes: 10,
  bundlesPerRuntime: 10,
  ticks: 20,
  slowDelayMs: 50,
  raiseBuckets: 1_000,
  grantModules: 1_000,
  grantIterations: 20,
  secretScanIterations: 200,
  largeOps: 40,
  fleet: {
    machines: 100,
    bundlesPerMachine: 2,
    ticks: 20,
    seedKeys: 100,
    hosts: 4,
    restart: false,
    nodes: 1,
  } as FleetSizes,
};
export type Sizes = typeof FULL;
const SMOKE: Sizes = {
  runs: 1,
  sequential: 100,
  warmup: 20,
  pipelined: 300,
  inFlight: 64,
  itemKeys: 100,
  watchKeys: 300,
  fullBytes: 512 * 1024,
  fullValueBytes: 1_024,
  runtimes: 2,
  bundlesPerRuntime: 2,
  ticks: 3,
  slowDelayMs: 50,
  raiseBuckets: 20,
  grantModules: 20,
  grantIterations: 3,
  secretScanIterations: 3,
  largeOps: 4,
  fleet: { machines: 3, bundlesPerMachine: 2, ticks: 3, seedKeys: 10, hosts: 2, restart: true, nodes: 1 } as FleetSizes,
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      smoke: { type: "boolean", default: false },
      only: { type: "string" },
      runs: { type: "string" },
      json: { type: "string" },
      machines: { type: "string" },
      "bundles-per-machine": { type: "string" },
      "fleet-hosts": { type: "string" },
      "fleet-restart": { type: "boolean" },
      "fleet-nodes": { type: "string" },
    },
  });
  const sizes: Sizes = { ...(values.smoke ? SMOKE : FULL) };
  if (values.runs !== undefined) sizes.runs = Math.max(1, Number(values.runs));
  sizes.fleet = {
    ...sizes.fleet,
    ...(values.machines === undefined ? {} : { machines: Math.max(1, Number(values.machines)) }),
    ...(values["bundles-per-machine"] === undefined
      ? {}
      : { bundlesPerMachine: Math.max(1, Number(values["bundles-per-machine"])) }),
    ...(values["fleet-hosts"] === undefined ? {} : { hosts: Math.max(1, Number(values["fleet-hosts"])) }),
    ...(values["fleet-restart"] === undefined ? {} : { restart: values["fleet-restart"] }),
    ...(values["fleet-nodes"] === undefined ? {} : { nodes: fleetNodes(values["fleet-nodes"]) }),
  };
  const only = new Set((values.only?.split(",") ?? SECTIONS) as Section[]);
  for (const section of only)
    if (!SECTIONS.includes(section)) throw new Error(`unknown section ${section}: ${SECTIONS.join(", ")}`);

  const machine = {
    date: new Date().toISOString(),
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    loadAverage: os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(" "),
    node: process.version,
    natsServer: await serverVersion(),
    mode: values.smoke
      ? "smoke (tiny sizes: the figures mean nothing)"
      : `full, ${sizes.runs} runs per figure (median)`,
  };
  console.log(`mesh-state bench · ${machine.date}`);
  console.log(`  ${machine.cpus}, ${machine.memory}, load average ${machine.loadAverage}`);
  console.log(`  node ${machine.node}, nats-server ${machine.natsServer}, ${machine.mode}`);
  console.log(
    `  ratio = mesh / raw; mesh = bundle -> NDJSON stdio -> runtime-state -> NATS; raw = @nats-io/kv on its own connection\n`,
  );
  console.log(header());

  const hosts: Host[] = [];
  const startHost = async (who: World["raw"], name: string, nodeFlags: string[] = []) => {
    const host = await Host.start(world.url, who, name, nodeFlags);
    hosts.push(host);
    return host;
  };
  const stopHosts = async (some: Host[]) => {
    await Promise.all(some.map((host) => host.stop()));
    for (const host of some) hosts.splice(hosts.indexOf(host), 1);
  };

  if (only.has("grants")) grants(sizes);
  if (only.has("secrets")) secrets(sizes);
  if (only.has("fleet")) await fleet(sizes.fleet);
  const needsServer = [...only].some((section) => !IN_PROCESS.includes(section));
  if (!needsServer) return finish(values.json, machine);
  const world = await createWorld({ machines: Math.max(2, sizes.runtimes), fullBytes: sizes.fullBytes });
  try {
    if (only.has("getput")) await getPut(world, sizes, startHost, stopHosts);
    if (only.has("watch") || only.has("memory")) {
      await fill(world.rawJs, natsBucket(BUCKETS.keys), { count: sizes.watchKeys, valueBytes: VALUE_BYTES });
      world.fullKeys = await fill(world.rawJs, natsBucket(BUCKETS.full), {
        count: Number.MAX_SAFE_INTEGER,
        valueBytes: sizes.fullValueBytes,
        untilFull: true,
      });
    }
    if (only.has("watch")) await watch(world, sizes, startHost, stopHosts);
    if (only.has("memory")) await memory(world, sizes, startHost, stopHosts);
    if (only.has("fanout")) await fanout(world, sizes, startHost, stopHosts);
    if (only.has("raise")) await raiseSection(world, sizes);
  } finally {
    await Promise.all(hosts.map((host) => host.stop()));
    await world[Symbol.asyncDispose]();
    writePhases();
  }
  finish(values.json, machine);
}

function finish(json: string | undefined, machine: Record<string, string>): void {
  const targets = rows.filter((row) => row.target);
  const missed = targets.filter((row) => !row.target!.met);
  console.log(
    `\ntargets: ${targets.length - missed.length} met, ${missed.length} missed${missed.length ? ` (${missed.map((row) => row.metric).join("; ")})` : ""}`,
  );
  if (json) writeFileSync(json, `${JSON.stringify({ machine, rows }, null, 2)}\n`);
}

export type StartHost = (who: World["raw"], name: string, nodeFlags?: string[]) => Promise<Host>;
export type StopHosts = (hosts: Host[]) => Promise<void>;

function grants(sizes: Sizes): void {
  const figures = benchComposition(sizes.grantModules, sizes.grantIterations);
  emit({
    metric: `grant: compose one machine with ${count(sizes.grantModules)} modules × ${figures.bucketsPerModule} buckets, vs plain strings`,
    unit: "ms",
    mesh: figures.composeMs,
    raw: figures.plainMs,
  });
  note(`${count(figures.subjects)} publish subjects; the baseline builds the same list with no validation or lookup`);
}

function secrets(sizes: Sizes): void {
  const figures = benchSecretScan(sizes.runs, sizes.secretScanIterations);
  emit({
    metric: `secret scan, ${Math.round(figures.bytes / 1024)} KiB ordinary value (${count(ORDINARY_OBJECTS)} objects), vs JSON.stringify`,
    unit: "µs",
    mesh: figures.scanMicros,
    raw: figures.stringifyMicros,
  });
  note("findCredential: field names and string shapes in one walk; the baseline encodes the same value once");
}

async function watch(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const runtime = await startHost(world.machines[0]!, "runtime-watch");
  await runtime.request({ cmd: "start-bundle", bundle: "b0", membership: world.membership });
  const rawHost = await startHost(world.raw, "raw-watch");
  // A host of its own, so that the raw line's process warms up on the raw client's work alone.
  const floorHost = await startHost(world.raw, "floor-watch");
  const serverPid = world.mesh.server?.pid;
  const cases = [
    {
      bucket: BUCKETS.keys,
      keys: sizes.watchKeys,
      label: `${count(sizes.watchKeys)} keys of ${VALUE_BYTES} B`,
      target: 1.5,
    },
    {
      bucket: BUCKETS.full,
      keys: world.fullKeys,
      label: `full ${bytes(sizes.fullBytes)} bucket (${count(world.fullKeys)} keys of ${bytes(sizes.fullValueBytes)})`,
      target: undefined,
    },
  ];
  for (const { bucket, keys, label, target } of cases) {
    const times = { raw: [] as number[], mesh: [] as number[], floor: [] as number[] };
    const cpu = {
      raw: [] as number[],
      runtime: [] as number[],
      bundle: [] as number[],
      floorHost: [] as number[],
      floorChild: [] as number[],
      rawServer: [] as number[],
      floorServer: [] as number[],
      meshServer: [] as number[],
    };
    for (let run = 0; run < sizes.runs; run++) {
      // Each side's run with the CPU nats-server spent serving it: the pull consumer and the push one differ.
      const { result: rawRun, cpu: rawServer } = await pidCpu(serverPid, () =>
        hostCpu(rawHost, () =>
          phase(`raw time to current ${bucket}`, keys, () =>
            rawHost.request<{ ms: number; entries: number }>({
              cmd: "raw-time-to-current",
              bucket: natsBucket(bucket),
              expected: keys,
            }),
          ),
        ),
      );
      const { result: floorRun, cpu: floorServer } = await pidCpu(serverPid, () =>
        hostCpu(floorHost, () =>
          phase(`floor time to current ${bucket}`, keys, () =>
            floorHost.request<{ ms: number; entries: number; childCpu: number }>({
              cmd: "floor-time-to-current",
              bucket: natsBucket(bucket),
              expected: keys,
              batchEvents: DEFAULT_LIMITS.batchEvents,
              batchLineBytes: DEFAULT_LIMITS.batchLineBytes,
            }),
          ),
        ),
      );
      const { result: meshRun, cpu: meshServer } = await pidCpu(serverPid, () =>
        meshCpu(runtime, "b0", () =>
          phase(`mesh time to current ${bucket}`, keys, () =>
            runtime.bundle<{ ms: number; puts: number }>("b0", { cmd: "time-to-current", bucket }),
          ),
        ),
      );
      const got = { bundle: meshRun.result.puts, raw: rawRun.result.entries, floor: floorRun.result.entries };
      if (Object.values(got).some((entries) => entries !== keys)) {
        throw new Error(`watch of ${bucket}: of ${keys} values, ${JSON.stringify(got)} arrived`);
      }
      times.raw.push(rawRun.result.ms);
      times.mesh.push(meshRun.result.ms);
      times.floor.push(floorRun.result.ms);
      cpu.raw.push(perCall(rawRun.cpu, keys));
      cpu.runtime.push(perCall(meshRun.runtime, keys));
      cpu.bundle.push(perCall(meshRun.bundle, keys));
      cpu.floorHost.push(perCall(floorRun.cpu, keys));
      cpu.floorChild.push(perCall(floorRun.result.childCpu, keys));
      cpu.rawServer.push(perCall(rawServer, keys));
      cpu.floorServer.push(perCall(floorServer, keys));
      cpu.meshServer.push(perCall(meshServer, keys));
    }
    const mesh = median(times.mesh);
    const raw = median(times.raw);
    emit({
      metric: `watch: time to current, ${label}`,
      unit: "ms",
      mesh,
      raw,
      floor: median(times.floor),
      ...(target === undefined ? {} : { target: { text: `≤ ${target}x`, met: mesh <= target * raw } }),
    });
    // Each run in order: the first is every process's first watch (its code cold), the median often the second.
    const runs = times.raw.map((rawMs, run) =>
      [rawMs, times.floor[run]!, times.mesh[run]!].map((ms) => ms.toFixed(0)).join(" / "),
    );
    note(`${label}, run by run, raw / floor / mesh (ms): ${runs.join("; ")}`);
    for (const side of ["runtime", "bundle"] as const) {
      emit({
        metric: `watch: time to current, ${label}: ${side} CPU per key, vs the raw client's`,
        unit: "µs",
        mesh: median(cpu[side]),
        raw: median(cpu.raw),
        floor: median(side === "runtime" ? cpu.floorHost : cpu.floorChild),
      });
    }
    emit({
      metric: `watch: time to current, ${label}: nats-server CPU per key, serving each side`,
      unit: "µs",
      mesh: median(cpu.meshServer),
      raw: median(cpu.rawServer),
      floor: median(cpu.floorServer),
    });
    emit({
      metric: `watch: time to current, ${label}: CPU per key of every process on the path`,
      unit: "µs",
      mesh: median(runSums(cpu.runtime, cpu.bundle, cpu.meshServer)),
      raw: median(runSums(cpu.raw, cpu.rawServer)),
      floor: median(runSums(cpu.floorHost, cpu.floorChild, cpu.floorServer)),
    });
  }
  note(
    `watch floor: the raw client's ordered pull consumer, its messages sent as mesh/state batches (as the runtime cuts them, one in flight) to an echo child over stdio`,
  );
  note("watch CPU floors: runtime = that sender (raw client + batching + pipe writes); bundle = the echo child");
  note(
    "every process on the path: mesh = runtime + bundle + nats-server; raw = the raw client + nats-server; floor = the floor's sender + its child + nats-server",
  );
  await stopHosts([runtime, rawHost, floorHost]);
}

/** Per run, the sum of the processes' figures of that run: the median of sums, not the sum of medians. */
function runSums(...series: number[][]): number[] {
  return series[0]!.map((_, run) => series.reduce((sum, figures) => sum + figures[run]!, 0));
}

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

async function memory(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
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

async function fanout(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const { runtimes, bundlesPerRuntime } = sizes;
  const watchers = runtimes * bundlesPerRuntime;
  for (const bucket of [BUCKETS.fanout, BUCKETS.fanoutRaw]) {
    await world.rawJs.publish(`$KV.${natsBucket(bucket)}.seed`, JSON.stringify(benchValue(0)));
  }
  const meshHosts = await Promise.all(
    Array.from({ length: runtimes }, async (_, index) => {
      const host = await startHost(world.machines[index]!, `runtime-fanout-${index}`);
      for (let bundle = 0; bundle < bundlesPerRuntime; bundle++) {
        await host.request({ cmd: "start-bundle", bundle: `b${bundle}`, membership: world.membership });
      }
      await Promise.all(
        Array.from({ length: bundlesPerRuntime }, (_, bundle) =>
          host.bundle(`b${bundle}`, { cmd: "follow", bucket: BUCKETS.fanout }),
        ),
      );
      return host;
    }),
  );
  const latencies = { mesh: [] as number[], raw: [] as number[] };
  const lastArrivals = { mesh: [] as number[], raw: [] as number[] };
  const tick = async (side: "mesh" | "raw", hosts: Host[], bucket: string, index: number) => {
    const key = `tick.${side}.${index}`;
    const arrivals: number[] = [];
    let allArrived!: () => void;
    const arrived = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    const unsubscribe = hosts.map((host) =>
      host.onEvent((event) => {
        if (event.key !== key) return;
        arrivals.push(Number(event.arrived));
        if (arrivals.length === watchers) allArrived();
      }),
    );
    const sent = wallClock();
    await world.rawJs.publish(`$KV.${natsBucket(bucket)}.${key}`, JSON.stringify(benchValue(index)));
    const timeout = setTimeout(() => allArrived(), 20_000);
    await arrived;
    clearTimeout(timeout);
    for (const stop of unsubscribe) stop();
    if (arrivals.length !== watchers)
      throw new Error(`${key} reached ${arrivals.length} of ${watchers} watchers in 20 s`);
    const delays = arrivals.map((at) => at - sent);
    latencies[side].push(...delays);
    lastArrivals[side].push(Math.max(...delays));
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  for (let index = 0; index < sizes.ticks; index++) {
    await tick("mesh", meshHosts, BUCKETS.fanout, index);
    await settle();
  }
  await stopHosts(meshHosts);
  // As many raw processes as bundles, one after the other so the machine never holds both sets at once.
  const rawHosts = await Promise.all(
    Array.from({ length: watchers }, async (_, index) => {
      const host = await startHost(world.raw, `raw-fanout-${index}`);
      await host.request({ cmd: "raw-follow", bucket: natsBucket(BUCKETS.fanoutRaw), watches: 1 });
      return host;
    }),
  );
  for (let index = 0; index < sizes.ticks; index++) {
    await tick("raw", rawHosts, BUCKETS.fanoutRaw, index);
    await settle();
  }
  await stopHosts(rawHosts);
  const label = `watch fan-out: one change to ${watchers} bundles on ${runtimes} runtimes`;
  emit({ metric: `${label}, p50`, unit: "ms", mesh: quantile(latencies.mesh, 0.5), raw: quantile(latencies.raw, 0.5) });
  emit({
    metric: `${label}, p99`,
    unit: "ms",
    mesh: quantile(latencies.mesh, 0.99),
    raw: quantile(latencies.raw, 0.99),
  });
  emit({
    metric: `${label}, last arrival (median of ${sizes.ticks})`,
    unit: "ms",
    mesh: median(lastArrivals.mesh),
    raw: median(lastArrivals.raw),
  });
  note(`raw: ${count(watchers)} processes (one per bundle), each with its own connection and one kv.watch()`);
}

async function raiseSection(world: World, sizes: Sizes): Promise<void> {
  const figures = await benchRaise(world, sizes.raiseBuckets);
  const n = count(figures.buckets);
  const { mesh, raw } = figures;
  emit({ metric: `raise ${n} declared buckets, first time`, unit: "ms", mesh: mesh.first.ms, raw: raw.first.ms });
  emit({
    metric: `raise ${n} declared buckets, first time`,
    unit: "JetStream API requests",
    mesh: mesh.first.requests,
    raw: raw.first.requests,
  });
  emit({ metric: `raise ${n} declared buckets again`, unit: "ms", mesh: mesh.again.ms, raw: raw.again.ms });
  const againMet = mesh.again.writes === 0 && mesh.again.lists <= 5 && mesh.againUnchanged === figures.buckets;
  emit({
    metric: `raise ${n} declared buckets again`,
    unit: "JetStream API requests",
    mesh: mesh.again.requests,
    raw: raw.again.requests,
    target: { text: `0 writes, ≤ 5 lists (${mesh.again.writes} writes, ${mesh.again.lists} lists)`, met: againMet },
  });
  note(
    `raw: kvm.create() for each bucket, one after another; writes: raise ${mesh.first.writes} then ${mesh.again.writes}, kvm.create() ${raw.first.writes} then ${raw.again.writes}`,
  );
}

function fleetNodes(value: string): FleetSizes["nodes"] {
  if (value === "1" || value === "3") return Number(value) as FleetSizes["nodes"];
  throw new Error(`--fleet-nodes ${value}: 1 (one server) or 3 (a three-node cluster, the bucket R3)`);
}

/** The fleet runs on a server (or cluster) of its own (its N + 1 machine users): fleet.ts. */
async function fleet(sizes: FleetSizes): Promise<void> {
  const figures = await benchFleet(sizes);
  const { machines, bundlesPerMachine } = sizes;
  const fleetLabel = `fleet of ${count(machines)} machines × ${bundlesPerMachine} bundles${sizes.nodes === 3 ? " on 3 nodes (R3)" : ""}`;
  emit({
    metric: `${fleetLabel}: consumers on the bucket (raw: one per machine)`,
    unit: "consumers",
    mesh: figures.consumers,
    raw: machines,
    target: { text: "one per machine", met: figures.consumers === machines },
  });
  const watchers = `one change to ${count(figures.watchers)} watchers`;
  emit({ metric: `${fleetLabel}: ${watchers}, p50`, unit: "ms", mesh: figures.fanout.p50, raw: figures.fanout.rawP50 });
  emit({ metric: `${fleetLabel}: ${watchers}, p99`, unit: "ms", mesh: figures.fanout.p99, raw: figures.fanout.rawP99 });
  emit({
    metric: `${fleetLabel}: ${watchers}, last arrival (median of ${sizes.ticks})`,
    unit: "ms",
    mesh: figures.fanout.last,
    raw: figures.fanout.rawLast,
  });
  note("raw: one @nats-io/kv watch of the same bucket in the bench process (its slowest arrival for last)");
  emit({
    metric: `${fleetLabel}: machine N + 1's time to current (${count(figures.joiner.keys)} keys)`,
    unit: "ms",
    mesh: figures.joiner.ms,
    raw: figures.joiner.rawMs,
  });
  const KiB = 1024;
  emit({
    metric: `${fleetLabel}: server RSS per watching machine (raw: connected, not watching)`,
    unit: "KiB",
    mesh: figures.serverRssPerMachine.watching / KiB,
    raw: figures.serverRssPerMachine.connected / KiB,
  });
  emit({
    metric: `${fleetLabel}: runtime RSS per machine, one shared watch (raw: connected only)`,
    unit: "KiB",
    mesh: figures.runtimeRssPerMachine.watching / KiB,
    raw: figures.runtimeRssPerMachine.connected / KiB,
  });
  note(
    `${count(figures.shared)} shared watches holding ${(figures.heldBytesPerShared / KiB).toFixed(1)} KiB of view each; the fleet watched in ${(figures.fleetWatchMs / 1000).toFixed(1)} s`,
  );
  emit({
    metric: `${fleetLabel}: compose the fleet's ${count(machines + 1)} grants (raw: render the account)`,
    unit: "ms",
    mesh: figures.grants.composeMs,
    raw: figures.grants.renderMs,
  });
  note(
    `a machine's grant: ${figures.grants.allowPerMachine} allow subjects, ${figures.grants.bytesPerMachine} B of JSON`,
  );
  const restart = figures.restart;
  if (!restart) return;
  note(`the fault: ${restart.fault}`);
  emit({
    metric: `${fleetLabel}: the fault, then every watcher has the next change (raw: the fault alone)`,
    unit: "ms",
    mesh: restart.recoveredMs,
    raw: restart.restartMs,
    target: { text: "≤ 30 s", met: restart.recoveredMs <= 30_000 },
  });
  note(
    `JetStream took the first write ${(restart.writtenMs / 1000).toFixed(1)} s after the kill; every watcher had it ${((restart.recoveredMs - restart.writtenMs) / 1000).toFixed(2)} s later`,
  );
  emit({
    metric: `${fleetLabel}: watchers with the first change after the fault`,
    unit: "watchers",
    mesh: restart.recoveredWatchers,
    raw: figures.watchers,
    target: {
      text: `all, ${restart.endedWatchers} watches ended`,
      met: restart.recoveredWatchers === figures.watchers,
    },
  });
  emit({
    metric: `${fleetLabel}: machines whose watch recovered on a new consumer (raw: every machine)`,
    unit: "machines",
    mesh: restart.recoveredMachines,
    raw: machines,
  });
  const seconds = ({ p50Ms, lastMs }: { p50Ms: number; lastMs: number }) =>
    `${(p50Ms / 1000).toFixed(2)} s (p50) to ${(lastMs / 1000).toFixed(2)} s`;
  for (const { reason, machines: count, began, back, mostAttempts } of restart.recoveryReasons)
    note(
      `${count} recovered on "${reason}": began ${seconds(began)} after the kill, back on a new consumer ${seconds(back)}, in at most ${mostAttempts} creates over its recoveries`,
    );
  const failed = Object.entries(restart.failedAttempts).map(([kind, count]) => `${count} ${kind}`);
  if (failed.length > 0) note(`the recoveries' failed attempts: ${failed.join(", ")}`);
  const exact = restart.viewsMatching === figures.watchers && restart.doubled === 0;
  emit({
    metric: `${fleetLabel}: views equal to the bucket after the fault and ${restart.changesAfter} changes`,
    unit: "watchers",
    mesh: restart.viewsMatching,
    raw: figures.watchers,
    target: { text: `all, ${restart.doubled} doubled`, met: exact },
  });
  emit({
    metric: `${fleetLabel}: consumers after the fault (raw: one per machine)`,
    unit: "consumers",
    mesh: restart.consumersAfter,
    raw: machines,
    target: { text: "one per machine", met: restart.consumersAfter === machines },
  });
  note(
    `consumers counted ${(restart.consumersSettledMs / 1000).toFixed(1)} s after the ${restart.changesAfter} changes`,
  );
  emit({
    metric: `${fleetLabel}: consumers left once the fleet stopped (raw: none)`,
    unit: "consumers",
    mesh: restart.consumersAfterStop,
    raw: 0,
    target: { text: "none", met: restart.consumersAfterStop === 0 },
  });
}

// A bench stopped by Ctrl-C or `timeout` leaves no nats-server behind: they run in their own process groups.
reapOnSignals();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
