import { startMesh } from "@mesh/dev-mesh";
import { composeInspectorGrant } from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { createStateService } from "@mesh/runtime-state";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bucketHealth } from "./health.js";
import { catalogueView } from "./model.js";

// The health view's figures, read as the inspector from a real three-node cluster: the stream's replicas,
// its leader and each follower's lag as the leader reports them, consumers against the stream's cap.
const catalogue = parseCatalogue([{ name: "agent", state: { "mcp-servers": { history: 5 } } }]);
const [bucket] = catalogueView(catalogue, new Map()).buckets;

let mesh: Awaited<ReturnType<typeof startMesh>>;

beforeAll(async () => {
  mesh = await startMesh({
    catalogue,
    nodes: 3,
    machines: { m1: ["agent"] },
    users: { inspector: composeInspectorGrant({ catalogue }) },
  });
  const owner = createStateService({ connection: await mesh.connect("m1"), membership: mesh.membership("agent") });
  for (let index = 0; index < 20; index++)
    await owner.handle("mesh/state.put", { bucket: "mcp-servers", key: `all.k${index}`, value: { index } });
  await owner.close();
}, 120_000);

afterAll(async () => {
  await mesh?.[Symbol.asyncDispose]();
});

it("shows the inspector the stream's replicas, leader, each follower's lag and the consumer count", async () => {
  const health = await bucketHealth(await mesh.connect("inspector"), bucket!);
  expect(health.serverVersion).toBe(mesh.version);
  if (!health.stream.visible) throw new Error(`stream not visible: ${health.stream.reason}`);
  expect(health.stream.messages).toBe(20);
  expect(health.stream.bytes).toBeGreaterThan(0);
  expect(health.stream.replicas).toBe(3);
  expect(health.stream.leader).toMatch(/\S/);
  expect(health.stream.followers).toHaveLength(2);
  const names = health.stream.followers.map((follower) => follower.name);
  expect(names).not.toContain(health.stream.leader);
  for (const follower of health.stream.followers) {
    expect(follower.lag).toBeGreaterThanOrEqual(0);
    expect(typeof follower.current).toBe("boolean");
  }
  // No consumer is open: the owner's service closed and deleted its own.
  expect(health.stream.consumers).toBe(0);
});

it("says what a user without STREAM.INFO cannot see, and which subject it needs", async () => {
  const health = await bucketHealth(await mesh.connect("m1"), bucket!);
  expect(health.stream).toMatchObject({ visible: false, needs: `$JS.API.STREAM.INFO.${bucket!.stream}` });
});
