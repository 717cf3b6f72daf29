import { declaredBuckets } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { manifest } from "../test/support.js";
import { desiredStreamConfig, diffBucket, duplicateWindowChange } from "./bucket-config.js";

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
