// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { describe, expect, it } from "vitest";
import { BUCKET, brief, stateServer, until, watchScene } from "../../test/kit.js";

// forgetDeletes (decision 0009): in a bucket issued it, a delete is a PURGE rolling up the key's older values,
// with its own ttl; the server removes the marker after it and, whatever the history, no older value comes back.
// On 2.10 the raise reports the option unsupported, it is not issued, and a delete is a plain DEL that stays.
describe("a delete in a bucket declaring forgetDeletes, against a real server", () => {
  it("reads and watches as a delete; from 2.11 the marker expires and nothing of the key is left", async () => {
    await using nats = await stateServer({ history: 5, forgetDeletes: "1s" });
    const version = nats.admin.info!.version;
    const supported = nats.features.deleteMarkers;
    const membership = nats.membership("notes-app");
    expect(membership.buckets.notes?.forgetDeletes, `nats-server ${version}`).toEqual(
      supported ? { afterSeconds: 1 } : undefined,
    );
    const t = await watchScene(nats, {}, { membership });
    const stream = `KV_${BUCKET}`;
    for (const value of [1, 2, 3]) await t.put("a", value);
    await t.put("b", "kept");
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.some((event) => event.type === "current"));
    await t.del("a");

    await t.bundle.untilEvents(id, (events) => events.length === 4);
    expect(brief(t.bundle.events(id)), `nats-server ${version}`).toEqual([
      "put a@3",
      "put b@4",
      "current",
      "delete a@5",
    ]);
    expect(await t.reader.handle("mesh/state.get", { bucket: "notes-app.notes", key: "a" })).toBeNull();
    expect(await t.reader.handle("mesh/state.keys", { bucket: "notes-app.notes" })).toEqual({ keys: ["b"] });
    const history = (await t.reader.handle("mesh/state.history", { bucket: "notes-app.notes", key: "a" })) as {
      entries: { type: string; revision: number }[];
    };
    const entries = history.entries.map((entry) => `${entry.type}@${entry.revision}`);
    if (!supported) {
      // A plain DEL: the older values and the marker stay until compacted.
      expect(entries, `nats-server ${version}`).toEqual(["put@1", "put@2", "put@3", "delete@5"]);
      expect((await nats.jsm.streams.info(stream)).state.messages).toBe(5);
      return;
    }
    // The purge rolled up a's three values: only the marker is left of it, beside b.
    expect(entries, `nats-server ${version}`).toEqual(["delete@5"]);
    expect((await nats.jsm.streams.info(stream)).state.messages).toBe(2);
    const marker = await nats.jsm.direct.getMessage(stream, { seq: 5 });
    expect(marker?.header?.get("KV-Operation")).toBe("PURGE");
    expect(marker?.header?.get("Nats-TTL")).toBe("1s");

    // The server removes the marker once its ttl has passed: then the stream holds only b.
    await until(
      async () => (await nats.jsm.streams.info(stream)).state.messages === 1,
      15_000,
      "the purge marker of a to expire",
    );
    expect(await nats.jsm.direct.getMessage(stream, { last_by_subj: `$KV.${BUCKET}.a` })).toBeNull();
    expect(await t.reader.handle("mesh/state.get", { bucket: "notes-app.notes", key: "a" })).toBeNull();
    expect(await t.reader.handle("mesh/state.keys", { bucket: "notes-app.notes" })).toEqual({ keys: ["b"] });
    // A watch started now knows nothing of a: no older value came back.
    const later = await t.watch();
    await t.bundle.untilEvents(later, (events) => events.some((event) => event.type === "current"));
    expect(brief(t.bundle.events(later))).toEqual(["put b@4", "current"]);
    // The expiry sent the running watch nothing (no server marker without a bucket ttl): a stays deleted for it.
    expect(brief(t.bundle.events(id))).toEqual(["put a@3", "put b@4", "current", "delete a@5"]);
    // The key can be written again, also as "only if absent".
    expect(await t.owner.handle("mesh/state.put", { bucket: "notes", key: "a", value: 9, revision: 0 })).toMatchObject({
      revision: 6,
    });
  });
});
