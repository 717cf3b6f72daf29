/** The fan-out section: one change to every bundle of several runtimes, against as many raw watchers. */
import type { Host, StartHost, StopHosts } from "./hosts.js";
import { count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import { benchValue, median, quantile, wallClock } from "./workload.js";
import { BUCKETS, natsBucket, type World } from "./world.js";

export async function fanout(world: World, sizes: Sizes, startHost: StartHost, stopHosts: StopHosts): Promise<void> {
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
