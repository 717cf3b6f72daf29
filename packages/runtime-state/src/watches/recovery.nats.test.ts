// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { ASKS_PER_TIMEOUT } from "@mesh/jetstream-calls";
import { describe, expect, it } from "vitest";
import {
  brief,
  ownerMembership,
  readerMembership,
  spawnBundle,
  stateServer,
  unanswering,
  untilReconnected,
  watchScene,
} from "../../test/kit.js";
import { createStateService } from "../verbs/service.js";

async function setup() {
  const nats = await stateServer();
  const { owner, put, bundle, watch } = await watchScene(nats);
  await put("a", 1);
  const id = await watch();
  await bundle.untilEvents(id, (events) => events.length === 2);
  return { nats, owner, put, bundle, id, [Symbol.asyncDispose]: () => nats[Symbol.asyncDispose]() };
}

describe("watch recovery: no change missed, no revision repeated", () => {
  it("survives losing its consumer (an admin deletes it) and notices in < 10 s", async () => {
    await using t = await setup();
    const [name] = await t.nats.consumerNames();
    await t.nats.jsm.consumers.delete("KV_mod_notes-app_notes", name!);
    await t.put("b", 2);
    await t.put("a", 3);
    const started = Date.now();
    await t.bundle.untilEvents(t.id, (events) => events.length === 4, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(brief(t.bundle.events(t.id))).toEqual(["put a@1", "current", "put b@2", "put a@3"]);
    expect(await t.nats.consumerNames()).toHaveLength(1);
  });

  it("survives a server restart (file storage)", async () => {
    await using t = await setup();
    await t.nats.server.restart();
    // The writer's own connection must be back first (its in-flight request would be lost, not the watch's).
    await untilReconnected(t.owner, "notes", "a");
    await t.put("b", 2);
    await t.bundle.untilEvents(t.id, (events) => events.length === 3, 15_000);
    await t.put("c", 3);
    await t.bundle.untilEvents(t.id, (events) => events.length === 4, 15_000);
    expect(brief(t.bundle.events(t.id))).toEqual(["put a@1", "current", "put b@2", "put c@3"]);
  });

  it("ends with {type: ended} when NATS stays away beyond the recovery budget", async () => {
    await using nats = await stateServer();
    const reader = createStateService({
      connection: await nats.machine("m2"),
      membership: readerMembership,
      limits: { recoveryBudgetMs: 1_500, requestTimeoutMs: 500 },
    });
    const bundle = spawnBundle(reader);
    const id = ((await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as { watch: string })
      .watch;
    await bundle.untilEvents(id, (events) => events.length === 1);
    await nats.server.stop();
    await bundle.untilEvents(id, (events) => events.at(-1)?.type === "ended", 15_000);
    expect(bundle.events(id).map((event) => `${event.type}${event.reason ? ` ${event.reason}` : ""}`)).toEqual([
      "current",
      "ended unavailable",
    ]);
    expect(reader.watchCount).toBe(0);
    await bundle.kill();
  });
});

// A create nobody answers fails with the client's timeout, as one does when nats-server places the ephemeral
// consumer on a stream peer that was just killed (kill -9 of the stream leader: about one recreate in three,
// measured on 2.10.27 and 2.12.15), and as the delete of that consumer then does.
describe("a recreate that NATS never answers (a consumer placed on a dead peer)", () => {
  it("costs the recovery one request timeout: the next attempt does not wait for the delete of it", async () => {
    await using nats = await stateServer();
    const timeoutMs = 2_000;
    const stream = "KV_mod_notes-app_notes";
    const log: string[] = [];
    let creates = 0;
    let unanswered = "";
    let deleteOfUnansweredPending = false;
    const connection = unanswering(await nats.machine("m2"), (subject, payload) => {
      if (subject === `$JS.API.CONSUMER.CREATE.${stream}`) {
        const { name } = (JSON.parse(payload) as { config: { name: string } }).config;
        // The first recreate: placed where no server will ever answer for it, asked again or not.
        if (name === unanswered) {
          log.push("the same create again");
          return true;
        }
        creates += 1;
        log.push(
          `create ${creates}${creates === 3 && deleteOfUnansweredPending ? " (the delete still unanswered)" : ""}`,
        );
        if (creates !== 2) return false;
        unanswered = name;
        return true;
      }
      if (unanswered !== "" && subject === `$JS.API.CONSUMER.DELETE.${stream}.${unanswered}`) {
        log.push("delete of the unanswered one");
        deleteOfUnansweredPending = true;
        setTimeout(() => {
          deleteOfUnansweredPending = false;
        }, timeoutMs);
        return true;
      }
      return false;
    });
    const { put, bundle, watch } = await watchScene(nats, { connection, limits: { requestTimeoutMs: timeoutMs } });
    await put("a", 1);
    const id = await watch();
    await bundle.untilEvents(id, (events) => events.length === 2);
    const [name] = await nats.consumerNames();
    const lost = performance.now();
    await nats.jsm.consumers.delete(stream, name!);
    await put("b", 2);
    await bundle.untilEvents(id, (events) => events.length === 3, 15_000);
    const recoveredMs = performance.now() - lost;
    expect(brief(bundle.events(id))).toEqual(["put a@1", "current", "put b@2"]);
    // Asked again within its timeout (a lost answer: docs/MEASURED.md §12), then given up on.
    expect(log.slice(0, 7)).toEqual([
      "create 1",
      "create 2",
      ...Array.from({ length: ASKS_PER_TIMEOUT - 1 }, () => "the same create again"),
      "delete of the unanswered one",
      "create 3 (the delete still unanswered)",
    ]);
    // One request timeout and a jittered pause of at most 375 ms, not two timeouts (create, then its delete).
    expect(recoveredMs).toBeLessThan(2 * timeoutMs);
    await bundle.kill();
  });
});

describe("a consumer lost while the current values go out", () => {
  it("resumes from a fresh snapshot: current still falls where the bundle holds a real state of the bucket", async () => {
    await using nats = await stateServer({ history: 5 });
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const put = (key: string, value: unknown) => owner.handle("mesh/state.put", { bucket: "notes", key, value });
    // z@1 is overwritten by z@7 and y@5 by y@6: the snapshot is a@2 b@3 c@4 y@6 z@7 e@8 f@9.
    for (const [key, value] of [
      ["z", 1],
      ["a", 2],
      ["b", 3],
      ["c", 4],
      ["y", 5],
      ["y", 6],
      ["z", 7],
      ["e", 8],
      ["f", 9],
    ] as const) {
      await put(key, value);
    }
    const reader = createStateService({
      connection: await nats.machine("m2"),
      membership: readerMembership,
      limits: { batchEvents: 2 },
    });
    const bundle = spawnBundle(reader);
    bundle.send({ hold: true });
    const id = ((await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as { watch: string })
      .watch;
    await bundle.untilEvents(id, (events) => events.length === 2);
    // The first batch is held: the runtime has taken the second and pulled at most the third (one batch in
    // flight, one prepared, one pulled ahead), so the consumer goes with the initial phase half done.
    const [name] = await nats.consumerNames();
    await nats.jsm.consumers.delete("KV_mod_notes-app_notes", name!);
    await put("b", 10); // b was sent already: its new value is a change made while the watch was away
    await owner.handle("mesh/state.delete", { bucket: "notes", key: "a" }); // a was sent: the bundle must drop it
    bundle.send({ hold: false });
    bundle.send({ release: true });
    await bundle.untilEvents(id, (events) => events.some((event) => event.type === "current"), 15_000);
    await put("d", 12);
    await bundle.untilEvents(id, (events) => events.at(-1)?.revision === 12, 15_000);
    expect(brief(bundle.events(id))).toEqual([
      "put a@2",
      "put b@3",
      "put c@4",
      "put y@6",
      "put z@7",
      "put e@8",
      "put f@9",
      "put b@10",
      // The one deletion before `current`: a key the bundle holds, deleted while the consumer was away.
      "delete a@11",
      "current",
      "put d@12",
    ]);
    await bundle.kill();
  });
});
