import { isNoResponders } from "@mesh/jetstream-calls";
import { describe, expect, it } from "vitest";
import { OTHER_BUCKET, stateServer } from "../../test/kit.js";
import { BucketClient, isoMillis } from "./bucket.js";

// A write that finds no server answering for the bucket's stream (just created in a cluster, or electing a
// leader) stored nothing, so the client sends it again within a budget; a stream that never comes refuses.
describe("a write that no server answers, against a real server", () => {
  it("is sent again until the stream is there, and is stored once", async () => {
    await using nats = await stateServer();
    const stream = `KV_${OTHER_BUCKET}`;
    const { config } = await nats.jsm.streams.info(stream);
    await nats.jsm.streams.delete(stream);
    let recreated: Promise<unknown> | undefined;
    const failed: number[] = [];
    const client = new BucketClient(OTHER_BUCKET, nats.admin, {
      noRespondersRetryMs: 30_000,
      onNoResponders(attempt) {
        failed.push(attempt);
        // The first attempt found no stream; only now does it come back.
        recreated ??= nats.jsm.streams.add(config);
      },
    });
    const revision = await client.put("k", { n: 1 });
    await recreated;
    expect(failed[0]).toBe(1);
    expect(revision).toBe(1);
    const entry = await client.read("k");
    expect(entry).toMatchObject({ key: "k", revision: 1, deleted: false, value: { n: 1 } });
    expect((await nats.jsm.streams.info(stream)).state.messages).toBe(1);
  });

  it("refuses once the budget is spent, naming no responder as the cause", async () => {
    await using nats = await stateServer();
    await nats.jsm.streams.delete(`KV_${OTHER_BUCKET}`);
    const failed: number[] = [];
    const client = new BucketClient(OTHER_BUCKET, nats.admin, {
      noRespondersRetryMs: 200,
      onNoResponders: (attempt) => failed.push(attempt),
    });
    const error = await client.put("k", 1).catch((caught: unknown) => caught);
    expect(isNoResponders(error)).toBe(true);
    expect(failed.length).toBeGreaterThan(0);
    const never = new BucketClient(OTHER_BUCKET, nats.admin, { noRespondersRetryMs: 0 });
    expect(isNoResponders(await never.put("k", 1).catch((caught: unknown) => caught))).toBe(true);
  });
});

describe("isoMillis", () => {
  it("gives what Date#toISOString gives for a stored message's time", () => {
    for (const stamp of [
      "2026-12-01T23:06:19.123456789Z",
      "2026-12-01T23:06:19.1Z",
      "2026-12-01T23:06:19Z",
      "1999-01-31T00:00:00.999999999Z",
      "2026-12-01T23:06:19.123456789+01:00",
    ]) {
      expect(isoMillis(stamp), stamp).toBe(new Date(Date.parse(stamp)).toISOString());
    }
  });
});
