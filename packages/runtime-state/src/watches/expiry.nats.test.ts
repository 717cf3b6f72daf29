// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { describe, expect, it } from "vitest";
import { BUCKET, brief, stateServer, until, watchScene } from "../../test/kit.js";

// A key that expires by its bucket's ttl: from nats-server 2.11 the stream keeps a delete marker
// (`Nats-Marker-Reason: MaxAge`) and a watch sends a delete; on 2.10 the value just goes, and nothing tells a
// watcher (docs/decisions/0006-no-lasting-consumers.md, "TTL expiry").
describe("a key expiring by the bucket's ttl, against a real server", () => {
  it("reaches a watch as a delete from 2.11 on, and is silent before", async () => {
    await using nats = await stateServer({ ttl: "2s" });
    const version = nats.admin.info!.version;
    const markers = nats.features.deleteMarkers;
    const t = await watchScene(nats);
    await t.put("a", 1);
    const id = await t.watch();
    await t.bundle.untilEvents(id, (events) => events.some((event) => event.type === "current"));
    const stream = `KV_${BUCKET}`;
    // The value is gone from the stream once the ttl has passed: the server's own expiry ran.
    await until(
      async () => (await nats.jsm.streams.info(stream)).state.first_seq > 1,
      15_000,
      "the value of a to expire",
    );
    if (markers) {
      await t.bundle.untilEvents(id, (events) => events.length === 3, 10_000);
      expect(brief(t.bundle.events(id)), `nats-server ${version}`).toEqual(["put a@1", "current", "delete a@2"]);
      // A watch started while the marker stands: the marker is never a current value.
      const later = await t.watch();
      await t.bundle.untilEvents(later, (events) => events.length >= 1);
      expect(brief(t.bundle.events(later))).toEqual(["current"]);
      expect((await t.reader.handle("mesh/state.get", { bucket: "notes-app.notes", key: "a" })) ?? null).toBeNull();
      expect(await t.reader.handle("mesh/state.keys", { bucket: "notes-app.notes" })).toEqual({ keys: [] });
      const history = (await t.reader.handle("mesh/state.history", { bucket: "notes-app.notes", key: "a" })) as {
        entries: { type: string; revision: number }[];
      };
      expect(history.entries.map((entry) => `${entry.type}@${entry.revision}`)).toEqual(["delete@2"]);
    } else {
      // No marker was written (nothing after revision 1), and the watch heard nothing: expiry is silent.
      const { state } = await nats.jsm.streams.info(stream);
      expect(state.last_seq, `nats-server ${version}`).toBe(1);
      await t.put("b", 2);
      await t.bundle.untilEvents(id, (events) => events.length === 3);
      expect(brief(t.bundle.events(id))).toEqual(["put a@1", "current", "put b@2"]);
    }
  });
});
