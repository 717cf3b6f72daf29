import { startTcpProxy } from "@mesh/nats-harness";
import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { BUCKET, brief, capturingLogger, stateServer, until, watchScene } from "../../test/kit.js";

/** The connection's status events as they happen, to wait on the cut and on the way back. */
function statusLog(connection: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const event of connection.status()) seen.push(event.type);
  })();
  return seen;
}

describe("a NATS reconnect alone (the server stays up, the runtime's link is cut and comes back)", () => {
  it("resumes every watch with no change missed and none repeated; a request pending at the cut is unavailable in time", async () => {
    await using nats = await stateServer();
    await using proxy = await startTcpProxy({ port: nats.server.port });
    const requestTimeoutMs = 1_500;
    const connection = await nats.machine("m2", proxy.url);
    const status = statusLog(connection);
    const { logger, entries } = capturingLogger("info");
    const { reader, put, del, bundle, watch } = await watchScene(nats, {
      connection,
      limits: { requestTimeoutMs },
      logger,
    });

    await put("a", 1);
    await put("x.1", 2);
    const all = await watch();
    const some = await watch("x.>");
    await bundle.untilEvents(all, (events) => events.length === 3);
    await bundle.untilEvents(some, (events) => events.length === 2);

    // The cut: the link swallows everything, a get leaves into it (pending for sure), then the link drops.
    proxy.blackhole();
    const started = performance.now();
    const pending = reader.handle("mesh/state.get", { bucket: "notes-app.notes", key: "a" }).then(
      () => "answered",
      (error: { reason?: string }) => error.reason,
    );
    await until(() => proxy.swallowed.includes("$JS.API.DIRECT.GET"), 5_000, "the get went into the cut link");
    proxy.sever();
    expect(await pending).toBe("unavailable");
    expect(performance.now() - started).toBeLessThan(requestTimeoutMs + 1_000);

    // Meanwhile the bucket changes through the owner's own (uncut) connection.
    await put("b", 3);
    await del("a");
    await put("x.2", 5);
    await put("x.1", 6);
    await until(() => status.includes("disconnect"), 10_000, "the reader saw the cut");
    proxy.restore();
    await until(() => status.includes("reconnect"), 10_000, "the reader reconnected");
    await put("d", 7);
    await put("x.3", 8);

    await bundle.untilEvents(all, (events) => events.at(-1)?.revision === 8, 15_000);
    await bundle.untilEvents(some, (events) => events.at(-1)?.revision === 8, 15_000);
    expect(brief(bundle.events(all))).toEqual([
      "put a@1",
      "put x.1@2",
      "current",
      "put b@3",
      "delete a@4",
      "put x.2@5",
      "put x.1@6",
      "put d@7",
      "put x.3@8",
    ]);
    expect(brief(bundle.events(some))).toEqual(["put x.1@2", "current", "put x.2@5", "put x.1@6", "put x.3@8"]);
    // Each watch resumed once, on the disconnect: the reconnect spared the readers made after it, which lost nothing.
    const recovering = entries
      .filter((entry) => entry.msg === "watch recovering")
      .map((entry) => `${entry.watch} ${entry.reason}`);
    expect(recovering.sort()).toEqual(
      [`${all} consumer lost: connection disconnect`, `${some} consumer lost: connection disconnect`].sort(),
    );
    // The consumers the cut orphaned are deleted once the link is back, not left for inactive_threshold.
    await until(async () => (await nats.consumerNames(BUCKET)).length === 2, 5_000, "only the two watches' consumers");
    await bundle.kill();
    await bundle.stdio.closed;
    expect(await nats.consumerNames(BUCKET)).toEqual([]);
  });
});
