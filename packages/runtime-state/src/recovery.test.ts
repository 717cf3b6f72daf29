import { describe, expect, it } from "vitest";
import { createStateService } from "./service.js";
import { ownerMembership, readerMembership, type SeenEvent, spawnBundle, stateServer, until } from "./test-kit.js";

const brief = (events: SeenEvent[]) =>
  events.map((event) => (event.type === "current" ? "current" : `${event.type} ${event.key}@${event.revision}`));

async function setup() {
  const nats = await stateServer();
  const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
  const reader = createStateService({ connection: await nats.machine("m2"), membership: readerMembership });
  const put = (key: string, value: unknown) => owner.handle("mesh/state.put", { bucket: "notes", key, value });
  const bundle = spawnBundle(reader);
  await put("a", 1);
  const id = ((await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as { watch: string }).watch;
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
    await until(
      () =>
        t.owner.handle("mesh/state.get", { bucket: "notes", key: "a" }).then(
          () => true,
          () => false,
        ),
      15_000,
      "writer reconnected",
    );
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
