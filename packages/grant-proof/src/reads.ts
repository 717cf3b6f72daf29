import { streamName } from "@mesh/manifest-schema";
import { AckPolicy, type ConsumerInfo, DeliverPolicy, JetStreamApiError } from "@nats-io/jetstream";
import { createInbox, type Msg, nanos, nuid } from "@nats-io/nats-core";
import { describeError, type Entry, entryOf, keySubject, type StateClient } from "./operations.js";

/**
 * Reads as runtime-state makes them: ephemeral pull consumers with a name and one filter, pulled with raw
 * MSG.NEXT requests answered to the machine's own inbox, deleted when done.
 */

/** An ephemeral pull consumer as the runtime makes one: `pending` is what it held when created. */
export interface ReadConsumer {
  readonly stream: string;
  readonly name: string;
  readonly pending: number;
  /** Takes exactly `count` entries; fails when the server delivers nothing within the deadline. */
  take(count: number): Promise<Entry[]>;
  /** Takes entries until one satisfies `done`. */
  takeUntil(done: (entry: Entry) => boolean): Promise<Entry[]>;
  /** Drops the inbox subscription (the consumer stays until deleted). */
  unsubscribe(): void;
}

export interface ReadConsumerSpec {
  /** A key, or a filter with wildcards; `>` for the whole bucket. */
  filter: string;
  deliver: "last_per_subject" | "all";
  headersOnly?: boolean;
}

/** The runtime's inactivity threshold: a consumer whose runtime died goes away in 30 s. */
export const CONSUMER_INACTIVE_THRESHOLD_MS = 30_000;
const BATCH = 256;

/**
 * Creates the consumer (`CONSUMER.CREATE.<stream>.<name>.<filter>`) and reads it with raw pull requests
 * (`CONSUMER.MSG.NEXT.<stream>.<name>`) answered to the machine's own inbox — what runtime-state's reader
 * does; no CONSUMER.INFO, no push delivery, no flow control, no acks.
 */
export async function openReadConsumer(
  client: StateClient,
  bucket: string,
  spec: ReadConsumerSpec,
): Promise<ReadConsumer> {
  const stream = streamName(bucket);
  const name = `proof_${nuid.next()}`;
  const inbox = createInbox(client.inboxPrefix);
  const pulled = new PullQueue();
  const subscription = client.nc.subscribe(inbox, { callback: (_error, message) => pulled.push(message) });
  let info: ConsumerInfo;
  try {
    info = await client.jsm.consumers.add(stream, {
      name,
      filter_subject: keySubject(bucket, spec.filter),
      ack_policy: AckPolicy.None,
      deliver_policy: spec.deliver === "all" ? DeliverPolicy.All : DeliverPolicy.LastPerSubject,
      inactive_threshold: nanos(CONSUMER_INACTIVE_THRESHOLD_MS),
      mem_storage: true,
      ...(spec.headersOnly ? { headers_only: true } : {}),
    });
  } catch (error) {
    subscription.unsubscribe();
    throw error;
  }
  /** One pull request of up to `max` messages; resolves with what arrived before it ended or expired. */
  const pull = async (max: number): Promise<Entry[]> => {
    const request = { batch: max, expires: nanos(client.timeoutMs) };
    client.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`, JSON.stringify(request), { reply: inbox });
    const out: Entry[] = [];
    const deadline = Date.now() + client.timeoutMs + 500;
    while (out.length < max) {
      const message = await pulled.next(deadline - Date.now());
      if (!message || (message.headers?.code ?? 0) >= 400) break; // expired (408), or no reply at all
      if ((message.headers?.code ?? 0) > 0) continue; // a heartbeat or another status: not an entry
      const sequence = streamSequenceOf(message.reply ?? "");
      out.push(
        entryOf(
          bucket,
          message.subject,
          sequence,
          message.headers?.get("KV-Operation") || undefined,
          message.data.length,
        ),
      );
    }
    return out;
  };
  return {
    stream,
    name,
    pending: info.num_pending,
    async take(count) {
      const out: Entry[] = [];
      while (out.length < count) {
        const batch = await pull(Math.min(BATCH, count - out.length));
        if (batch.length === 0)
          throw new Error(
            `${name} delivered ${out.length} of ${count} entries, then nothing for ${client.timeoutMs} ms`,
          );
        out.push(...batch);
      }
      return out;
    },
    async takeUntil(done) {
      const out: Entry[] = [];
      for (;;) {
        const batch = await pull(1);
        if (batch.length === 0) throw new Error(`${name} delivered nothing for ${client.timeoutMs} ms`);
        out.push(...batch);
        if (batch.some(done)) return out;
      }
    },
    unsubscribe: () => subscription.unsubscribe(),
  };
}

/** The stream sequence (the revision) in a `$JS.ACK.…` reply: 9 tokens, or 12+ with domain and account hash. */
function streamSequenceOf(reply: string): number {
  const tokens = reply.split(".");
  return Number(tokens[tokens.length === 9 ? 5 : 7]);
}

/** Messages of one inbox, handed to one waiting reader at a time. */
class PullQueue {
  private readonly messages: Msg[] = [];
  private waiter: ((message: Msg | undefined) => void) | undefined;

  push(message: Msg): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(message);
    } else this.messages.push(message);
  }

  /** The next message, or `undefined` when none arrives within `timeoutMs`. */
  next(timeoutMs: number): Promise<Msg | undefined> {
    const queued = this.messages.shift();
    if (queued) return Promise.resolve(queued);
    if (timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.waiter = (message) => {
        clearTimeout(timer);
        resolve(message);
      };
    });
  }
}

/** Deletes the consumer and confirms the server no longer knows it (a second delete finds nothing). */
export async function deleteConsumer(client: StateClient, stream: string, name: string): Promise<void> {
  await client.jsm.consumers.delete(stream, name);
  const again = await client.jsm.consumers.delete(stream, name).then(
    () => "still there",
    (error: unknown) =>
      error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND ? "gone" : describeError(error),
  );
  if (again !== "gone") throw new Error(`consumer ${name} after CONSUMER.DELETE: ${again}`);
}

const CONSUMER_NOT_FOUND = 10014;

/** keys: current keys (no deleted ones), from a headers-only last-per-subject consumer, deleted after. */
export async function listKeys(client: StateClient, bucket: string): Promise<string[]> {
  const reader = await openReadConsumer(client, bucket, {
    filter: ">",
    deliver: "last_per_subject",
    headersOnly: true,
  });
  try {
    const entries = await reader.take(reader.pending);
    return entries.filter((entry) => entry.operation === "PUT").map((entry) => entry.key);
  } finally {
    reader.unsubscribe();
    await deleteConsumer(client, reader.stream, reader.name).catch(() => undefined);
  }
}

/** history: every entry of one key, oldest first, deletes included; the consumer is deleted after. */
export async function keyHistory(client: StateClient, bucket: string, key: string): Promise<Entry[]> {
  const reader = await openReadConsumer(client, bucket, { filter: key, deliver: "all" });
  try {
    return await reader.take(reader.pending);
  } finally {
    reader.unsubscribe();
    await deleteConsumer(client, reader.stream, reader.name).catch(() => undefined);
  }
}

/**
 * watch: the current values (as many as were pending at creation — where `current` falls), then a live
 * change made by `change` (another client's put, resolving with its revision). The consumer is left for
 * the caller to delete: stopping a watch is an operation of its own.
 */
export async function watchWithLiveUpdate(
  client: StateClient,
  bucket: string,
  change: () => Promise<number>,
): Promise<{ consumer: ReadConsumer; initial: number; liveRevision: number }> {
  const consumer = await openReadConsumer(client, bucket, { filter: ">", deliver: "last_per_subject" });
  try {
    const initial = await consumer.take(consumer.pending);
    const liveRevision = await change();
    await consumer.takeUntil((entry) => entry.revision === liveRevision);
    return { consumer, initial: initial.length, liveRevision };
  } finally {
    consumer.unsubscribe();
  }
}
