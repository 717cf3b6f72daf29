import { describe, expect, it } from "vitest";
import { BUCKET, ownerMembership, readerMembership, spawnBundle, stateServer } from "../../test/kit.js";
import { createStateService } from "./service.js";

describe("state verbs over a real bundle's stdio, as a machine holding exactly its grant", () => {
  it("serves get, put (with revision), delete, keys and history", async () => {
    await using nats = await stateServer();
    const service = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const bundle = spawnBundle(service);
    expect((await bundle.call("mesh/state.get", { bucket: "notes", key: "a" })).result).toBeNull();
    const first = (await bundle.call("mesh/state.put", { bucket: "notes", key: "a", value: { n: 1 } })).result as {
      revision: number;
    };
    expect(first.revision).toBe(1);
    const got = (await bundle.call("mesh/state.get", { bucket: "notes", key: "a" })).result as Record<string, unknown>;
    expect(got).toMatchObject({ key: "a", value: { n: 1 }, revision: 1 });
    expect(typeof got.updated).toBe("string");
    expect((await bundle.call("mesh/state.put", { bucket: "notes", key: "a", value: 2, revision: 1 })).result).toEqual({
      revision: 2,
    });
    const stale = await bundle.call("mesh/state.put", { bucket: "notes", key: "a", value: 3, revision: 1 });
    expect(stale.error).toMatchObject({ code: -32020, data: { reason: "conflict", revision: 2 } });
    const exists = await bundle.call("mesh/state.put", { bucket: "notes", key: "a", value: 3, revision: 0 });
    expect(exists.error).toMatchObject({ code: -32020, data: { reason: "conflict", revision: 2 } });
    await bundle.call("mesh/state.put", { bucket: "notes", key: "b.x", value: "bx" });
    expect((await bundle.call("mesh/state.delete", { bucket: "notes", key: "a", revision: 2 })).result).toEqual({});
    expect((await bundle.call("mesh/state.get", { bucket: "notes", key: "a" })).result).toBeNull();
    // A deleted key is absent: revision 0 writes it again.
    expect(
      (await bundle.call("mesh/state.put", { bucket: "notes", key: "a", value: "again", revision: 0 })).result,
    ).toEqual({ revision: 5 });
    await bundle.call("mesh/state.delete", { bucket: "notes", key: "b.x" });
    await bundle.call("mesh/state.put", { bucket: "notes", key: "c", value: true });
    expect((await bundle.call("mesh/state.keys", { bucket: "notes" })).result).toEqual({ keys: ["a", "c"] });
    expect((await bundle.call("mesh/state.keys", { bucket: "notes", filter: "b.*" })).result).toEqual({ keys: [] });
    const history = (await bundle.call("mesh/state.history", { bucket: "notes", key: "a" })).result as {
      entries: unknown[];
    };
    expect(
      history.entries.map((entry) =>
        JSON.stringify([(entry as { type: string }).type, (entry as { revision: number }).revision]),
      ),
    ).toEqual(
      [
        ["put", 1],
        ["put", 2],
        ["delete", 4],
        ["put", 5],
      ].map((entry) => JSON.stringify(entry)),
    );
    expect((await bundle.call("mesh/state.history", { bucket: "notes", key: "nothing" })).result).toEqual({
      entries: [],
    });
    expect(await nats.consumerNames()).toEqual([]);
    await bundle.kill();
    await bundle.stdio.closed;
  });

  it("refuses before NATS is touched, each with its reason, code and an actionable message, in < 50 ms", async () => {
    await using nats = await stateServer();
    const service = createStateService({
      connection: await nats.machine("m2"),
      membership: {
        ...readerMembership,
        buckets: { ...readerMembership.buckets, small: { bucket: BUCKET, access: "write", maxValueSize: 64 } },
      },
    });
    const bundle = spawnBundle(service);
    await bundle.call("mesh/state.unwatch", { watch: "warm-up" }); // the child is up and the line path warm
    const cases: Array<[string, object, string, number]> = [
      ["mesh/state.get", { bucket: "notes-app.notes" }, "bad-request", -32602],
      ["mesh/state.get", { bucket: "nope", key: "a" }, "not-issued", -32010],
      ["mesh/state.put", { bucket: "notes-app.notes", key: "a", value: 1 }, "read-only", -32011],
      ["mesh/state.get", { bucket: "notes-app.notes", key: "_kv.x" }, "bad-key", -32012],
      ["mesh/state.keys", { bucket: "notes-app.notes", filter: "a.>.b" }, "bad-key", -32012],
      ["mesh/state.put", { bucket: "small", key: "a", value: "x".repeat(100) }, "too-large", -32013],
      ["mesh/state.put", { bucket: "small", key: "a", value: { auth: { clientSecret: "s" } } }, "secret-field", -32014],
      ["mesh/state.unwatch", { watch: "w99" }, "unknown-watch", -32040],
    ];
    for (const [method, params, reason, code] of cases) {
      const started = performance.now();
      const answer = await bundle.call(method, params);
      expect(performance.now() - started).toBeLessThan(50);
      expect(answer.error).toMatchObject({ code, data: { reason } });
      expect(answer.error!.message.length).toBeGreaterThan(20);
    }
    const readOnly = await bundle.call("mesh/state.delete", { bucket: "notes-app.notes", key: "a" });
    expect(readOnly.error!.message).toBe("bucket notes-app.notes is read-only for dash: it is in reads, not state");
    const secret = await bundle.call("mesh/state.put", {
      bucket: "small",
      key: "a",
      value: { auth: { clientSecret: "s" } },
    });
    expect(secret.error!.data!.path).toBe("auth.clientSecret");
    await bundle.kill();
  });

  it("refuses a value that does not fit the bucket's remaining bytes as bucket-full, keeping every earlier key", async () => {
    // A write whose own size does not fit is refused by every server version. (A small write at the very
    // edge is another matter on nats-server < 2.10.5: see integration/src/server-facts.test.ts.)
    await using nats = await stateServer({ maxBytes: 4096, history: 1 });
    const service = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const written = Array.from({ length: 10 }, (_, index) => `k${index}`);
    for (const key of written) await service.handle("mesh/state.put", { bucket: "notes", key, value: "x".repeat(200) });
    await expect(
      service.handle("mesh/state.put", { bucket: "notes", key: "big", value: "y".repeat(2_000) }),
    ).rejects.toMatchObject({ reason: "bucket-full", code: -32021 });
    expect(await service.handle("mesh/state.keys", { bucket: "notes" })).toEqual({ keys: written });
  });

  it("maps the server's answers: denied within ms, unavailable when NATS is gone", async () => {
    await using nats = await stateServer();
    // m2's grant only reads notes; a membership claiming write disagrees with it.
    const wrong = createStateService({ connection: await nats.machine("m2"), membership: ownerMembership });
    const started = performance.now();
    await expect(wrong.handle("mesh/state.put", { bucket: "notes", key: "a", value: 1 })).rejects.toMatchObject({
      reason: "denied",
      code: -32030,
    });
    expect(performance.now() - started).toBeLessThan(500);
    const owner = createStateService({
      connection: await nats.machine("m1"),
      membership: ownerMembership,
      limits: { requestTimeoutMs: 1_000 },
    });
    await owner.handle("mesh/state.put", { bucket: "notes", key: "k1", value: 1 });
    await nats.server.stop();
    await expect(owner.handle("mesh/state.get", { bucket: "notes", key: "k1" })).rejects.toMatchObject({
      reason: "unavailable",
      code: -32031,
    });
  });
});
