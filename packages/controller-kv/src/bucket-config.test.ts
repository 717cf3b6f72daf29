import { declaredBuckets } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { manifest } from "../test/support.js";
import {
  CONSUMER_INACTIVE_LIMIT_NANOSECONDS,
  deleteMarkerChanges,
  desiredStreamConfig,
  diffBucket,
  duplicateWindowChange,
  serverFeatures,
  setField,
} from "./bucket-config.js";

const [declared] = declaredBuckets([manifest("m", { b: { history: 3, ttl: "90s" } })]);
const desired = desiredStreamConfig(declared!, 1);

describe("desiredStreamConfig", () => {
  it("is a KV stream with the mesh's settings", () => {
    expect(desired).toMatchObject({
      name: "KV_mod_m_b",
      subjects: ["$KV.mod_m_b.>"],
      max_msgs_per_subject: 3,
      max_age: 90e9,
      duplicate_window: 90e9,
      discard: "new",
      storage: "file",
      max_consumers: 1024,
      deny_delete: true,
      deny_purge: false,
    });
  });
});

describe("diffBucket", () => {
  const current = (overrides: Record<string, unknown>) => ({ ...desired, ...overrides }) as Record<string, unknown>;

  it("finds nothing when the stream is as declared, also when the server omits false flags", () => {
    const { deny_purge: _purge, sealed: _sealed, mirror_direct: _mirror, ...omitted } = desired;
    expect(diffBucket(omitted, desired)).toEqual({ safe: [], shrinks: [], immutable: [] });
  });

  it("sorts changes into safe, shrinking and immutable", () => {
    const diff = diffBucket(
      current({
        max_msgs_per_subject: 5,
        max_age: 0,
        max_bytes: 1024,
        max_consumers: -1,
        storage: "memory",
        num_replicas: 3,
        deny_delete: false,
        deny_purge: true,
      }),
      desired,
    );
    expect(diff.shrinks.map((change) => change.field)).toEqual(["history", "ttl"]);
    expect(diff.safe.map((change) => change.field)).toEqual(["maxBytes", "replicas", "denyDelete"]);
    expect(diff.immutable.map((change) => change.field)).toEqual(["denyPurge", "maxConsumers", "storage"]);
  });

  it("derives the duplicate window from the ttl that applies", () => {
    expect(duplicateWindowChange(current({ duplicate_window: 120e9 }), 90e9)).toMatchObject({ from: 120e9, to: 90e9 });
    expect(duplicateWindowChange(current({}), 90e9)).toBeUndefined();
  });
});

describe("what a server version gives a bucket", () => {
  const [untimed] = declaredBuckets([manifest("m", { c: {} })]);

  it("bounds consumers from 2.10 and leaves delete markers on ttl buckets from 2.11", () => {
    expect(serverFeatures("2.9.10")).toEqual({ consumerLimits: false, deleteMarkers: false });
    expect(serverFeatures("2.10.27")).toEqual({ consumerLimits: true, deleteMarkers: false });
    expect(serverFeatures("2.11.0-RC.1")).toEqual({ consumerLimits: true, deleteMarkers: true });
    expect(serverFeatures("2.15.3")).toEqual({ consumerLimits: true, deleteMarkers: true });
    expect(serverFeatures(undefined)).toEqual({ consumerLimits: true, deleteMarkers: false });
    expect(serverFeatures("not a version")).toEqual({ consumerLimits: false, deleteMarkers: false });
  });

  it("sets consumer_limits and, for a ttl, delete markers living as long as the ttl", () => {
    const limits = { consumer_limits: { inactive_threshold: CONSUMER_INACTIVE_LIMIT_NANOSECONDS } };
    expect(desiredStreamConfig(declared!, 1, "2.9.10")).not.toHaveProperty("consumer_limits");
    expect(desiredStreamConfig(declared!, 1, "2.10.27")).toMatchObject(limits);
    expect(desiredStreamConfig(declared!, 1, "2.10.27")).not.toHaveProperty("subject_delete_marker_ttl");
    expect(desiredStreamConfig(declared!, 1, "2.12.15")).toMatchObject({
      ...limits,
      allow_msg_ttl: true,
      subject_delete_marker_ttl: 90e9,
    });
    expect(desiredStreamConfig(untimed!, 1, "2.12.15")).not.toHaveProperty("subject_delete_marker_ttl");
  });

  it("allows message ttls, without server markers, for forgetDeletes from 2.11 only", () => {
    const [forgetful] = declaredBuckets([manifest("m", { f: { forgetDeletes: "30d" } })]);
    expect(desiredStreamConfig(forgetful!, 1, "2.12.15")).toMatchObject({ allow_msg_ttl: true });
    expect(desiredStreamConfig(forgetful!, 1, "2.12.15")).not.toHaveProperty("subject_delete_marker_ttl");
    expect(desiredStreamConfig(forgetful!, 1, "2.10.27")).not.toHaveProperty("allow_msg_ttl");
    const { allow_msg_ttl: _allow, ...old } = desiredStreamConfig(forgetful!, 1, "2.12.15");
    expect(deleteMarkerChanges(old, 0, "2.12.15", true).map((change) => [change.field, change.to])).toEqual([
      ["allowMessageTtl", true],
    ]);
    expect(deleteMarkerChanges(old, 0, "2.10.27", true)).toEqual([]);
    expect(deleteMarkerChanges(old, 0, "2.12.15", false)).toEqual([]);
  });

  it("asks an existing bucket for the limit, and for markers as long as the ttl that applies", () => {
    const wanted = desiredStreamConfig(declared!, 1, "2.12.15");
    const { consumer_limits: _limits, allow_msg_ttl: _allow, subject_delete_marker_ttl: _ttl, ...old } = wanted;
    const diff = diffBucket({ ...old, consumer_limits: {} }, wanted);
    expect(diff.safe.map((change) => [change.field, change.jetstreamField, change.to])).toEqual([
      ["consumerInactiveLimit", "consumer_limits.inactive_threshold", CONSUMER_INACTIVE_LIMIT_NANOSECONDS],
    ]);
    expect(deleteMarkerChanges(old, 90e9, "2.12.15").map((change) => [change.field, change.to])).toEqual([
      ["allowMessageTtl", true],
      ["deleteMarkerTtl", 90e9],
    ]);
    expect(deleteMarkerChanges(old, 90e9, "2.10.27")).toEqual([]);
    expect(deleteMarkerChanges({ ...wanted }, 90e9, "2.12.15")).toEqual([]);
    // The ttl removed: markers go, message ttls stay on (the server never turns them off).
    expect(deleteMarkerChanges({ ...wanted }, 0, "2.12.15").map((change) => [change.field, change.to])).toEqual([
      ["deleteMarkerTtl", 0],
    ]);
  });

  it("sets a nested field without dropping its siblings", () => {
    const config: Record<string, unknown> = { consumer_limits: { max_ack_pending: 5 } };
    setField(config, "consumer_limits.inactive_threshold", 60e9);
    setField(config, "max_age", 1);
    expect(config).toEqual({ consumer_limits: { max_ack_pending: 5, inactive_threshold: 60e9 }, max_age: 1 });
  });
});
