import type { DeclaredBucket } from "@mesh/manifest-schema";
import type { StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { desiredStreamConfig } from "./bucket-config.js";
import { ControllerKvError } from "./errors.js";
import type { StoreShortfall } from "./types.js";

/**
 * Whether the buckets a raise would create (and the max bytes it would grow) fit the account's file store.
 * JetStream reserves a bucket's max bytes when it creates it, and refuses a create that does not fit with
 * 10047; checked up front, a raise that cannot finish creates nothing instead of stopping halfway.
 *
 * Reads `$JS.API.INFO` (the controller grant allows it): `limits.max_storage` (-1: no account limit) and
 * `reserved_storage`, the sum of the max bytes of the account's streams (measured on nats-server 2.10.27
 * and 2.15.3: 64 MiB after creating one 64 MiB bucket). An account without a limit gets no check: the
 * server's own `max_file_store` is not in the account's info (measured on both versions: `max_storage`
 * stays -1), and only the system account can read it; give the state account a `max_file` limit.
 */
export async function storeShortfall(input: {
  connection: NatsConnection;
  timeoutMs: number;
  declared: readonly DeclaredBucket[];
  existing: ReadonlyMap<string, StreamInfo>;
  missing: ReadonlySet<string>;
  replicas: number;
}): Promise<StoreShortfall | undefined> {
  const buckets: string[] = [];
  let needed = 0;
  for (const bucket of input.declared) {
    if (input.missing.has(bucket.stream)) continue;
    const desired = desiredStreamConfig(bucket, input.replicas).max_bytes * input.replicas;
    const current = input.existing.get(bucket.stream);
    const now = current ? Math.max(current.config.max_bytes, 0) * (current.config.num_replicas || 1) : 0;
    if (current && current.config.max_bytes < 0) continue;
    if (desired > now) {
      needed += desired - now;
      buckets.push(bucket.bucket);
    }
  }
  if (needed === 0) return undefined;
  const info = await accountStorage(input.connection, input.timeoutMs);
  if (info.limit < 0) return undefined;
  const available = Math.max(info.limit - info.reserved, 0);
  return needed > available ? { buckets, needed, available, limit: info.limit, reserved: info.reserved } : undefined;
}

async function accountStorage(
  connection: NatsConnection,
  timeoutMs: number,
): Promise<{ limit: number; reserved: number }> {
  let reply: { limits?: { max_storage?: unknown }; reserved_storage?: unknown; storage?: unknown; error?: unknown };
  try {
    reply = (await connection.request("$JS.API.INFO", "", { timeout: timeoutMs })).json();
  } catch (error) {
    throw new ControllerKvError(
      "unavailable",
      `cannot read the account's JetStream limits ($JS.API.INFO), so nothing was changed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const limit = reply.limits?.max_storage;
  if (reply.error !== undefined || typeof limit !== "number")
    throw new ControllerKvError(
      "unavailable",
      `the account's JetStream info has no storage limit, so nothing was changed: ${JSON.stringify(reply.error ?? reply)}`,
    );
  // reserved_storage counts streams with max bytes; a stream without holds what it stores.
  const reserved = Math.max(Number(reply.reserved_storage ?? 0), Number(reply.storage ?? 0));
  return { limit, reserved };
}

const MIB = 1024 * 1024;
const inMib = (bytes: number) => `${(bytes / MIB).toFixed(1).replace(/\.0$/, "")} MiB`;

/** The shortfall as an operator reads it: what is needed, what is free, and what to do. */
export function describeShortfall(shortfall: StoreShortfall): string {
  const count = `${shortfall.buckets.length} bucket${shortfall.buckets.length === 1 ? "" : "s"}`;
  return `${count} need ${shortfall.needed} B (${inMib(shortfall.needed)}) of file store, the account has ${shortfall.available} B (${inMib(shortfall.available)}) free (limit ${shortfall.limit} B, reserved ${shortfall.reserved} B): nothing was created. Raise the account's max_file, or lower the buckets' maxBytes (${shortfall.buckets.join(", ")})`;
}
