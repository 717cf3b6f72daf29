import { bucketOfStream, parseBucketName } from "@mesh/manifest-schema";
import type { StreamInfo } from "@nats-io/jetstream";
import type { NearlyFullBucket, UpdatedBucket } from "./types.js";

/** A bucket at or above this share of its max bytes is reported and warned about. */
export const FILL_WARNING_PERCENT = 90;

/**
 * The buckets at or above FILL_WARNING_PERCENT of their max bytes, fullest first, from the stream states the
 * raise listed anyway (no request of its own). On nats-server < 2.10.5 such a bucket may evict its oldest key on
 * a small write despite `discard: new` (nats-server#4771, decision 0004): the report is how an operator
 * hears of it before a module loses a value. A maxBytes change in `updated` counts, so a raise that grows a
 * bucket does not warn about the limit it just lifted.
 */
export function nearlyFullBuckets(
  existing: ReadonlyMap<string, StreamInfo>,
  updated: readonly UpdatedBucket[],
): NearlyFullBucket[] {
  const newMax = new Map<string, number>();
  for (const bucket of updated) {
    const change = bucket.changes.find((item) => item.field === "maxBytes");
    if (typeof change?.to === "number") newMax.set(bucket.bucket, change.to);
  }
  const full: NearlyFullBucket[] = [];
  for (const [stream, info] of existing) {
    const bucket = bucketOfStream(stream)!;
    const names = parseBucketName(bucket);
    const maxBytes = newMax.get(bucket) ?? info.config.max_bytes;
    if (!names || !(maxBytes > 0)) continue;
    const bytes = info.state.bytes;
    // Rounded down, so that "percent >= 90" and the inclusion below always agree.
    const percent = Math.floor((bytes * 1000) / maxBytes) / 10;
    if (percent >= FILL_WARNING_PERCENT) full.push({ bucket, ...names, bytes, maxBytes, percent });
  }
  return full.sort((a, b) => b.percent - a.percent || (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
}

/** Whether nats-server `version` has the fix of nats-server#4771 (2.10.5); unknown versions count as not. */
export function evictsAtTheEdge(version: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? "");
  if (!match) return true;
  const [major, minor, patch] = match.slice(1).map(Number) as [number, number, number];
  return major < 2 || (major === 2 && (minor < 10 || (minor === 10 && patch < 5)));
}

export function fillAdvice(full: NearlyFullBucket, serverVersion: string | undefined): string {
  const edge = evictsAtTheEdge(serverVersion)
    ? `; on nats-server ${serverVersion ?? "of unknown version"} (< 2.10.5) a write near the limit can evict the oldest key instead of being refused (nats-server#4771)`
    : "; writes that do not fit are refused";
  return `bucket ${full.bucket} is ${full.percent} % full (${full.bytes} of ${full.maxBytes} bytes)${edge}: delete keys through module ${full.module}, or declare a larger maxBytes`;
}
