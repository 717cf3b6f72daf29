/** The fleet section's rows: what benchFleet (fleet.ts) measured, printed beside what the raw client would need. */
import { benchFleet, type FleetSizes } from "./fleet.js";
import { count, emit, note } from "./report.js";

/** The fleet runs on a server (or cluster) of its own (its N + 1 machine users): fleet.ts. */
export async function fleet(sizes: FleetSizes): Promise<void> {
  const figures = await benchFleet(sizes);
  const { machines, bundlesPerMachine } = sizes;
  const fleetLabel = `fleet of ${count(machines)} machines × ${bundlesPerMachine} bundles${sizes.nodes === 3 ? " on 3 nodes (R3)" : ""}`;
  const onePerMachine = (when: string, consumers: number) =>
    emit({
      metric: `${fleetLabel}: consumers ${when} (raw: one per machine)`,
      unit: "consumers",
      mesh: consumers,
      raw: machines,
      target: { text: "one per machine", met: consumers === machines },
    });
  onePerMachine("on the bucket", figures.consumers);
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
  onePerMachine("after the fault", restart.consumersAfter);
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
