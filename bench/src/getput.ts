/**
 * The get/put section: the floor's echo (echo.ts), the mesh and the raw client doing sequential and pipelined
 * gets and puts of 256 B, the chain (chain.ts) beside a raw run of its own, and a 207 KiB ordinary value.
 */
import { type KV, Kvm } from "@nats-io/kv";
import { meshCpu, ownCpu, perCall } from "./cpu.js";
import { Echo } from "./echo.js";
import type { Host, StartHost, StopHosts } from "./hosts.js";
import { phase } from "./profile.js";
import { bytes, count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import {
  benchValue,
  LARGE_ITEMS,
  largeValue,
  median,
  runPipelined,
  runSequential,
  type SequentialFigures,
  type SequentialRun,
  sequentialFigures,
  series,
  VALUE_BYTES,
} from "./workload.js";
import { BUCKETS, fill, natsBucket, type World } from "./world.js";

/** Per-run figures of one side of a sequential or pipelined section. */
interface SideRuns {
  sequential: SequentialFigures[];
  perSecond: number[];
  /** CPU µs per call, sequential and pipelined. */
  cpu: { sequential: number[]; pipelined: number[] };
}
const sideRuns = (): SideRuns => ({ sequential: [], perSecond: [], cpu: { sequential: [], pipelined: [] } });
const pickSequential = (runs: SideRuns, field: keyof SequentialFigures) => median(runs.sequential.map((f) => f[field]));
/** ops/s of two costs paid one after the other per call: the raw client's, then the echo's round trip. */
const serialRate = (raw: number, echo: number) => 1 / (1 / raw + 1 / echo);

/** The floor's echo in both framings, `sizes.runs` times; see echo.ts. */
async function echoFloor(sizes: Sizes): Promise<{ peer: SideRuns & { child: SideRuns }; bare: SideRuns }> {
  const figures = { peer: { ...sideRuns(), child: sideRuns() }, bare: { ...sideRuns(), child: sideRuns() } };
  for (const framing of ["peer", "bare"] as const) {
    const echo = Echo.start(framing);
    try {
      await runSequential(sizes.warmup, echo.op);
      await runPipelined(sizes.warmup, sizes.inFlight, echo.op);
      const side = figures[framing];
      for (let run = 0; run < sizes.runs; run++) {
        const sequential = await echo.measure(() =>
          phase(`echo ${framing} sequential`, sizes.sequential, () => runSequential(sizes.sequential, echo.op)),
        );
        side.sequential.push(sequentialFigures(sequential.result));
        side.cpu.sequential.push(perCall(sequential.parent, sizes.sequential));
        side.child.cpu.sequential.push(perCall(sequential.child, sizes.sequential));
        const pipelined = await echo.measure(() =>
          phase(`echo ${framing} ${sizes.inFlight} in flight`, sizes.pipelined, () =>
            runPipelined(sizes.pipelined, sizes.inFlight, echo.op),
          ),
        );
        side.perSecond.push((sizes.pipelined / pipelined.result) * 1000);
        side.cpu.pipelined.push(perCall(pipelined.parent, sizes.pipelined));
        side.child.cpu.pipelined.push(perCall(pipelined.child, sizes.pipelined));
      }
    } finally {
      await echo.stop();
    }
  }
  const { peer, bare } = figures;
  const echoLabel = "floor: NDJSON echo of a put over stdio, state-protocol framing vs hand-written";
  emit({
    metric: `${echoLabel}, sequential p50 latency`,
    unit: "ms",
    mesh: pickSequential(peer, "p50Ms"),
    raw: pickSequential(bare, "p50Ms"),
  });
  emit({
    metric: `${echoLabel}, sequential p99 latency`,
    unit: "ms",
    mesh: pickSequential(peer, "p99Ms"),
    raw: pickSequential(bare, "p99Ms"),
  });
  emit({
    metric: `${echoLabel}, ${sizes.inFlight} in flight`,
    unit: "ops/s",
    mesh: median(peer.perSecond),
    raw: median(bare.perSecond),
  });
  for (const mode of ["sequential", "pipelined"] as const) {
    const how = mode === "sequential" ? "sequential" : `${sizes.inFlight} in flight`;
    emit({
      metric: `${echoLabel}, ${how}: sender's CPU per call`,
      unit: "µs",
      mesh: median(peer.cpu[mode]),
      raw: median(bare.cpu[mode]),
    });
    emit({
      metric: `${echoLabel}, ${how}: answerer's CPU per call`,
      unit: "µs",
      mesh: median(peer.child.cpu[mode]),
      raw: median(bare.child.cpu[mode]),
    });
  }
  note("the floor of a mesh figure = raw + the state-protocol echo (latency added, ops/s as 1 / (1/raw + 1/echo))");
  note(
    "CPU floors: runtime = raw client + the echo's answerer; bundle = the echo's sender (a bundle does no NATS work)",
  );
  return figures;
}

/** A bundle of a host doing get or put: the SDK bundle of a runtime host, or the chain's sender. */
interface BundleSide {
  name: string;
  host: Host;
  bundle: string;
  bucket: string;
  /** CPU µs per call of the host's process (`cpu`) and of the bundle's (`bundle.cpu`). */
  readonly figures: SideRuns & { bundle: SideRuns };
}

/** One run of `side` doing `op`, one call after another or `sizes.inFlight` in flight, into its figures. */
async function runBundleSide(
  side: BundleSide,
  op: "get" | "put",
  mode: "sequential" | "pipelined",
  sizes: Sizes,
  keys: number,
): Promise<void> {
  const calls = sizes[mode];
  const how = mode === "sequential" ? mode : `${sizes.inFlight} in flight`;
  const run = await meshCpu(side.host, side.bundle, () =>
    phase(`${side.name} ${op} ${how}`, calls, () =>
      side.host.bundle<SequentialRun | number>(side.bundle, {
        cmd: mode,
        op,
        bucket: side.bucket,
        keys,
        count: calls,
        inFlight: sizes.inFlight,
      }),
    ),
  );
  if (typeof run.result === "number") side.figures.perSecond.push((calls / run.result) * 1000);
  else side.figures.sequential.push(sequentialFigures(run.result));
  side.figures.cpu[mode].push(perCall(run.runtime, calls));
  side.figures.bundle.cpu[mode].push(perCall(run.bundle, calls));
}

const bundleSide = (name: string, host: Host, bundle: string, bucket: string): BundleSide => ({
  name,
  host,
  bundle,
  bucket,
  figures: { ...sideRuns(), bundle: sideRuns() },
});

async function warmUp(
  sizes: Sizes,
  raw: (index: number) => Promise<unknown>,
  side: BundleSide,
  op: "get" | "put",
  keys: number,
) {
  const warm = { ...sizes, sequential: sizes.warmup, pipelined: sizes.warmup };
  // Its figures are thrown away.
  const scratch = { ...side, figures: { ...sideRuns(), bundle: sideRuns() } };
  await runSequential(sizes.warmup, raw);
  await runBundleSide(scratch, op, "sequential", warm, keys);
  await runPipelined(sizes.warmup, sizes.inFlight, raw);
  await runBundleSide(scratch, op, "pipelined", warm, keys);
}

/** One run of the raw client and then `side`, sequential, then the two again with `sizes.inFlight` in flight. */
async function rawAndSide(
  sizes: Sizes,
  raw: (index: number) => Promise<unknown>,
  rawFigures: SideRuns,
  side: BundleSide,
  op: "get" | "put",
  keys: number,
): Promise<void> {
  // Named apart from the mesh's raw runs, so that a profile's sections do not mix them.
  const rawName = `raw ${op}${side.name === "mesh" ? "" : ` beside the ${side.name}`}`;
  const sequential = await ownCpu(() =>
    phase(`${rawName} sequential`, sizes.sequential, () => runSequential(sizes.sequential, raw)),
  );
  rawFigures.sequential.push(sequentialFigures(sequential.result));
  rawFigures.cpu.sequential.push(perCall(sequential.cpu, sizes.sequential));
  await runBundleSide(side, op, "sequential", sizes, keys);
  const pipelined = await ownCpu(() =>
    phase(`${rawName} ${sizes.inFlight} in flight`, sizes.pipelined, () =>
      runPipelined(sizes.pipelined, sizes.inFlight, raw),
    ),
  );
  rawFigures.perSecond.push((sizes.pipelined / pipelined.result) * 1000);
  rawFigures.cpu.pipelined.push(perCall(pipelined.cpu, sizes.pipelined));
  await runBundleSide(side, op, "pipelined", sizes, keys);
}

export async function getPut(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
  const bucket = natsBucket(BUCKETS.items);
  await fill(world.rawJs, bucket, { count: sizes.itemKeys, valueBytes: VALUE_BYTES });
  const echo = await echoFloor(sizes);
  const host = await startHost(world.machines[0]!, "runtime-getput");
  await host.request({ cmd: "start-bundle", bundle: "b0", membership: world.membership });
  const kv = await new Kvm(world.rawConnection).open(bucket, { allow_direct: true } as never);
  const keys = sizes.itemKeys;
  const raw = {
    put: (index: number) => kv.put(`k.${index % keys}`, JSON.stringify(benchValue(index))),
    get: async (index: number) => (await kv.get(`k.${index % keys}`))?.json(),
  };
  const mesh = {
    put: bundleSide("mesh", host, "b0", BUCKETS.items),
    get: bundleSide("mesh", host, "b0", BUCKETS.items),
  };

  for (const op of ["put", "get"] as const) await warmUp(sizes, raw[op], mesh[op], op, keys);
  for (const op of ["put", "get"] as const) {
    const figures = { raw: sideRuns(), mesh: mesh[op].figures, bundle: mesh[op].figures.bundle };
    for (let run = 0; run < sizes.runs; run++) await rawAndSide(sizes, raw[op], figures.raw, mesh[op], op, keys);
    const pick = (side: "raw" | "mesh", field: keyof SequentialFigures) => pickSequential(figures[side], field);
    const echoPick = (field: keyof SequentialFigures) => pickSequential(echo.peer, field);
    const p50 = { mesh: pick("mesh", "p50Ms"), raw: pick("raw", "p50Ms") };
    const inFlight = { mesh: median(figures.mesh.perSecond), raw: median(figures.raw.perSecond) };
    const label = `${op} ${VALUE_BYTES} B`;
    emit({
      metric: `${label}, sequential`,
      unit: "ops/s",
      mesh: pick("mesh", "opsPerSecond"),
      raw: pick("raw", "opsPerSecond"),
      floor: serialRate(pick("raw", "opsPerSecond"), echoPick("opsPerSecond")),
    });
    emit({
      metric: `${label}, sequential p50 latency`,
      unit: "ms",
      ...p50,
      floor: p50.raw + echoPick("p50Ms"),
      target: { text: "≤ 1.5x", met: p50.mesh <= 1.5 * p50.raw },
    });
    emit({
      metric: `${label}, sequential p99 latency`,
      unit: "ms",
      mesh: pick("mesh", "p99Ms"),
      raw: pick("raw", "p99Ms"),
      floor: pick("raw", "p99Ms") + echoPick("p99Ms"),
    });
    emit({
      metric: `${label}, ${sizes.inFlight} in flight`,
      unit: "ops/s",
      ...inFlight,
      floor: serialRate(inFlight.raw, median(echo.peer.perSecond)),
      target: { text: "≥ 0.7x", met: inFlight.mesh >= 0.7 * inFlight.raw },
    });
    for (const mode of ["sequential", "pipelined"] as const) {
      const how = mode === "sequential" ? "sequential" : `${sizes.inFlight} in flight`;
      const rawCpu = median(figures.raw.cpu[mode]);
      const runtimeCpu = median(figures.mesh.cpu[mode]);
      emit({
        metric: `${label}, ${how}: runtime CPU per call, vs the raw client's`,
        unit: "µs",
        mesh: runtimeCpu,
        raw: rawCpu,
        floor: rawCpu + median(echo.peer.child.cpu[mode]),
        ...(op === "put" ? { target: { text: "≤ raw + 25 µs", met: runtimeCpu <= rawCpu + 25 } } : {}),
      });
      emit({
        metric: `${label}, ${how}: bundle CPU per call, vs the raw client's`,
        unit: "µs",
        mesh: median(figures.bundle.cpu[mode]),
        raw: rawCpu,
        floor: median(echo.peer.cpu[mode]),
      });
    }
  }
  // The chain's host exists only now, so that the mesh and raw lines ran as they did before it.
  const chainHost = await startHost(world.raw, "floor-chain");
  await chainHost.request({ cmd: "start-bundle", bundle: "c0", mode: "chain" });
  for (const op of ["put", "get"] as const) {
    const chain = bundleSide("chain", chainHost, "c0", bucket);
    const rawFigures = sideRuns();
    await warmUp(sizes, raw[op], chain, op, keys);
    for (let run = 0; run < sizes.runs; run++) await rawAndSide(sizes, raw[op], rawFigures, chain, op, keys);
    chainRows(`${op} ${VALUE_BYTES} B`, sizes, rawFigures, mesh[op].figures, chain.figures);
  }
  note(
    "chain: a sender child, over the pipe, to a host whose raw client does what the raw line does (chain.ts); three processes woken in turn, as the mesh's; each chain run beside a raw run of its own",
  );
  await stopHosts([chainHost]);
  await largeValueOps(sizes, host, kv);
  await stopHosts([host]);
}

/**
 * The chain's lines (chain.ts): the raw client behind the pipe as one chain of three processes, against the
 * raw client; then the mesh against the chain, the same shape with the project's code in it.
 */
function chainRows(
  label: string,
  sizes: Sizes,
  raw: SideRuns,
  mesh: BundleSide["figures"],
  chain: BundleSide["figures"],
) {
  const name = `chain: ${label} answered by the raw client behind the pipe`;
  const p50 = (runs: SideRuns) => pickSequential(runs, "p50Ms");
  emit({ metric: `${name}, sequential p50 latency, vs raw`, unit: "ms", mesh: p50(chain), raw: p50(raw) });
  emit({
    metric: `${name}, ${sizes.inFlight} in flight, vs raw`,
    unit: "ops/s",
    mesh: median(chain.perSecond),
    raw: median(raw.perSecond),
  });
  emit({
    metric: `chain: ${label}, sequential p50 latency, mesh vs the chain`,
    unit: "ms",
    mesh: p50(mesh),
    raw: p50(chain),
  });
  emit({
    metric: `chain: ${label}, sequential: runtime CPU per call, mesh vs the chain's host`,
    unit: "µs",
    mesh: median(mesh.cpu.sequential),
    raw: median(chain.cpu.sequential),
  });
  emit({
    metric: `chain: ${label}, sequential: bundle CPU per call, mesh vs the chain's sender`,
    unit: "µs",
    mesh: median(mesh.bundle.cpu.sequential),
    raw: median(chain.bundle.cpu.sequential),
  });
}

/**
 * The issue's 200 KiB ordinary value (2,600 small objects), put one after another on one key, then read back
 * (a get has no target; its line shows what a large value costs on the way back).
 */
async function largeValueOps(sizes: Sizes, host: Host, kv: KV): Promise<void> {
  const value = largeValue(0);
  const raw = {
    put: () => kv.put("large", JSON.stringify(value)),
    get: async () => (await kv.get("large"))?.json(),
  };
  // With one key the bundle's ops all name `k.0`, which its puts fill with the same value.
  const mesh = (op: "put" | "get", count: number) =>
    host.bundle<SequentialRun>("b0", { cmd: "sequential", op, bucket: BUCKETS.items, keys: 1, value: "large", count });
  for (const op of ["put", "get"] as const) {
    await runSequential(Math.ceil(sizes.largeOps / 4), raw[op]);
    await mesh(op, Math.ceil(sizes.largeOps / 4));
    const figures = series("raw", "mesh", "rawCpu", "runtime", "bundle");
    for (let run = 0; run < sizes.runs; run++) {
      const rawRun = await ownCpu(() =>
        phase(`raw large ${op}`, sizes.largeOps, () => runSequential(sizes.largeOps, raw[op])),
      );
      figures.raw.push(sequentialFigures(rawRun.result).p50Ms);
      figures.rawCpu.push(perCall(rawRun.cpu, sizes.largeOps));
      const meshRun = await meshCpu(host, "b0", () =>
        phase(`mesh large ${op}`, sizes.largeOps, () => mesh(op, sizes.largeOps)),
      );
      figures.mesh.push(sequentialFigures(meshRun.result).p50Ms);
      figures.runtime.push(perCall(meshRun.runtime, sizes.largeOps));
      figures.bundle.push(perCall(meshRun.bundle, sizes.largeOps));
    }
    const size = bytes(JSON.stringify(value).length);
    const label = `${op} ${size} value (${count(LARGE_ITEMS)} small objects)`;
    const p50 = median(figures.mesh);
    emit({
      metric: `${label}, sequential p50 latency`,
      unit: "ms",
      mesh: p50,
      raw: median(figures.raw),
      ...(op === "put" ? { target: { text: "≤ 10 ms", met: p50 <= 10 } } : {}),
    });
    emit({
      metric: `${label}: runtime CPU per call, vs the raw client's`,
      unit: "µs",
      mesh: median(figures.runtime),
      raw: median(figures.rawCpu),
    });
    emit({
      metric: `${label}: bundle CPU per call, vs the raw client's`,
      unit: "µs",
      mesh: median(figures.bundle),
      raw: median(figures.rawCpu),
    });
  }
}
