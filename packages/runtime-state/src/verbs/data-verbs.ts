import type { IssuedBucket } from "@mesh/manifest-schema";
import type { StateParams } from "@mesh/state-protocol";
import type { BucketClient } from "../nats/bucket.js";
import type { ConsumerReader, ReaderStart } from "../nats/reader.js";
import { scanHistory, scanKeys } from "../nats/scan.js";
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

export function getVerb(host: VerbHost, { bucket, key }: StateParams<"mesh/state.get">) {
  const target = host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  return host.nats(target, "get", () => target.client.readAnswer(key));
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

export async function keysVerb(host: VerbHost, { bucket, filter }: StateParams<"mesh/state.keys">) {
  const target = host.target(bucket, "read");
  host.refusals.checkFilter(bucket, filter);
  const reader = await host.reader(target, filter ?? ">", { policy: "last_per_subject" }, true);
  return { keys: await host.nats(target, "keys", () => scanKeys(reader, host.limits.maxReplyBytes)) };
}

export async function historyVerb(host: VerbHost, { bucket, key }: StateParams<"mesh/state.history">) {
  const target = host.target(bucket, "read");
  host.refusals.checkKey(bucket, key);
  const reader = await host.reader(target, key, { policy: "all" }, false);
  return host.nats(target, "history", () => scanHistory(reader, host.limits.maxReplyBytes));
}
