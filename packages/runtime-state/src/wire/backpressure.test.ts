import { describe, expect, it } from "vitest";
import { ownerMembership, spawnBundle, stateServer, until } from "../../test/kit.js";
import { getLatency, rssMiB, serveMisbehaving, settledRssMiB } from "../../test/misbehaving.js";
import { createStateService } from "../verbs/service.js";

describe("back-pressure on a bundle's input", () => {
  it("400,000 gets never read: the runtime stops reading, grows < 32 MiB, and another bundle keeps its p50", async () => {
    await using nats = await stateServer();
    const connection = await nats.machine("m1");
    const steady = spawnBundle(createStateService({ connection, membership: ownerMembership }));
    await getLatency(steady, 100); // warm-up: JIT, the connection's first direct gets
    const unloaded = await getLatency(steady, 400);
    const before = settledRssMiB();
    const rawBefore = rssMiB();
    const heapBefore = process.memoryUsage().heapUsed;

    const service = createStateService({ connection, membership: ownerMembership });
    const flood = serveMisbehaving(service, "flood", 400_000);
    // Paused with nothing in flight: what the runtime holds for the flooder is what it will ever hold.
    await until(() => flood.child.stdout!.isPaused() && service.inFlight === 0, 30_000, "the flooder's input paused");
    const loaded = await getLatency(steady, 400);
    const rawGrowth = rssMiB() - rawBefore;
    // What the flood makes the runtime hold: RSS after a collection, before and while paused.
    const growth = settledRssMiB() - before;
    process.stderr.write(
      `back-pressure: RSS +${growth.toFixed(1)} MiB after a GC (+${rawGrowth.toFixed(1)} MiB before it), heap used +${((process.memoryUsage().heapUsed - heapBefore) / 1048576).toFixed(1)} MiB; p50 ${unloaded.p50.toFixed(2)} ms unloaded, ${loaded.p50.toFixed(2)} ms beside the flood (p99 ${unloaded.p99.toFixed(2)} / ${loaded.p99.toFixed(2)})\n`,
    );
    expect(growth).toBeLessThan(32);
    expect(loaded.p50).toBeLessThan(unloaded.p50 * 1.5);
    expect(flood.child.stdout!.isPaused()).toBe(true);
    expect(flood.reports).toEqual([]); // it could not write all 400,000: the runtime stopped reading
    await flood.stop();
    await steady.kill();
    await steady.stdio.close();
  });

  it("resumes when the bundle reads its answers: every request is answered, none refused", async () => {
    await using nats = await stateServer();
    const connection = await nats.machine("m1");
    const service = createStateService({
      connection,
      membership: ownerMembership,
      limits: { maxInFlight: 4, maxUnreadBytes: 4096 },
    });
    const bundle = spawnBundle(service);
    const ids = Array.from({ length: 2_000 }, (_, index) => `r${index}`);
    bundle.send({
      writeRaw: ids
        .map((id) =>
          JSON.stringify({ jsonrpc: "2.0", id, method: "mesh/state.get", params: { bucket: "notes", key: "a" } }),
        )
        .join("\n")
        .concat("\n"),
    });
    for (const id of ids) expect(await bundle.response(id)).toMatchObject({ result: null });
    expect(service.inFlight).toBe(0);
    await bundle.kill();
    await bundle.stdio.close();
  });

  it("a bundle killed while its input is paused: the service closes without waiting to be told", async () => {
    await using nats = await stateServer();
    const service = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const flood = serveMisbehaving(service, "flood", 400_000);
    await until(() => flood.child.stdout!.isPaused() && service.inFlight === 0, 30_000, "the flooder's input paused");
    flood.child.kill("SIGKILL");
    // No stdio.close(): its stdin breaks, the runtime reads the rest of its stdout, sees the end and closes.
    await flood.stdio.closed;
    await expect(service.handle("mesh/state.get", { bucket: "notes", key: "a" })).rejects.toMatchObject({
      data: { reason: "unavailable" },
    });
  });
});
