/**
 * `pnpm bench`: what the runtime hop costs. Every figure is measured twice in the same run against the same
 * nats-server — through a bundle (a child process using @mesh/sdk-ts over NDJSON on its stdio) served by
 * @mesh/runtime-state in a runtime host process, and with the raw @nats-io/kv client doing the same work —
 * and printed with its ratio (mesh / raw). `--smoke` runs every line with tiny sizes (the test suite does).
 *
 *   node dist/bench.js [--smoke] [--only getput,watch,memory,fanout,raise,grants] [--runs N] [--json file]
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { parseArgs } from "node:util";
import { serverVersion } from "@mesh/nats-harness";
import { Kvm } from "@nats-io/kv";
import { benchComposition } from "./compose.js";
import { benchFleet, type FleetSizes } from "./fleet.js";
import { Host } from "./hosts.js";
import { benchRaise } from "./raise.js";
import { formatRow, header, type Row } from "./table.js";
import {
  benchValue,
  median,
  quantile,
  runPipelined,
  runSequential,
  type SequentialRun,
  sequentialFigures,
  VALUE_BYTES,
  wallClock,
} from "./workload.js";
import { BUCKETS, createWorld, fill, natsBucket, type World } from "./world.js";

const SECTIONS = ["grants", "getput", "watch", "memory", "fanout", "raise", "fleet"] as const;
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
  fleet: { machines: 100, bundlesPerMachine: 2, ticks: 20, seedKeys: 100, hosts: 4, restart: false } as FleetSizes,
};
type Sizes = typeof FULL;
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
  fleet: { machines: 3, bundlesPerMachine: 2, ticks: 3, seedKeys: 10, hosts: 2, restart: true },
};

const MiB = 1024 * 1024;
const count = (n: number) => n.toLocaleString("en-US");
const bytes = (n: number) => (n >= MiB ? `${n / MiB} MiB` : `${n / 1024} KiB`);

const rows: Row[] = [];
function emit(row: Row): void {
  rows.push(row);
  console.log(formatRow(row));
}
function note(text: string): void {
  console.log(`  · ${text}`);
}

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
  const startHost = async (who: World["raw"], name: string) => {
    const host = await Host.start(world.url, who, name);
    hosts.push(host);
    return host;
  };
  const stopHosts = async (some: Host[]) => {
    await Promise.all(some.map((host) => host.stop()));
    for (const host of some) hosts.splice(hosts.indexOf(host), 1);
  };

  if (only.has("grants")) grants(sizes);
  if (only.has("fleet")) await fleet(sizes.fleet);
  const needsServer = [...only].some((section) => section !== "grants" && section !== "fleet");
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

type StartHost = (who: World["raw"], name: string) => Promise<Host>;
type StopHosts = (hosts: Host[]) => Promise<void>;

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

async function getPut(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const bucket = natsBucket(BUCKETS.items);
  await fill(world.rawJs, bucket, { count: sizes.itemKeys, valueBytes: VALUE_BYTES });
  const host = await startHost(world.machines[0]!, "runtime-getput");
  await host.request({ cmd: "start-bundle", bundle: "b0", membership: world.membership });
  const kv = await new Kvm(world.rawConnection).open(bucket, { allow_direct: true } as never);
  const keys = sizes.itemKeys;
  const raw = {
    put: (index: number) => kv.put(`k.${index % keys}`, JSON.stringify(benchValue(index))),
    get: async (index: number) => (await kv.get(`k.${index % keys}`))?.json(),
  };
  const mesh = <T>(op: "get" | "put", cmd: "sequential" | "pipelined", extra: Record<string, unknown>) =>
    host.bundle<T>("b0", { cmd, op, bucket: BUCKETS.items, keys, ...extra });

  for (const op of ["put", "get"] as const) {
    await runSequential(sizes.warmup, raw[op]);
    await mesh(op, "sequential", { count: sizes.warmup });
    await runPipelined(sizes.warmup, sizes.inFlight, raw[op]);
    await mesh(op, "pipelined", { count: sizes.warmup, inFlight: sizes.inFlight });
  }
  for (const op of ["put", "get"] as const) {
    const figures = {
      raw: [] as ReturnType<typeof sequentialFigures>[],
      mesh: [] as ReturnType<typeof sequentialFigures>[],
    };
    const pipelined = { raw: [] as number[], mesh: [] as number[] };
    for (let run = 0; run < sizes.runs; run++) {
      figures.raw.push(sequentialFigures(await runSequential(sizes.sequential, raw[op])));
      figures.mesh.push(sequentialFigures(await mesh<SequentialRun>(op, "sequential", { count: sizes.sequential })));
      const rawMs = await runPipelined(sizes.pipelined, sizes.inFlight, raw[op]);
      pipelined.raw.push((sizes.pipelined / rawMs) * 1000);
      const meshMs = await mesh<number>(op, "pipelined", { count: sizes.pipelined, inFlight: sizes.inFlight });
      pipelined.mesh.push((sizes.pipelined / meshMs) * 1000);
    }
    const pick = (side: "raw" | "mesh", field: "opsPerSecond" | "p50Ms" | "p99Ms") =>
      median(figures[side].map((f) => f[field]));
    const p50 = { mesh: pick("mesh", "p50Ms"), raw: pick("raw", "p50Ms") };
    const inFlight = { mesh: median(pipelined.mesh), raw: median(pipelined.raw) };
    const label = `${op} ${VALUE_BYTES} B`;
    emit({
      metric: `${label}, sequential`,
      unit: "ops/s",
      mesh: pick("mesh", "opsPerSecond"),
      raw: pick("raw", "opsPerSecond"),
    });
    emit({
      metric: `${label}, sequential p50 latency`,
      unit: "ms",
      ...p50,
      target: { text: "≤ 1.5x", met: p50.mesh <= 1.5 * p50.raw },
    });
    emit({
      metric: `${label}, sequential p99 latency`,
      unit: "ms",
      mesh: pick("mesh", "p99Ms"),
      raw: pick("raw", "p99Ms"),
    });
    emit({
      metric: `${label}, ${sizes.inFlight} in flight`,
      unit: "ops/s",
      ...inFlight,
      target: { text: "≥ 0.7x", met: inFlight.mesh >= 0.7 * inFlight.raw },
    });
  }
  await stopHosts([host]);
}

async function watch(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const runtime = await startHost(world.machines[0]!, "runtime-watch");
  await runtime.request({ cmd: "start-bundle", bundle: "b0", membership: world.membership });
  const rawHost = await startHost(world.raw, "raw-watch");
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
    const times = { raw: [] as number[], mesh: [] as number[] };
    for (let run = 0; run < sizes.runs; run++) {
      const rawRun = await rawHost.request<{ ms: number; entries: number }>({
        cmd: "raw-time-to-current",
        bucket: natsBucket(bucket),
        expected: keys,
      });
      const meshRun = await runtime.bundle<{ ms: number; puts: number }>("b0", { cmd: "time-to-current", bucket });
      if (meshRun.puts !== keys || rawRun.entries !== keys) {
        throw new Error(
          `watch of ${bucket}: the bundle got ${meshRun.puts} values, the raw client ${rawRun.entries}, of ${keys}`,
        );
      }
      times.raw.push(rawRun.ms);
      times.mesh.push(meshRun.ms);
    }
    const mesh = median(times.mesh);
    const raw = median(times.raw);
    emit({
      metric: `watch: time to current, ${label}`,
      unit: "ms",
      mesh,
      raw,
      ...(target === undefined ? {} : { target: { text: `≤ ${target}x`, met: mesh <= target * raw } }),
    });
  }
  await stopHosts([runtime, rawHost]);
}

async function memory(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const runtime = await startHost(world.machines[1]!, "runtime-memory");
  await runtime.request({ cmd: "start-bundle", bundle: "slow", membership: world.membership, mode: "slow" });
  const rawHost = await startHost(world.raw, "raw-memory");
  type Usage = { rss: number; heapTotal: number; external: number; arrayBuffers: number };
  const before = await runtime.request<Usage>({ cmd: "memory-reset" });
  const meshRun = await runtime.bundle<{ ms: number; events: number; batches: number }>("slow", {
    cmd: "slow-watch",
    bucket: BUCKETS.full,
    delayMs: sizes.slowDelayMs,
  });
  const meshPeak = await runtime.request<Usage & { peak: number }>({ cmd: "memory-peak" });
  const rawBefore = await rawHost.request<{ rss: number }>({ cmd: "memory-reset" });
  const rawRun = await rawHost.request<{ ms: number; entries: number }>({
    cmd: "raw-slow-watch",
    bucket: natsBucket(BUCKETS.full),
    expected: world.fullKeys,
    batch: 256,
    delayMs: sizes.slowDelayMs,
  });
  const rawPeak = await rawHost.request<{ peak: number }>({ cmd: "memory-peak" });
  const growth = (meshPeak.peak - before.rss) / MiB;
  emit({
    metric: `memory: runtime peak RSS growth, ${sizes.slowDelayMs} ms-per-batch bundle watching full ${bytes(sizes.fullBytes)}`,
    unit: "MiB",
    mesh: growth,
    raw: (rawPeak.peak - rawBefore.rss) / MiB,
    target: { text: "< 32 MiB", met: growth < 32 },
  });
  emit({ metric: "memory: that slow watch, time to current", unit: "ms", mesh: meshRun.ms, raw: rawRun.ms });
  const grew = (field: keyof Usage) => `${field} +${((meshPeak[field] - before[field]) / MiB).toFixed(1)}`;
  note(
    `runtime RSS ${(before.rss / MiB).toFixed(0)} MiB before; at most ${grew("heapTotal")}, ${grew("external")}, ${grew("arrayBuffers")} MiB; ${meshRun.events} events in ${meshRun.batches} batches`,
  );
  note(`raw: kv.watch() in a process alike, its consumer sleeping ${sizes.slowDelayMs} ms every 256 entries`);
  await stopHosts([runtime, rawHost]);
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

/** The fleet runs on a server of its own (its N + 1 machine users): fleet.ts. */
async function fleet(sizes: FleetSizes): Promise<void> {
  const figures = await benchFleet(sizes);
  const { machines, bundlesPerMachine } = sizes;
  const fleetLabel = `fleet of ${count(machines)} machines × ${bundlesPerMachine} bundles`;
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
  emit({
    metric: `${fleetLabel}: server killed and restarted, every watcher has the next change (raw: restart alone)`,
    unit: "ms",
    mesh: restart.recoveredMs,
    raw: restart.restartMs,
    target: { text: "≤ 30 s", met: restart.recoveredMs <= 30_000 },
  });
  note(
    `JetStream took the first write ${(restart.writtenMs / 1000).toFixed(1)} s after the kill; every watcher had it ${((restart.recoveredMs - restart.writtenMs) / 1000).toFixed(2)} s later`,
  );
  emit({
    metric: `${fleetLabel}: watchers with the first change after the restart`,
    unit: "watchers",
    mesh: restart.recoveredWatchers,
    raw: figures.watchers,
    target: {
      text: `all, ${restart.endedWatchers} watches ended`,
      met: restart.recoveredWatchers === figures.watchers,
    },
  });
  const exact = restart.viewsMatching === figures.watchers && restart.doubled === 0;
  emit({
    metric: `${fleetLabel}: views equal to the bucket after the restart and ${restart.changesAfter} changes`,
    unit: "watchers",
    mesh: restart.viewsMatching,
    raw: figures.watchers,
    target: { text: `all, ${restart.doubled} doubled`, met: exact },
  });
  emit({
    metric: `${fleetLabel}: consumers after the restart (raw: one per machine)`,
    unit: "consumers",
    mesh: restart.consumersAfter,
    raw: machines,
    target: { text: "one per machine", met: restart.consumersAfter === machines },
  });
  emit({
    metric: `${fleetLabel}: consumers left once the fleet stopped (raw: none)`,
    unit: "consumers",
    mesh: restart.consumersAfterStop,
    raw: 0,
    target: { text: "none", met: restart.consumersAfterStop === 0 },
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
