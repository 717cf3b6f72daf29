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
  /** From nats-server 2.10: what any consumer may ask for; set when the server has it. */
  consumer_limits?: { inactive_threshold: number };
  /**
   * From nats-server 2.11, on buckets with a ttl (an expired key leaves a delete marker) or `forgetDeletes`
   * (a delete's marker carries its own ttl).
   */
  allow_msg_ttl?: boolean;
  subject_delete_marker_ttl?: number;
}

/**
 * The longest any consumer of a bucket may stay idle, in nanoseconds: the stream's
 * `consumer_limits.inactive_threshold`. A consumer asking for more is refused (error 10153), one asking for
 * none gets this, durables included (measured on 2.10.27, 2.11.17, 2.12.15, 2.15.3): so no consumer outlives
 * five minutes of disuse (docs/decisions/0006-no-lasting-consumers.md). runtime-state asks for 30 s; five
 * minutes is what the ecosystem's own KV clients ask for their ordered consumers (kv.js: 300 s), so an
 * operator's `nats kv` and kv.js still read a bucket.
 */
export const CONSUMER_INACTIVE_LIMIT_NANOSECONDS = 300 * 1_000_000_000;

/** The least lifetime nats-server accepts for a delete marker. */
const MIN_MARKER_TTL_NANOSECONDS = 1_000_000_000;

/** What a bucket's stream may use on a server, by the version that brought it. */
export interface ServerFeatures {
  /** `consumer_limits` on a stream (2.10.0). */
  consumerLimits: boolean;
  /** `subject_delete_marker_ttl` and `allow_msg_ttl` (2.11.0). */
  deleteMarkers: boolean;
}

/** `major.minor.patch` of a server version string (`2.12.15`, `2.14.0-RC.1`); `undefined` if it is not one. */
function versionParts(version: string): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function atLeast(parts: [number, number, number], wanted: [number, number, number]): boolean {
  for (let index = 0; index < 3; index++) {
    if (parts[index] !== wanted[index]) return parts[index]! > wanted[index]!;
  }
  return true;
}

/**
 * The features a server of `version` (its INFO's `version`) offers a bucket. Without a version: what every
 * supported server (2.10 and later) has.
 */
export function serverFeatures(version: string | undefined): ServerFeatures {
  const parts = version === undefined ? ([2, 10, 0] as [number, number, number]) : versionParts(version);
  if (parts === undefined) return { consumerLimits: false, deleteMarkers: false };
  return { consumerLimits: atLeast(parts, [2, 10, 0]), deleteMarkers: atLeast(parts, [2, 11, 0]) };
}

/**
 * JetStream's max_msg_size counts headers with the payload (measured on 2.9.10: a value of exactly
 * max_msg_size is refused on `update` and `create`, which add an expected-sequence header). The value cap is
 * the runtime's to enforce on the encoded value; the stream allows this much more for the KV headers.
 */
export const KV_HEADER_ALLOWANCE = 512;

/** JetStream's default duplicate window, which must not exceed max_age. */
export const DUPLICATE_WINDOW_NANOSECONDS = 2 * 60 * 1_000_000_000;

/**
 * The delete-marker settings that go with a ttl of `maxAge` and with `forgetDeletes` (none below 2.11): a ttl
 * brings markers as long as itself, and either needs per-message ttls (`allow_msg_ttl`).
 */
function deleteMarkersFor(
  maxAge: number,
  features: ServerFeatures,
  forgetDeletes: boolean,
): { allow_msg_ttl?: boolean; subject_delete_marker_ttl?: number } {
  if (!features.deleteMarkers) return {};
  if (maxAge <= 0) return forgetDeletes ? { allow_msg_ttl: true } : {};
  return { allow_msg_ttl: true, subject_delete_marker_ttl: Math.max(maxAge, MIN_MARKER_TTL_NANOSECONDS) };
}

export function duplicateWindowFor(maxAge: number): number {
  return maxAge > 0 ? Math.min(DUPLICATE_WINDOW_NANOSECONDS, maxAge) : DUPLICATE_WINDOW_NANOSECONDS;
}

/**
 * The stream of `declared` on a server of `serverVersion` (the connection's `info.version`; without it, what
 * every supported server has): from 2.10 its consumers' idleness is bounded; from 2.11 a key that expires by
 * the ttl leaves a delete marker that watchers see as a delete (the marker lives as long as a value would), and
 * a bucket that declares `forgetDeletes` allows per-message ttls, which its deletes' markers carry.
 */
export function desiredStreamConfig(
  declared: DeclaredBucket,
  replicas: number,
  serverVersion?: string,
): KvStreamConfig {
  const maxAge = declared.ttl === undefined ? 0 : durationToNanoseconds(declared.ttl);
  const features = serverFeatures(serverVersion);
  const markers = deleteMarkersFor(maxAge, features, declared.forgetDeletes !== undefined);
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
    ...(features.consumerLimits
      ? { consumer_limits: { inactive_threshold: CONSUMER_INACTIVE_LIMIT_NANOSECONDS } }
      : {}),
    ...markers,
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
  // An existing bucket takes the limit and the markers (measured on 2.10.27–2.15.3), unless a consumer already
  // asks for more than the limit: then the server refuses the update (10069) and names the consumers.
  { field: "consumerInactiveLimit", jetstreamField: "consumer_limits.inactive_threshold", kind: "mutable" },
  { field: "allowMessageTtl", jetstreamField: "allow_msg_ttl", kind: "one-way" },
  { field: "deleteMarkerTtl", jetstreamField: "subject_delete_marker_ttl", kind: "mutable" },
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
  "consumer_limits.inactive_threshold": 0,
  allow_msg_ttl: false,
  subject_delete_marker_ttl: 0,
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

/** Settings derived from the ttl: compared apart (see `raise`), once the ttl that will apply is known. */
const DERIVED_FROM_TTL: ReadonlySet<BucketField> = new Set(["duplicateWindow", "allowMessageTtl", "deleteMarkerTtl"]);

/**
 * Compares a stream's config, as the server reports it, with the declared one. The duplicate window and the
 * delete markers are derived from the ttl, so they are compared apart (see `raise`).
 */
export function diffBucket(current: Record<string, unknown>, desired: KvStreamConfig): BucketDiff {
  const diff: BucketDiff = { safe: [], shrinks: [], immutable: [] };
  const wanted = desired as unknown as Record<string, unknown>;
  for (const spec of FIELDS) {
    if (DERIVED_FROM_TTL.has(spec.field)) continue;
    const from = normalise(spec.jetstreamField, fieldOf(current, spec.jetstreamField));
    const to = normalise(spec.jetstreamField, fieldOf(wanted, spec.jetstreamField));
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

/**
 * The delete-marker changes that go with the ttl the bucket will have and its `forgetDeletes`: markers as long
 * as the ttl on a server that has them; message ttls are never asked to be turned off (the server refuses that).
 */
export function deleteMarkerChanges(
  current: Record<string, unknown>,
  maxAge: number,
  serverVersion: string | undefined,
  forgetDeletes = false,
): FieldChange[] {
  const wanted = deleteMarkersFor(maxAge, serverFeatures(serverVersion), forgetDeletes);
  const changes: FieldChange[] = [];
  const allowed = normalise("allow_msg_ttl", current.allow_msg_ttl);
  if (wanted.allow_msg_ttl === true && allowed !== true) {
    changes.push({ field: "allowMessageTtl", jetstreamField: "allow_msg_ttl", from: allowed, to: true });
  }
  const from = normalise("subject_delete_marker_ttl", current.subject_delete_marker_ttl);
  const to = wanted.subject_delete_marker_ttl ?? 0;
  if (from !== to) changes.push({ field: "deleteMarkerTtl", jetstreamField: "subject_delete_marker_ttl", from, to });
  return changes;
}

/** Whether a stream's config, as the server reports it, allows per-message ttls. */
export function allowsMessageTtl(config: Record<string, unknown>): boolean {
  return normalise("allow_msg_ttl", config.allow_msg_ttl) === true;
}

/** The duplicate-window change that goes with the ttl the bucket will have, if any. */
export function duplicateWindowChange(current: Record<string, unknown>, maxAge: number): FieldChange | undefined {
  const from = normalise("duplicate_window", current.duplicate_window);
  const to = duplicateWindowFor(maxAge);
  return from === to ? undefined : { field: "duplicateWindow", jetstreamField: "duplicate_window", from, to };
}

/** A config field by its path: `max_age`, or `consumer_limits.inactive_threshold` for a nested one. */
function fieldOf(config: Record<string, unknown>, path: string): unknown {
  let value: unknown = config;
  for (const part of path.split(".")) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

/** Sets a config field by its path (see `fieldOf`), keeping the nested object's other fields. */
export function setField(config: Record<string, unknown>, path: string, value: FieldValue): void {
  const parts = path.split(".");
  let target = config;
  for (const part of parts.slice(0, -1)) {
    const nested = { ...((target[part] as Record<string, unknown> | undefined) ?? {}) };
    target[part] = nested;
    target = nested;
  }
  target[parts.at(-1)!] = value;
}
