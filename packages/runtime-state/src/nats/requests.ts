import { JetStreamApiError, JetStreamError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  createInbox,
  DrainingConnectionError,
  type Msg,
  type MsgHdrs,
  MsgHdrsImpl,
  type NatsConnection,
  NoRespondersError,
  PermissionViolationError,
  type Subscription,
  TimeoutError,
} from "@nats-io/nats-core";

/**
 * The runtime's own request path for its hot calls (get, put, delete). nats-core 3.4's `request()` builds a
 * `RequestError("cancelled")`, stack and all, after every successful reply (a fifth of the runtime's CPU at
 * 64 requests in flight); this path builds an Error only for a failure. Failures are the classes nats.js
 * gives (TimeoutError, NoRespondersError, PermissionViolationError, ClosedConnectionError,
 * DrainingConnectionError, JetStreamApiError), so `classifyJetStreamError` (@mesh/jetstream-calls) sorts them as before.
 */

interface Pending {
  subject: string;
  resolve(reply: Msg): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** One subscription on `<inbox>.*` per connection; a request's reply subject is `<inbox>.<token>`. */
class ReplyMux {
  /** Under the connection's inbox prefix, as nats.js makes its own, so the grant's inbox allowance covers it. */
  private readonly inbox: string;
  private readonly pending = new Map<string, Pending>();
  private subscription: Subscription | undefined;
  private nextToken = 0;

  constructor(private readonly connection: NatsConnection) {
    this.inbox = createInbox(inboxPrefixOf(connection));
    connection.closed().then(
      () => this.rejectAll(new ClosedConnectionError()),
      () => this.rejectAll(new ClosedConnectionError()),
    );
    this.followPermissionErrors();
  }

  request(subject: string, data: Uint8Array, headers: MsgHdrs | undefined, timeoutMs: number): Promise<Msg> {
    if (this.connection.isClosed()) return Promise.reject(new ClosedConnectionError());
    if (this.connection.isDraining()) return Promise.reject(new DrainingConnectionError());
    this.subscription ??= this.subscribe();
    const token = (this.nextToken++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => this.take(token)?.reject(new TimeoutError()), timeoutMs);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        this.connection.publish(subject, data, { reply: `${this.inbox}.${token}`, headers });
      } catch (error) {
        this.take(token)?.reject(error as Error);
      }
    });
  }

  private subscribe(): Subscription {
    const prefixLength = this.inbox.length + 1;
    return this.connection.subscribe(`${this.inbox}.*`, {
      callback: (error, reply) => {
        if (error !== null) {
          // Only a refused subscribe reaches here (nats.js then closes it): every request waits in vain, and
          // the next one subscribes again, as nats.js does with its own mux.
          this.subscription = undefined;
          this.rejectAll(error);
          return;
        }
        const request = this.take(reply.subject.slice(prefixLength));
        if (request === undefined) return; // timed out already
        // The server's "no responders" status: nothing received the request.
        if (reply.data.length === 0 && reply.headers?.code === 503)
          request.reject(new NoRespondersError(request.subject));
        else request.resolve(reply);
      },
    });
  }

  /**
   * A publish the grant refuses is answered by the server with `-ERR 'Permissions Violation for Publish to
   * "<subject>"'`, never by a reply. nats.js hands it to its own mux only, and to every status listener: the
   * first pending request to that subject is refused with it (one `-ERR` per refused publish), as nats.js does.
   */
  private followPermissionErrors(): void {
    void (async () => {
      for await (const event of this.connection.status()) {
        if (event.type !== "error" || !(event.error instanceof PermissionViolationError)) continue;
        const { operation, subject } = event.error;
        if (operation !== "publish") continue;
        for (const [token, request] of this.pending) {
          if (request.subject !== subject) continue;
          this.take(token)?.reject(event.error);
          break;
        }
      }
    })().catch(() => undefined);
  }

  private take(token: string): Pending | undefined {
    const request = this.pending.get(token);
    if (request === undefined) return undefined;
    this.pending.delete(token);
    clearTimeout(request.timer);
    return request;
  }

  private rejectAll(error: Error): void {
    for (const token of [...this.pending.keys()]) this.take(token)?.reject(error);
  }
}

const muxes = new WeakMap<NatsConnection, ReplyMux>();

/** A request answered by one reply on the connection's runtime mux; rejects with nats.js's failure classes. */
export function request(
  connection: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: { timeoutMs: number; headers?: MsgHdrs | undefined },
): Promise<Msg> {
  let mux = muxes.get(connection);
  if (mux === undefined) {
    if (connection.isClosed()) return Promise.reject(new ClosedConnectionError());
    mux = new ReplyMux(connection);
    muxes.set(connection, mux);
  }
  return mux.request(subject, data, options.headers, options.timeoutMs);
}

/** The connection's `inboxPrefix` option, when it exposes its options (nats.js's connection does). */
export function inboxPrefixOf(connection: object): string | undefined {
  if (!("options" in connection)) return undefined;
  const options = connection.options;
  if (typeof options !== "object" || options === null || !("inboxPrefix" in options)) return undefined;
  return typeof options.inboxPrefix === "string" ? options.inboxPrefix : undefined;
}

const EMPTY = new Uint8Array(0);

/**
 * A JetStream publish: the stored sequence from the PubAck, as `js.publish` parses it (an `error` body is a
 * JetStreamApiError, with its code: 10071/10164 for a failed revision check).
 */
export async function publishToStream(
  connection: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: { timeoutMs: number; headers?: MsgHdrs | undefined },
): Promise<number> {
  const reply = await request(connection, subject, data, options);
  const ack = jetStreamAnswer<{ stream?: string; seq: number }>(reply);
  if (ack.stream === "") throw new JetStreamError("invalid ack response");
  return ack.seq;
}

/** A JetStream API or PubAck answer's body; one carrying `error` throws it as a `JetStreamApiError`, code and all. */
export function jetStreamAnswer<T>(reply: Msg): T {
  const answer = reply.json<T & { error?: ConstructorParameters<typeof JetStreamApiError>[0] }>();
  if (answer.error) throw new JetStreamApiError(answer.error);
  return answer;
}

/** A stored message as a direct get returns it (its `Nats-*` headers read once). */
export interface DirectMessage {
  subject: string;
  seq: number;
  /** `Nats-Time-Stamp`: RFC 3339 in UTC. */
  timestamp: string;
  header: MsgHdrs;
  data: Uint8Array;
}

/**
 * A request for the last message on `subject` by a direct get in its subject form,
 * `$JS.API.DIRECT.GET.<stream>.<subject>` with no body: the form nats.js's `direct.getMessage({ last_by_subj })`
 * sends and the only one the grant allows. Its reply unread: `directMessageOf` reads it.
 */
export function directGetLastReply(
  connection: NatsConnection,
  stream: string,
  subject: string,
  timeoutMs: number,
): Promise<Msg> {
  return request(connection, `$JS.API.DIRECT.GET.${stream}.${subject}`, EMPTY, { timeoutMs });
}

/**
 * A direct get's reply as the stored message, `null` for "message not found" (the stream holds none); any
 * other status throws, as nats.js does.
 */
export function directMessageOf(reply: Msg): DirectMessage | null {
  const header = reply.headers;
  if (header === undefined || header.code !== 0) {
    const code = header?.code ?? 0;
    const description = header?.description.toLowerCase() || (code === 503 ? "no responders" : "unknown");
    if (code === 404 && description === "message not found") return null;
    // nats.js throws its JetStreamStatusError (not exported), a JetStreamError with the same message.
    throw new JetStreamError(description);
  }
  return {
    subject: header.last("Nats-Subject"),
    seq: Number.parseInt(header.last("Nats-Sequence"), 10),
    timestamp: header.last("Nats-Time-Stamp"),
    header,
    data: reply.data,
  };
}

/** "no message found": the stream holds no message on the subject asked for. */
const NO_MESSAGE_FOUND = 10037;

/**
 * A request for the last message on `subject` (wildcards allowed) from the stream's leader,
 * `$JS.API.STREAM.MSG.GET.<stream>` with `{"last_by_subj": subject}`: only the leader answers it, so the answer
 * reflects every write acknowledged before it was asked (a direct get may be answered by a lagging replica).
 */
export function leaderGetLastReply(
  connection: NatsConnection,
  stream: string,
  subject: string,
  timeoutMs: number,
): Promise<Msg> {
  const body = new TextEncoder().encode(JSON.stringify({ last_by_subj: subject }));
  return request(connection, `$JS.API.STREAM.MSG.GET.${stream}`, body, { timeoutMs });
}

interface StoredMessageAnswer {
  message: { subject: string; seq: number; hdrs?: string; data?: string; time: string };
}

/**
 * The leader's answer as the stored message, `null` for "no message found"; any other error answer throws as a
 * `JetStreamApiError`. Its headers and data come base64-encoded in the JSON.
 */
export function leaderMessageOf(reply: Msg): DirectMessage | null {
  let answer: StoredMessageAnswer;
  try {
    answer = jetStreamAnswer<StoredMessageAnswer>(reply);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === NO_MESSAGE_FOUND) return null;
    throw error;
  }
  const { message } = answer;
  const header =
    message.hdrs === undefined ? new MsgHdrsImpl() : MsgHdrsImpl.decode(Buffer.from(message.hdrs, "base64"));
  return {
    subject: message.subject,
    seq: message.seq,
    timestamp: message.time,
    header,
    data: message.data === undefined ? EMPTY : Buffer.from(message.data, "base64"),
  };
}
