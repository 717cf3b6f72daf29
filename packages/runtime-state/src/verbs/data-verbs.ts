import type { IssuedBucket } from "@mesh/manifest-schema";
import type { Consistency, StateParams } from "@mesh/state-protocol";
import type { BucketClient } from "../nats/bucket.js";
import type { ConsumerReader, ReaderStart } from "../nats/reader.js";
import { type SnapshotReach, scanHistory, scanKeys } from "../nats/scan.js";
import type { StateLimits } from "../types.js";
import { encodeValue, type Refusals } from "../wire/refusals.js";

/**
 * get, put, delete, keys and history: each checks what the membership decides first, then makes its
 * NATS calls through the host, which maps failures to refusals. Watches live in the service itself.
 */

/** A bucket the module may reach, resolved from its membership. */
export interface Target {
  /** The name the module uses. */
  name: string;
  issued: IssuedBucket;
  client: BucketClient;
}

export interface VerbHost {
  readonly refusals: Refusals;
  readonly limits: StateLimits;
  /** Throws the refusal when the module may not reach the bucket so. */
  target(name: string, access: "read" | "write"): Target;
  reader(target: Target, filter: string, start: ReaderStart, headersOnly: boolean): Promise<ConsumerReader>;
  /** Runs one NATS operation, mapping what the server or the client says to a refusal (never throws). */
  nats<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T>;
}

// get, put and delete are plain functions, not async ones: the verb's own promise is the NATS call's, with
// no layer per await; a refusal they throw is turned into a rejection by the service's `verb`.

export function getVerb(host: VerbHost, { bucket, key, consistency }: StateParams<"mesh/state.get">) {
  const target = host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  const { client } = target;
  // `local` is today's read, untouched: any replica, no floor (docs/decisions/0011-read-consistency.md).
  if (consistency === "local") return host.nats(target, "get", () => client.readAnswer(key));
  if (consistency === "strong") return host.nats(target, "get", () => client.readAnswerStrong(key));
  return host.nats(target, "get", () => client.readAnswerSession(key));
}

export function putVerb(host: VerbHost, { bucket, key, value, revision }: StateParams<"mesh/state.put">) {
  const target = host.target(bucket, "write");
  host.refusals.checkKey(bucket, key);
  const encoded = encodeValue(value);
  host.refusals.checkValue(bucket, target.issued, key, encoded);
  return host.nats(target, "put", () => target.client.putAnswer(key, encoded.bytes, revision));
}

export function deleteVerb(host: VerbHost, { bucket, key, revision }: StateParams<"mesh/state.delete">) {
  const target = host.target(bucket, "write");
  host.refusals.checkKey(bucket, key);
  return host.nats(target, "delete", () => target.client.delete(key, revision).then(() => ({})));
}

export async function keysVerb(host: VerbHost, { bucket, filter, consistency }: StateParams<"mesh/state.keys">) {
  const target = host.target(bucket, "read");
  host.refusals.checkFilter(bucket, filter);
  const reader = await host.reader(target, filter ?? ">", { policy: "last_per_subject" }, true);
  const reach = snapshotReach(target.client, consistency, filter ?? ">");
  return { keys: await host.nats(target, "keys", () => scanKeys(reader, host.limits.maxReplyBytes, reach)) };
}

export async function historyVerb(host: VerbHost, { bucket, key, consistency }: StateParams<"mesh/state.history">) {
  const target = host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  const reader = await host.reader(target, key, { policy: "all" }, false);
  const reach = snapshotReach(target.client, consistency, key);
  return host.nats(target, "history", () => scanHistory(reader, host.limits.maxReplyBytes, reach));
}

/**
 * What a keys, history or watch snapshot must reach before it ends, or `undefined` for none (`local`, or a
 * `session` read of a bucket this client has neither written nor read: nothing to reflect). Otherwise the
 * leader's last revision matching the filter, asked when the read begins, and the floor the snapshot's
 * messages raise (monotonic reads: a later get never goes back before what the snapshot showed).
 */
export function snapshotReach(
  client: BucketClient,
  consistency: Consistency | undefined,
  filter: string,
): SnapshotReach | undefined {
  if (consistency === "local") return undefined;
  const floor = client.floor;
  if (consistency !== "strong" && floor.highestRevision === 0)
    return { notice: (key, revision) => floor.notice(key, revision) };
  return {
    leaderRevision: () => client.lastRevisionFromLeader(filter),
    notice: (key, revision) => floor.notice(key, revision),
  };
}
