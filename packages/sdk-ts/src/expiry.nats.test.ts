// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { beforeAll, describe, expect, it } from "vitest";
import { assertDistIsFresh, realMesh } from "../test/real-mesh.js";

beforeAll(() => assertDistIsFresh());

// A key that expires by its bucket's ttl (2 s here): from nats-server 2.11 a mirror drops it, from the delete
// marker the server leaves; on 2.10 nothing tells the mirror and it keeps the stale value.
describe("a mirror of a bucket with a ttl, against a real server", () => {
  it("drops an expired key from 2.11 on, and keeps it before", async () => {
    await using mesh = await realMesh();
    const markers = mesh.features.deleteMarkers;
    const kv = await mesh.kvm.open("mod_sdk-app_expiring");
    await kv.put("a", JSON.stringify(1));
    const bundle = mesh.bundle("expiry.mjs");
    expect(await bundle.next()).toEqual({ synced: { a: 1 } });
    // The server's expiry ran: the value is no longer in the stream.
    const deadline = Date.now() + 15_000;
    while ((await mesh.jsm.streams.info("KV_mod_sdk-app_expiring")).state.first_seq <= 1) {
      expect(Date.now(), "the value of a to expire").toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await kv.put("zz.done", JSON.stringify(true));
    const { values } = await bundle.next<{ values: Record<string, unknown> }>();
    expect(values, `nats-server ${mesh.version}`).toEqual(markers ? { "zz.done": true } : { a: 1, "zz.done": true });
    expect(await bundle.exited).toMatchObject({ code: 0 });
  });
});
