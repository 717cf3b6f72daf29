import type { Catalogue } from "@mesh/manifest-schema";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { ApiFailure, BucketRef } from "./types.js";

/**
 * The contract of compaction: removing the delete markers a bucket without a ttl keeps forever
 * (docs/decisions/0009-compaction.md). A key whose last entry is a delete or purge older than the cut loses
 * that marker and every older entry of its own; a value is never removed, and a key stays deleted.
 *
 * @example
 * const report = await compact({ connection, catalogue, olderThanMs: 7 * 86_400_000 });
 * // report.buckets[0].removedMarkers === 120
 */
export interface CompactOptions {
  /** A connection into the state account, as the controller's state user composed with the catalogue. */
  connection: NatsConnection;
  /** The registered modules' manifests: each declared bucket is compacted. */
  catalogue: Catalogue;
  /** A marker written longer ago than this (milliseconds) is removed. */
  olderThanMs: number;
  /** Scan and report, purge nothing. */
  plan?: boolean;
  /** Milliseconds since the epoch, read once for the cut; `Date.now` by default. */
  now?: () => number;
  /** Debug lines per bucket, a warning per bucket that failed. Silent when absent. */
  logger?: Logger;
  /** Timeout of each JetStream API request and of each pull, in milliseconds; 5000 by default. */
  timeoutMs?: number;
  /**
   * Called once a bucket is scanned and its scan consumer deleted, before anything of it is purged (not in
   * plan mode): a caller can confirm, or show what is about to go. A write meanwhile is never removed.
   */
  beforePurge?: (scan: BucketCompaction) => Promise<void>;
}

/** A bucket's stream, as STREAM.INFO counts it. */
export interface StreamSize {
  messages: number;
  bytes: number;
}

/** What compaction found in one bucket and did to it. */
export interface BucketCompaction extends BucketRef {
  /** Keys in the bucket, deleted ones included (subjects holding a message). */
  keys: number;
  /** Keys whose last entry is a delete marker. */
  markers: number;
  /** Of those, the markers written before the cut: what compaction removes. */
  markersOlder: number;
  /** Markers removed (0 with `plan`); fewer than `markersOlder` when a write since the scan replaced one. */
  removedMarkers: number;
  /** Messages removed: the markers and the older entries of their keys (a bucket with history keeps some). */
  removedMessages: number;
  before: StreamSize;
  /** After the purges; absent with `plan`. */
  after?: StreamSize;
  /** How long the bucket took: the scan and the purges, in milliseconds. */
  durationMs: number;
}

/** A bucket compaction could not finish; what it purged before the failure stays purged. */
export interface FailedCompaction extends BucketRef {
  failure: ApiFailure | "incomplete-scan";
  serverCode?: number;
  message: string;
}

export interface CompactReport {
  plan: boolean;
  olderThanMs: number;
  /** Markers written before this instant (ISO 8601) are the old ones. */
  cutoff: string;
  buckets: BucketCompaction[];
  /** Declared buckets that do not exist yet (the raise creates them); nothing to compact. */
  absent: BucketRef[];
  failed: FailedCompaction[];
}
