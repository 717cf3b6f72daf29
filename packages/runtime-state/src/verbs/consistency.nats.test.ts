// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { BUCKET, brief, ownerMembership, readerMembership, spawnBundle, stateServer, until } from "../../test/kit.js";
import { BucketClient } from "../nats/bucket.js";
import { NotConsistent } from "../nats/errors.js";
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

  it("a watch started while keys are written and deleted: at `current` the bundle holds the bucket at one revision, at or after every write acknowledged before the watch", async () => {
    await using nats = await stateServer();
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const reader = createStateService({ connection: await nats.machine("m2"), membership: readerMembership });
    // Every write, in revision order: the bucket at any revision can be rebuilt from it.
    const log: { key: string; revision: number; deleted: boolean }[] = [];
    let writing = true;
    // Written by one writer, one write at a time: the log is in revision order.
    const writer = (async () => {
      for (let index = 0; writing; index++) {
        const key = `k${index % 12}`;
        if (index % 5 === 4) {
          await owner.handle("mesh/state.delete", { bucket: "notes", key });
          // A delete's revision is the next one: read it back from the leader, exactly.
          const entry = await reader.handle("mesh/state.history", {
            bucket: "notes-app.notes",
            key,
            consistency: "strong",
          });
          const last = (entry as { entries: { revision: number }[] }).entries.at(-1)!;
          log.push({ key, revision: last.revision, deleted: true });
        } else {
          const { revision } = (await owner.handle("mesh/state.put", { bucket: "notes", key, value: index })) as {
            revision: number;
          };
          log.push({ key, revision, deleted: false });
        }
      }
    })();
    const bundle = spawnBundle(reader);
    const started: { consistency: string; acknowledged: number; watch: string }[] = [];
    for (const consistency of ["strong", "session"]) {
      const before = log.length;
      await until(() => log.length >= before + 20, 10_000, "writes before the watch");
      const acknowledged = log.at(-1)!.revision;
      const { watch } = (await bundle.call("mesh/state.watch", { bucket: "notes-app.notes", consistency })).result as {
        watch: string;
      };
      await bundle.untilEvents(watch, (events) => events.some((event) => event.type === "current"));
      started.push({ consistency, acknowledged, watch });
    }
    // Stopped before checking: every write a watch may have shown is in the log by then.
    writing = false;
    await writer;
    // The bucket at revision r: each key's last write at or below r, deleted keys left out.
    const bucketAt = (revision: number) => {
      const state = new Map<string, number>();
      for (const write of log) {
        if (write.revision > revision) break;
        if (write.deleted) state.delete(write.key);
        else state.set(write.key, write.revision);
      }
      return [...state].sort().join();
    };
    const results: string[] = [];
    for (const { consistency, acknowledged, watch } of started) {
      const held = new Map<string, number>();
      const sent = new Set<string>();
      let again = 0;
      for (const event of bundle.events(watch)) {
        if (event.type === "current") break;
        if (sent.has(event.key!)) again++;
        sent.add(event.key!);
        if (event.type === "put") held.set(event.key!, event.revision!);
        if (event.type === "delete") held.delete(event.key!);
      }
      const view = [...held].sort().join();
      const matching = log.filter((write) => write.revision >= acknowledged && bucketAt(write.revision) === view);
      expect(
        matching.length,
        `${consistency}: the view ${view} is the bucket at no revision >= ${acknowledged}`,
      ).toBeGreaterThan(0);
      results.push(
        `${consistency}: view at revision ${matching[0]!.revision} >= ${acknowledged}, ${again} keys sent again before current`,
      );
    }
    console.log(results.join("; "));
    expect(results).toHaveLength(2);
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
    // An exact floor above anything the leader holds: the leader's answer is older than what the bundle saw (as
    // from a former leader not yet stepped down), so it is refused, never returned.
    client.floor.settle("c", c + 1_000);
    await expect(client.readAnswerSession("c")).rejects.toBeInstanceOf(NotConsistent);
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
      // A bundle whose floor is above what the survivor holds (a write it never got): the leader is needed, and absent.
      const behind = createStateService({
        connection: await nats.machine("m1", [survivor.url]),
        membership: ownerMembership,
        limits: { requestTimeoutMs: timeoutMs },
      });
      const target = (behind as unknown as { target(name: string, access: string): { client: BucketClient } }).target(
        "notes",
        "read",
      );
      target.client.floor.settle("a", revision + 1);
      expect(await refusalOf(behind.handle("mesh/state.get", { bucket: "notes", key: "a" }))).toMatchObject({
        reason: "unavailable",
      });
      await behind.close();
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
