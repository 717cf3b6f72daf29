// The Go SDK against the real runtime: Go bundles built from packages/sdk-go, served by runtime-state over
// their stdio, against a real nats-server with the machine's composed grant — sdk-ts's acceptance scenarios.
import { bucketValues } from "@mesh/dev-mesh";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGoBundle, goMesh } from "./sdk-go/go-mesh.js";

let built: Awaited<ReturnType<typeof buildGoBundle>>;
beforeAll(async () => {
  built = await buildGoBundle("./internal/bundles/acceptance");
});
afterAll(() => built?.[Symbol.dispose]());

describe("sdk-go in real Go bundles, against runtime-state and nats-server", () => {
  it("10 concurrent bundles × 20 Update increments leave exactly 200", async () => {
    await using mesh = await goMesh();
    const bundles = Array.from({ length: 10 }, () => mesh.bundle(built.path, ["counter", "20"]));
    const reports = await Promise.all(bundles.map((bundle) => bundle.next<{ rounds: number; gaveUp: number }>()));
    for (const bundle of bundles) expect((await bundle.exited).code).toBe(0);
    expect(reports.map((report) => report.gaveUp)).toEqual(Array(10).fill(0));
    const counter = await mesh.kvm.open("mod_sdk-app_counter");
    expect((await counter.get("hits"))?.json()).toBe(200);
    expect(reports.reduce((sum, report) => sum + report.rounds, 0)).toBeGreaterThanOrEqual(200);
  });

  it("a mirror equals the bucket after 1,000 random puts and deletes from another bundle", async () => {
    await using mesh = await goMesh();
    const writer = mesh.bundle(built.path, ["writer", "1000", "7"]);
    const mirror = mesh.bundle(built.path, ["mirror"]);
    await mirror.next(); // synced, while the writer is under way
    const written = await writer.next<{ puts: number; deletes: number }>();
    expect(written.puts + written.deletes).toBe(1000);
    const mirrored = await mirror.next<{ values: Record<string, unknown>; invalid: number }>();
    expect((await mirror.exited).code).toBe(0);
    const kv = await mesh.kvm.open("mod_sdk-app_mirrored");
    const bucket = await bucketValues(kv);
    expect(Object.keys(bucket).length).toBeGreaterThan(10);
    expect(mirrored.invalid).toBe(0);
    expect(mirrored.values).toEqual(bucket);
  });

  it("leaving a watch loop, or stopping a mirror, deletes the consumer on the server", async () => {
    await using mesh = await goMesh();
    const bundle = mesh.bundle(built.path, ["leave"]);
    await bundle.next(); // inside the loop
    expect(await mesh.consumerNames("mod_sdk-app_items")).toHaveLength(1);
    bundle.goOn();
    await bundle.next(); // left it; the process still runs
    expect(await mesh.consumerNames("mod_sdk-app_items")).toEqual([]);
    bundle.goOn();
    await bundle.next(); // mirroring
    expect(await mesh.consumerNames("mod_sdk-app_items")).toHaveLength(1);
    bundle.goOn();
    await bundle.next(); // stopped
    expect(await mesh.consumerNames("mod_sdk-app_items")).toEqual([]);
    bundle.goOn();
    expect((await bundle.exited).code).toBe(0);
  });

  it("a refused write returns its reason as a *StateError", async () => {
    await using mesh = await goMesh();
    await (await mesh.kvm.open("mod_sdk-peer_shared")).put("note", JSON.stringify("from the peer"));
    const bundle = mesh.bundle(built.path, ["refused"]);
    const report = await bundle.next();
    expect((await bundle.exited).code).toBe(0);
    expect(report).toEqual({
      created: report.created,
      conflict: "conflict",
      conflictRevision: report.created,
      readOnly: "read-only",
      notIssued: "not-issued",
      secret: "secret-field",
      secretPath: "headers.Authorization",
      secretKind: "field-name",
      readsGet: "from the peer",
      readsFound: true,
    });
    expect(report.created).toBeGreaterThan(0);
  });
});
