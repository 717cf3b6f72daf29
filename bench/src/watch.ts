/**
 * The watch section: time to current of a bucket of many small keys and of a full bucket, through a bundle, with
 * the raw client, and on the floor (watch-floor.ts), with the CPU of every process on each path.
 */
import { DEFAULT_LIMITS } from "@mesh/runtime-state";
import { hostCpu, meshCpu, perCall, pidCpu } from "./cpu.js";
import type { StartHost, StopHosts } from "./hosts.js";
import { phase } from "./profile.js";
import { bytes, count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import { median, series, VALUE_BYTES } from "./workload.js";
import { BUCKETS, natsBucket, type World } from "./world.js";

export async function watch(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
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
    const times = series("raw", "mesh", "floor");
    const cpu = series("raw", "runtime", "bundle", "floorHost", "floorChild", "rawServer", "floorServer", "meshServer");
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
