import { JETSTREAM_UNAVAILABLE_STATUS } from "@mesh/jetstream-calls";
import { isDeletionMarker } from "@mesh/manifest-schema";
import { type ConsumerInfo, JetStreamError, jetstream } from "@nats-io/jetstream";
import { type NatsConnection, nanos, nuid, PermissionViolationError } from "@nats-io/nats-core";
import { ApiRequestError, askAgainIfUnanswered, jetStreamRequest } from "./jsapi.js";

/**
 * One pass over a bucket's last entries: an ephemeral pull consumer on the bucket's stream, headers only, one
 * message per key (`last_per_subject`), no acks. It is created through the exact `CONSUMER.CREATE.<stream>`
 * (no durable can be made there, decision 0006) and deleted when the pass ends, whatever happened; its
 * inactivity threshold removes it anyway if the delete cannot be sent. The client's JsMsg gives each entry's
 * stream sequence and time, so no reply subject is parsed here.
 */

/** A key whose last entry is a deletion. */
export interface MarkerEntry {
  /** The full subject, `$KV.<bucket>.<key>`. */
  subject: string;
  /** The marker's stream sequence. */
  sequence: number;
  /** When the marker was stored, milliseconds since the epoch. */
  storedAtMs: number;
}

export interface MarkerScan {
  /** Keys (subjects) read: those the stream held when the scan began, less any that expired meanwhile. */
  keys: number;
  markers: MarkerEntry[];
}

/** The scan did not get every key it was promised within the timeout. */
export class IncompleteScan extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "IncompleteScan";
  }
}

const SCAN_BATCH = 256;
/** Pulls in a row that reached no one (503) or heard nothing (heartbeats missed) before the scan gives up. */
const EMPTY_PULLS_TRIED = 3;
const EMPTY_PULL_PAUSE_MS = 100;
/** The server removes a scan consumer left behind after this long (it is deleted at once when all goes well). */
const SCAN_INACTIVE_MS = 30_000;
export const SCAN_CONSUMER_PREFIX = "compact_";

export async function scanMarkers(
  connection: NatsConnection,
  stream: string,
  bucket: string,
  timeoutMs: number,
): Promise<MarkerScan> {
  const name = `${SCAN_CONSUMER_PREFIX}${nuid.next()}`;
  const config = {
    name,
    filter_subject: `$KV.${bucket}.>`,
    deliver_policy: "last_per_subject",
    ack_policy: "none",
    headers_only: true,
    mem_storage: true,
    inactive_threshold: nanos(SCAN_INACTIVE_MS),
  };
  const created = (await askAgainIfUnanswered(
    connection,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    { stream_name: stream, config },
    timeoutMs,
  )) as unknown as ConsumerInfo;
  const pulls = `$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`;
  const refusals = watchRefusals(connection, pulls);
  try {
    return await readAll(connection, created, timeoutMs, refusals.seen);
  } catch (error) {
    // A refused pull reaches the connection's status, not the fetch, which only sees no answer.
    if (refusals.seen()) throw new ApiRequestError("denied", `${pulls}: permission denied`, error);
    throw error;
  } finally {
    refusals.stop();
    await jetStreamRequest(connection, `$JS.API.CONSUMER.DELETE.${stream}.${name}`, {}, timeoutMs);
  }
}

async function readAll(
  connection: NatsConnection,
  created: ConsumerInfo,
  timeoutMs: number,
  refused: () => boolean,
): Promise<MarkerScan> {
  // The keys there at creation: a write meanwhile comes after them, and is newer than any cut. The scan also
  // ends at a message after which the server counts nothing pending: keys that expired meanwhile (a ttl) are
  // not waited for.
  const promised = created.num_pending;
  const consumer = jetstream(connection, { timeout: timeoutMs }).consumers.getConsumerFromInfo(created);
  const markers: MarkerEntry[] = [];
  let taken = 0;
  let drained = promised === 0;
  let emptyPulls = 0;
  while (!drained && taken < promised) {
    let got = 0;
    let failure: unknown;
    try {
      const max = Math.min(SCAN_BATCH, promised - taken);
      for await (const message of await consumer.fetch({ max_messages: max, expires: Math.max(timeoutMs, 1_000) })) {
        got += 1;
        if (isDeletionMarker(message.headers)) {
          markers.push({ subject: message.subject, sequence: message.seq, storedAtMs: message.time.getTime() });
        }
        if (message.info.pending === 0) {
          drained = true;
          break;
        }
      }
    } catch (error) {
      failure = error;
    }
    const again = got === 0 && failure !== undefined && !refused() && emptyPulls < EMPTY_PULLS_TRIED;
    if (again && pulledFromNoOne(failure)) {
      // A consumer just made on a replicated stream may not yet be served where the pull went: nothing was
      // delivered (no acks are kept, so nothing is skipped), and the same pull is sent again after a pause.
      emptyPulls += 1;
      await new Promise((resolve) => setTimeout(resolve, EMPTY_PULL_PAUSE_MS * emptyPulls));
      continue;
    }
    if (got === 0) {
      const why = failure instanceof Error ? failure.message : `nothing within ${timeoutMs} ms`;
      throw new IncompleteScan(
        `the scan of ${created.stream_name} got ${taken} of ${promised} keys, then ${why}`,
        failure === undefined ? undefined : { cause: failure },
      );
    }
    taken += got;
    emptyPulls = 0;
  }
  return { keys: taken, markers };
}

/**
 * Whether the server refused a publish to `subject` on this connection while the scan ran: a pull is a plain
 * publish, so its refusal arrives as a status of the connection.
 */
function watchRefusals(connection: NatsConnection, subject: string): { seen(): boolean; stop(): void } {
  const statuses = connection.status();
  let seen = false;
  void (async () => {
    for await (const status of statuses) {
      if (status.type !== "error" || !(status.error instanceof PermissionViolationError)) continue;
      if (status.error.subject === subject) seen = true;
    }
  })().catch(() => undefined);
  // The client's status iterator has a stop() that also unregisters it; the type does not show it.
  return { seen: () => seen, stop: () => (statuses as { stop?: () => void }).stop?.() };
}

/**
 * A pull that got nothing because no server served the consumer yet: the client's status error with 503, or its
 * own "heartbeats missed" (a JetStreamError with no status code: nothing at all was heard on the pull).
 */
function pulledFromNoOne(failure: unknown): boolean {
  if (!(failure instanceof JetStreamError)) return false;
  const { code } = failure as { code?: unknown };
  return code === undefined || code === JETSTREAM_UNAVAILABLE_STATUS;
}
