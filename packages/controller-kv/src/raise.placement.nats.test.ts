// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { startTestCluster } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { ADMIN_PROBE, connectController, disposable, manifest, STATE_ACCOUNT_CONFIG } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// A bucket the cluster cannot place (more replicas than servers here; a server down or left out of the meta
// group in the field) fails with the server's reason and what to check.
it("names a bucket the cluster cannot place, with the server's reason and what to check", async () => {
  await using cluster = await startTestCluster({ config: STATE_ACCOUNT_CONFIG, placementProbe: ADMIN_PROBE });
  await using controller = disposable(await connectController(cluster.urls));
  const attempt = raise({ connection: controller, catalogue: [manifest("placed", { wide: {} })], replicas: 5 });
  const error = await attempt.then(
    () => expect.unreachable("five replicas cannot be placed on three servers"),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ControllerKvError);
  const failed = (error as ControllerKvError).report!.failed;
  expect(failed).toEqual([
    expect.objectContaining({ bucket: "mod_placed_wide", action: "create", failure: "server", serverCode: 10005 }),
  ]);
  expect(failed[0]!.message).toMatch(/no suitable peers for placement.*\(err_code 10005\): fewer servers can take/);
  expect(failed[0]!.message).toMatch(/meta group.*raise again/i);
});

// Issue 40: a raise given time waits for a cluster that cannot place its buckets yet, saying so on each try,
// and fails with what it saw once the time is up. The clock is injected: each sleep moves it on at once.
it("waits, within waitMs, for a cluster that cannot place the buckets, then fails with what it saw", async () => {
  await using cluster = await startTestCluster({ config: STATE_ACCOUNT_CONFIG, placementProbe: ADMIN_PROBE });
  await using controller = disposable(await connectController(cluster.urls));
  let now = 0;
  const clock = {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
  const progress: { elapsedMs: number; reason: string; leader?: string | null; peers?: number }[] = [];
  const monitorUrls = cluster.nodes.map((node) => node.monitorUrl!);
  const attempt = raise({
    connection: controller,
    catalogue: [manifest("placed", { wide: {} })],
    replicas: 5,
    waitMs: 3_000,
    clock,
    onWait: (seen) => progress.push(seen),
  });
  const error = await attempt.then(
    () => expect.unreachable("five replicas cannot be placed on three servers"),
    (thrown: unknown) => thrown as ControllerKvError,
  );
  expect(progress.map((seen) => seen.elapsedMs)).toEqual([0, 1_000, 2_000]);
  expect(progress[0]!.reason).toMatch(/fewer servers can take a bucket than its replicas \(err_code 10005, 1 bucket\)/);
  expect(error.code).toBe("incomplete");
  expect(error.message).toMatch(/^waited 3 s for the cluster, it was still not ready: fewer servers can take/);
  expect(error.report!.created).toEqual([]);

  // With the monitoring endpoints the raise reads the meta group before it sends a create, and says what it saw.
  now = 0;
  progress.length = 0;
  const seen = await raise({
    connection: controller,
    catalogue: [manifest("placed", { wide: {} })],
    replicas: 3,
    monitorUrls: monitorUrls.slice(0, 3),
    waitMs: 2_000,
    clock,
    onWait: (step) => progress.push(step),
  });
  expect(progress).toEqual([]);
  expect(seen.created.map((bucket) => bucket.bucket)).toEqual(["mod_placed_wide"]);
});
