import {
  askAgainIfUnanswered,
  classifyJetStreamError,
  isApiError,
  JETSTREAM_CODES,
  NO_RESPONDERS_BUDGET_MS,
  sendAgainIfNoResponders,
  systemClock,
} from "@mesh/jetstream-calls";
import { isDeletionMarker, KV_OPERATION_HEADER, streamName } from "@mesh/manifest-schema";
import type { WireEntry as Entry } from "@mesh/state-protocol";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { DEFAULT_LIMITS } from "../limits.js";
import { decodeValue, EntryAnswer } from "../wire/stored-json.js";
import { NotConsistent, WrongRevision } from "./errors.js";
import { ReadFloor } from "./read-floor.js";
import {
  type DirectMessage,
  directGetLastReply,
  directMessageOf,
  leaderGetLastReply,
  leaderMessageOf,
  publishToStream,
} from "./requests.js";

/**
 * Get, put and delete on one bucket, on exactly the subjects the machine's grant allows: a direct get
 * in its subject form (`$JS.API.DIRECT.GET.KV_B.$KV.B.<key>`) and publishes to `$KV.B.<key>`.
 * Both go through the runtime's own requests (requests.ts), whose errors are the client's classes; the service
 * maps them to reasons. Reads at `session` and `strong` (docs/decisions/0011-read-consistency.md) also ask the
 * stream's leader, `$JS.API.STREAM.MSG.GET.KV_B`, checked against the floor of what this client wrote and read.
 */

/** What the stream holds for a key: a value or a delete marker (`DEL` or `PURGE`). */
export type StoredEntry =
  | (Entry & { deleted: false })
  | { key: string; revision: number; updated: string; deleted: true };

const EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";
const ROLLUP_HEADER = "Nats-Rollup";
const MESSAGE_TTL_HEADER = "Nats-TTL";

const UTC_TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/**
 * A stored message's time (`Nats-Time-Stamp`, RFC 3339 in UTC with up to nanoseconds) as `Date#toISOString`
 * gives it, milliseconds and all, without building a Date per read: the text is cut, not parsed.
 */
export function isoMillis(timestamp: string): string {
  const match = UTC_TIMESTAMP.exec(timestamp);
  if (match === null) return new Date(Date.parse(timestamp)).toISOString();
  return `${match[1]}.${(match[2] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
}

function storedEntryOf(key: string, message: DirectMessage | null): StoredEntry | null {
  if (message === null) return null;
  const updated = isoMillis(message.timestamp);
  if (isDeletionMarker(message.header)) return { key, revision: message.seq, updated, deleted: true };
  return {
    key,
    value: decodeValue(message.data) as Entry["value"],
    revision: message.seq,
    updated,
    deleted: false,
  };
}

/** The get verb's answer for a key's last message: `null` when absent or deleted. */
function answerOf(key: string, message: DirectMessage | null): EntryAnswer | null {
  return message === null || isDeletionMarker(message.header)
    ? null
    : new EntryAnswer(key, message.data, message.seq, isoMillis(message.timestamp));
}

export interface BucketClientOptions {
  /** How long a get, put or delete waits for its answer (`requestTimeoutMs`). */
  timeoutMs?: number;
  /** How long a write that found no responder is tried again (`NO_RESPONDERS_BUDGET_MS`; 0: never). */
  noRespondersRetryMs?: number;
  /** Called before each such retry, with the attempt that failed (1 for the first). */
  onNoResponders?: (attempt: number) => void;
  /** The issued bucket's `forgetDeletes.afterSeconds`: a delete's marker then expires after that long. */
  forgetDeletesAfterSeconds?: number;
  /** The read floor's bounds (`FLOOR_EXACT_KEYS`, `FLOOR_SKETCH_SLOTS` when absent). */
  floor?: { exactKeys: number; sketchSlots: number };
}

export class BucketClient {
  readonly bucket: string;
  readonly stream: string;
  private readonly connection: NatsConnection;
  private readonly timeoutMs: number;
  private readonly noRespondersRetryMs: number;
  private readonly onNoResponders: ((attempt: number) => void) | undefined;
  private readonly forgetDeletesAfterSeconds: number | undefined;
  /** What this client wrote and read of each key, bounded: what a `session` read must reach. */
  readonly floor: ReadFloor;

  constructor(bucket: string, connection: NatsConnection, options: BucketClientOptions = {}) {
    this.bucket = bucket;
    this.stream = streamName(bucket);
    this.connection = connection;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs;
    this.noRespondersRetryMs = options.noRespondersRetryMs ?? NO_RESPONDERS_BUDGET_MS;
    this.onNoResponders = options.onNoResponders;
    this.forgetDeletesAfterSeconds = options.forgetDeletesAfterSeconds;
    this.floor = new ReadFloor(options.floor?.exactKeys, options.floor?.sketchSlots);
  }

  subject(key: string): string {
    return `$KV.${this.bucket}.${key}`;
  }

  /** The last message of a key, value or delete marker; `null` when the key never existed (or was purged away). */
  read(key: string): Promise<StoredEntry | null> {
    return this.lastMessage(key, (message) => storedEntryOf(key, message));
  }

  /** `read` from the stream's leader: reflects every write acknowledged before it was asked. */
  readFromLeader(key: string): Promise<StoredEntry | null> {
    return this.leaderMessage(key, (message) => {
      this.floor.settle(key, message?.seq ?? 0);
      return storedEntryOf(key, message);
    });
  }

  /** The get verb's answer: the key's entry, `null` when absent or deleted. */
  readAnswer(key: string): Promise<EntryAnswer | null> {
    return this.lastMessage(key, (message) =>
      message === null || isDeletionMarker(message.header)
        ? null
        : new EntryAnswer(key, message.data, message.seq, isoMillis(message.timestamp)),
    );
  }

  /**
   * The get verb's answer at `session`: a direct get, as `readAnswer`, whose revision (0 when absent) is checked
   * against the floor of what this client wrote and read of the key; older, the key is read again from the
   * stream's leader. Either answer raises the floor.
   */
  readAnswerSession(key: string): Promise<EntryAnswer | null> {
    const floor = this.floor.of(key);
    // A promise returned by `read` is followed by the one `then` it runs in: typed as the answer it resolves to.
    return this.lastMessage(key, (message): EntryAnswer | null | Promise<EntryAnswer | null> => {
      const revision = message?.seq ?? 0;
      // Behind what this bundle wrote or saw: a lagging replica answered. Returned as is, the promise adds no layer.
      if (revision < floor) return this.readAnswerStrong(key);
      if (revision > 0) this.floor.settle(key, revision);
      return answerOf(key, message);
    }) as Promise<EntryAnswer | null>;
  }

  /**
   * The get verb's answer at `strong`: from the stream's leader. An answer older than the floor can only come from
   * a leader that lost its place without knowing it yet (paused, or cut off from its peers, while another was
   * elected and took writes): `NotConsistent`, never returned. Only an exact floor refuses (a sketch's may be too
   * high); "no message" is taken as it is (the key's messages were removed: compaction, an expired marker).
   */
  readAnswerStrong(key: string): Promise<EntryAnswer | null> {
    const floor = this.floor.exactOf(key);
    return this.leaderMessage(key, (message) => {
      if (message !== null) {
        if (message.seq < floor) {
          throw new NotConsistent(
            `the leader of stream ${this.stream} answered revision ${message.seq} of the key, older than revision ${floor} this bundle wrote or saw (a former leader that has not stepped down yet)`,
          );
        }
        this.floor.settle(key, message.seq);
      }
      return answerOf(key, message);
    });
  }

  /**
   * The last revision whose key matches `filter` (wildcards allowed), delete markers included, as the stream's
   * leader has it: 0 when none. A keys, history or watch snapshot at `session` or `strong` ends at or after it.
   */
  lastRevisionFromLeader(filter: string): Promise<number> {
    return this.lastFromLeader(this.subject(filter), (message) => message?.seq ?? 0);
  }

  /** `lastMessage`, from the stream's leader. */
  private leaderMessage<T>(key: string, read: (message: DirectMessage | null) => T): Promise<T> {
    const subject = this.subject(key);
    return this.lastFromLeader(subject, (message) =>
      read(message === null || message.subject !== subject ? null : message),
    );
  }

  /**
   * `lastMatching`, asked of the stream's leader with the same retries and deadline. A leader that cannot be had
   * in time (none: one is being elected, or this server is cut off from it) is `NotConsistent`, never a fallback
   * to a replica's answer.
   */
  private lastFromLeader<T>(subject: string, read: (message: DirectMessage | null) => T): Promise<T> {
    const ask = (timeoutMs: number) => leaderGetLastReply(this.connection, this.stream, subject, timeoutMs);
    return askAgainIfUnanswered(ask, this.timeoutMs, systemClock, (reply) => read(leaderMessageOf(reply))).catch(
      (error: unknown) => {
        const failure = classifyJetStreamError(error);
        const noLeader =
          failure.kind === "timeout" ||
          failure.kind === "connection-closed" ||
          failure.kind === "no-responders" ||
          (failure.kind === "api-error" && failure.code === JETSTREAM_CODES.clusterNotAvailable);
        if (!noLeader) throw error;
        throw new NotConsistent(
          `the leader of stream ${this.stream} did not answer within ${this.timeoutMs} ms (none known: one is being elected, or this server is cut off from it)`,
        );
      },
    );
  }

  /**
   * The key's last message (`null` when there is none), read by `read` in the same step as the retry is
   * decided: one promise layer between NATS and the caller's result.
   */
  private lastMessage<T>(key: string, read: (message: DirectMessage | null) => T): Promise<T> {
    const subject = this.subject(key);
    return this.lastMatching(subject, (message) =>
      read(message === null || message.subject !== subject ? null : message),
    );
  }

  /**
   * The last revision whose key matches `filter` (a key or a filter with wildcards), delete markers included:
   * 0 when the bucket holds none. A direct get in its subject form, which takes wildcards (nats-server 2.10.27,
   * 2.12.15 and 2.15.3 answer the last matching message).
   */
  lastRevisionMatching(filter: string): Promise<number> {
    return this.lastMatching(this.subject(filter), (message) => message?.seq ?? 0);
  }

  /** The last message on `subject` (wildcards allowed), asked again if unanswered, read by `read`. */
  private lastMatching<T>(subject: string, read: (message: DirectMessage | null) => T): Promise<T> {
    const ask = (timeoutMs: number) => directGetLastReply(this.connection, this.stream, subject, timeoutMs);
    return askAgainIfUnanswered(ask, this.timeoutMs, systemClock, (reply) => read(directMessageOf(reply)));
  }

  /** The key's last revision as a writer must name it: 0 when absent or deleted. */
  async currentRevision(key: string): Promise<number> {
    // A conflict names the revision to write against next: the leader's, which refused the write, not a lagging replica's.
    const entry = await this.readFromLeader(key);
    return entry === null || entry.deleted ? 0 : entry.revision;
  }

  /**
   * Writes a value. `revision` undefined: unconditional; 0: only if absent (a deleted key is absent:
   * the write then names the delete marker's revision, as `kv.create` does); n: only if n is the last.
   * Throws `WrongRevision` when the condition fails.
   */
  async put(key: string, value: unknown, revision?: number): Promise<number> {
    return this.putEncoded(key, Buffer.from(JSON.stringify(value)), revision);
  }

  /** The put verb's answer: `putEncoded`'s revision. */
  putAnswer(key: string, data: Uint8Array, revision?: number): Promise<{ revision: number }> {
    return this.putEncoded(key, data, revision).then((stored) => ({ revision: stored }));
  }

  /** `put` of a value the caller has encoded already (UTF-8 JSON text), so it is encoded once. */
  async putEncoded(key: string, data: Uint8Array, revision?: number): Promise<number> {
    if (revision !== 0) return this.publish(key, data, revision);
    try {
      return await this.publish(key, data, 0);
    } catch (error) {
      if (!(error instanceof WrongRevision)) throw error;
      // From the leader, which refused the write: a replica behind a delete still shows the value before it, and
      // the create would be refused as a conflict (the fault suite's seed 2 caught it).
      const entry = await this.readFromLeader(key);
      if (entry === null || !entry.deleted) throw new WrongRevision(entry?.revision ?? 0);
      return this.publish(key, data, entry.revision);
    }
  }

  /**
   * Writes a delete marker; `revision` as in `put` (0: only if the key never had a message). In a bucket issued
   * `forgetDeletes` the marker is a `PURGE` that rolls up the key's older values and expires by its own ttl
   * (decision 0009): an expiring `DEL` would bring the older value back.
   */
  async delete(key: string, revision?: number): Promise<void> {
    const header = headers();
    if (this.forgetDeletesAfterSeconds === undefined) header.set(KV_OPERATION_HEADER, "DEL");
    else {
      header.set(KV_OPERATION_HEADER, "PURGE");
      header.set(ROLLUP_HEADER, "sub");
      header.set(MESSAGE_TTL_HEADER, `${this.forgetDeletesAfterSeconds}s`); // a Go duration: `30d` is refused
    }
    await this.publish(key, new Uint8Array(0), revision, header);
  }

  private async publish(
    key: string,
    data: Uint8Array,
    revision: number | undefined,
    given?: ReturnType<typeof headers>,
  ): Promise<number> {
    // An unconditional put needs no header: a publish without one is encoded and parsed with less work.
    let header = given;
    if (revision !== undefined) {
      header ??= headers();
      header.set(EXPECTED_LAST_SUBJECT_SEQUENCE, `${revision}`);
    }
    try {
      const revision = await this.publishUntilAnswered(this.subject(key), data, header);
      this.floor.settle(key, revision);
      return revision;
    } catch (error) {
      if (isApiError(error, JETSTREAM_CODES.wrongLastSequence, JETSTREAM_CODES.wrongLastSequenceUnknown)) {
        throw new WrongRevision(await this.currentRevision(key));
      }
      throw error;
    }
  }

  /** Publishes, sending again while no server answers for the stream (nothing stored), within the budget. */
  private publishUntilAnswered(subject: string, data: Uint8Array, header?: ReturnType<typeof headers>) {
    const send = () => publishToStream(this.connection, subject, data, { timeoutMs: this.timeoutMs, headers: header });
    return sendAgainIfNoResponders(send, this.noRespondersRetryMs, this.onNoResponders, systemClock);
  }
}
