/**
 * How a bucket's stream stores a deletion. Both sides of a bucket read it the same way: the runtime, which
 * must never show a deleted key as a value, and the controller's compaction, which removes old deletions.
 *
 * - A client's delete or purge writes a message with `KV-Operation: DEL` or `PURGE`.
 * - From nats-server 2.11, a bucket with subject delete markers gets a marker from the server when a key's
 *   last value expires by the bucket's ttl: `Nats-Marker-Reason: MaxAge` (or `Purge`, `Remove`), and no
 *   `KV-Operation` (decision 0006).
 */
export const KV_OPERATION_HEADER = "KV-Operation";
export const MARKER_REASON_HEADER = "Nats-Marker-Reason";

/** The headers of a stored message, as any NATS client exposes them. */
export interface StoredHeaders {
  get(name: string): string;
  has(name: string): boolean;
}

/** Whether a stored message is a deletion: a `DEL`/`PURGE` written by a client, or a server's delete marker. */
export function isDeletionMarker(headers: StoredHeaders | undefined): boolean {
  if (headers === undefined) return false;
  const operation = headers.get(KV_OPERATION_HEADER);
  return operation === "DEL" || operation === "PURGE" || headers.has(MARKER_REASON_HEADER);
}
