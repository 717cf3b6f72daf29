import type { HistoryEntry } from "@mesh/state-protocol";
import { decodeValue } from "./bucket.js";
import type { ConsumerReader, PulledMessage } from "./reader.js";

/**
 * keys and history: a short-lived consumer read to the end of what it counted at creation, then
 * deleted at once (the client's own keys()/history() leave theirs for five minutes).
 */

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

/** Current keys (no deleted ones), sorted. The reader must be `last_per_subject`, headers only. */
export async function scanKeys(reader: ConsumerReader): Promise<string[]> {
  const live = new Map<string, boolean>();
  await readToEnd(reader, (message) => live.set(message.key, message.operation === "put"));
  return [...live]
    .filter(([, present]) => present)
    .map(([key]) => key)
    .sort();
}

/** Every stored revision of one key, oldest first. The reader must deliver `all`, filtered on the key. */
export async function scanHistory(reader: ConsumerReader): Promise<HistoryEntry[]> {
  const entries: HistoryEntry[] = [];
  await readToEnd(reader, (message) => {
    const { key, revision, updated } = message;
    entries.push(
      message.operation === "delete"
        ? { type: "delete", key, revision, updated }
        : { type: "put", key, value: decodeValue(message.data) as never, revision, updated },
    );
  });
  return entries;
}
