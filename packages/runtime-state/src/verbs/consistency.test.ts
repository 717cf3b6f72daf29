import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { BUCKET, brief, ownerMembership, readerMembership, spawnBundle, stateServer, until } from "../../test/kit.js";
import { BucketClient } from "../nats/bucket.js";
import { createStateService } from "./service.js";

/** Counts the requests for a message from the stream's leader, as the server sees them published (admin listens). */
async function leaderReads(admin: NatsConnection) {
  let count = 0;
  // A callback, not an iterator: counted as the message is read, before the flush's PONG behind it.
  admin.subscribe(`$JS.API.STREAM.MSG.GET.KV_${BUCKET}`, {
    callback: () => {
      count++;
    },
  });
  await admin.flush();
  return {
    /** Leader reads since the last call (each flushed through the server first). */
    async since(): Promise<number> {
      await admin.flush();
      const seen = count;
      count = 0;
      return seen;
    },
  };
}

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    (answer) => ({ answer }),
    (error: { code?: number; message?: string; data?: { reason?: string } }) => ({
      code: error.code,
      reason: error.data?.reason,
      message: error.message ?? "",
    }),
  );

describe("read consistency: session (the default), strong and local", () => {
  it("each level answers what was written; only session past the floor and strong ask the stream's leader", async () => {
    await using nats = await stateServer();
    const reads = await leaderReads(nats.admin);
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const reader = createStateService({ connection: await nats.machine("m2"), membership: readerMembership });
    const call = (method: string, params: object) =>
      owner.handle(`mesh/state.${method}`, { bucket: "notes", ...params });
    const read = (method: string, params: object) =>
      reader.handle(`mesh/state.${method}`, { bucket: "notes-app.notes", ...params });

    // A bucket the reader has neither written nor read: session keys need no barrier.
    expect(await read("keys", {})).toEqual({ keys: [] });
    expect(await reads.since()).toBe(0);

    const { revision } = (await call("put", { key: "a", value: 1 })) as { revision: number };
    for (const consistency of [undefined, "session", "local"]) {
      expect(await call("get", { key: "a", ...(consistency ? { consistency } : {}) })).toMatchObject({ revision });
    }
    // One server: the direct answer is never behind the floor.
    expect(await reads.since()).toBe(0);
    expect(await call("get", { key: "a", consistency: "strong" })).toMatchObject({ revision, value: 1 });
    expect(await call("get", { key: "nothing", consistency: "strong" })).toBeNull();
    expect(await reads.since()).toBe(2);

    // keys and history: local never asks; session asks once the bucket was written or read; strong always.
    expect(await call("keys", { consistency: "local" })).toEqual({ keys: ["a"] });
    expect(await reads.since()).toBe(0);
    expect(await call("keys", {})).toEqual({ keys: ["a"] });
    expect(await reads.since()).toBe(1);
    expect(await read("keys", { consistency: "strong" })).toEqual({ keys: ["a"] });
    expect(await reads.since()).toBe(1);
    const history = (await call("history", { key: "a" })) as { entries: { revision: number }[] };
    expect(history.entries.map((entry) => entry.revision)).toEqual([revision]);
    expect(await reads.since()).toBe(1);

    // A watch at strong: one leader read, then the current values and `current`.
    const bundle = spawnBundle(reader);
    const { watch } = (await bundle.call("mesh/state.watch", { bucket: "notes-app.notes", consistency: "strong" }))
      .result as { watch: string };
    await bundle.untilEvents(watch, (events) => events.some((event) => event.type === "current"));
    expect(brief(bundle.events(watch))).toEqual([`put a@${revision}`, "current"]);
    expect(await reads.since()).toBe(1);
    await bundle.kill();
    await owner.close();
    await reader.close();
  });

  it("an unknown level is invalid params naming the allowed words, before NATS is touched", async () => {
    await using nats = await stateServer();
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    for (const method of ["get", "keys", "history", "watch"]) {
      const params = {
        bucket: "notes",
        consistency: "eventual",
        ...(method === "get" || method === "history" ? { key: "a" } : {}),
      };
      const refused = await refusalOf(owner.handle(`mesh/state.${method}`, params));
      expect(refused).toMatchObject({ code: -32602, reason: "bad-request" });
      expect((refused as { message: string }).message).toMatch(/"session", "strong", "local"/);
    }
    await owner.close();
  });

  it("a direct answer behind the floor is read again from the leader; a sketch collision costs exactly that", async () => {
    await using nats = await stateServer();
    const reads = await leaderReads(nats.admin);
    const connection = await nats.machine("m1");
    // One key exactly, one sketch slot: every evicted key collides.
    const client = new BucketClient(BUCKET, connection, { floor: { exactKeys: 1, sketchSlots: 1 } });
    const a = await client.put("a", "A");
    await client.put("b", "B");
    const c = await client.put("c", "C");
    // a was evicted to the one slot, now b's revision: above a's own, so a is read from the leader, and right.
    expect(client.floor.of("a")).toBeGreaterThan(a);
    expect(await client.readAnswerSession("a")).toMatchObject({ key: "a", value: "A", revision: a });
    expect(await reads.since()).toBe(1);
    // Exact again: the next read of a is a direct get alone.
    expect(await client.readAnswerSession("a")).toMatchObject({ revision: a });
    expect(await reads.since()).toBe(0);
    // A floor above anything stored (as a write acknowledged by a leader a replica has not caught up with).
    client.floor.settle("c", c + 1_000);
    expect(await client.readAnswerSession("c")).toMatchObject({ value: "C", revision: c });
    expect(await reads.since()).toBe(1);
  });

  it("no stream leader: strong and session-behind reads answer unavailable with the reason, never an older value", async () => {
    await using nats = await stateServer({ nodes: 3 });
    const cluster = nats.cluster!;
    const stream = `KV_${BUCKET}`;
    const info = await nats.jsm.streams.info(stream);
    const leader = info.cluster?.leader;
    // The machine stays on a follower; the leader and the other follower are killed: no quorum, no leader.
    const survivor = cluster.nodes.find((node) => node.name !== leader)!;
    const timeoutMs = 2_000;
    const owner = createStateService({
      connection: await nats.machine("m1", [survivor.url]),
      membership: ownerMembership,
      limits: { requestTimeoutMs: timeoutMs },
    });
    const call = (method: string, params: object) =>
      owner.handle(`mesh/state.${method}`, { bucket: "notes", ...params });
    const { revision } = (await call("put", { key: "a", value: 1 })) as { revision: number };
    const killed = cluster.nodes.filter((node) => node !== survivor);
    for (const node of killed) await node.kill();
    try {
      for (const [method, params] of [
        ["get", { key: "a", consistency: "strong" }],
        ["keys", { consistency: "strong" }],
        ["history", { key: "a" }],
      ] as const) {
        const started = performance.now();
        const refused = await refusalOf(call(method, params));
        const tookMs = performance.now() - started;
        console.log(
          `no leader: ${method} ${JSON.stringify(params)} refused in ${Math.round(tookMs)} ms: ${JSON.stringify(refused)}`,
        );
        expect(refused, `${method} ${JSON.stringify(params)}`).toMatchObject({ reason: "unavailable" });
        if (method === "get") {
          expect((refused as { message: string }).message).toMatch(/could not be made consistent.*leader of stream/);
          expect(tookMs).toBeLessThan(timeoutMs + 1_500);
        } else {
          // The consumer's create has no leader either: whichever is refused first, then its delete is tried.
          expect(tookMs).toBeLessThan(2 * timeoutMs + 1_500);
        }
      }
      // The session floor above what the survivor holds (a write it never got): the leader is needed, and absent.
      const target = (owner as unknown as { target(name: string, access: string): { client: BucketClient } }).target(
        "notes",
        "read",
      );
      target.client.floor.settle("a", revision + 1);
      expect(await refusalOf(call("get", { key: "a" }))).toMatchObject({ reason: "unavailable" });
      // What local does without a leader (measured, printed: a follower may or may not answer).
      const local = await refusalOf(call("get", { key: "a", consistency: "local" }));
      console.log(`no leader, local get on the survivor: ${JSON.stringify(local)}`);
    } finally {
      // Together: one alone waits for a meta leader the two of them elect.
      await Promise.all(killed.map((node) => node.restart()));
    }
    await until(
      () =>
        call("get", { key: "a", consistency: "strong" }).then(
          () => true,
          () => false,
        ),
      30_000,
      "a strong get answered again once the nodes are back",
    );
    expect(await call("get", { key: "a", consistency: "strong" })).toMatchObject({ revision });
    await owner.close();
  }, 90_000);
});
