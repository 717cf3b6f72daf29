// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.

import { systemClock } from "@mesh/jetstream-calls";
import { jetstreamManager } from "@nats-io/jetstream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { BUCKET, brief, type SeenEvent, stateServer, until } from "../../test/kit.js";
import { resolveLimits } from "../limits.js";
import { BucketClient } from "../nats/bucket.js";
import { ConsumerReader, type ReaderStart } from "../nats/reader.js";
import { inboxPrefixOf } from "../nats/requests.js";
import { scanKeys } from "../nats/scan.js";
import { Watch } from "../watches/watch.js";

/**
 * The snapshot's barrier (docs/decisions/0011-read-consistency.md): a watch's `current`, or a keys answer, does not
 * come before the revision the leader named, even when that revision was written after the consumer counted its
 * snapshot — as when the consumer sits on a replica behind the leader. Here the writes are made after the create
 * is answered, so the snapshot is exactly short of them, on one server.
 */
async function scene() {
  const nats = await stateServer();
  const writer = new BucketClient(BUCKET, await nats.machine("m1"));
  const connection = await nats.machine("m2");
  const jsm = await jetstreamManager(connection, { checkAPI: false });
  const limits = resolveLimits({});
  const newReader = (start: ReaderStart, headersOnly = false) =>
    new ConsumerReader({
      connection,
      jsm,
      inboxPrefix: inboxPrefixOf(connection)!,
      stream: `KV_${BUCKET}`,
      bucket: BUCKET,
      filter: ">",
      start,
      headersOnly,
      limits,
      clock: systemClock,
    });
  /** The leader's revision, once `write` has run after the reader's consumer was created. */
  const writtenAfterCreate = async (write: () => Promise<unknown>) => {
    await until(async () => (await nats.consumerNames()).length === 1, 10_000, "the consumer created");
    await write();
    return writer.lastRevisionFromLeader(">");
  };
  return { nats, writer, newReader, limits, writtenAfterCreate };
}

describe("a snapshot waits for the leader's revision", () => {
  it("keys written again and deleted after the snapshot was counted go out before `current`, the view exact", async () => {
    const { nats, writer, newReader, limits, writtenAfterCreate } = await scene();
    await using _ = nats;
    const a1 = await writer.put("a", 1);
    await writer.put("b", 2);
    const events: SeenEvent[] = [];
    const watch = new Watch({
      id: "w1",
      module: "dash",
      bucket: "notes-app.notes",
      newReader: (start) => newReader(start),
      readerDefaults: { limits, clock: systemClock },
      deliver: async (_id, batch) => {
        events.push(...(batch as SeenEvent[]));
      },
      logger: pino({ level: "silent" }),
      onEnded: () => undefined,
      // As a lagging replica would leave it: the leader holds writes the counted snapshot does not.
      mustReflect: () =>
        writtenAfterCreate(async () => {
          await writer.put("a", 3);
          await writer.delete("b");
          await writer.put("c", 5);
        }),
    });
    await watch.open();
    watch.run();
    await until(() => events.some((event) => event.type === "current"), 10_000, "current");
    const beforeCurrent = events.slice(
      0,
      events.findIndex((event) => event.type === "current"),
    );
    const held = new Map<string, number>();
    for (const event of beforeCurrent) {
      if (event.type === "put") held.set(event.key!, event.revision!);
      if (event.type === "delete") held.delete(event.key!);
    }
    // The bucket at revision 5, whichever initial messages the server skipped as overwritten.
    expect([...held].sort(), brief(events).join(" ")).toEqual([
      ["a", a1 + 2],
      ["c", a1 + 4],
    ]);
    expect(brief(events).at(-1)).toBe("current");
    await watch.stop("done");
  });

  it("keys written after the snapshot was counted are in the keys answer; deleted ones are not", async () => {
    const { nats, writer, newReader, writtenAfterCreate } = await scene();
    await using _ = nats;
    await writer.put("a", 1);
    await writer.put("b", 2);
    const reach = {
      leaderRevision: () =>
        writtenAfterCreate(async () => {
          await writer.delete("a");
          await writer.put("c", 3);
        }),
      notice: () => undefined,
    };
    expect(await scanKeys(newReader({ policy: "last_per_subject" }, true), 1_000_000, reach)).toEqual(["b", "c"]);
  });
});
