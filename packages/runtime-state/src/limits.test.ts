import { describe, expect, it } from "vitest";
import { ownerMembership, stateServer, watchScene } from "../test/kit.js";
import { DEFAULT_LIMITS } from "./limits.js";
import { createStateService } from "./verbs/service.js";

describe("per-bundle limits, each refused with reason limit", () => {
  it("the watch over maxWatches is refused as limit watches, and one closes a place for the next", async () => {
    await using nats = await stateServer();
    const scene = await watchScene(nats, { limits: { maxWatches: 2 } });
    const first = await scene.watch();
    await scene.watch();
    const refused = await scene.bundle.call("mesh/state.watch", { bucket: "notes-app.notes" });
    expect(refused.error).toMatchObject({ code: -32050, data: { reason: "limit", limit: "watches", max: 2 } });
    await scene.bundle.call("mesh/state.unwatch", { watch: first });
    expect((await scene.bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result).toMatchObject({
      watch: expect.any(String),
    });
    await scene.bundle.kill();
    await scene.bundle.stdio.close();
  });

  it("a mounted service refuses a request over maxInFlight as limit in-flight; the others are answered", async () => {
    await using nats = await stateServer();
    const service = createStateService({
      connection: await nats.machine("m1"),
      membership: ownerMembership,
      limits: { maxInFlight: 2 },
    });
    const get = () => service.handlers["mesh/state.get"]({ bucket: "notes", key: "a" });
    const answers = await Promise.allSettled([get(), get(), get()]);
    expect(answers.map((answer) => answer.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect((answers[2] as PromiseRejectedResult).reason).toMatchObject({
      code: -32050,
      data: { reason: "limit", limit: "in-flight", max: 2 },
    });
    expect(service.inFlight).toBe(0);
    await service.close();
  });

  it("has the documented defaults", () => {
    expect(DEFAULT_LIMITS).toMatchObject({
      maxWatches: 64,
      maxInFlight: 64,
      maxUnreadBytes: 256 * 1024,
      maxLineBytes: 2 * 1024 * 1024,
    });
  });
});
