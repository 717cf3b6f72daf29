import { type DeclaredBucket, durationToNanoseconds, MESH_CAPS } from "@mesh/manifest-schema";
import type { BucketField, BucketSettings, FieldChange, FieldValue } from "./types.js";

/**
 * The JetStream stream a declared bucket must be. The same shape `@nats-io/kv`'s `kvm.create()` makes
 * (subjects `$KV.<bucket>.>`, limits retention, `max_msgs_per_subject` = history, rollup headers, `discard:
 * new`, `allow_direct`), plus what the Go client and `nats kv add` set and kv.js leaves to the server
 * (`deny_delete`, a duplicate window no longer than the ttl), plus the mesh's own: `max_consumers` and caps.
 */
export interface KvStreamConfig {
  name: string;
  subjects: string[];
  retention: "limits";
  storage: "file";
  max_consumers: number;
  max_msgs: number;
  max_bytes: number;
  max_age: number;
  max_msgs_per_subject: number;
  max_msg_size: number;
  discard: "new";
  num_replicas: number;
  duplicate_window: number;
  allow_direct: boolean;
  allow_rollup_hdrs: boolean;
  deny_delete: boolean;
  deny_purge: boolean;
  sealed: boolean;
  mirror_direct: boolean;
}

/**
 * JetStream's max_msg_size counts headers with the payload (measured on 2.9.10: a value of exactly
 * max_msg_size is refused on `update` and `create`, which add an expected-sequence header). The value cap is
 * the runtime's to enforce on the encoded value; the stream allows this much more for the KV headers.
 */
export const KV_HEADER_ALLOWANCE = 512;

/** JetStream's default duplicate window, which must not exceed max_age. */
export const DUPLICATE_WINDOW_NANOSECONDS = 2 * 60 * 1_000_000_000;

export function duplicateWindowFor(maxAge: number): number {
  return maxAge > 0 ? Math.min(DUPLICATE_WINDOW_NANOSECONDS, maxAge) : DUPLICATE_WINDOW_NANOSECONDS;
}

export function desiredStreamConfig(declared: DeclaredBucket, replicas: number): KvStreamConfig {
  const maxAge = declared.ttl === undefined ? 0 : durationToNanoseconds(declared.ttl);
  return {
    name: declared.stream,
    subjects: [`$KV.${declared.bucket}.>`],
    retention: "limits",
    storage: "file",
    max_consumers: MESH_CAPS.maxConsumersPerBucket,
    max_msgs: -1,
    max_bytes: Math.min(declared.maxBytes, MESH_CAPS.maxBytes),
    max_age: maxAge,
    max_msgs_per_subject: Math.min(declared.history, MESH_CAPS.maxHistory),
    max_msg_size: Math.min(declared.maxValueSize, MESH_CAPS.maxValueSize) + KV_HEADER_ALLOWANCE,
    discard: "new",
    num_replicas: replicas,
    duplicate_window: duplicateWindowFor(maxAge),
    allow_direct: true,
    allow_rollup_hdrs: true,
    deny_delete: true,
    deny_purge: false,
    sealed: false,
    mirror_direct: false,
  };
}

export function settingsOf(config: KvStreamConfig): BucketSettings {
  return {
    history: config.max_msgs_per_subject,
    ttl: config.max_age,
    maxValueSize: config.max_msg_size - KV_HEADER_ALLOWANCE,
    maxBytes: config.max_bytes,
    replicas: config.num_replicas,
    maxConsumers: config.max_consumers,
  };
}

/**
 * How a field may change on an existing stream (nats-server 2.9):
 * - `mutable`: updated in place;
 * - `shrink`: updated in place, but a smaller limit may discard stored values, so it is measured first;
 * - `one-way`: a flag that may be turned on but never off;
 * - `immutable`: set at creation only (MEASURED.md §9 for max_consumers).
 */
type FieldKind = "mutable" | "shrink" | "one-way" | "immutable";

interface FieldSpec {
  field: BucketField;
  jetstreamField: string;
  kind: FieldKind;
}

const FIELDS: readonly FieldSpec[] = [
  { field: "history", jetstreamField: "max_msgs_per_subject", kind: "shrink" },
  { field: "ttl", jetstreamField: "max_age", kind: "shrink" },
  { field: "maxBytes", jetstreamField: "max_bytes", kind: "shrink" },
  { field: "maxValueSize", jetstreamField: "max_msg_size", kind: "mutable" },
  { field: "replicas", jetstreamField: "num_replicas", kind: "mutable" },
  { field: "subjects", jetstreamField: "subjects", kind: "mutable" },
  { field: "discard", jetstreamField: "discard", kind: "mutable" },
  { field: "allowDirect", jetstreamField: "allow_direct", kind: "mutable" },
  { field: "allowRollup", jetstreamField: "allow_rollup_hdrs", kind: "mutable" },
  { field: "duplicateWindow", jetstreamField: "duplicate_window", kind: "mutable" },
  { field: "maxMessages", jetstreamField: "max_msgs", kind: "mutable" },
  { field: "denyDelete", jetstreamField: "deny_delete", kind: "one-way" },
  { field: "denyPurge", jetstreamField: "deny_purge", kind: "one-way" },
  { field: "sealed", jetstreamField: "sealed", kind: "one-way" },
  { field: "maxConsumers", jetstreamField: "max_consumers", kind: "immutable" },
  { field: "storage", jetstreamField: "storage", kind: "immutable" },
  { field: "retention", jetstreamField: "retention", kind: "immutable" },
  { field: "mirror", jetstreamField: "mirror", kind: "immutable" },
  { field: "sources", jetstreamField: "sources", kind: "immutable" },
];

/** What the server omits when false, zero or empty. */
const ABSENT_AS: Record<string, FieldValue> = {
  deny_delete: false,
  deny_purge: false,
  sealed: false,
  allow_direct: false,
  allow_rollup_hdrs: false,
  max_age: 0,
  duplicate_window: 0,
  max_msgs: -1,
  max_bytes: -1,
  max_msg_size: -1,
  max_msgs_per_subject: -1,
  max_consumers: -1,
  num_replicas: 1,
  subjects: [],
  mirror: null,
  sources: null,
};

function normalise(jetstreamField: string, value: unknown): FieldValue {
  if (value === undefined || value === null) return ABSENT_AS[jetstreamField] ?? null;
  if (jetstreamField === "mirror") return (value as { name?: string }).name ?? "(mirror)";
  if (jetstreamField === "sources") {
    const names = (value as { name?: string }[]).map((source) => source.name ?? "?");
    return names.length === 0 ? null : names;
  }
  if (Array.isArray(value)) return [...(value as string[])].sort();
  return value as FieldValue;
}

function same(a: FieldValue, b: FieldValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => item === b[index]);
  return a === b;
}

/** A limit as a number to compare: -1 and 0 mean no limit. */
export function asLimit(value: FieldValue): number {
  return typeof value === "number" && value > 0 ? value : Number.POSITIVE_INFINITY;
}

export interface BucketDiff {
  /** Changes the server makes in place and that lose nothing. */
  safe: FieldChange[];
  /** Smaller limits: safe only once measured against what the bucket holds. */
  shrinks: FieldChange[];
  /** Changes JetStream will not make to an existing stream. */
  immutable: FieldChange[];
}

/**
 * Compares a stream's config, as the server reports it, with the declared one. The duplicate window is
 * derived from the ttl, so it is compared apart (see `raise`), once the ttl that will apply is known.
 */
export function diffBucket(current: Record<string, unknown>, desired: KvStreamConfig): BucketDiff {
  const diff: BucketDiff = { safe: [], shrinks: [], immutable: [] };
  const wanted = desired as unknown as Record<string, unknown>;
  for (const spec of FIELDS) {
    if (spec.field === "duplicateWindow") continue;
    const from = normalise(spec.jetstreamField, current[spec.jetstreamField]);
    const to = normalise(spec.jetstreamField, wanted[spec.jetstreamField]);
    if (same(from, to)) continue;
    const change: FieldChange = { field: spec.field, jetstreamField: spec.jetstreamField, from, to };
    if (spec.kind === "mutable") diff.safe.push(change);
    else if (spec.kind === "immutable") diff.immutable.push(change);
    else if (spec.kind === "one-way") (to === true ? diff.safe : diff.immutable).push(change);
    else if (asLimit(to) < asLimit(from)) diff.shrinks.push(change);
    else diff.safe.push(change);
  }
  return diff;
}

/** The duplicate-window change that goes with the ttl the bucket will have, if any. */
export function duplicateWindowChange(current: Record<string, unknown>, maxAge: number): FieldChange | undefined {
  const from = normalise("duplicate_window", current.duplicate_window);
  const to = duplicateWindowFor(maxAge);
  return from === to ? undefined : { field: "duplicateWindow", jetstreamField: "duplicate_window", from, to };
}
