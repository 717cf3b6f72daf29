import type { IssuedBucket } from "@mesh/manifest-schema";
import type { StateParams } from "@mesh/state-protocol";
import type { BucketClient } from "./bucket.js";
import type { ConsumerReader, ReaderStart } from "./reader.js";
import { encodeValue, type Refusals } from "./refusals.js";
import { scanHistory, scanKeys } from "./scan.js";
import type { StateLimits } from "./types.js";

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
  target(name: string, access: "read" | "write"): Promise<Target>;
  reader(target: Target, filter: string, start: ReaderStart, headersOnly: boolean): Promise<ConsumerReader>;
  /** Runs one NATS operation, mapping what the server or the client says to a refusal. */
  nats<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T>;
}

export async function getVerb(host: VerbHost, { bucket, key }: StateParams<"mesh/state.get">) {
  const target = await host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  const entry = await host.nats(target, "get", () => target.client.read(key));
  if (entry === null || entry.deleted) return null;
  return { key, value: entry.value, revision: entry.revision, updated: entry.updated };
}

export async function putVerb(host: VerbHost, { bucket, key, value, revision }: StateParams<"mesh/state.put">) {
  const target = await host.target(bucket, "write");
  host.refusals.checkKey(bucket, key);
  const encoded = encodeValue(value);
  host.refusals.checkValue(bucket, target.issued, key, encoded);
  return { revision: await host.nats(target, "put", () => target.client.putEncoded(key, encoded.bytes, revision)) };
}

export async function deleteVerb(host: VerbHost, { bucket, key, revision }: StateParams<"mesh/state.delete">) {
  const target = await host.target(bucket, "write");
  host.refusals.checkKey(bucket, key);
  await host.nats(target, "delete", () => target.client.delete(key, revision));
  return {};
}

export async function keysVerb(host: VerbHost, { bucket, filter }: StateParams<"mesh/state.keys">) {
  const target = await host.target(bucket, "read");
  host.refusals.checkFilter(bucket, filter);
  const reader = await host.reader(target, filter ?? ">", { policy: "last_per_subject" }, true);
  return { keys: await host.nats(target, "keys", () => scanKeys(reader, host.limits.maxReplyBytes)) };
}

export async function historyVerb(host: VerbHost, { bucket, key }: StateParams<"mesh/state.history">) {
  const target = await host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  const reader = await host.reader(target, key, { policy: "all" }, false);
  return { entries: await host.nats(target, "history", () => scanHistory(reader, host.limits.maxReplyBytes)) };
}
