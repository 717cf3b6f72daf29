import { streamName } from "@mesh/manifest-schema";
import type { Entry } from "@mesh/state-protocol";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/nats-core";
import { isApiError, isNoResponders, JETSTREAM_CODES } from "./nats-failures.js";

/**
 * Get, put and delete on one bucket, on exactly the subjects the machine's grant allows: a direct get
 * in its subject form (`$JS.API.DIRECT.GET.KV_B.$KV.B.<key>`) and publishes to `$KV.B.<key>`.
 * Errors are the client's; the service maps them to reasons.
 */

/** What the stream holds for a key: a value or a delete marker (`DEL` or `PURGE`). */
export type StoredEntry =
  | (Entry & { deleted: false })
  | { key: string; revision: number; updated: string; deleted: true };

const OPERATION_HEADER = "KV-Operation";
const EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Values are stored as JSON text; anything else (written by another client) reads as its text. */
export function decodeValue(data: Uint8Array): unknown {
  const text = decoder.decode(data);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

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

function isDeleteOperation(operation: string | undefined): boolean {
  return operation === "DEL" || operation === "PURGE";
}

/**
 * The server's own delete marker: from nats-server 2.11, a bucket with subject delete markers stores one,
 * with `Nats-Marker-Reason: MaxAge` (or `Purge`, `Remove`) and no `KV-Operation`, when a key's last value
 * expires by the bucket's ttl. It reads as a delete, never as a value.
 */
const MARKER_REASON_HEADER = "Nats-Marker-Reason";

/** Whether a stored message is a deletion: a `DEL`/`PURGE` written by a client, or a server's delete marker. */
export function isDeletion(header: { get(name: string): string; has(name: string): boolean } | undefined): boolean {
  if (header === undefined) return false;
  return isDeleteOperation(header.get(OPERATION_HEADER)) || header.has(MARKER_REASON_HEADER);
}

/** The outcome of a conditional write whose revision was not the last one. */
export class WrongRevision extends Error {
  readonly currentRevision: number;
  constructor(currentRevision: number) {
    super(`the last revision is ${currentRevision}`);
    this.name = "WrongRevision";
    this.currentRevision = currentRevision;
  }
}

/**
 * How long a write that found no responder is tried again. Just after a replicated bucket is created, or
 * while its stream elects a leader, the server a machine is connected to may not yet know who stores
 * `$KV.B.>`; the publish then finds no responder and nothing is stored, so sending it again is safe (a
 * timeout is never retried: that write may have been stored).
 */
export const NO_RESPONDERS_RETRY_MS = 2_000;
const NO_RESPONDERS_FIRST_PAUSE_MS = 20;
const NO_RESPONDERS_MAX_PAUSE_MS = 250;

export interface BucketClientOptions {
  /** How long a write that found no responder is tried again (`NO_RESPONDERS_RETRY_MS`; 0: never). */
  noRespondersRetryMs?: number;
  /** Called before each such retry, with the attempt that failed (1 for the first). */
  onNoResponders?: (attempt: number) => void;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class BucketClient {
  readonly bucket: string;
  readonly stream: string;
  private readonly js: JetStreamClient;
  /** The manager, or the promise of it until it resolves (made without a request: `checkAPI: false`). */
  private jsm: JetStreamManager | Promise<JetStreamManager>;
  private readonly noRespondersRetryMs: number;
  private readonly onNoResponders: ((attempt: number) => void) | undefined;

  constructor(
    bucket: string,
    js: JetStreamClient,
    jsm: JetStreamManager | Promise<JetStreamManager>,
    options: BucketClientOptions = {},
  ) {
    this.bucket = bucket;
    this.stream = streamName(bucket);
    this.js = js;
    this.jsm = jsm;
    if (jsm instanceof Promise) {
      jsm.then(
        (resolved) => {
          this.jsm = resolved;
        },
        () => undefined,
      );
    }
    this.noRespondersRetryMs = options.noRespondersRetryMs ?? NO_RESPONDERS_RETRY_MS;
    this.onNoResponders = options.onNoResponders;
  }

  subject(key: string): string {
    return `$KV.${this.bucket}.${key}`;
  }

  /** The last message of a key, value or delete marker; `null` when the key never existed (or was purged away). */
  async read(key: string): Promise<StoredEntry | null> {
    const message = await this.lastMessage(key);
    if (message === null) return null;
    const updated = isoMillis(message.timestamp);
    if (isDeletion(message.header)) {
      return { key, revision: message.seq, updated, deleted: true };
    }
    return { key, value: decodeValue(message.data) as Entry["value"], revision: message.seq, updated, deleted: false };
  }

  /** The get verb's answer: the key's entry, `null` when absent or deleted. */
  readAnswer(key: string): Promise<Entry | null> {
    return this.lastMessage(key).then((message) => {
      if (message === null || isDeletion(message.header)) return null;
      const value = decodeValue(message.data) as Entry["value"];
      return { key, value, revision: message.seq, updated: isoMillis(message.timestamp) };
    });
  }

  private lastMessage(key: string) {
    const subject = this.subject(key);
    const ask = (jsm: JetStreamManager) =>
      jsm.direct
        .getMessage(this.stream, { last_by_subj: subject })
        .then((message) => (message === null || message.subject !== subject ? null : message));
    return this.jsm instanceof Promise ? this.jsm.then(ask) : ask(this.jsm);
  }

  /** The key's last revision as a writer must name it: 0 when absent or deleted. */
  async currentRevision(key: string): Promise<number> {
    const entry = await this.read(key);
    return entry === null || entry.deleted ? 0 : entry.revision;
  }

  /**
   * Writes a value. `revision` undefined: unconditional; 0: only if absent (a deleted key is absent:
   * the write then names the delete marker's revision, as `kv.create` does); n: only if n is the last.
   * Throws `WrongRevision` when the condition fails.
   */
  async put(key: string, value: unknown, revision?: number): Promise<number> {
    return this.putEncoded(key, encoder.encode(JSON.stringify(value)), revision);
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
      const entry = await this.read(key);
      if (entry === null || !entry.deleted) throw new WrongRevision(entry?.revision ?? 0);
      return this.publish(key, data, entry.revision);
    }
  }

  /** Writes a delete marker; `revision` as in `put` (0: only if the key never had a message). */
  async delete(key: string, revision?: number): Promise<void> {
    const header = headers();
    header.set(OPERATION_HEADER, "DEL");
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
      const ack = await this.publishUntilAnswered(this.subject(key), data, header);
      return ack.seq;
    } catch (error) {
      if (isApiError(error, JETSTREAM_CODES.wrongLastSequence, JETSTREAM_CODES.wrongLastSequenceUnknown)) {
        throw new WrongRevision(await this.currentRevision(key));
      }
      throw error;
    }
  }

  /** Publishes, sending again while no server answers for the stream (nothing stored), within the budget. */
  private async publishUntilAnswered(subject: string, data: Uint8Array, header?: ReturnType<typeof headers>) {
    const deadline = Date.now() + this.noRespondersRetryMs;
    let pauseMs = NO_RESPONDERS_FIRST_PAUSE_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.js.publish(subject, data, header === undefined ? undefined : { headers: header });
      } catch (error) {
        if (!isNoResponders(error) || Date.now() + pauseMs > deadline) throw error;
        this.onNoResponders?.(attempt);
        await pause(pauseMs);
        pauseMs = Math.min(pauseMs * 2, NO_RESPONDERS_MAX_PAUSE_MS);
      }
    }
  }
}
