import { systemClock } from "@mesh/jetstream-calls";
import { streamName } from "@mesh/manifest-schema";
import { DEFAULT_LIMITS } from "@mesh/runtime-state";
import { BucketClient, ConsumerReader, type ReaderStart } from "@mesh/runtime-state/internal";
import { JetStreamApiError, type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, PermissionViolationError } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";

/**
 * One user's connection into the state account, and the runtime's own code on it: runtime-state's
 * `BucketClient` (get, put, delete) and `ConsumerReader` (ephemeral pull consumers) — the proof makes no
 * NATS call of its own for an operation the runtime makes. What the server refused on this connection, it
 * also collects (`violations`): a refused pull or subscription surfaces only there.
 */
export interface StateClient {
  readonly user: string;
  readonly nc: NatsConnection;
  /** For the controller's own reads of a stream's state, and for an attacker's raw requests. */
  readonly jsm: JetStreamManager;
  readonly inboxPrefix: string;
  readonly timeoutMs: number;
  /** Every permission violation the server reported on this connection so far. */
  readonly violations: readonly Violation[];
  /** runtime-state's client of one bucket. */
  bucket(bucket: string): BucketClient;
  /** runtime-state's reader of one bucket; `filter` without the `$KV.<bucket>.` prefix. */
  reader(bucket: string, filter: string, start: ReaderStart, options?: ReaderTuning): ConsumerReader;
}

export interface ReaderTuning {
  headersOnly?: boolean;
  /** Overrides the runtime's inactivity threshold (the lingering fact asks for a short one). */
  consumerInactiveMs?: number;
}

/** A permission violation as the server reported it: what was refused, and on which subject. */
export interface Violation {
  operation: string;
  subject: string;
}

export interface ClientLogin {
  user: string;
  password: string;
  inboxPrefix: string;
}

export async function connectClient(url: string, login: ClientLogin, timeoutMs: number): Promise<StateClient> {
  const nc = await connect({
    servers: url,
    user: login.user,
    pass: login.password,
    inboxPrefix: login.inboxPrefix,
    name: login.user,
    timeout: timeoutMs,
  });
  const violations: Violation[] = [];
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && status.error instanceof PermissionViolationError) {
        violations.push({ operation: status.error.operation, subject: status.error.subject });
      }
    }
  })().catch(() => undefined);
  // As runtime-state's service makes them: no $JS.API.INFO (checkAPI false), the same timeouts.
  const options = { checkAPI: false, timeout: timeoutMs };
  const jsm = await jetstreamManager(nc, options);
  const limits = { ...DEFAULT_LIMITS, requestTimeoutMs: timeoutMs };
  return {
    user: login.user,
    nc,
    jsm,
    inboxPrefix: login.inboxPrefix,
    timeoutMs,
    violations,
    bucket: (bucket) => new BucketClient(bucket, nc, { timeoutMs }),
    reader: (bucket, filter, start, tuning = {}) =>
      new ConsumerReader({
        connection: nc,
        jsm,
        inboxPrefix: login.inboxPrefix,
        stream: streamName(bucket),
        bucket,
        filter,
        start,
        headersOnly: tuning.headersOnly ?? false,
        limits: { ...limits, consumerInactiveMs: tuning.consumerInactiveMs ?? limits.consumerInactiveMs },
        clock: systemClock,
      }),
  };
}

/** What went wrong, in one line: a permission violation names the subject the server refused. */
export function describeError(error: unknown): string {
  const top =
    error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : String(error);
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof PermissionViolationError) {
      const violation = `permission violation: ${cause.operation} ${cause.subject}`;
      return cause === error ? violation : `${top} (${violation})`;
    }
  }
  return error instanceof Error && error.cause instanceof Error ? `${top}: ${describeError(error.cause)}` : top;
}

/**
 * A raw JetStream API request, for what an attacker sends (the runtime never does): resolves with the
 * answer, throws the client's `JetStreamApiError` for an error answer, or the request's own failure.
 */
export async function apiRequest<T = Record<string, unknown>>(
  client: StateClient,
  subject: string,
  body: unknown,
): Promise<T> {
  const reply = await client.nc.request(subject, JSON.stringify(body), { timeout: client.timeoutMs });
  const answer = reply.json<T & { error?: ConstructorParameters<typeof JetStreamApiError>[0] }>();
  if (answer.error) throw new JetStreamApiError(answer.error);
  return answer;
}

/** Whether NATS subject `subject` is matched by the permission pattern `pattern` (`*` a token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split(".");
  const got = subject.split(".");
  for (let index = 0; index < want.length; index++) {
    if (want[index] === ">") return got.length > index;
    if (index >= got.length) return false;
    if (want[index] !== "*" && want[index] !== got[index]) return false;
  }
  return want.length === got.length;
}
