import {
  askAgainIfUnanswered as askAgain,
  classifyJetStreamError,
  isUnanswered,
  JETSTREAM_CODES,
  JETSTREAM_UNAVAILABLE_STATUS,
} from "@mesh/jetstream-calls";
import { JetStreamApiError, type StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { ApiFailure } from "./types.js";

/**
 * The few JetStream API calls a raise makes, as plain requests: one request per call, so what a raise
 * costs is what this file sends (the client's `streams.update()` reads the stream first; `streams.list()`
 * may ask once more). Responses are checked for the fields the raise reads before they are trusted.
 * What a failure is, and when a call is asked again, is @mesh/jetstream-calls' policy (decision 0010).
 */

/** A JetStream API request that did not succeed; an error answer is its `cause`, the client's `JetStreamApiError`. */
export class ApiRequestError extends Error {
  readonly failure: ApiFailure;
  constructor(failure: ApiFailure, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ApiRequestError";
    this.failure = failure;
  }
  /** JetStream's `err_code` when the server answered with an error. */
  get serverCode(): number | undefined {
    return this.answer()?.code;
  }
  /** The HTTP-like `code` of the server's error: 503 when JetStream cannot serve the request now (no meta leader). */
  get status(): number | undefined {
    return this.answer()?.status;
  }
  private answer(): { code: number | undefined; status: number | undefined } | undefined {
    const failure = classifyJetStreamError(this.cause);
    return failure.kind === "api-error" ? failure : undefined;
  }
}

/**
 * Whether a failure says JetStream cannot answer at all right now (no answer, nobody listening, or the
 * server's 503 "temporarily unavailable" when there is no meta leader), rather than refusing this request.
 */
export function jetStreamCannotAnswer(error: unknown): boolean {
  if (!(error instanceof ApiRequestError)) return false;
  return (
    error.failure === "timeout" || error.failure === "no-responders" || error.status === JETSTREAM_UNAVAILABLE_STATUS
  );
}

/** Server page size of STREAM.LIST (JSApiListLimit). */
export const STREAM_LIST_PAGE = 256;

/**
 * The least time a STREAM.LIST request is given. In a cluster the meta leader asks every stream's leader for
 * its state and, when one is down, answers after 4 s with that stream under `missing` (measured, nats-server
 * 2.9.10); a shorter timeout would turn one node down into "cannot list anything".
 */
export const STREAM_LIST_TIMEOUT_FLOOR_MS = 6_000;

/** The account's streams: those whose leader answered, and the names of those whose leader did not. */
export interface StreamListing {
  streams: StreamInfo[];
  missing: string[];
}

export interface JetStreamApi {
  /** Every stream of the account, a page of up to 256 per request. */
  listStreams(): Promise<StreamListing>;
  /** Per-subject message counts of one stream (STREAM.INFO with a subjects filter, paged by the server). */
  subjectCounts(stream: string, filter: string): Promise<Map<string, number>>;
  /** One stream's config and state (STREAM.INFO). */
  streamInfo(stream: string): Promise<StreamInfo>;
  /** STREAM.PURGE of `subject`'s messages below sequence `below`; resolves with how many went. */
  purgeSubject(stream: string, subject: string, below: number): Promise<number>;
  createStream(config: { readonly name: string }): Promise<StreamInfo>;
  updateStream(config: { readonly name: string }): Promise<StreamInfo>;
}

export function jetStreamApi(connection: NatsConnection, timeoutMs: number, prefix = "$JS.API"): JetStreamApi {
  const call = (subject: string, body: unknown, timeout = timeoutMs) =>
    jetStreamRequest(connection, subject, body, timeout);
  // A create, an update or an info whose answer is lost is asked again: its repeat has the same effect.
  const callAgainIfUnanswered = (subject: string, body: unknown) =>
    askAgainIfUnanswered(connection, subject, body, timeoutMs);

  return {
    async listStreams() {
      const streams: StreamInfo[] = [];
      const missing: string[] = [];
      const timeout = Math.max(timeoutMs, STREAM_LIST_TIMEOUT_FLOOR_MS);
      for (;;) {
        // The offset counts the missing streams too: they hold their place in the server's list.
        const seen = streams.length + missing.length;
        const page = await call(`${prefix}.STREAM.LIST`, { offset: seen }, timeout);
        const got = Array.isArray(page.streams) ? (page.streams as unknown[]) : [];
        for (const info of got) streams.push(checkStreamInfo(info, `${prefix}.STREAM.LIST`));
        const absent = Array.isArray(page.missing) ? page.missing : [];
        for (const name of absent) if (typeof name === "string") missing.push(name);
        const total = typeof page.total === "number" ? page.total : streams.length + missing.length;
        const now = streams.length + missing.length;
        if (now === seen || now >= total) return { streams, missing };
      }
    },
    async subjectCounts(stream, filter) {
      const counts = new Map<string, number>();
      for (;;) {
        const subject = `${prefix}.STREAM.INFO.${stream}`;
        const page = await callAgainIfUnanswered(subject, { subjects_filter: filter, offset: counts.size });
        const info = checkStreamInfo(page, subject);
        const subjects = info.state.subjects ?? {};
        const before = counts.size;
        for (const [name, count] of Object.entries(subjects)) counts.set(name, count);
        const total = typeof page.total === "number" ? page.total : counts.size;
        if (counts.size === before || counts.size >= total) return counts;
      }
    },
    async streamInfo(stream) {
      const subject = `${prefix}.STREAM.INFO.${stream}`;
      return checkStreamInfo(await callAgainIfUnanswered(subject, {}), subject);
    },
    async purgeSubject(stream, filter, below) {
      const subject = `${prefix}.STREAM.PURGE.${stream}`;
      const reply = await call(subject, { filter, seq: below });
      if (reply.success !== true || typeof reply.purged !== "number") {
        throw new ApiRequestError("server", `${subject}: the server's answer is not a purge result`);
      }
      return reply.purged;
    },
    async createStream(config) {
      const subject = `${prefix}.STREAM.CREATE.${config.name}`;
      return checkStreamInfo(await callAgainIfUnanswered(subject, config), subject);
    },
    async updateStream(config) {
      const subject = `${prefix}.STREAM.UPDATE.${config.name}`;
      return checkStreamInfo(await callAgainIfUnanswered(subject, config), subject);
    },
  };
}

/**
 * `jetStreamRequest` for a request whose repeat has the same effect (a stream create or update with the same
 * config, a named consumer's create, an info), asked again within the same timeout while its answer does not
 * come: @mesh/jetstream-calls' `askAgainIfUnanswered` (a quarter of the timeout each, at most four asks;
 * docs/MEASURED.md §12, §13). A timeout still costs the caller one timeout, and says how often it asked.
 * Never for STREAM.LIST (the meta leader answers it itself, after up to 4 s) nor for a purge or a delete.
 */
export async function askAgainIfUnanswered(
  connection: NatsConnection,
  subject: string,
  body: unknown,
  timeoutMs: number,
  now: () => number = () => performance.now(),
): Promise<Record<string, unknown>> {
  let asked = 0;
  try {
    return await askAgain(
      (askMs, asks) => {
        asked = asks;
        return jetStreamRequest(connection, subject, body, askMs);
      },
      timeoutMs,
      { now },
    );
  } catch (error) {
    throw isUnanswered(error) ? noAnswer(subject, timeoutMs, asked, error) : error;
  }
}

/** One JetStream API request; an error reply, a refusal or no answer becomes an `ApiRequestError`. */
export async function jetStreamRequest(
  connection: NatsConnection,
  subject: string,
  body: unknown,
  timeout: number,
): Promise<Record<string, unknown>> {
  let reply: Record<string, unknown>;
  try {
    const msg = await connection.request(subject, JSON.stringify(body), { timeout });
    reply = msg.json<Record<string, unknown>>();
  } catch (error) {
    throw describeRequestFailure(subject, error, timeout);
  }
  if (typeof reply !== "object" || reply === null) {
    throw new ApiRequestError("server", `${subject}: the server's answer is not a JSON object`);
  }
  const failure = reply.error as { err_code?: unknown; code?: unknown; description?: unknown } | undefined;
  if (failure) {
    const answer = new JetStreamApiError({
      err_code: typeof failure.err_code === "number" ? failure.err_code : undefined,
      code: typeof failure.code === "number" ? failure.code : undefined,
      description: typeof failure.description === "string" ? failure.description : JSON.stringify(failure),
    } as unknown as ConstructorParameters<typeof JetStreamApiError>[0]);
    const serverCode = answer.code as number | undefined;
    const advice = serverCode === undefined ? undefined : SERVER_CODE_ADVICE.get(serverCode);
    const code = serverCode ? ` (err_code ${serverCode})` : "";
    throw new ApiRequestError("server", `${subject}: ${answer.message}${code}${advice ? `: ${advice}` : ""}`, answer);
  }
  return reply;
}

/**
 * What to do about a JetStream error, by its `err_code`, where the server's description does not say.
 * 10005, the meta group left out: measured on 2.10.27 (docs/MEASURED.md §10). 10039, a user of another
 * account: measured on 2.10.27 and 2.15.3 (decision 0012).
 */
const SERVER_CODE_ADVICE = new Map<number, string>([
  [
    JETSTREAM_CODES.notEnabledForAccount,
    "these are the credentials of a user of an account without JetStream, not of the state account: connect as the controller's state user (composeControllerGrant)",
  ],
  [
    JETSTREAM_CODES.clusterNoPeers,
    "fewer servers can take this bucket than its replicas. Check that every server is up with JetStream and room, and that each is in the JetStream meta group (`nats server report jetstream`): a fresh 2.10 cluster can leave one out, and it joins once restarted. Then raise again",
  ],
]);

function describeRequestFailure(subject: string, error: unknown, timeoutMs: number): ApiRequestError {
  const failure = classifyJetStreamError(error);
  switch (failure.kind) {
    case "permission":
      return new ApiRequestError(
        "denied",
        `${subject}: permission denied: connect as the controller's state user (composeControllerGrant) with its inbox prefix`,
        error,
      );
    case "no-responders":
      return new ApiRequestError(
        "no-responders",
        `${subject}: no JetStream answered: is JetStream enabled for this account, and does the cluster have a leader?`,
        error,
      );
    case "timeout":
      return noAnswer(subject, timeoutMs, 1, error);
    case "connection-closed":
      // As a timeout: no answer came, and the server may still have applied it.
      return new ApiRequestError(
        "timeout",
        `${subject}: the connection closed before an answer came (the server may still apply it)`,
        error,
      );
    default:
      return new ApiRequestError(
        "server",
        `${subject}: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
  }
}

function noAnswer(subject: string, timeoutMs: number, asks: number, cause: unknown): ApiRequestError {
  const asked = asks > 1 ? ` (asked ${asks} times)` : "";
  return new ApiRequestError(
    "timeout",
    `${subject}: no answer within ${timeoutMs} ms${asked} (is every server up, with a JetStream leader? A replicated bucket needs as many servers as replicas)`,
    cause,
  );
}

/** Checks the fields of a stream info the raise relies on; the rest is passed through as the server sent it. */
function checkStreamInfo(value: unknown, subject: string): StreamInfo {
  const info = value as { config?: Record<string, unknown>; state?: Record<string, unknown> } | null;
  const config = info?.config;
  const state = info?.state;
  const ok =
    typeof config?.name === "string" &&
    typeof state?.messages === "number" &&
    typeof state?.bytes === "number" &&
    typeof config?.max_msgs_per_subject === "number";
  if (!ok) throw new ApiRequestError("server", `${subject}: the server's stream info lacks name, state or limits`);
  return value as StreamInfo;
}
