import {
  askAgainIfUnanswered,
  isApiError,
  JETSTREAM_CODES,
  NO_RESPONDERS_BUDGET_MS,
  noRespondersPause,
  sendAgainIfNoResponders,
} from "@mesh/jetstream-calls";
import { isDeletionMarker } from "@mesh/manifest-schema";
import type { ConsumerConfig, ConsumerInfo, JetStreamManager } from "@nats-io/jetstream";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { createInbox, type Msg, type NatsConnection, nanos, nuid, type Subscription } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { Clock, StateLimits } from "../types.js";
import { ConsumerLost } from "./errors.js";
import { jetStreamAnswer } from "./requests.js";

/**
 * One ephemeral pull consumer on a bucket, read in bounded batches with raw pull requests
 * (`$JS.API.CONSUMER.MSG.NEXT.KV_B.<name>`): no push consumer, no flow control, no acks. The reader
 * notices a lost consumer itself — a 409 "Consumer Deleted", a 503, two missed idle heartbeats, a gap in
 * delivery sequences — and reports it as `ConsumerLost`; the caller decides how to resume.
 */

export interface PulledMessage {
  key: string;
  /** The stream sequence: the entry's revision. */
  revision: number;
  operation: "put" | "delete";
  data: Uint8Array;
  updated: string;
  /** Messages the consumer still had to deliver after this one, as the server counted them. */
  pending: number;
}

export type ReaderStart =
  | { policy: "last_per_subject" }
  | { policy: "all" }
  | { policy: "by_start_sequence"; startSequence: number };

export interface ReaderOptions {
  connection: NatsConnection;
  jsm: JetStreamManager;
  inboxPrefix: string;
  stream: string;
  bucket: string;
  /** A key or a filter with wildcards, without the `$KV.<bucket>.` prefix. */
  filter: string;
  start: ReaderStart;
  headersOnly?: boolean;
  limits: StateLimits;
  clock: Clock;
  /**
   * How long a create or a pull that found no responder is sent again (`NO_RESPONDERS_BUDGET_MS`; 0: never). A
   * fresh R3 stream or consumer is not yet served on every server: the request reached no one, nothing was made
   * or delivered, so sending it again is safe; after the budget the create fails and the pull is a lost consumer.
   */
  noRespondersRetryMs?: number;
  /** Called before each such retry, with the attempt that failed (1 for the first). */
  onNoResponders?: (attempt: number) => void;
  /**
   * Where the consumer's create and delete are told (debug), with its name as the server lists it, and a delete NATS
   * refused or did not answer; silent when absent.
   */
  logger?: Logger;
}

const STATUS_HEARTBEAT = 100;
/** On a status that ends a pull: how many messages that pull still had to deliver. */
const PENDING_MESSAGES_HEADER = "Nats-Pending-Messages";

/** Readers made so far in this process: orders a reader against a connection drop (`readersMadeSoFar`). */
let readersMade = 0;

/** How many readers this process has made: taken at a drop, it tells the readers made before it from those after. */
export function readersMadeSoFar(): number {
  return readersMade;
}

export class ConsumerReader {
  readonly name = `rs_${nuid.next()}`;
  /** This reader's place in the order readers were made (1 for the first). */
  readonly serial = ++readersMade;
  /** Messages the consumer had to deliver when it was created. */
  numPendingAtCreate = 0;
  private readonly options: ReaderOptions;
  private readonly prefix: string;
  private subscription: Subscription | undefined;
  private inbox = "";
  private buffer: PulledMessage[] = [];
  private lastDeliverySequence = 0;
  private lastRevisionTaken = 0;
  /** Credits left in the open pull request; 0 when none is open. */
  private credits = 0;
  private requestEnded = false;
  private lost: ConsumerLost | undefined;
  private wake: (() => void) | undefined;
  private watchdog: unknown;
  /** When the server last sent anything on the open pull (a message or a heartbeat). */
  private lastHeard = 0;
  private lastTime = { ms: Number.NaN, iso: "" };
  private closed = false;
  /** The create being asked, until it is answered or given up: `close` waits for it before the delete. */
  private creating: Promise<unknown> | undefined;
  /** Pulls in a row that found no responder, when the first of them did, and the timer of the next. */
  private unanswered: { attempts: number; sinceMs: number; timer?: unknown } | undefined;

  constructor(options: ReaderOptions) {
    this.options = options;
    this.prefix = `$KV.${options.bucket}.`;
  }

  /** Creates the consumer and its inbox subscription; resolves with the server's pending count. */
  async open(): Promise<number> {
    const { stream, start, limits } = this.options;
    const config: Partial<ConsumerConfig> = {
      name: this.name,
      filter_subject: this.prefix + this.options.filter,
      ack_policy: AckPolicy.None,
      mem_storage: true,
      inactive_threshold: nanos(limits.consumerInactiveMs),
      headers_only: this.options.headersOnly === true ? true : undefined,
      deliver_policy:
        start.policy === "last_per_subject"
          ? DeliverPolicy.LastPerSubject
          : start.policy === "all"
            ? DeliverPolicy.All
            : DeliverPolicy.StartSequence,
      opt_start_seq: start.policy === "by_start_sequence" ? start.startSequence : undefined,
    };
    this.inbox = createInbox(this.options.inboxPrefix);
    this.subscription = this.options.connection.subscribe(this.inbox, {
      callback: (error, message) =>
        error ? this.markLost(`subscription closed: ${error.message}`) : this.receive(message),
    });
    // The same name and config each time: a create asked again is answered with the consumer the first made.
    // Never once closed: a create that reached the server after the delete would make the consumer again.
    const create = () =>
      askAgainIfUnanswered(
        (timeoutMs) =>
          this.closed
            ? Promise.reject(new ConsumerLost("closed while its consumer was being created"))
            : createEphemeral(this.options.connection, stream, config, timeoutMs),
        limits.requestTimeoutMs,
        this.options.clock,
      );
    const budgetMs = this.options.noRespondersRetryMs ?? NO_RESPONDERS_BUDGET_MS;
    const creating = sendAgainIfNoResponders(create, budgetMs, this.options.onNoResponders, this.options.clock);
    this.creating = creating;
    try {
      const info = await creating;
      this.numPendingAtCreate = info.num_pending;
      this.options.logger?.debug(
        { stream, consumer: this.name, start: start.policy, pending: info.num_pending },
        "consumer created",
      );
      return info.num_pending;
    } finally {
      this.creating = undefined;
    }
  }

  /** The revision of the last message handed out by `take` (0 before any). */
  get lastRevision(): number {
    return this.lastRevisionTaken;
  }

  /**
   * Waits for the next messages: returns when a batch is full, when the consumer is caught up (a
   * message with pending 0) or when the pull ended; `[]` means a whole pull ended with nothing new.
   * Throws `ConsumerLost`. Holds at most one batch besides the one handed out: the next is pulled as soon
   * as one is handed out with more pending, so NATS and the caller work at the same time.
   */
  async take(): Promise<PulledMessage[]> {
    for (;;) {
      if (this.closed) return [];
      const ready = this.readyBatch();
      if (ready) return this.handOut(ready);
      if (this.lost) throw this.lost;
      if (this.credits === 0) this.requestMore();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  /**
   * Drops the subscription and deletes the consumer on the server now. Never throws; resolves `false` when
   * the delete could not be made (NATS unreachable): call again once the connection is back, or
   * inactive_threshold removes it (~30 s), counted against the stream's max_consumers until then.
   *
   * Closed while its create is being asked, it sends no further ask and deletes once the one out is answered or
   * timed out (at most one attempt, a quarter of the request timeout, the last up to 1.5 quarters; or the pause
   * before a create that found no responder is sent again). Sent at once, the delete could reach the server
   * before that create (nats-server serves API requests on several workers), or before an ask sent after it,
   * and the consumer be made again behind it: left until its inactivity threshold (on a dead peer, until it is back).
   */
  async close(): Promise<boolean> {
    this.closed = true;
    this.clearWatchdog();
    this.clearUnanswered();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.credits = 0;
    this.wake?.();
    await this.creating?.catch(() => undefined);
    try {
      await this.options.jsm.consumers.delete(this.options.stream, this.name);
      this.options.logger?.debug({ stream: this.options.stream, consumer: this.name }, "consumer deleted");
      return true;
    } catch (error) {
      if (isApiError(error, JETSTREAM_CODES.consumerNotFound)) {
        // Gone already (an earlier delete whose answer was lost, or its inactivity threshold): told as deleted.
        this.options.logger?.debug(
          { stream: this.options.stream, consumer: this.name, alreadyGone: true },
          "consumer deleted",
        );
        return true;
      }
      this.options.logger?.debug(
        { stream: this.options.stream, consumer: this.name, err: error },
        "consumer delete failed",
      );
      return false;
    }
  }

  /** The connection is closed for good: nothing can be asked through it any more. */
  get connectionClosed(): boolean {
    return this.options.connection.isClosed();
  }

  /** Marks the consumer lost, from outside (a reconnect: deliveries may have been dropped meanwhile). */
  markLost(why: string): void {
    if (this.lost) return;
    this.lost = new ConsumerLost(why);
    this.clearWatchdog();
    this.clearUnanswered();
    this.wake?.();
  }

  /** Whether `take` would hand out messages now, without waiting. */
  get hasMessagesReady(): boolean {
    return !this.closed && this.buffer.length > 0 && this.bufferIsBatch();
  }

  private readyBatch(): PulledMessage[] | undefined {
    if (this.buffer.length === 0) return this.requestEnded && this.credits === 0 ? this.endedEmpty() : undefined;
    return this.bufferIsBatch() ? this.buffer : undefined;
  }

  private bufferIsBatch(): boolean {
    const last = this.buffer[this.buffer.length - 1]!;
    return (
      this.buffer.length >= this.options.limits.batchEvents ||
      last.pending === 0 ||
      this.credits === 0 ||
      this.lost !== undefined
    );
  }

  private endedEmpty(): PulledMessage[] {
    this.requestEnded = false;
    return [];
  }

  private handOut(batch: PulledMessage[]): PulledMessage[] {
    this.buffer = [];
    this.requestEnded = false;
    const last = batch.at(-1);
    if (last === undefined) return batch;
    this.lastRevisionTaken = last.revision;
    // More is waiting: pull the next batch while the caller handles this one (at most one more is held).
    if (this.credits === 0 && last.pending > 0 && !this.lost && !this.closed) this.requestMore();
    return batch;
  }

  private requestMore(): void {
    const { limits, connection, stream } = this.options;
    this.credits = limits.batchEvents;
    this.requestEnded = false;
    const request = {
      batch: limits.batchEvents,
      max_bytes: limits.batchBytes,
      expires: nanos(limits.pullExpiresMs),
      idle_heartbeat: nanos(limits.idleHeartbeatMs),
    };
    try {
      connection.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${this.name}`, JSON.stringify(request), {
        reply: this.inbox,
      });
    } catch (error) {
      this.markLost(`pull request failed: ${(error as Error).message}`);
      return;
    }
    this.armWatchdog();
  }

  private receive(message: Msg): void {
    if (this.lost || this.closed) return;
    // A timestamp, not a timer reset: the watchdog armed per pull reads it when it fires.
    this.lastHeard = this.options.clock.now();
    const code = message.headers?.code ?? 0;
    if (!message.reply && code > 0) {
      const { headers } = message;
      this.receiveStatus(code, headers?.description ?? "", headers?.get(PENDING_MESSAGES_HEADER) ?? "");
      return;
    }
    const parsed = parseAckReply(message.reply ?? "");
    if (!parsed) return;
    if (parsed.deliverySequence !== this.lastDeliverySequence + 1) {
      this.markLost(`delivery ${parsed.deliverySequence} after ${this.lastDeliverySequence}: messages were dropped`);
      return;
    }
    this.lastDeliverySequence = parsed.deliverySequence;
    this.unanswered = undefined;
    this.credits = Math.max(0, this.credits - 1);
    if (this.credits === 0) this.clearWatchdog();
    // nats-server 2.9.10 can deliver a last_per_subject message twice (measured): each revision once.
    const lastSeen = this.buffer.length > 0 ? this.buffer[this.buffer.length - 1]!.revision : this.lastRevisionTaken;
    if (parsed.streamSequence > lastSeen) {
      this.buffer.push({
        key: message.subject.slice(this.prefix.length),
        revision: parsed.streamSequence,
        operation: isDeletionMarker(message.headers) ? "delete" : "put",
        data: message.data,
        updated: this.isoTime(parsed.timestampMs),
        pending: parsed.pending,
      });
    }
    this.wake?.();
  }

  /** A stored time as `Date#toISOString` gives it; messages stored in one millisecond share the text. */
  private isoTime(ms: number): string {
    if (ms !== this.lastTime.ms) this.lastTime = { ms, iso: new Date(ms).toISOString() };
    return this.lastTime.iso;
  }

  private receiveStatus(code: number, description: string, pendingMessages: string): void {
    if (code === STATUS_HEARTBEAT) return;
    if (code === 409 && /consumer deleted/i.test(description)) {
      this.markLost("409 consumer deleted");
      return;
    }
    if (code === 503) {
      if (!this.pullAgainLater()) this.markLost("503 no responders");
      return;
    }
    if (code >= 400 && code !== 404 && code !== 408 && code !== 409) {
      this.markLost(`${code} ${description}`);
      return;
    }
    // Only a status that counts what the open pull still had to deliver ends it. From 2.11 a pull filled by
    // count ends with `409 Batch Completed` after its last message; the next pull is sent as soon as that
    // message is handed out, so the status can arrive during the next pull (it counts 0 left, not its credits).
    if (this.credits === 0) return;
    if (pendingMessages !== "" && Number(pendingMessages) !== this.credits) return;
    // 404/408: the pull expired; 409 otherwise: it ended early (max bytes, max waiting). Pull again.
    this.credits = 0;
    this.requestEnded = true;
    this.clearWatchdog();
    this.wake?.();
  }

  /**
   * The pull reached no one (its credits are untouched): sends it again after a growing pause, within the budget.
   * The credits stay set meanwhile, so `take` does not pull early; the watchdog waits for the new pull.
   */
  private pullAgainLater(): boolean {
    const { clock } = this.options;
    const budgetMs = this.options.noRespondersRetryMs ?? NO_RESPONDERS_BUDGET_MS;
    const now = clock.now();
    const unanswered = this.unanswered ?? { attempts: 0, sinceMs: now };
    unanswered.attempts += 1;
    const pauseMs = noRespondersPause(unanswered.attempts);
    if (now + pauseMs > unanswered.sinceMs + budgetMs) return false;
    this.unanswered = unanswered;
    this.clearWatchdog();
    this.options.onNoResponders?.(unanswered.attempts);
    unanswered.timer = clock.setTimeout(() => {
      unanswered.timer = undefined;
      if (this.lost || this.closed) return;
      this.requestMore();
    }, pauseMs);
    return true;
  }

  private clearUnanswered(): void {
    if (this.unanswered?.timer !== undefined) this.options.clock.clearTimeout(this.unanswered.timer);
    this.unanswered = undefined;
  }

  /**
   * Two missed heartbeats and a half while a pull is open: the consumer (or the server) is gone. Armed once
   * per pull; when it fires after something was heard meanwhile, it waits out the rest from that moment.
   */
  private armWatchdog(): void {
    this.clearWatchdog();
    if (this.credits === 0) return;
    const { clock, limits } = this.options;
    const silenceMs = Math.round(limits.idleHeartbeatMs * 2.5);
    this.lastHeard = clock.now();
    const check = () => {
      this.watchdog = undefined;
      if (this.credits === 0 || this.lost || this.closed) return;
      const quietFor = clock.now() - this.lastHeard;
      if (quietFor >= silenceMs) this.markLost("idle heartbeats missed");
      else this.watchdog = clock.setTimeout(check, silenceMs - quietFor);
    };
    this.watchdog = clock.setTimeout(check, silenceMs);
  }

  private clearWatchdog(): void {
    if (this.watchdog !== undefined) this.options.clock.clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }
}

/**
 * Creates an ephemeral consumer through the exact subject `$JS.API.CONSUMER.CREATE.<stream>`, with its name
 * in the body. That subject is the only create a machine's grant allows, and the server refuses a
 * `durable_name` on it (10020), so a machine cannot leave a consumer that outlives its inactivity threshold
 * (docs/decisions/0006-no-lasting-consumers.md). The client's `consumers.add` would use
 * `…CREATE.<stream>.<name>.<filter>`, which also takes durables. Errors are the client's own classes.
 */
async function createEphemeral(
  connection: NatsConnection,
  stream: string,
  config: Partial<ConsumerConfig>,
  timeoutMs: number,
): Promise<ConsumerInfo> {
  const body = JSON.stringify({ stream_name: stream, config, action: "create" });
  const reply = await connection.request(`$JS.API.CONSUMER.CREATE.${stream}`, body, { timeout: timeoutMs });
  return jetStreamAnswer<ConsumerInfo>(reply);
}

/**
 * Parses `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>` and the
 * newer form with domain and account hash (`$JS.ACK.<domain>.<hash>.<stream>.….<pending>.<random>`).
 * Scanned in place, once per message: no token array, no substring per number.
 */
export function parseAckReply(
  reply: string,
): { streamSequence: number; deliverySequence: number; timestampMs: number; pending: number } | undefined {
  if (!reply.startsWith("$JS.ACK.")) return undefined;
  let dots = 0;
  for (let at = reply.indexOf("."); at !== -1 && dots < ACK_DOTS.length; at = reply.indexOf(".", at + 1)) {
    ACK_DOTS[dots++] = at;
  }
  const tokens = dots + 1;
  const offset = tokens === 9 ? 0 : tokens >= 12 ? 2 : -1;
  if (offset < 0) return undefined;
  const nanosStart = tokenStart(7 + offset);
  const nanosEnd = tokenEnd(7 + offset, dots, reply.length);
  // Whole milliseconds by dropping the last six digits: what BigInt division gave, without a BigInt per message.
  const timestampMs = nanosEnd - nanosStart >= 7 ? digits(reply, nanosStart, nanosEnd - 6) : Number.NaN;
  if (!Number.isSafeInteger(timestampMs) || !Number.isInteger(digits(reply, nanosEnd - 6, nanosEnd))) {
    return undefined;
  }
  return {
    streamSequence: digits(reply, tokenStart(5 + offset), tokenEnd(5 + offset, dots, reply.length)),
    deliverySequence: digits(reply, tokenStart(6 + offset), tokenEnd(6 + offset, dots, reply.length)),
    timestampMs,
    pending: digits(reply, tokenStart(8 + offset), tokenEnd(8 + offset, dots, reply.length)),
  };
}

/** Where the dots of the reply being parsed are: the first 13 are all a reply of either form needs. */
const ACK_DOTS = new Int32Array(13);
const ZERO = 48;

/** Token i of the reply just scanned runs from after dot i-1 to dot i (or the end): plain functions, no closure per message. */
function tokenStart(token: number): number {
  return ACK_DOTS[token - 1]! + 1;
}

function tokenEnd(token: number, dots: number, length: number): number {
  return token < dots ? ACK_DOTS[token]! : length;
}

/** The decimal number `text` holds from `from` to `to`; NaN when that is empty, not all digits or not exact. */
function digits(text: string, from: number, to: number): number {
  if (from >= to) return Number.NaN;
  let value = 0;
  for (let index = from; index < to; index++) {
    const digit = text.charCodeAt(index) - ZERO;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value <= Number.MAX_SAFE_INTEGER ? value : Number.NaN;
}
