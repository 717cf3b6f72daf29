import { describe, expect, it } from "vitest";
import { ownerMembership, readerMembership, spawnBundle, stateServer, until } from "../../test/kit.js";
import { createStateService } from "../verbs/service.js";

describe("stdio adapter: bad input from a real bundle", () => {
  it("answers each bad line correctly and serves the next request", async () => {
    await using nats = await stateServer();
    const bundle = spawnBundle(
      createStateService({ connection: await nats.machine("m1"), membership: ownerMembership }),
    );
    const ok = async () =>
      expect((await bundle.call("mesh/state.get", { bucket: "notes", key: "a" })).result).toBeNull();
    bundle.write("this is not json");
    expect(await bundle.response(null)).toMatchObject({ error: { code: -32700 } });
    await ok();
    bundle.write(
      JSON.stringify({ jsonrpc: "2.0", id: "t1", method: "mesh/state.get", params: { bucket: 7, key: [] } }),
    );
    expect(await bundle.response("t1")).toMatchObject({ error: { code: -32602, data: { reason: "bad-request" } } });
    bundle.write(JSON.stringify({ jsonrpc: "2.0", id: "t2", method: "mesh/state.nope", params: {} }));
    expect(await bundle.response("t2")).toMatchObject({ error: { code: -32601 } });
    await ok();
    bundle.write(
      `{"jsonrpc":"2.0","id":"big","method":"mesh/state.get","params":{"bucket":"notes","key":"${"a".repeat(10 * 1024 * 1024)}"}}`,
    );
    expect(await bundle.response(null)).toMatchObject({
      error: { code: -32050, data: { reason: "limit", limit: "line-size", max: 2 * 1024 * 1024 } },
    });
    await ok();
    // A notification (no id) is not answered; the next request still is.
    bundle.write(
      JSON.stringify({ jsonrpc: "2.0", method: "mesh/state.put", params: { bucket: "notes", key: "n", value: 1 } }),
    );
    await ok();
    // Duplicate ids while the first is in flight: the second is refused, the first answered.
    const slow = JSON.stringify({ jsonrpc: "2.0", id: "dup", method: "mesh/state.keys", params: { bucket: "notes" } });
    bundle.send({ writeRaw: `${slow}\n${slow}\n` });
    const first = await bundle.response("dup", 20_000);
    const second = await bundle.response("dup", 20_000);
    expect([first, second].some((answer) => "result" in (answer as object))).toBe(true);
    expect([first, second].some((answer) => (answer as { error?: { code: number } }).error?.code === -32600)).toBe(
      true,
    );
    await ok();
    await bundle.kill();
  });

  it("a bundle closing its stdout mid-line: the service closes and its watch consumer is deleted", async () => {
    await using nats = await stateServer();
    const service = createStateService({ connection: await nats.machine("m2"), membership: readerMembership });
    const bundle = spawnBundle(service);
    await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" });
    expect(await nats.consumerNames()).toHaveLength(1);
    bundle.send({ writeRaw: '{"jsonrpc":"2.0","id":9,"meth' });
    bundle.send({ closeStdout: true });
    await bundle.stdio.closed;
    expect(service.watchCount).toBe(0);
    expect(await nats.consumerNames()).toEqual([]);
    await bundle.kill();
  });

  it("two bundles racing put with the same revision: exactly one wins, the other hears the winner's revision", async () => {
    await using nats = await stateServer();
    const connection = await nats.machine("m1");
    const one = spawnBundle(createStateService({ connection, membership: ownerMembership }));
    const two = spawnBundle(createStateService({ connection, membership: ownerMembership }));
    const base = (await one.call("mesh/state.put", { bucket: "notes", key: "x", value: 0 })).result as {
      revision: number;
    };
    const answers = await Promise.all([
      one.call("mesh/state.put", { bucket: "notes", key: "x", value: 1, revision: base.revision }),
      two.call("mesh/state.put", { bucket: "notes", key: "x", value: 2, revision: base.revision }),
    ]);
    const winners = answers.filter((answer) => answer.result !== undefined);
    const losers = answers.filter((answer) => answer.error !== undefined);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(losers[0]!.error).toMatchObject({
      code: -32020,
      data: { reason: "conflict", revision: (winners[0]!.result as { revision: number }).revision },
    });
    await one.kill();
    await two.kill();
  });
});

describe("no consumer left behind", () => {
  it("50 bundles watch, list keys, read history and exit (some SIGKILLed): no consumer within 10 s", async () => {
    await using nats = await stateServer();
    const connection = await nats.machine("m2");
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    for (let index = 0; index < 20; index++)
      await owner.handle("mesh/state.put", { bucket: "notes", key: `k${index}`, value: index });
    const bundles = Array.from({ length: 50 }, () =>
      spawnBundle(createStateService({ connection, membership: readerMembership })),
    );
    await Promise.all(
      bundles.map(async (bundle) => {
        const watch = (await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as {
          watch: string;
        };
        expect(
          ((await bundle.call("mesh/state.keys", { bucket: "notes-app.notes" })).result as { keys: string[] }).keys,
        ).toHaveLength(20);
        expect(
          (
            (await bundle.call("mesh/state.history", { bucket: "notes-app.notes", key: "k1" })).result as {
              entries: unknown[];
            }
          ).entries,
        ).toHaveLength(1);
        await bundle.untilEvents(watch.watch, (events) => events.some((event) => event.type === "current"));
      }),
    );
    expect((await nats.consumerNames()).length).toBe(50);
    const started = Date.now();
    await Promise.all(
      bundles.map((bundle, index) => (index % 3 === 0 ? bundle.kill("SIGKILL") : bundle.send({ exit: 0 }))),
    );
    await until(async () => (await nats.consumerNames()).length === 0, 10_000, "every consumer deleted");
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
