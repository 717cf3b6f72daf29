import { streamName } from "@mesh/manifest-schema";
import type { ConsumerReader, PulledMessage, ReaderStart } from "@mesh/runtime-state/internal";
import { JetStreamApiError } from "@nats-io/jetstream";
import { describeError, type StateClient } from "./operations.js";

/**
 * Reads as runtime-state makes them, through its own `ConsumerReader`: an ephemeral pull consumer created on
 * the exact `CONSUMER.CREATE.<stream>`, pulled with raw MSG.NEXT requests into the machine's own inbox, and
 * deleted when done — with the runtime's limits (its inactivity threshold included).
 */

/** Opens a reader and takes everything it counted at creation; `close` is the caller's. */
async function takeAll(reader: ConsumerReader): Promise<PulledMessage[]> {
  const expected = await reader.open();
  const out: PulledMessage[] = [];
  while (out.length < expected) {
    const batch = await reader.take();
    if (batch.length === 0) break;
    out.push(...batch);
    if (batch.at(-1)!.pending === 0) break;
  }
  return out;
}

/** Reads to the end, then deletes the consumer; a delete the server refused fails the read. */
async function readOnce(reader: ConsumerReader): Promise<PulledMessage[]> {
  let entries: PulledMessage[];
  try {
    entries = await takeAll(reader);
  } catch (error) {
    await reader.close();
    throw error;
  }
  if (!(await reader.close())) throw new Error(`consumer ${reader.name} could not be deleted`);
  return entries;
}

/** keys: current keys (no deleted ones), from a headers-only last-per-subject reader. */
export async function listKeys(client: StateClient, bucket: string, filter = ">"): Promise<string[]> {
  const entries = await readOnce(client.reader(bucket, filter, { policy: "last_per_subject" }, { headersOnly: true }));
  return entries.filter((entry) => entry.operation === "put").map((entry) => entry.key);
}

/** history: every entry of one key, oldest first, deletes included. */
export async function keyHistory(client: StateClient, bucket: string, key: string): Promise<PulledMessage[]> {
  return readOnce(client.reader(bucket, key, { policy: "all" }));
}

/**
 * watch: the current values (as many as were pending at creation), then a live change made by `change`
 * (another client's put, resolving with its revision). The reader is left open for the caller to stop.
 */
export async function watchWithLiveUpdate(
  client: StateClient,
  bucket: string,
  change: () => Promise<number>,
  start: ReaderStart = { policy: "last_per_subject" },
): Promise<{ reader: ConsumerReader; initial: number; liveRevision: number }> {
  const reader = client.reader(bucket, ">", start);
  try {
    const initial = await takeAll(reader);
    const liveRevision = await change();
    for (let seen = false; !seen; ) {
      const batch = await reader.take();
      seen = batch.some((entry) => entry.revision === liveRevision);
    }
    return { reader, initial: initial.length, liveRevision };
  } catch (error) {
    await reader.close();
    throw error;
  }
}

const CONSUMER_NOT_FOUND = 10014;

/** Stops a watch as the runtime does (`close`: delete now), then confirms the server no longer knows it. */
export async function stopWatch(client: StateClient, bucket: string, reader: ConsumerReader): Promise<void> {
  if (!(await reader.close())) throw new Error(`consumer ${reader.name} could not be deleted`);
  const again = await client.jsm.consumers.delete(streamName(bucket), reader.name).then(
    () => "still there",
    (error: unknown) =>
      error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND ? "gone" : describeError(error),
  );
  if (again !== "gone") throw new Error(`consumer ${reader.name} after CONSUMER.DELETE: ${again}`);
}
