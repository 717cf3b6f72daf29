import type { WireHistoryEntry as HistoryEntry } from "@mesh/state-protocol";
import { ENCODED_JSON, type EncodedJsonResult } from "@mesh/state-protocol/jsonrpc";
import { encodeEventsBytes, StoredPutEvent } from "../wire/stored-events.js";
import { NotConsistent, ReplyTooLarge } from "./errors.js";
import type { ConsumerReader, PulledMessage } from "./reader.js";

/**
 * keys and history: a short-lived consumer read to the end of what it counted at creation, then
 * deleted at once (the client's own keys()/history() leave theirs for five minutes). Each reply is
 * bounded in bytes while it is read (`ReplyTooLarge`), so neither the runtime nor the bundle ever holds
 * more than one reply line's worth: a line the bundle's reader drops would leave its request pending.
 */

/** The JSON around a result's array and each history entry, counted generously so the bound holds. */
const REPLY_OVERHEAD_BYTES = 32;
const ENTRY_OVERHEAD_BYTES = 160;

/**
 * What a snapshot must reflect (docs/decisions/0011-read-consistency.md): `leaderRevision` (absent: nothing) is the
 * leader's last revision matching the filter, asked when the read begins; the snapshot does not end before the
 * consumer has delivered it or a later one. `notice` is told every message the snapshot showed.
 */
export interface SnapshotReach {
  leaderRevision?: () => Promise<number>;
  notice: (key: string, revision: number) => void;
}

/**
 * Reads until caught up: the counted messages, a message with pending 0, or a pull that found nothing — and, with
 * a leader revision to reach, not before a message at or after it. A pull that ends with nothing short of it asks
 * the leader again (the message may have been removed); a second such pull means the replica the consumer reads
 * from is behind the leader: `NotConsistent`, never a snapshot that misses an acknowledged write.
 */
async function readToEnd(
  reader: ConsumerReader,
  visit: (message: PulledMessage) => void,
  reach?: SnapshotReach,
): Promise<void> {
  try {
    const [expected, mustReach] = await Promise.all([reader.open(), reach?.leaderRevision?.() ?? 0]);
    let target = mustReach;
    let taken = 0;
    let last = 0;
    let counted = false;
    let shortPulls = 0;
    for (;;) {
      if (counted && last >= target) return;
      if (!counted && taken >= expected && last >= target) return;
      const messages = await reader.take();
      if (messages.length === 0) {
        if (last >= target) return;
        counted = true;
        if (++shortPulls > 1) {
          throw new NotConsistent(
            `the replica serving the snapshot delivered up to revision ${last}, the leader had ${target}`,
          );
        }
        target = Math.min(target, await reach!.leaderRevision!());
        continue;
      }
      for (const message of messages) {
        visit(message);
        reach?.notice(message.key, message.revision);
        taken++;
        last = message.revision;
        if (message.pending === 0 || taken >= expected) counted = true;
        if (counted && last >= target) return;
      }
    }
  } finally {
    await reader.close();
  }
}

/**
 * Current keys (no deleted ones), sorted. The reader must be `last_per_subject`, headers only. Keys are
 * ASCII, so `"key",` is exactly its bytes in the reply.
 */
export async function scanKeys(
  reader: ConsumerReader,
  maxReplyBytes: number,
  reach?: SnapshotReach,
): Promise<string[]> {
  const live = new Map<string, boolean>();
  let bytes = REPLY_OVERHEAD_BYTES;
  await readToEnd(
    reader,
    (message) => {
      const wasPresent = live.get(message.key) === true;
      const present = message.operation === "put";
      live.set(message.key, present);
      if (present !== wasPresent) bytes += (present ? 1 : -1) * (message.key.length + 3);
      if (bytes > maxReplyBytes) throw new ReplyTooLarge(bytes, maxReplyBytes);
    },
    reach,
  );
  return [...live]
    .filter(([, present]) => present)
    .map(([key]) => key)
    .sort();
}

/**
 * The history verb's answer. In-process its `entries` are history entries like any other; on a line it goes
 * out as its own encoding, each stored value copied in as NATS holds it (as a watch batch's are), so a reply
 * of up to `maxReplyBytes` is never parsed and encoded again by the runtime.
 */
export class HistoryAnswer implements EncodedJsonResult {
  constructor(readonly entries: HistoryEntry[]) {}

  get [ENCODED_JSON](): [Uint8Array] {
    return [encodeEventsBytes('{"entries":[', this.entries)];
  }
}

/** Every stored revision of one key, oldest first. The reader must deliver `all`, filtered on the key. */
export async function scanHistory(
  reader: ConsumerReader,
  maxReplyBytes: number,
  reach?: SnapshotReach,
): Promise<HistoryAnswer> {
  const entries: HistoryEntry[] = [];
  let bytes = REPLY_OVERHEAD_BYTES;
  await readToEnd(
    reader,
    (message) => {
      const { key, revision, updated } = message;
      if (message.operation === "delete") {
        entries.push({ type: "delete", key, revision, updated });
        bytes += ENTRY_OVERHEAD_BYTES + key.length;
      } else {
        const entry = new StoredPutEvent(key, message.data, revision, updated);
        entries.push(entry);
        // What goes into the line: the stored bytes, or a foreign writer's non-JSON bytes as an escaped string.
        bytes += ENTRY_OVERHEAD_BYTES + key.length + entry.valueBytes;
      }
      if (bytes > maxReplyBytes) throw new ReplyTooLarge(bytes, maxReplyBytes);
    },
    reach,
  );
  return new HistoryAnswer(entries);
}
