import { startCluster } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";
import { connectAdmin, connectController, disposable, manifest, STATE_ACCOUNT_CONFIG } from "./test-support.js";

it("on a three-node cluster the buckets are R3; with a node down a raise succeeds or fails clearly, and the next completes it", async () => {
  await using cluster = await startCluster({ config: STATE_ACCOUNT_CONFIG });
  const [n1, n2, n3] = cluster.nodes as [
    (typeof cluster.nodes)[0],
    (typeof cluster.nodes)[0],
    (typeof cluster.nodes)[0],
  ];
  // The controller and the admin talk to the two nodes that stay up, so the check measures the raise, not a reconnect.
  await using controller = disposable(await connectController([n1.url, n2.url]));
  await using admin = await connectAdmin([n1.url, n2.url]);
  const before = [manifest("clustered", { first: {}, second: { history: 3 } })];
  const after = [manifest("clustered", { first: {}, second: { history: 3 }, third: {}, fourth: { ttl: "1h" } })];

  const first = await raise({ connection: controller, catalogue: before, replicas: 3 });
  expect(first.created.map((bucket) => bucket.bucket)).toEqual(["mod_clustered_first", "mod_clustered_second"]);
  for (const bucket of first.created) {
    const info = await admin.jsm.streams.info(`KV_${bucket.bucket}`);
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas).toHaveLength(2);
  }

  await n3.kill();
  const started = performance.now();
  let outcome: string;
  try {
    const report = await raise({ connection: controller, catalogue: after, replicas: 3, timeoutMs: 3_000 });
    outcome = `succeeded: created ${report.created.map((bucket) => bucket.bucket).join(", ")}`;
  } catch (error) {
    expect(error).toBeInstanceOf(ControllerKvError);
    const failure = error as ControllerKvError;
    expect(["incomplete", "unavailable"]).toContain(failure.code);
    expect(failure.message).toMatch(/raise again|nothing was changed/i);
    if (failure.code === "incomplete") expect(failure.report?.failed.length).toBeGreaterThan(0);
    outcome = `failed (${failure.code}): ${failure.message}`;
  }
  console.log(`raise with n3 down, ${(performance.now() - started).toFixed(0)} ms: ${outcome}`);

  await n3.restart();
  const completed = await raise({ connection: controller, catalogue: after, replicas: 3 });
  expect(completed.failed).toEqual([]);
  expect(completed.conflicts).toEqual([]);
  const everyBucket = ["mod_clustered_first", "mod_clustered_fourth", "mod_clustered_second", "mod_clustered_third"];
  expect(
    [
      ...completed.created.map((bucket) => bucket.bucket),
      ...completed.updated.map((bucket) => bucket.bucket),
      ...completed.unchanged,
    ].sort(),
  ).toEqual(everyBucket);
  for (const bucket of everyBucket) {
    const info = await admin.jsm.streams.info(`KV_${bucket}`);
    expect(info.config.num_replicas).toBe(3);
    expect(info.config.max_consumers).toBe(1024);
  }
  const settled = await raise({ connection: controller, catalogue: after, replicas: 3 });
  expect(settled.unchanged).toEqual(everyBucket);
});
