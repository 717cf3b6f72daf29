import type { WireWatchEvent as WatchEvent } from "@mesh/state-protocol";
import type { ReaderOptions } from "../nats/reader.js";
import { StoredPutEvent } from "../wire/stored-events.js";

/** What an event costs in a batch line beyond its key and value: its JSON field names, type and revision. */
const EVENT_OVERHEAD_BYTES = 128;

/** Splits events into `mesh/state` requests bounded in count and bytes. */
export function* eventBatches(
  events: WatchEvent[],
  limits: Pick<ReaderOptions["limits"], "batchEvents" | "batchLineBytes">,
): Generator<WatchEvent[]> {
  const { batchEvents, batchLineBytes } = limits;
  let batch: WatchEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = eventBytes(event);
    if (batch.length > 0 && (batch.length >= batchEvents || bytes + size > batchLineBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(event);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** An event's size as a batch counts it: sized from the stored bytes, never re-encoded to count it. */
export function eventBytes(event: WatchEvent): number {
  return EVENT_OVERHEAD_BYTES + (event instanceof StoredPutEvent ? event.valueBytes + event.key.length : 0);
}
