import { describe, expect, it } from "vitest";
import { brief, readerMembership, spawnBundle, stateServer, watchScene } from "../../test/kit.js";
import { createStateService } from "../verbs/service.js";

async function setup() {
  const nats = await stateServer();
  return { nats, ...(await watchScene(nats)), [Symbol.asyncDispose]: () => nats[Symbol.asyncDispose]() };
}

describe("watch: where current falls, against a real server", () => {
  it("an empty bucket: current at once, then changes", async () => {
    await using t = await setup();
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.length === 1);
    await t.put("a", 1);
    await t.bundle.untilEvents(id, (events) => events.length === 2);
    expect(brief(t.bundle.events(id))).toEqual(["current", "put a@1"]);
  });

  it("a bucket whose every key was deleted: current at once, no deletion before it", async () => {
    await using t = await setup();
    await t.put("a", 1);
    await t.put("b", 2);
    await t.del("a");
    await t.del("b");
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.length === 1);
    await t.put("c", 3);
    await t.bundle.untilEvents(id, (events) => events.length === 2);
    expect(brief(t.bundle.events(id))).toEqual(["current", "put c@5"]);
  });

  it("an initial set ending in a delete", async () => {
    await using t = await setup();
    await t.put("a", 1);
    await t.put("b", 2);
    await t.del("b");
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.some((event) => event.type === "current"));
    await t.del("a");
    await t.bundle.untilEvents(id, (events) => events.length === 3);
    expect(brief(t.bundle.events(id))).toEqual(["put a@1", "current", "delete a@4"]);
  });

  it("a filter matching nothing", async () => {
    await using t = await setup();
    await t.put("a", 1);
    await t.put("b.c", 2);
    const id = await t.watch("zz.>");
    await t.bundle.untilEvents(id, (events) => events.length === 1);
    await t.put("zz.one", 3);
    await t.put("b.d", 4);
    await t.put("zz.two", 5);
    await t.bundle.untilEvents(id, (events) => events.length === 3);
    expect(brief(t.bundle.events(id))).toEqual(["current", "put zz.one@3", "put zz.two@5"]);
  });

  it("a bucket written fast while the current values go out", async () => {
    await using t = await setup();
    for (let index = 0; index < 300; index++) await t.put(`k${index % 40}`, index);
    let writing = true;
    let written = 300;
    const writer = (async () => {
      while (writing && written < 3_000) {
        const index = written++;
        if (index % 7 === 0) await t.del(`k${index % 40}`);
        else await t.put(`k${index % 40}`, index);
      }
    })();
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.some((event) => event.type === "current"), 20_000);
    writing = false;
    await writer;
    const last = (await t.owner.handle("mesh/state.put", { bucket: "notes", key: "end", value: true })) as {
      revision: number;
    };
    await t.bundle.untilEvents(id, (events) => events.at(-1)?.revision === last.revision, 20_000);
    const events = t.bundle.events(id);
    const currentAt = events.findIndex((event) => event.type === "current");
    expect(events.filter((event) => event.type === "current")).toHaveLength(1);
    expect(events.slice(0, currentAt).every((event) => event.type === "put")).toBe(true);
    const revisions = events.filter((event) => event.revision !== undefined).map((event) => event.revision!);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(new Set(revisions).size).toBe(revisions.length);
    const view = new Map<string, unknown>();
    for (const event of events) {
      if (event.type === "put") view.set(event.key!, event.value);
      if (event.type === "delete") view.delete(event.key!);
    }
    const keys = (await t.owner.handle("mesh/state.keys", { bucket: "notes" })) as { keys: string[] };
    expect([...view.keys()].sort()).toEqual(keys.keys);
    for (const key of keys.keys) {
      const entry = (await t.owner.handle("mesh/state.get", { bucket: "notes", key })) as { value: unknown };
      expect(view.get(key)).toEqual(entry.value);
    }
  });

  it("batches are bounded and one is in flight: the bundle's answer is the back-pressure", async () => {
    await using t = await setup();
    const reader = createStateService({
      connection: await t.nats.machine("m2"),
      membership: readerMembership,
      limits: { batchEvents: 10 },
    });
    const bundle = spawnBundle(reader);
    for (let index = 0; index < 45; index++) await t.put(`k${index}`, index);
    bundle.send({ hold: true });
    const id = ((await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as { watch: string })
      .watch;
    const batches = () => bundle.lines.filter((line) => (line as { method?: string }).method === "mesh/state");
    for (let expected = 1; expected <= 5; expected++) {
      await bundle.untilEvents(id, () => batches().length === expected);
      // Held: no second batch may come while this one is unanswered (a put meanwhile must wait too).
      await t.owner.handle("mesh/state.get", { bucket: "notes", key: "k0" });
      expect(batches()).toHaveLength(expected);
      bundle.send({ release: true });
    }
    await bundle.untilEvents(id, (events) => events.length === 46);
    expect(batches().every((line) => (line as { params: { events: unknown[] } }).params.events.length <= 10)).toBe(
      true,
    );
    expect(brief(bundle.events(id)).at(-1)).toBe("current");
  });
});
