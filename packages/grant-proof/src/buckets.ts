import { type DeclaredBucket, durationToNanoseconds } from "@mesh/manifest-schema";
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";
import { nanos } from "@nats-io/nats-core";
import type { StateClient } from "./operations.js";

/**
 * The stream of a bucket as the controller creates it (DESIGN.md, "The controller's raise"): file storage,
 * the declared history, ttl and sizes, `discard: new`, `allow_direct`, and `max_consumers` — which the
 * server accepts only at creation.
 */
export function bucketStreamConfig(
  bucket: DeclaredBucket,
  maxConsumers: number,
): Partial<StreamConfig> & { name: string } {
  const maxAge = bucket.ttl === undefined ? 0 : durationToNanoseconds(bucket.ttl);
  const twoMinutes = nanos(120_000);
  return {
    name: bucket.stream,
    subjects: [`$KV.${bucket.bucket}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    max_msgs_per_subject: bucket.history,
    max_bytes: bucket.maxBytes,
    max_msg_size: bucket.maxValueSize,
    max_age: maxAge,
    duplicate_window: maxAge > 0 && maxAge < twoMinutes ? maxAge : twoMinutes,
    allow_direct: true,
    allow_rollup_hdrs: true,
    deny_delete: true,
    deny_purge: false,
    num_replicas: 1,
    max_consumers: maxConsumers,
  };
}

export async function createBucket(
  controller: StateClient,
  bucket: DeclaredBucket,
  maxConsumers: number,
): Promise<void> {
  await controller.jsm.streams.add(bucketStreamConfig(bucket, maxConsumers));
}

/** What must not move when a write is refused: the stream's counters. */
export interface StreamSnapshot {
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  consumers: number;
}

export async function snapshotStream(controller: StateClient, stream: string): Promise<StreamSnapshot> {
  const { state } = await controller.jsm.streams.info(stream);
  return {
    messages: state.messages,
    bytes: state.bytes,
    firstSeq: state.first_seq,
    lastSeq: state.last_seq,
    consumers: state.consumer_count,
  };
}

/** The difference between two snapshots (consumers aside), or `undefined` when the data is the same. */
export function dataChange(before: StreamSnapshot, after: StreamSnapshot): string | undefined {
  const fields = ["messages", "bytes", "firstSeq", "lastSeq"] as const;
  const changed = fields.filter((field) => before[field] !== after[field]);
  return changed.length === 0
    ? undefined
    : changed.map((field) => `${field} ${before[field]} -> ${after[field]}`).join(", ");
}
