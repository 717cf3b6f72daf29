import type { StreamInfo } from "@nats-io/jetstream";
import { asLimit } from "./bucket-config.js";
import type { JetStreamApi } from "./jsapi.js";
import type { FieldChange, Loss } from "./types.js";

/**
 * What a smaller limit would discard, measured from what the bucket holds. Cheap first: the stream info of
 * the listing answers most cases (an empty bucket, a young one, one with a value per key); only a history
 * cut on a bucket where some key may hold more values than the new history asks the server for per-key
 * counts (one STREAM.INFO with a subjects filter, paged by the server). No value is ever read.
 */
export async function measureLoss(
  change: FieldChange,
  info: StreamInfo,
  api: JetStreamApi,
  bucket: string,
  now: number,
): Promise<Loss | undefined> {
  const { messages, bytes } = info.state;
  if (messages === 0) return undefined;
  switch (change.field) {
    case "maxBytes": {
      const maxBytes = asLimit(change.to);
      return bytes > maxBytes ? { kind: "maxBytes", bytes, maxBytes } : undefined;
    }
    case "ttl": {
      // JetStream expires by write time: what was written more than the new ttl ago goes at once.
      const maxAgeMs = asLimit(change.to) / 1_000_000;
      const oldest = Date.parse(info.state.first_ts);
      if (!Number.isFinite(oldest) || now - oldest <= maxAgeMs) return undefined;
      return {
        kind: "ttl",
        writtenBefore: new Date(now - maxAgeMs).toISOString(),
        oldest: new Date(oldest).toISOString(),
      };
    }
    case "history": {
      const history = asLimit(change.to);
      // Every key holds at least one message, so no key can hold more than this many.
      const subjects = info.state.num_subjects;
      if (subjects !== undefined && messages - (subjects - 1) <= history) return undefined;
      const prefix = `$KV.${bucket}.`;
      const counts = await api.subjectCounts(info.config.name, `${prefix}>`);
      const keys: { key: string; values: number }[] = [];
      let values = 0;
      for (const [subject, count] of counts) {
        if (count <= history) continue;
        const key = subject.startsWith(prefix) ? subject.slice(prefix.length) : subject;
        keys.push({ key, values: count - history });
        values += count - history;
      }
      keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      return values === 0 ? undefined : { kind: "history", values, keys };
    }
    default:
      return undefined;
  }
}

/** Whether an accepted loss may be applied: a max-bytes cut cannot say which values go, so never. */
export function lossMayBeAccepted(loss: Loss): boolean {
  return loss.kind !== "maxBytes";
}

export function describeLoss(loss: Loss): string {
  switch (loss.kind) {
    case "history":
      return `${loss.values} older value${loss.values === 1 ? "" : "s"} of ${loss.keys.length} key${loss.keys.length === 1 ? "" : "s"} would go`;
    case "ttl":
      return `every value written before ${loss.writtenBefore} would expire at once (the oldest is from ${loss.oldest})`;
    case "maxBytes":
      return `the bucket holds ${loss.bytes} bytes, over the new max of ${loss.maxBytes}: the server would remove the oldest values`;
  }
}
