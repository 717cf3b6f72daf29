import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { JsonValue } from "@mesh/state-protocol";
import { JsonRpcPeer } from "@mesh/state-protocol/jsonrpc";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WireRuntime } from "../test/wire-runtime.js";
import { ClientError, StateError } from "./errors.js";
import { connect } from "./index.js";
import type { WatchEvent } from "./types.js";

async function setUp() {
  const runtime = new WireRuntime();
  runtime.access.set("items", "write");
  runtime.access.set("other.things", "read");
  const client = await connect({ transport: runtime.transport });
  return { runtime, client };
}

const Item = z.object({ name: z.string(), count: z.number().int() });

describe("the verbs over the wire", () => {
  it("put, get, create, delete, keys and history", async () => {
    const { client } = await setUp();
    const items = client.state("items");
    const first = await items.put("a.x", { n: 1 });
    expect(await items.get("a.x")).toMatchObject({ key: "a.x", value: { n: 1 }, revision: first });
    expect(await items.get("missing")).toBeNull();
    const second = await items.put("a.x", { n: 2 }, { revision: first });
    expect(second).toBeGreaterThan(first);
    await items.create("b.y", "hello");
    expect(await items.keys()).toEqual(["a.x", "b.y"]);
    expect(await items.keys("a.*")).toEqual(["a.x"]);
    await items.delete("b.y");
    expect(await items.get("b.y")).toBeNull();
    const history = await items.history("a.x");
    expect(history.map((entry) => entry.type === "put" && entry.value)).toEqual([{ n: 1 }, { n: 2 }]);
    expect((await items.history("b.y")).map((entry) => entry.type)).toEqual(["put", "delete"]);
  });

  it("rebuilds refusals as StateError with reason, message and revision", async () => {
    const { client } = await setUp();
    const items = client.state("items");
    const revision = await items.put("k", 1);
    const conflict = await items.put("k", 2, { revision: revision + 5 }).catch((error: unknown) => error);
    expect(StateError.is(conflict, "conflict")).toBe(true);
    expect(conflict).toMatchObject({ revision, bucket: "items", key: "k" });
    const exists = await items.create("k", 3).catch((error: unknown) => error);
    expect(StateError.is(exists, "conflict")).toBe(true);
    const notIssued = await client
      .state("nope")
      .get("k")
      .catch((error: unknown) => error);
    expect(notIssued).toMatchObject({ name: "StateError", reason: "not-issued", message: "bucket nope is not issued" });
    const readOnly = await client
      .state("other.things")
      .put("k", 1)
      .catch((error: unknown) => error);
    expect(StateError.is(readOnly, "read-only")).toBe(true);
  });

  it("refuses a value carrying a credential before sending it, with the runtime's reason, path and kind", async () => {
    const { client } = await setUp();
    const items = client.state("items");
    // Made at test time: no credential is a literal in the repository.
    const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    const password = `Pw7${randomBytes(12).toString("hex")}`;
    const cases: Array<{ value: JsonValue; path: string; kind: string; secret: string }> = [
      { value: { note: pem }, path: "note", kind: "pem-private-key", secret: pem.split("\n")[1]! },
      { value: [`redis://:${password}@cache:6379`], path: "[0]", kind: "url-password", secret: password },
      { value: { service: { clientSecret: "s" } }, path: "service.clientSecret", kind: "field-name", secret: "s" },
    ];
    for (const { value, path, kind, secret } of cases) {
      const refused = await items.put("leak", value).catch((error: unknown) => error);
      expect(StateError.is(refused, "secret-field"), kind).toBe(true);
      expect(refused).toMatchObject({ code: -32014, path, kind, bucket: "items", key: "leak" });
      if (kind !== "field-name") expect((refused as Error).message.includes(secret)).toBe(false);
      await expect(items.update("leak", () => value)).rejects.toMatchObject({ reason: "secret-field", kind });
    }
    // Nothing reached the runtime, which stores whatever it is sent.
    expect(await items.keys()).toEqual([]);
    expect(await items.put("fine", { note: "the password lives in the vault" })).toBeGreaterThan(0);
  });

  it("gives a reads() handle no write method, on the object as on its type", async () => {
    const { client } = await setUp();
    const things = client.reads("other.things");
    for (const method of ["put", "create", "update", "delete"]) expect(method in things).toBe(false);
    expect(await things.get("k")).toBeNull();
  });
});

describe("read consistency", () => {
  it("sends the level given to get, keys, history, watch and mirror, and no field without one", async () => {
    const { runtime, client } = await setUp();
    const items = client.state("items");
    runtime.write("items", "a.x", 1);
    await items.get("a.x");
    await items.get("a.x", { consistency: "strong" });
    await items.get("a.x", {});
    await items.keys("a.*");
    await items.keys({ filter: "a.*", consistency: "local" });
    await items.keys({ consistency: "session" });
    await items.history("a.x", { consistency: "strong" });
    await items.update("a.x", (current) => Number(current ?? 0) + 1);
    const watch = items.watch({ filter: "a.>", consistency: "strong" });
    await watch.next();
    await watch.stop();
    const mirror = items.mirror({ consistency: "local" });
    await mirror.synced;
    await mirror.stop();
    const sent = runtime.requests.filter(({ method }) => method !== "mesh/state.unwatch");
    expect(sent.map(({ method, params }) => [method.slice("mesh/state.".length), params])).toEqual([
      ["get", { bucket: "items", key: "a.x" }],
      ["get", { bucket: "items", key: "a.x", consistency: "strong" }],
      ["get", { bucket: "items", key: "a.x" }],
      ["keys", { bucket: "items", filter: "a.*" }],
      ["keys", { bucket: "items", filter: "a.*", consistency: "local" }],
      ["keys", { bucket: "items", consistency: "session" }],
      ["history", { bucket: "items", key: "a.x", consistency: "strong" }],
      // update reads at the runtime's default (session: it sees this bundle's own writes).
      ["get", { bucket: "items", key: "a.x" }],
      ["put", { bucket: "items", key: "a.x", value: 2, revision: 1 }],
      ["watch", { bucket: "items", filter: "a.>", consistency: "strong" }],
      ["watch", { bucket: "items", consistency: "local" }],
    ]);
  });
});

describe("schemas", () => {
  it("refuses a value that does not fit before it leaves the process", async () => {
    const { runtime, client } = await setUp();
    const items = client.state("items", { schema: Item });
    const error = await items.put("k", { name: "x", count: 1.5 }).catch((caught: unknown) => caught);
    expect(ClientError.is(error, "invalid-value")).toBe(true);
    expect(error).toMatchObject({
      key: "k",
      bucket: "items",
      issues: ["count: Invalid input: expected int, received number"],
    });
    expect(runtime.peer.pendingCount).toBe(0);
    expect(await client.state("items").keys()).toEqual([]);
  });

  it("names the key of a stored value that does not fit, and types the ones that do", async () => {
    const { runtime, client } = await setUp();
    runtime.write("items", "good", { name: "g", count: 1 });
    runtime.write("items", "bad", { name: 7 });
    const items = client.state("items", { schema: Item });
    expect((await items.get("good"))?.value).toEqual({ name: "g", count: 1 });
    const error = await items.get("bad").catch((caught: unknown) => caught);
    expect(ClientError.is(error, "invalid-stored-value")).toBe(true);
    expect(error).toMatchObject({ key: "bad" });
    expect((error as Error).message).toContain("key bad in bucket items");
    expect((await items.history("bad"))[0]).toMatchObject({ type: "invalid", key: "bad", value: { name: 7 } });
  });

  it("keeps a watch going past an invalid value", async () => {
    const { runtime, client } = await setUp();
    runtime.write("items", "bad", "not an item");
    runtime.write("items", "good", { name: "g", count: 2 });
    const seen: WatchEvent<z.infer<typeof Item>>[] = [];
    for await (const event of client.state("items", { schema: Item }).watch()) {
      seen.push(event);
      if (event.type === "current") runtime.write("items", "late", { name: "l", count: 3 });
      if (event.type === "put" && event.key === "late") break;
    }
    expect(seen.map((event) => event.type)).toEqual(["invalid", "put", "current", "put"]);
    expect(seen[0]).toMatchObject({ key: "bad", error: { reason: "invalid-stored-value", key: "bad" } });
  });
});

describe("update", () => {
  it("ends with every concurrent increment counted", async () => {
    const { client } = await setUp();
    const counter = client.state("items", { schema: z.number() });
    await Promise.all(Array.from({ length: 20 }, () => counter.update("n", (n) => (n ?? 0) + 1, { attempts: 50 })));
    expect((await counter.get("n"))?.value).toBe(20);
  });

  it("gives up with a conflict after its attempts", async () => {
    const { runtime, client } = await setUp();
    const counter = client.state("items", { schema: z.number() });
    let calls = 0;
    const error = await counter
      .update(
        "n",
        (n) => {
          calls += 1;
          runtime.write("items", "n", calls * 100); // another writer, every time
          return (n ?? 0) + 1;
        },
        { attempts: 3 },
      )
      .catch((caught: unknown) => caught);
    expect(calls).toBe(3);
    expect(StateError.is(error, "conflict")).toBe(true);
    expect((error as Error).message).toContain("gave up after 3 attempts");
  });
});

describe("watch", () => {
  it("delivers current values, the marker, then changes; leaving the loop unwatches", async () => {
    const { runtime, client } = await setUp();
    runtime.write("items", "a", 1);
    runtime.write("items", "b", 2);
    const events: WatchEvent<unknown>[] = [];
    for await (const event of client.state("items").watch()) {
      events.push(event);
      if (event.type === "current") {
        runtime.write("items", "a", undefined);
        runtime.write("items", "c", 3);
      }
      if (event.type === "put" && event.key === "c") break;
    }
    expect(events.map((event) => `${event.type}:${"key" in event ? event.key : ""}`)).toEqual([
      "put:a",
      "put:b",
      "current:",
      "delete:a",
      "put:c",
    ]);
    expect(runtime.openWatches).toBe(0);
  });

  it("answers a batch only once the consumer has taken all of it", async () => {
    const { runtime, client } = await setUp();
    runtime.batchEvents = 2;
    for (const key of ["a", "b", "c", "d", "e"]) runtime.write("items", key, key);
    const watch = client.state("items").watch();
    await watch.next();
    await watch.next(); // the whole first batch is taken, but the consumer may still be handling its last event
    expect(runtime.batches.map((batch) => batch.answered)).toEqual([false]);
    await watch.next(); // asking for more answers it; this is the first event of the second batch, held
    expect(runtime.batches.map((batch) => batch.answered)).toEqual([true, false]);
    await watch.stop();
    expect(runtime.openWatches).toBe(0);
    expect(runtime.batches[1]?.answered).toBe(true);
    expect(await watch.next()).toEqual({ done: true, value: undefined });
  });

  it("takes a batch that overtakes the watch answer", async () => {
    const { runtime, client } = await setUp();
    runtime.answerWatchLate = true;
    runtime.write("items", "a", 1);
    const watch = client.state("items").watch();
    expect((await watch.next()).value).toMatchObject({ type: "put", key: "a" });
    expect((await watch.next()).value).toEqual({ type: "current" });
    await watch.stop();
    expect(runtime.openWatches).toBe(0);
  });

  it("refuses a malformed mesh/state batch with invalid params, and the watch goes on", async () => {
    const { runtime, client } = await setUp();
    const watch = client.state("items").watch();
    expect((await watch.next()).value).toEqual({ type: "current" });
    const id = runtime.batches[0]!.watch;
    const at = new Date().toISOString();
    for (const events of [
      [],
      [{ type: "put", key: "a", revision: 1, updated: at }],
      [{ type: "put", key: "a", value: 1, revision: -1, updated: at }],
      [{ type: "delete", key: 7, revision: 1, updated: at }],
      [{ type: "ended", reason: "tired", message: "x" }],
      [{ type: "later" }],
    ]) {
      await expect(runtime.peer.request("mesh/state", { watch: id, events })).rejects.toMatchObject({ code: -32602 });
    }
    runtime.write("items", "a", { n: 1 });
    expect((await watch.next()).value).toMatchObject({ type: "put", key: "a", value: { n: 1 } });
    await watch.stop();
  });

  it("surfaces a refused watch from next(), and an ended one as its last event", async () => {
    const { runtime, client } = await setUp();
    const refused = client.state("nope").watch();
    await expect(refused.next()).rejects.toMatchObject({ reason: "not-issued" });
    expect(await refused.next()).toEqual({ done: true, value: undefined });
    const watch = client.state("items").watch();
    expect((await watch.next()).value).toEqual({ type: "current" });
    runtime.end(runtime.batches[0]!.watch, "denied");
    expect((await watch.next()).value).toMatchObject({ type: "ended", reason: "denied" });
    expect((await watch.next()).done).toBe(true);
  });

  it("ends watches and refuses calls when the runtime goes away", async () => {
    const { runtime, client } = await setUp();
    const watch = client.state("items").watch();
    expect((await watch.next()).value).toEqual({ type: "current" });
    runtime.hangUp();
    expect((await watch.next()).value).toMatchObject({ type: "ended", reason: "closed" });
    expect(await client.closed).toContain("stdin ended");
    await expect(client.state("items").get("a")).rejects.toMatchObject({ name: "ClientError", reason: "closed" });
  });

  it("answers an unknown runtime method with method not found", async () => {
    const { runtime } = await setUp();
    await expect(runtime.peer.request("mesh/other", {})).rejects.toMatchObject({ code: -32601 });
    await expect(
      runtime.peer.request("mesh/state", { watch: "w99", events: [{ type: "current" }] }),
    ).rejects.toMatchObject({
      code: -32040,
    });
  });
});

describe("mirror", () => {
  it("holds the current values from the marker on and follows changes", async () => {
    const { runtime, client } = await setUp();
    runtime.write("items", "a", { name: "a", count: 1 });
    runtime.write("items", "b", { name: "b", count: 2 });
    runtime.write("items", "c", "broken");
    const mirror = client.state("items", { schema: Item }).mirror();
    await mirror.synced;
    expect([...mirror.values.keys()].sort()).toEqual(["a", "b"]);
    expect([...mirror.invalid.keys()]).toEqual(["c"]);
    runtime.write("items", "a", undefined);
    runtime.write("items", "c", { name: "c", count: 3 });
    await mirror.until((values) => values.has("c"));
    await mirror.stop();
    expect(Object.fromEntries(mirror.values)).toEqual({ b: { name: "b", count: 2 }, c: { name: "c", count: 3 } });
    expect(mirror.invalid.size).toBe(0);
    expect(await mirror.ended).toMatchObject({ type: "ended", reason: "closed" });
    expect(runtime.openWatches).toBe(0);
  });

  it("rejects synced when its watch is refused, and until() when it ends first", async () => {
    const { runtime, client } = await setUp();
    const refused = client.state("nope").mirror();
    await expect(refused.synced).rejects.toMatchObject({ reason: "not-issued" });
    const mirror = client.state("items").mirror();
    await mirror.synced;
    const waiting = mirror.until((values) => values.has("never"));
    runtime.end(runtime.batches[0]!.watch, "unavailable");
    await expect(waiting).rejects.toMatchObject({ reason: "watch-ended" });
    expect(await mirror.ended).toMatchObject({ reason: "unavailable" });
  });
});

describe("a channel the bundle already has", () => {
  it("carries the bundle's own verbs and the SDK's interleaved; close() leaves the channel open", async () => {
    const runtime = new WireRuntime();
    runtime.access.set("items", "write");
    runtime.peer.handle("mesh/echo", (params) => params);
    const bundle = new JsonRpcPeer({ send: (line) => runtime.transport.send(line) });
    runtime.transport.start({ line: (line) => bundle.receiveLine(line), closed: () => {}, problem: () => {} });
    const client = await connect({ channel: bundle });
    const items = client.state("items");
    const seen: string[] = [];
    const watched = (async () => {
      for await (const event of items.watch()) {
        if (event.type === "put") seen.push(event.key);
        if (seen.length === 20) return;
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        Promise.all([bundle.request("mesh/echo", { index }), items.put(`k${index}`, index)]),
      ),
    );
    expect(answers.map(([echo]) => echo)).toEqual(Array.from({ length: 20 }, (_, index) => ({ index })));
    await watched;
    expect(seen).toHaveLength(20);
    await expect(items.put("k", 1, { revision: 999 })).rejects.toSatisfy((error) => StateError.is(error, "conflict"));
    await client.close();
    expect(runtime.openWatches).toBe(0);
    expect(await bundle.request("mesh/echo", "still open")).toBe("still open");
    await expect(items.get("k0")).rejects.toSatisfy((error) => ClientError.is(error, "closed"));
  });
});
