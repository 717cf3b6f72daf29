// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { composeControllerGrant, renderStateAccountConfig } from "@mesh/grant-composer";
import { parseCatalogue, streamName } from "@mesh/manifest-schema";
import { startTestCluster } from "@mesh/nats-harness";
import { connect } from "@nats-io/transport-node";
import { expect, it } from "vitest";
import { ADMIN_PROBE, ADMIN_USER, connectAdmin, disposable, manifest } from "../test/support.js";
import { compact } from "./compact.js";
import { raise } from "./raise.js";

// Compaction of replicated buckets right after the raise created them: the scan consumer and the purges go
// through the stream's leader, wherever the client is connected.
const catalogue = parseCatalogue([manifest("clustered", { leases: {}, deep: { history: 3 } })]);
// Three servers on two shared cores: creating an R3 stream took more than the default 5 s once under load.
const SLOW_CLUSTER_MS = 20_000;
const COMPACTOR = { grant: composeControllerGrant({ user: "compactor", catalogue }), password: "compactor-secret" };

it("compacts R3 buckets of a three-node cluster: old markers go, values stay, no consumer is left", async () => {
  await using cluster = await startTestCluster({
    config: renderStateAccountConfig({ users: [COMPACTOR, ADMIN_USER] }),
    placementProbe: ADMIN_PROBE,
  });
  await using admin = await connectAdmin(cluster.urls);
  await using compactor = disposable(
    await connect({
      servers: cluster.urls,
      user: COMPACTOR.grant.user,
      pass: COMPACTOR.password,
      inboxPrefix: COMPACTOR.grant.inboxPrefix,
    }),
  );
  await raise({ connection: compactor, catalogue, replicas: 3, timeoutMs: SLOW_CLUSTER_MS });
  for (const name of ["leases", "deep"]) {
    // Seeded through the stream leader's node: another node may not yet know a stream just created (no responders).
    const bucket = `mod_clustered_${name}`;
    const leader = (await admin.jsm.streams.info(streamName(bucket))).cluster?.leader;
    const node = cluster.nodes.find((candidate) => candidate.name === leader)!;
    await using seeder = await connectAdmin(node.url);
    const kv = await seeder.kvm.open(bucket);
    for (let index = 0; index < 50; index += 1) await kv.put(`k.${index}`, "v");
    for (let index = 0; index < 40; index += 1) await kv.delete(`k.${index}`);
  }
  const report = await compact({
    connection: compactor,
    catalogue,
    olderThanMs: 0,
    now: () => Date.now() + 1,
    timeoutMs: SLOW_CLUSTER_MS,
  });
  for (const bucket of report.buckets) {
    expect(bucket).toMatchObject({ keys: 50, markers: 40, removedMarkers: 40 });
    expect(bucket.after?.messages).toBe(10);
    const info = await admin.jsm.streams.info(streamName(bucket.bucket));
    expect(info.state.consumer_count).toBe(0);
    expect(info.config.num_replicas).toBe(3);
  }
  // History 3 keeps each deleted key's value under its marker: both go.
  const removed = Object.fromEntries(report.buckets.map((bucket) => [bucket.name, bucket.removedMessages]));
  expect(removed).toEqual({ leases: 40, deep: 80 });
});
