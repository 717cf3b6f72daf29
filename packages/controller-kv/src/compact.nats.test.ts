// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { composeControllerGrant, renderStateAccountConfig } from "@mesh/grant-composer";
import { parseCatalogue, streamName } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_USER, type Admin, connectAdmin, manifest } from "../test/support.js";
import { compact } from "./compact.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// The catalogue of this file; the compacting controller's grant is composed from it (and one variant without
// the pulls, to see a scan fail). `never-raised` is declared and never created.
const catalogue = parseCatalogue([
  manifest("compact-a", { plain: {}, deep: { history: 5 }, timed: { ttl: "1h" }, planned: {}, failing: {} }),
  manifest("compact-b", { "never-raised": {} }),
]);
const COMPACTOR = { grant: composeControllerGrant({ user: "compactor", catalogue }), password: "compactor-secret" };
const noPulls = composeControllerGrant({ user: "no-pulls", catalogue });
noPulls.permissions.publish.allow = noPulls.permissions.publish.allow.filter(
  (subject) => subject !== "$JS.API.CONSUMER.MSG.NEXT.KV_mod_compact-a_failing.>",
);
const NO_PULLS = { grant: noPulls, password: "no-pulls-secret" };
const HOUR = 3_600_000;

let server: Awaited<ReturnType<typeof startTestServer>>;
let admin: Admin;
let compactor: NatsConnection;

beforeAll(async () => {
  server = await startTestServer({ config: renderStateAccountConfig({ users: [COMPACTOR, NO_PULLS, ADMIN_USER] }) });
  admin = await connectAdmin(server.url);
  compactor = await login(COMPACTOR);
  await raise({ connection: compactor, catalogue: catalogue.slice(0, 1), replicas: 1 });
});

afterAll(async () => {
  await compactor?.close();
  await admin?.[Symbol.asyncDispose]();
  await server?.[Symbol.asyncDispose]();
});

function login(user: typeof COMPACTOR): Promise<NatsConnection> {
  return connect({
    servers: server.url,
    user: user.grant.user,
    pass: user.password,
    inboxPrefix: user.grant.inboxPrefix,
  });
}

const bucket = (name: string) => admin.kvm.open(`mod_compact-a_${name}`);

/** The clock's next millisecond: every message stored before it is older than it, every later one is not. */
function nextMillisecond(): number {
  const now = Date.now();
  while (Date.now() <= now) {
    // The server stamps messages with this machine's clock; waiting out the current millisecond is a bound of 1 ms.
  }
  return Date.now();
}

/** Messages the stream of bucket `mod_compact-a_<name>` holds for `key`. */
async function messagesOf(name: string, key: string): Promise<number> {
  const bucketName = `mod_compact-a_${name}`;
  const info = await admin.jsm.streams.info(streamName(bucketName), { subjects_filter: `$KV.${bucketName}.${key}` });
  return Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
}

async function consumersOf(name: string): Promise<number> {
  return (await admin.jsm.streams.info(streamName(`mod_compact-a_${name}`))).state.consumer_count;
}

describe("compact against a real server", () => {
  it("removes markers older than the cut, keeps every value and every younger marker, and leaves no consumer", async () => {
    const kv = await bucket("plain");
    for (let index = 0; index < 20; index += 1) await kv.put(`old.${index}`, "v");
    for (let index = 0; index < 20; index += 1) await kv.delete(`old.${index}`);
    await kv.put("purged", "v");
    await kv.purge("purged");
    await kv.put("again", "v1");
    await kv.delete("again");
    await kv.put("again", "v2");
    await kv.put("live", "kept");
    await kv.put("racing", "v");
    await kv.delete("racing");
    const cut = nextMillisecond();
    await kv.put("young", "v");
    await kv.delete("young");
    const before = await admin.jsm.streams.info(streamName("mod_compact-a_plain"));

    const report = await compact({
      connection: compactor,
      catalogue,
      olderThanMs: HOUR,
      now: () => cut + HOUR,
      // A write after the scan, before the purges: its sequence is above the marker's, so it stays.
      beforePurge: async (scan) => {
        if (scan.bucket === "mod_compact-a_plain") await kv.put("racing", "written during compaction");
      },
    });

    const plain = report.buckets.find((b) => b.bucket === "mod_compact-a_plain")!;
    // 20 deletes, a purge and `racing` were old; `racing`'s marker was replaced by the write during compaction
    // (history 1), so its purge found nothing. History 1 keeps only the marker of a deleted key: one message each.
    expect(plain).toMatchObject({ keys: 25, markers: 23, markersOlder: 22, removedMarkers: 21, removedMessages: 21 });
    expect(plain.before).toEqual({ messages: before.state.messages, bytes: before.state.bytes });
    expect(plain.after!.messages).toBe(before.state.messages - 21);
    expect(plain.after!.bytes).toBeLessThan(plain.before.bytes);
    expect(await messagesOf("plain", "old.0")).toBe(0);
    expect(await kv.get("old.0")).toBeNull();
    expect((await kv.get("again"))?.string()).toBe("v2");
    expect((await kv.get("live"))?.string()).toBe("kept");
    expect((await kv.get("racing"))?.string()).toBe("written during compaction");
    expect((await kv.get("young"))?.operation).toBe("DEL");
    expect(report.absent.map((b) => b.bucket)).toEqual(["mod_compact-b_never-raised"]);
    expect(report.failed).toEqual([]);
    expect(report.cutoff).toBe(new Date(cut).toISOString());
    for (const name of ["plain", "deep", "timed", "planned", "failing"]) expect(await consumersOf(name)).toBe(0);
  });

  it("in a bucket with history, removes a deleted key's older values with its marker: the key stays deleted", async () => {
    const kv = await bucket("deep");
    for (const value of ["a", "b", "c"]) await kv.put("kept-deleted", value);
    await kv.delete("kept-deleted");
    for (const value of ["a", "b"]) await kv.put("alive", value);
    const cut = nextMillisecond();
    const report = await compact({ connection: compactor, catalogue, olderThanMs: 0, now: () => cut });
    const deep = report.buckets.find((b) => b.bucket === "mod_compact-a_deep")!;
    expect(deep).toMatchObject({ markersOlder: 1, removedMarkers: 1, removedMessages: 4 });
    expect(await messagesOf("deep", "kept-deleted")).toBe(0);
    expect(await kv.get("kept-deleted")).toBeNull();
    const history = [];
    for await (const entry of await kv.history({ key: "kept-deleted" })) history.push(entry);
    expect(history).toEqual([]);
    expect(await messagesOf("deep", "alive")).toBe(2);
  });

  it("compacts a bucket with a ttl the same way, and leaves no marker of its own behind", async () => {
    const kv = await bucket("timed");
    await kv.put("gone", "v");
    await kv.delete("gone");
    await kv.put("here", "v");
    const cut = nextMillisecond();
    const report = await compact({ connection: compactor, catalogue, olderThanMs: 0, now: () => cut });
    expect(report.buckets.find((b) => b.bucket === "mod_compact-a_timed")).toMatchObject({ removedMarkers: 1 });
    expect(await messagesOf("timed", "gone")).toBe(0);
    expect((await kv.get("here"))?.string()).toBe("v");
  });

  it("with plan, scans and reports and changes nothing", async () => {
    const kv = await bucket("planned");
    await kv.put("k", "v");
    await kv.delete("k");
    const cut = nextMillisecond();
    const stream = streamName("mod_compact-a_planned");
    const before = (await admin.jsm.streams.info(stream)).state;
    const report = await compact({ connection: compactor, catalogue, olderThanMs: 0, now: () => cut, plan: true });
    const planned = report.buckets.find((b) => b.bucket === "mod_compact-a_planned")!;
    expect(planned).toMatchObject({ markers: 1, markersOlder: 1, removedMarkers: 0, removedMessages: 0 });
    expect(planned.after).toBeUndefined();
    const after = (await admin.jsm.streams.info(stream)).state;
    expect([after.messages, after.bytes, after.last_seq]).toEqual([before.messages, before.bytes, before.last_seq]);
    expect(await consumersOf("planned")).toBe(0);
  });

  it("names a bucket it could not scan, goes on with the others, and deletes the scan consumer anyway", async () => {
    const kv = await bucket("failing");
    await kv.put("k", "v");
    await kv.delete("k");
    const plainKv = await bucket("plain");
    await plainKv.put("other", "v");
    await plainKv.delete("other");
    const noPullsConnection = await login(NO_PULLS);
    try {
      const error = await compact({
        connection: noPullsConnection,
        catalogue,
        olderThanMs: 0,
        now: nextMillisecond,
        timeoutMs: 1_000,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ControllerKvError);
      const failure = error as ControllerKvError;
      // A refused pull is a permission violation on the connection: denied, not merely incomplete.
      expect(failure.code).toBe("denied");
      expect(failure.compaction?.failed[0]).toMatchObject({ failure: "denied" });
      expect(failure.message).toContain("mod_compact-a_failing");
      expect(failure.compaction?.failed.map((f) => f.bucket)).toEqual(["mod_compact-a_failing"]);
      expect(failure.compaction?.buckets.find((b) => b.bucket === "mod_compact-a_plain")?.removedMarkers).toBe(1);
      expect(await messagesOf("failing", "k")).toBe(1);
      expect(await consumersOf("failing")).toBe(0);
    } finally {
      await noPullsConnection.close();
    }
  });

  it("is refused as denied on a bucket the grant was not composed with, naming it", async () => {
    const later = parseCatalogue([manifest("compact-c", { later: {} })]);
    await raise({ connection: compactor, catalogue: later, replicas: 1 });
    const error = await compact({ connection: compactor, catalogue: later, olderThanMs: 0 }).catch((caught) => caught);
    expect(error).toBeInstanceOf(ControllerKvError);
    expect((error as ControllerKvError).code).toBe("denied");
    expect((error as ControllerKvError).message).toContain("mod_compact-c_later");
    expect((error as ControllerKvError).compaction?.failed[0]).toMatchObject({ failure: "denied" });
  });
});
