import { ENCODED_JSON, type EncodedJsonResult, type HistoryEntry } from "@mesh/state-protocol";
import { encodeEventsBytes, StoredPutEvent } from "../wire/stored-events.js";
import { ReplyTooLarge } from "./errors.js";
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

/** Reads until caught up: the counted messages, a message with pending 0, or a pull that found nothing. */
async function readToEnd(reader: ConsumerReader, visit: (message: PulledMessage) => void): Promise<void> {
  try {
    const expected = await reader.open();
    let taken = 0;
    while (taken < expected) {
      const messages = await reader.take();
      if (messages.length === 0) return;
      for (const message of messages) {
        visit(message);
        taken++;
        if (message.pending === 0) return;
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
export async function scanKeys(reader: ConsumerReader, maxReplyBytes: number): Promise<string[]> {
  const live = new Map<string, boolean>();
  let bytes = REPLY_OVERHEAD_BYTES;
  await readToEnd(reader, (message) => {
    const wasPresent = live.get(message.key) === true;
    const present = message.operation === "put";
    live.set(message.key, present);
    if (present !== wasPresent) bytes += (present ? 1 : -1) * (message.key.length + 3);
    if (bytes > maxReplyBytes) throw new ReplyTooLarge(bytes, maxReplyBytes);
  });
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
export async function scanHistory(reader: ConsumerReader, maxReplyBytes: number): Promise<HistoryAnswer> {
  const entries: HistoryEntry[] = [];
  let bytes = REPLY_OVERHEAD_BYTES;
  await readToEnd(reader, (message) => {
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
  });
  return new HistoryAnswer(entries);
}
