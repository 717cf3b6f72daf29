import { startTcpProxy, type TcpProxy } from "@mesh/nats-harness";
import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import {
  brief,
  readerMembership,
  spawnBundle,
  stateServer,
  unanswering,
  until,
  untilReconnected,
  watchScene,
} from "../../test/kit.js";
import type { StateLimits } from "../types.js";
import { createStateService } from "../verbs/service.js";
import { WatchHub, type WatchHubOptions } from "./hub.js";

interface FleetOptions {
  hub?: WatchHubOptions;
  /** m2's connection goes through it (started on the scene's server). */
  proxy?: (port: number) => Promise<TcpProxy>;
  /** m2's connection as its services see it. */
  connection?: (connection: NatsConnection) => NatsConnection;
  limits?: Partial<StateLimits>;
}

/** m1 writes; `count` bundles on m2 — one state connection, one hub — read notes-app.notes. */
async function fleetScene(count: number, options: FleetOptions = {}) {
  const nats = await stateServer();
  const { put, del, owner } = await watchScene(nats);
  const proxy = options.proxy ? await options.proxy(nats.server.port) : undefined;
  const machine = await nats.machine("m2", proxy?.url);
  const connection = options.connection ? options.connection(machine) : machine;
  const hub = new WatchHub(options.hub);
  const services = Array.from({ length: count }, () =>
    createStateService({
      connection,
      membership: readerMembership,
      watchHub: hub,
      ...(options.limits ? { limits: options.limits } : {}),
    }),
  );
  const bundles = services.map((service) => spawnBundle(service));
  const watch = async (index: number, filter?: string) =>
    (
      (await bundles[index]!.call("mesh/state.watch", { bucket: "notes-app.notes", ...(filter ? { filter } : {}) }))
        .result as { watch: string }
    ).watch;
  return {
    nats,
    hub,
    put,
    del,
    owner,
    services,
    bundles,
    watch,
    proxy,
    [Symbol.asyncDispose]: async () => {
      await nats[Symbol.asyncDispose]();
      await proxy?.[Symbol.asyncDispose]();
    },
  };
}

describe("shared watches: one consumer per bucket and filter for the bundles of one runtime", () => {
  it("bundles share one consumer; a joiner gets its snapshot from the view; the last one out deletes it", async () => {
    await using t = await fleetScene(3);
    await t.put("a", 1);
    await t.put("b", 2);
    await t.del("b");
    const first = await t.watch(0);
    await t.bundles[0]!.untilEvents(first, (events) => events.some((event) => event.type === "current"));
    await t.put("a", 4);
    const second = await t.watch(1);
    await t.bundles[1]!.untilEvents(second, (events) => events.some((event) => event.type === "current"));
    expect(await t.nats.consumerNames()).toHaveLength(1);
    await t.put("c", 5);
    await t.del("a");
    for (const [index, id] of [first, second].entries())
      await t.bundles[index]!.untilEvents(id, (events) => events.at(-1)?.type === "delete");
    expect(brief(t.bundles[0]!.events(first))).toEqual(["put a@1", "current", "put a@4", "put c@5", "delete a@6"]);
    // The joiner came after a@4: its current values are the view then, no deletion among them.
    expect(brief(t.bundles[1]!.events(second))).toEqual(["put a@4", "current", "put c@5", "delete a@6"]);
    // A different filter is a different consumer.
    const third = await t.watch(2, "c");
    await t.bundles[2]!.untilEvents(third, (events) => events.length === 2);
    expect(brief(t.bundles[2]!.events(third))).toEqual(["put c@5", "current"]);
    expect(await t.nats.consumerNames()).toHaveLength(2);
    expect(t.hub.sharedCount).toBe(2);
    await t.bundles[0]!.call("mesh/state.unwatch", { watch: first });
    expect(await t.nats.consumerNames()).toHaveLength(2);
    await t.bundles[1]!.call("mesh/state.unwatch", { watch: second });
    await t.services[2]!.close();
    // Deleted at once, not left to the inactivity threshold.
    expect(await t.nats.consumerNames()).toHaveLength(0);
    expect(t.hub.sharedCount).toBe(0);
  });

  it("a joiner's `current` comes after every write acknowledged before its watch, delivered to the shared consumer or not", async () => {
    await using t = await fleetScene(2, { proxy: (port) => startTcpProxy({ port }) });
    await t.put("a", 1);
    const first = await t.watch(0);
    await t.bundles[0]!.untilEvents(first, (events) => events.some((event) => event.type === "current"));
    // m2's runtime hears nothing from the server now: the shared consumer's deliveries of a@2 and b@3 wait.
    t.proxy!.hold();
    await t.put("a", 2);
    await t.put("b", 3);
    const joining = t.watch(1);
    // The joiner asks for the filter's last revision (a direct get, answered with a Nats-Sequence header), or,
    // taking the view at once, has its events already: either way the runtime has decided how to serve it.
    await until(
      () =>
        t.proxy!.heldText.includes("Nats-Sequence") ||
        t.bundles[1]!.lines.some((line) => (line as { method?: string }).method === "mesh/state"),
      10_000,
      "the joiner is being served",
    );
    t.proxy!.release();
    const second = await joining;
    await t.bundles[1]!.untilEvents(second, (events) => events.some((event) => event.type === "current"));
    expect(brief(t.bundles[1]!.events(second))).toEqual(["put a@2", "put b@3", "current"]);
    expect(await t.nats.consumerNames()).toHaveLength(1);
    await t.put("c", 4);
    for (const [index, id] of [first, second].entries())
      await t.bundles[index]!.untilEvents(id, (events) => events.at(-1)?.type === "put" && events.at(-1)?.key === "c");
    expect(brief(t.bundles[0]!.events(first))).toEqual(["put a@1", "current", "put a@2", "put b@3", "put c@4"]);
    expect(brief(t.bundles[1]!.events(second))).toEqual(["put a@2", "put b@3", "current", "put c@4"]);
  });

  it("a joiner does not wait on a view that stops short of its revision: after one request timeout it has its own consumer", async () => {
    const requestTimeoutMs = 1_000;
    // The shared consumer's replacement resumes by sequence; that create is never answered, so the shared watch
    // stays in recovery (its budget is 60 s) and its view stays where the lost consumer left it.
    const resumesNever = (connection: NatsConnection) =>
      unanswering(
        connection,
        (subject, payload) => subject.startsWith("$JS.API.CONSUMER.CREATE.") && payload.includes('"by_start_sequence"'),
      );
    await using t = await fleetScene(2, { connection: resumesNever, limits: { requestTimeoutMs } });
    await t.put("a", 1);
    const first = await t.watch(0);
    await t.bundles[0]!.untilEvents(first, (events) => events.some((event) => event.type === "current"));
    const [shared] = await t.nats.consumerNames();
    await t.nats.jsm.consumers.delete("KV_mod_notes-app_notes", shared!);
    await t.put("b", 2);
    const started = Date.now();
    const second = await t.watch(1);
    await t.bundles[1]!.untilEvents(second, (events) => events.some((event) => event.type === "current"), 10_000);
    // Its patience (one request timeout) and its own consumer's start, well inside the shared watch's budget.
    expect(Date.now() - started).toBeGreaterThanOrEqual(requestTimeoutMs);
    expect(brief(t.bundles[1]!.events(second))).toEqual(["put a@1", "put b@2", "current"]);
    expect(await t.nats.consumerNames()).toHaveLength(1);
    await t.put("c", 3);
    await t.bundles[1]!.untilEvents(second, (events) => events.length === 4);
    expect(brief(t.bundles[1]!.events(second))).toEqual(["put a@1", "put b@2", "current", "put c@3"]);
  });

  it("a slow bundle holds nobody back: past its bound it goes on with its own consumer, every change once", async () => {
    await using t = await fleetScene(2, { hub: { queueEvents: 3 } });
    await t.put("a", 1);
    const fast = await t.watch(0);
    const slow = await t.watch(1);
    for (const [index, id] of [fast, slow].entries())
      await t.bundles[index]!.untilEvents(id, (events) => events.length === 2);
    t.bundles[1]!.send({ hold: true });
    for (let value = 2; value <= 11; value++) await t.put(`k${value % 4}`, value);
    // The fast bundle has every change while the slow one answers nothing.
    await t.bundles[0]!.untilEvents(fast, (events) => events.length === 12);
    expect(brief(t.bundles[1]!.events(slow)).length).toBeLessThan(12);
    t.bundles[1]!.send({ release: true, hold: false });
    await t.bundles[1]!.untilEvents(slow, (events) => events.length === 12);
    await until(async () => (await t.nats.consumerNames()).length === 2, 10_000, "the slow bundle's own consumer");
    await t.put("z", 12);
    for (const [index, id] of [fast, slow].entries())
      await t.bundles[index]!.untilEvents(id, (events) => events.length === 13);
    const expected = ["put a@1", "current", ...Array.from({ length: 11 }, (_, i) => `put k${(i + 2) % 4}@${i + 2}`)];
    expected[12] = "put z@12";
    expect(brief(t.bundles[0]!.events(fast))).toEqual(expected);
    expect(brief(t.bundles[1]!.events(slow))).toEqual(expected);
    await t.services[1]!.close();
    await t.services[0]!.close();
    expect(await t.nats.consumerNames()).toHaveLength(0);
  });

  it("a view above its bound is dropped: a later joiner gets a consumer of its own, exactly as before", async () => {
    await using t = await fleetScene(2, { hub: { cacheBytes: 100 } });
    await t.put("a", "x".repeat(200));
    const first = await t.watch(0);
    await t.bundles[0]!.untilEvents(first, (events) => events.length === 2);
    const second = await t.watch(1);
    await t.bundles[1]!.untilEvents(second, (events) => events.length === 2);
    expect(await t.nats.consumerNames()).toHaveLength(2);
    expect(t.hub.heldBytes).toBe(0);
    await t.put("b", 2);
    await t.bundles[1]!.untilEvents(second, (events) => events.length === 3);
    await t.bundles[0]!.untilEvents(first, (events) => events.length === 3);
    for (const [index, id] of [first, second].entries())
      expect(brief(t.bundles[index]!.events(id))).toEqual(["put a@1", "current", "put b@2"]);
  });

  it("losing the shared consumer: every subscriber recovers exactly, one consumer again", async () => {
    await using t = await fleetScene(2);
    await t.put("a", 1);
    const ids = [await t.watch(0), await t.watch(1)];
    for (const [index, id] of ids.entries()) await t.bundles[index]!.untilEvents(id, (events) => events.length === 2);
    const [name] = await t.nats.consumerNames();
    await t.nats.jsm.consumers.delete("KV_mod_notes-app_notes", name!);
    await t.put("b", 2);
    await t.put("a", 3);
    for (const [index, id] of ids.entries()) {
      await t.bundles[index]!.untilEvents(id, (events) => events.length === 4, 10_000);
      expect(brief(t.bundles[index]!.events(id))).toEqual(["put a@1", "current", "put b@2", "put a@3"]);
    }
    expect(await t.nats.consumerNames()).toHaveLength(1);
  });

  it("survives a server restart (file storage) with every subscriber exact", async () => {
    await using t = await fleetScene(2);
    await t.put("a", 1);
    const ids = [await t.watch(0), await t.watch(1)];
    for (const [index, id] of ids.entries()) await t.bundles[index]!.untilEvents(id, (events) => events.length === 2);
    await t.nats.server.restart();
    await untilReconnected(t.owner, "notes", "a");
    await t.put("b", 2);
    for (const [index, id] of ids.entries()) {
      await t.bundles[index]!.untilEvents(id, (events) => events.length === 3, 15_000);
      expect(brief(t.bundles[index]!.events(id))).toEqual(["put a@1", "current", "put b@2"]);
    }
    // The admin's own list may time out while its connection comes back from the restart: asked again.
    await until(async () => (await t.nats.consumerNames().catch(() => [])).length === 1, 15_000, "one consumer left");
  });

  it("the bucket deleted under a shared watch: every subscriber gets its own `ended`, and the hub lets go", async () => {
    await using t = await fleetScene(2);
    await t.put("a", 1);
    const ids = [await t.watch(0), await t.watch(1)];
    for (const [index, id] of ids.entries()) await t.bundles[index]!.untilEvents(id, (events) => events.length === 2);
    await t.nats.jsm.streams.delete("KV_mod_notes-app_notes");
    for (const [index, id] of ids.entries()) {
      await t.bundles[index]!.untilEvents(id, (events) => events.at(-1)?.type === "ended", 15_000);
      expect(t.bundles[index]!.events(id).at(-1)).toMatchObject({ type: "ended", reason: "bucket-missing" });
    }
    expect(t.hub.sharedCount).toBe(0);
    for (const service of t.services) expect(service.watchCount).toBe(0);
  });
});
