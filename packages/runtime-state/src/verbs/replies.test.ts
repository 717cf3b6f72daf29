import { describe, expect, it } from "vitest";
import { BUCKET, ownerMembership, readerMembership, spawnBundle, stateServer } from "../../test/kit.js";
import { DEFAULT_LIMITS } from "../limits.js";
import { createStateService } from "./service.js";

/** keys and history replies are bounded (limits.maxReplyBytes): over it, `too-large` — never a dropped line. */
describe("replies too big for one line", () => {
  it("keys over the bound: too-large naming the bucket, the size and a filter to use; a filter fits", async () => {
    await using nats = await stateServer();
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const keys = Array.from({ length: 300 }, (_, index) => `m${index % 3}.server-${String(index).padStart(4, "0")}`);
    for (const key of keys) await owner.handle("mesh/state.put", { bucket: "notes", key, value: 1 });
    const reader = createStateService({
      connection: await nats.machine("m2"),
      membership: readerMembership,
      limits: { maxReplyBytes: 4_096 },
    });
    const bundle = spawnBundle(reader);
    const refused = await bundle.call("mesh/state.keys", { bucket: "notes-app.notes" });
    expect(refused.error).toMatchObject({ code: -32013, data: { reason: "too-large", limit: 4_096 } });
    const { message, data } = refused.error as unknown as { message: string; data: { bytes: number } };
    expect(data.bytes).toBeGreaterThan(4_096);
    expect(message).toContain("bucket notes-app.notes");
    expect(message).toContain(`${data.bytes} seen`);
    expect(message).toContain("filter");
    const narrowed = await bundle.call("mesh/state.keys", { bucket: "notes-app.notes", filter: "m1.*" });
    expect((narrowed.result as { keys: string[] }).keys).toEqual(keys.filter((key) => key.startsWith("m1.")).sort());
    expect(await nats.consumerNames(BUCKET)).toEqual([]);
    await bundle.kill();
  });

  it("the whole history a mesh allows (64 values of 256 KiB) is one reply within the default bound; a lower bound refuses it", async () => {
    await using nats = await stateServer({ history: 64 });
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const value = (index: number) => `${index}`.padEnd(262_142, "x"); // 262,144 bytes encoded: the cap
    for (let index = 0; index < 64; index++) {
      await owner.handle("mesh/state.put", { bucket: "notes", key: "big", value: value(index) });
    }
    const bundle = spawnBundle(
      createStateService({ connection: await nats.machine("m2"), membership: readerMembership }),
    );
    const answer = await bundle.call("mesh/state.history", { bucket: "notes-app.notes", key: "big" });
    const entries = (answer.result as { entries: Array<{ revision: number; value: string }> }).entries;
    expect(entries.map((entry) => entry.revision)).toEqual(Array.from({ length: 64 }, (_, index) => index + 1));
    expect(entries.every((entry, index) => entry.value === value(index))).toBe(true);
    const line = JSON.stringify({ jsonrpc: "2.0", id: 1, result: answer.result });
    expect(Buffer.byteLength(line)).toBeGreaterThan(16 * 1024 * 1024);
    expect(Buffer.byteLength(line)).toBeLessThan(DEFAULT_LIMITS.maxReplyBytes);
    await bundle.kill();

    const small = createStateService({
      connection: await nats.machine("m2"),
      membership: readerMembership,
      limits: { maxReplyBytes: 1024 * 1024 },
    });
    await expect(small.handle("mesh/state.history", { bucket: "notes-app.notes", key: "big" })).rejects.toMatchObject({
      reason: "too-large",
      code: -32013,
      message: expect.stringContaining("history reply for bucket notes-app.notes is over 1048576 bytes"),
    });
    expect(await nats.consumerNames(BUCKET)).toEqual([]);
  });
});
