import type { DeclaredBucket } from "@mesh/manifest-schema";
import type { StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { desiredStreamConfig } from "./bucket-config.js";
import { ControllerKvError } from "./errors.js";
import type { ServerShortfall, StoreShortfall } from "./types.js";

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
export async function storeShortfall(input: StoreCheckInput): Promise<StoreShortfall | undefined> {
  const growth = bucketGrowth(input).filter((entry) => entry.accountBytes > 0);
  const needed = growth.reduce((sum, entry) => sum + entry.accountBytes, 0);
  if (needed === 0) return undefined;
  const info = await accountStorage(input.connection, input.timeoutMs);
  if (info.limit < 0) return undefined;
  const available = Math.max(info.limit - info.reserved, 0);
  const buckets = growth.map((entry) => entry.bucket);
  return needed > available ? { buckets, needed, available, limit: info.limit, reserved: info.reserved } : undefined;
}

interface StoreCheckInput {
  connection: NatsConnection;
  timeoutMs: number;
  declared: readonly DeclaredBucket[];
  existing: ReadonlyMap<string, StreamInfo>;
  missing: ReadonlySet<string>;
  replicas: number;
}

/**
 * The buckets to create or grow: by how many bytes the account's reservation grows (max bytes times replicas),
 * and how many each server holding a replica must find free.
 */
function bucketGrowth(
  input: Omit<StoreCheckInput, "connection" | "timeoutMs">,
): { bucket: string; bytes: number; accountBytes: number }[] {
  const growth: { bucket: string; bytes: number; accountBytes: number }[] = [];
  for (const bucket of input.declared) {
    if (input.missing.has(bucket.stream)) continue;
    const desired = desiredStreamConfig(bucket, input.replicas).max_bytes;
    const current = input.existing.get(bucket.stream);
    if (current && current.config.max_bytes < 0) continue;
    const now = current ? Math.max(current.config.max_bytes, 0) : 0;
    // A bucket whose replica count grows reserves its bytes on more servers; counted as all new, conservatively.
    const replicasNow = current ? current.config.num_replicas || 1 : 0;
    const bytes = replicasNow < input.replicas ? desired : desired - now;
    const accountBytes = desired * input.replicas - now * replicasNow;
    if (bytes > 0 || accountBytes > 0) growth.push({ bucket: bucket.bucket, bytes: Math.max(bytes, 0), accountBytes });
  }
  return growth;
}

/**
 * Whether the new buckets fit the servers' own file stores (`max_file_store`), read from each server's
 * monitoring endpoint (`/jsz`: `config.max_storage` and `reserved_storage`, the latter the max bytes every
 * account's streams reserve there; measured on 2.10.27 and 2.15.3, decision 0012). JetStream places each
 * replica on a server with room, so the buckets fit for sure when at least `replicas` servers each have room
 * for a replica of every one of them; the check asks for that, which is exact when every server holds a replica.
 */
export async function serverShortfall(
  input: Omit<StoreCheckInput, "connection"> & { monitorUrls: readonly string[] },
): Promise<ServerShortfall | undefined> {
  const buckets = bucketGrowth(input)
    .filter((entry) => entry.bytes > 0)
    .map(({ bucket, bytes }) => ({ bucket, bytes }));
  const neededPerServer = buckets.reduce((sum, entry) => sum + entry.bytes, 0);
  if (neededPerServer === 0) return undefined;
  const servers = await Promise.all(input.monitorUrls.map((url) => serverStorage(url, input.timeoutMs)));
  const fitting = servers.filter((server) => server.limit < 0 || server.free >= neededPerServer).length;
  return fitting >= input.replicas ? undefined : { buckets, neededPerServer, replicas: input.replicas, servers };
}

/** What a server's `/jsz` says of its meta group, for the progress of a wait; undefined when it cannot be read. */
export async function metaGroupSeen(
  monitorUrls: readonly string[],
  timeoutMs: number,
): Promise<{ leader: string | null; peers: number } | undefined> {
  for (const url of monitorUrls) {
    try {
      const jsz = await readJsz(url, timeoutMs);
      const meta = jsz.meta_cluster as { leader?: unknown; cluster_size?: unknown } | undefined;
      if (!meta) continue;
      return {
        leader: typeof meta.leader === "string" && meta.leader !== "" ? meta.leader : null,
        peers: typeof meta.cluster_size === "number" ? meta.cluster_size : 0,
      };
    } catch {
      // Another server may answer.
    }
  }
  return undefined;
}

async function readJsz(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const response = await fetch(`${url.replace(/\/+$/, "")}/jsz`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

async function serverStorage(url: string, timeoutMs: number): Promise<ServerShortfall["servers"][number]> {
  let jsz: Record<string, unknown>;
  try {
    jsz = await readJsz(url, timeoutMs);
  } catch (error) {
    throw new ControllerKvError(
      "unavailable",
      `cannot read the server's store limits from its monitoring endpoint ${url}/jsz, so nothing was changed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const limit = (jsz.config as { max_storage?: unknown } | undefined)?.max_storage;
  if (typeof limit !== "number")
    throw new ControllerKvError(
      "unavailable",
      `${url}/jsz has no config.max_storage (is JetStream enabled on that server?), so nothing was changed`,
    );
  const reserved = Math.max(Number(jsz.reserved_storage ?? 0), 0);
  const serverId = typeof jsz.server_id === "string" ? jsz.server_id : "";
  return { url, serverId, limit, reserved, free: limit < 0 ? -1 : Math.max(limit - reserved, 0) };
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

/** The servers' shortfall as an operator reads it: which bucket needs how much, where, and how much is free. */
export function describeServerShortfall(shortfall: ServerShortfall): string {
  const buckets = shortfall.buckets.map((entry) => `${entry.bucket} ${inMib(entry.bytes)}`).join(", ");
  const servers = shortfall.servers
    .map(
      (server) =>
        `${server.url} ${inMib(server.free)} free (max_file_store ${inMib(server.limit)}, reserved ${inMib(server.reserved)})`,
    )
    .join("; ");
  const where = shortfall.replicas === 1 ? "a server" : `each of ${shortfall.replicas} servers`;
  return `the new buckets need ${shortfall.neededPerServer} B (${inMib(shortfall.neededPerServer)}) of file store on ${where} (${buckets}); the servers have ${servers}: nothing was created. Raise the servers' max_file_store, or lower the buckets' maxBytes`;
}
