// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { declaredBuckets, durationToNanoseconds, MESH_CAPS } from "@mesh/manifest-schema";
import { DiscardPolicy, StorageType } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { manifest, serverForFile } from "../test/support.js";
import {
  CONSUMER_INACTIVE_LIMIT_NANOSECONDS,
  desiredStreamConfig,
  KV_HEADER_ALLOWANCE,
  serverFeatures,
} from "./bucket-config.js";
import { maxConsumersUpdatable } from "./consumer-ceiling.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// One server for this file; every test uses module names of its own, so buckets never collide.
const file = serverForFile();

describe("raise against a real server", () => {
  it("creates every bucket with exactly the declared configuration, then finds all unchanged and writes nothing", async () => {
    const catalogue = [
      manifest("first-a", {
        plain: {},
        applied: { history: 5, ttl: "30d" },
        small: { maxValueSize: 1024, maxBytes: 65536 },
      }),
      manifest("first-b", { short: { ttl: "90s" } }, ["first-a.plain"]),
    ];
    await file.admin.takeControllerRequests();
    const first = await raise({ connection: file.controller, catalogue, replicas: 1 });
    expect(first.created.map((bucket) => bucket.bucket)).toEqual([
      "mod_first-a_applied",
      "mod_first-a_plain",
      "mod_first-a_small",
      "mod_first-b_short",
    ]);
    expect(first.failed).toEqual([]);
    const expected = {
      "mod_first-a_plain": { history: 1, ttl: 0, maxValueSize: MESH_CAPS.maxValueSize, maxBytes: MESH_CAPS.maxBytes },
      "mod_first-a_applied": {
        history: 5,
        ttl: durationToNanoseconds("30d"),
        maxValueSize: MESH_CAPS.maxValueSize,
        maxBytes: MESH_CAPS.maxBytes,
      },
      "mod_first-a_small": { history: 1, ttl: 0, maxValueSize: 1024, maxBytes: 65536 },
      "mod_first-b_short": {
        history: 1,
        ttl: durationToNanoseconds("90s"),
        maxValueSize: MESH_CAPS.maxValueSize,
        maxBytes: MESH_CAPS.maxBytes,
      },
    };
    for (const [bucket, want] of Object.entries(expected)) {
      const { config } = await file.admin.jsm.streams.info(`KV_${bucket}`);
      expect(config).toMatchObject({
        subjects: [`$KV.${bucket}.>`],
        retention: "limits",
        storage: StorageType.File,
        discard: DiscardPolicy.New,
        allow_direct: true,
        allow_rollup_hdrs: true,
        deny_delete: true,
        deny_purge: false,
        num_replicas: 1,
        max_consumers: MESH_CAPS.maxConsumersPerBucket,
        max_msgs: -1,
        max_msgs_per_subject: want.history,
        max_age: want.ttl,
        max_msg_size: want.maxValueSize + KV_HEADER_ALLOWANCE,
        max_bytes: want.maxBytes,
        duplicate_window: want.ttl > 0 ? Math.min(want.ttl, 120e9) : 120e9,
      });
    }
    const creates = await file.admin.takeControllerRequests();
    expect(creates.filter((subject) => subject.startsWith("$JS.API.STREAM.CREATE."))).toHaveLength(4);

    // The v3 KV client takes the created stream for a bucket: put and direct get through it.
    const kv = await file.admin.kvm.open("mod_first-a_plain");
    await kv.put("all.github", JSON.stringify({ url: "https://example.test" }));
    expect((await kv.get("all.github"))?.json()).toEqual({ url: "https://example.test" });

    // A value of exactly the declared max passes even with the headers of a conditional write; a larger one
    // than the allowance covers is refused by the server.
    const small = await file.admin.kvm.open("mod_first-a_small");
    const revision = await small.create("k", "v".repeat(1024));
    await small.update("k", "w".repeat(1024), revision);
    await expect(small.put("k", "x".repeat(1024 + KV_HEADER_ALLOWANCE + 1))).rejects.toThrow(
      /message size exceeds maximum/,
    );

    const second = await raise({ connection: file.controller, catalogue, replicas: 1 });
    expect(second).toMatchObject({ created: [], updated: [], conflicts: [], failed: [] });
    expect(second.unchanged).toEqual(Object.keys(expected).sort());
    expect(await file.admin.takeControllerRequests()).toEqual(["$JS.API.STREAM.LIST"]);
  });

  it("gives a bucket made without them the consumer limit and, from 2.11, delete markers", async () => {
    const version = file.controller.info!.version;
    const features = serverFeatures(version);
    const [declared] = declaredBuckets([manifest("older", { timed: { ttl: "1h" } })]);
    const {
      consumer_limits: _limits,
      allow_msg_ttl: _allow,
      subject_delete_marker_ttl: _markers,
      ...older
    } = desiredStreamConfig(declared!, 1, version);
    await file.admin.jsm.streams.add(older as never);
    // A consumer asking for a day of idleness blocks the limit: the server names it and changes nothing.
    await file.admin.jsm.consumers.add(declared!.stream, { name: "lasting", inactive_threshold: 86_400e9 } as never);
    const catalogue = [manifest("older", { timed: { ttl: "1h" } })];
    if (features.consumerLimits) {
      const blocked = await raise({ connection: file.controller, catalogue, replicas: 1 }).catch(
        (error: unknown) => error,
      );
      expect(blocked, `nats-server ${version}`).toBeInstanceOf(ControllerKvError);
      expect((blocked as ControllerKvError).message).toMatch(/lasting/);
    }
    await file.admin.jsm.consumers.delete(declared!.stream, "lasting");
    const report = await raise({ connection: file.controller, catalogue, replicas: 1 });
    const fields = report.updated.flatMap((bucket) => bucket.changes.map((change) => change.field));
    expect(fields, `nats-server ${version}`).toEqual([
      ...(features.consumerLimits ? ["consumerInactiveLimit"] : []),
      ...(features.deleteMarkers ? ["allowMessageTtl", "deleteMarkerTtl"] : []),
    ]);
    const { config } = await file.admin.jsm.streams.info(declared!.stream);
    const got = config as unknown as Record<string, unknown>;
    if (features.consumerLimits) {
      expect(got.consumer_limits).toEqual({ inactive_threshold: CONSUMER_INACTIVE_LIMIT_NANOSECONDS });
    }
    if (features.deleteMarkers) expect(got).toMatchObject({ allow_msg_ttl: true, subject_delete_marker_ttl: 3600e9 });
    const again = await raise({ connection: file.controller, catalogue, replicas: 1 });
    expect(again).toMatchObject({ updated: [], conflicts: [], unchanged: [declared!.bucket] });
  });

  it("plan: reports what a raise would create and writes nothing", async () => {
    const catalogue = [manifest("plan-only", { later: {} })];
    await file.admin.takeControllerRequests();
    const report = await raise({ connection: file.controller, catalogue, replicas: 1, plan: true });
    expect(report.plan).toBe(true);
    expect(report.created.map((bucket) => bucket.bucket)).toEqual(["mod_plan-only_later"]);
    // The listing, and the account's storage limit that the bucket to create must fit (store-check.ts).
    expect(await file.admin.takeControllerRequests()).toEqual(["$JS.API.STREAM.LIST", "$JS.API.INFO"]);
    await expect(file.admin.jsm.streams.info("KV_mod_plan-only_later")).rejects.toThrow(/stream not found/);
  });

  it("updates history 1 -> 5 in place and keeps every value", async () => {
    await raise({ connection: file.controller, catalogue: [manifest("grow", { log: {} })], replicas: 1 });
    const kv = await file.admin.kvm.open("mod_grow_log");
    for (let i = 0; i < 20; i += 1) await kv.put(`key-${i}`, `value-${i}`);
    const report = await raise({
      connection: file.controller,
      catalogue: [manifest("grow", { log: { history: 5 } })],
      replicas: 1,
    });
    expect(report.updated).toEqual([
      expect.objectContaining({
        bucket: "mod_grow_log",
        changes: [{ field: "history", jetstreamField: "max_msgs_per_subject", from: 1, to: 5 }],
      }),
    ]);
    expect(report.conflicts).toEqual([]);
    for (let i = 0; i < 20; i += 1) expect((await kv.get(`key-${i}`))?.string()).toBe(`value-${i}`);
    for (const value of ["b", "c", "d"]) await kv.put("key-0", value);
    const history = [];
    for await (const entry of await kv.history({ key: "key-0" })) history.push(entry.string());
    expect(history).toEqual(["value-0", "b", "c", "d"]);
  });

  it("reports a history cut that would drop values as a conflict, and applies it only when the loss is accepted", async () => {
    const catalogue = (history: number) => [manifest("shrink", { audit: { history }, quiet: { history } })];
    await raise({ connection: file.controller, catalogue: catalogue(5), replicas: 1 });
    const audit = await file.admin.kvm.open("mod_shrink_audit");
    for (const value of ["1", "2", "3", "4"]) await audit.put("busy", value);
    await audit.put("calm", "only");
    const quiet = await file.admin.kvm.open("mod_shrink_quiet");
    for (const key of ["a", "b", "c"]) await quiet.put(key, key);

    const refused = await raise({ connection: file.controller, catalogue: catalogue(2), replicas: 1 });
    // quiet holds one value per key: cutting its history loses nothing and is applied.
    expect(refused.updated.map((bucket) => bucket.bucket)).toEqual(["mod_shrink_quiet"]);
    expect(refused.conflicts).toEqual([
      expect.objectContaining({
        bucket: "mod_shrink_audit",
        reason: "would-lose-data",
        change: { field: "history", jetstreamField: "max_msgs_per_subject", from: 5, to: 2 },
        loss: { kind: "history", values: 2, keys: [{ key: "busy", values: 2 }] },
      }),
    ]);
    expect((await file.admin.jsm.streams.info("KV_mod_shrink_audit")).config.max_msgs_per_subject).toBe(5);
    expect((await file.admin.jsm.streams.info("KV_mod_shrink_audit")).state.messages).toBe(5);

    const accepted = await raise({
      connection: file.controller,
      catalogue: catalogue(2),
      replicas: 1,
      acceptLoss: ["mod_shrink_audit"],
    });
    expect(accepted.conflicts).toEqual([]);
    expect(accepted.updated).toEqual([
      expect.objectContaining({
        bucket: "mod_shrink_audit",
        loss: [{ kind: "history", values: 2, keys: [{ key: "busy", values: 2 }] }],
      }),
    ]);
    const history = [];
    for await (const entry of await audit.history({ key: "busy" })) history.push(entry.string());
    expect(history).toEqual(["3", "4"]);
    expect((await audit.get("calm"))?.string()).toBe("only");
  });

  it("reports a ttl cut that would expire stored values, and a max-bytes cut below what a bucket holds, even when loss is accepted", async () => {
    await raise({ connection: file.controller, catalogue: [manifest("cuts", { aged: {}, fat: {} })], replicas: 1 });
    const aged = await file.admin.kvm.open("mod_cuts_aged");
    await aged.put("k", "v");
    const fat = await file.admin.kvm.open("mod_cuts_fat");
    for (let i = 0; i < 10; i += 1) await fat.put(`k${i}`, "x".repeat(1000));
    // The clock is two days ahead, so the stored value is older than the new one-day ttl.
    const now = () => Date.now() + 2 * 86_400_000;
    const catalogue = [manifest("cuts", { aged: { ttl: "1d" }, fat: { maxBytes: 2048 } })];
    const report = await raise({
      connection: file.controller,
      catalogue,
      replicas: 1,
      now,
      acceptLoss: ["mod_cuts_fat"],
    });
    expect(report.updated).toEqual([]);
    expect(report.conflicts.map((conflict) => [conflict.bucket, conflict.change.field, conflict.loss?.kind])).toEqual([
      ["mod_cuts_aged", "ttl", "ttl"],
      ["mod_cuts_fat", "maxBytes", "maxBytes"],
    ]);
    expect(report.conflicts[1]?.advice).toMatch(/never applies it/);
    expect((await file.admin.jsm.streams.info("KV_mod_cuts_fat")).state.messages).toBe(10);
    expect((await file.admin.jsm.streams.info("KV_mod_cuts_aged")).config.max_age).toBe(0);
  });

  it("caps a bucket made without the consumer cap where the server allows it, else reports it and updates the rest", async () => {
    await file.admin.kvm.create("mod_uncapped_old", { history: 1 });
    const report = await raise({
      connection: file.controller,
      catalogue: [manifest("uncapped", { old: { history: 3 } })],
      replicas: 1,
    });
    // Measured: 2.12 and later change max_consumers in place, 2.10 and 2.11 refuse (consumer-ceiling.ts).
    const updatable = maxConsumersUpdatable(file.controller.info?.version);
    const fields = report.updated[0]?.changes.map((change) => change.field);
    expect(fields).toContain("history");
    if (updatable) {
      expect(report.conflicts).toEqual([]);
      expect(fields).toContain("maxConsumers");
    } else {
      expect(report.conflicts).toEqual([
        expect.objectContaining({
          bucket: "mod_uncapped_old",
          reason: "immutable",
          change: expect.objectContaining({ field: "maxConsumers", from: -1 }),
          advice: expect.stringMatching(/must be recreated/),
        }),
      ]);
    }
    const { config } = await file.admin.jsm.streams.info("KV_mod_uncapped_old");
    expect(config).toMatchObject({
      max_consumers: updatable ? MESH_CAPS.maxConsumersPerBucket : -1,
      max_msgs_per_subject: 3,
      deny_delete: true,
      max_bytes: MESH_CAPS.maxBytes,
    });
  });

  it("reports an orphan with its keys and bytes and never removes it, and reports dangling reads", async () => {
    await raise({
      connection: file.controller,
      catalogue: [manifest("gone", { notes: {} }), manifest("stays", {}, ["gone.notes"])],
      replicas: 1,
    });
    const kv = await file.admin.kvm.open("mod_gone_notes");
    for (let i = 0; i < 7; i += 1) await kv.put(`n${i}`, `note ${i}`);
    const bytes = (await file.admin.jsm.streams.info("KV_mod_gone_notes")).state.bytes;
    for (let round = 0; round < 4; round += 1) {
      const report = await raise({
        connection: file.controller,
        catalogue: [manifest("stays", {}, ["gone.notes"])],
        replicas: 1,
      });
      expect(report.orphans).toContainEqual({
        bucket: "mod_gone_notes",
        module: "gone",
        name: "notes",
        keys: 7,
        messages: 7,
        bytes,
      });
      expect(report.danglingReads).toEqual([
        { module: "stays", reference: "gone.notes", bucket: "mod_gone_notes", exists: true },
      ]);
    }
    for (let i = 0; i < 7; i += 1) expect((await kv.get(`n${i}`))?.string()).toBe(`note ${i}`);
  });

  it("a full bucket refuses a write with an error and keeps every earlier key", async () => {
    // A write that does not fit the room left. (A small write at the very edge is evicting on
    // nats-server < 2.10.5 — nats-server#4771; measured in integration/src/server-facts.nats.test.ts, decision 0004.)
    await raise({
      connection: file.controller,
      catalogue: [manifest("full", { box: { maxBytes: 4096 } })],
      replicas: 1,
    });
    const kv = await file.admin.kvm.open("mod_full_box");
    const written = Array.from({ length: 10 }, (_, i) => `k${i}`);
    for (const key of written) await kv.put(key, "v".repeat(200));
    await expect(kv.put("big", "w".repeat(2_000))).rejects.toThrow(/maximum bytes exceeded/i);
    for (const key of written) expect((await kv.get(key))?.string()).toBe("v".repeat(200));
    const state = (await file.admin.jsm.streams.info("KV_mod_full_box")).state;
    expect(state.messages).toBe(written.length);
    expect(state.first_seq).toBe(1);
  });

  it("refuses replicas 3 on a server that is not clustered, before writing anything", async () => {
    const attempt = raise({ connection: file.controller, catalogue: [manifest("r3", { x: {} })], replicas: 3 });
    await expect(attempt).rejects.toBeInstanceOf(ControllerKvError);
    await expect(attempt).rejects.toMatchObject({
      code: "bad-options",
      message: expect.stringMatching(/not clustered/),
    });
  });
});
