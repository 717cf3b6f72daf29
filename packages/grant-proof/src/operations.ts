import { streamName } from "@mesh/manifest-schema";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection, PermissionViolationError } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";

/**
 * The operations of the proof, made with the primitives runtime-state uses — nothing from `@nats-io/kv`:
 * direct gets by subject, publishes to `$KV.<bucket>.<key>`, and ephemeral pull consumers created with a
 * name and one filter, read with raw MSG.NEXT pull requests, and deleted when done. No `$JS.API.INFO`.
 */

/** One user's connection into the state account. */
export interface StateClient {
  readonly user: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly inboxPrefix: string;
  readonly timeoutMs: number;
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
  const options = { checkAPI: false, timeout: timeoutMs };
  const jsm = await jetstreamManager(nc, options);
  return { user: login.user, nc, js: jetstream(nc, options), jsm, inboxPrefix: login.inboxPrefix, timeoutMs };
}

/** An entry as the proof reads it back. */
export interface Entry {
  key: string;
  revision: number;
  operation: "PUT" | "DEL" | "PURGE";
  size: number;
}

export const keySubject = (bucket: string, key: string) => `$KV.${bucket}.${key}`;

export function entryOf(
  bucket: string,
  subject: string,
  revision: number,
  operation: string | undefined,
  size: number,
): Entry {
  const op = operation === "DEL" || operation === "PURGE" ? operation : "PUT";
  return { key: subject.slice(`$KV.${bucket}.`.length), revision, operation: op, size };
}

/** A direct get of the key's last entry; `null` when absent or deleted. */
export async function getEntry(client: StateClient, bucket: string, key: string): Promise<Entry | null> {
  const message = await client.jsm.direct.getMessage(streamName(bucket), { last_by_subj: keySubject(bucket, key) });
  if (!message) return null;
  const entry = entryOf(
    bucket,
    message.subject,
    message.seq,
    message.header.get("KV-Operation") || undefined,
    message.data.length,
  );
  return entry.operation === "PUT" ? entry : null;
}

/** put (no revision), create (`previousRevision: 0`), update (`previousRevision: n`); resolves with the revision. */
export async function putValue(
  client: StateClient,
  bucket: string,
  key: string,
  value: Uint8Array | string,
  previousRevision?: number,
): Promise<number> {
  const data = typeof value === "string" ? new TextEncoder().encode(value) : value;
  const ack = await client.js.publish(keySubject(bucket, key), data, {
    timeout: client.timeoutMs,
    ...(previousRevision === undefined ? {} : { expect: { lastSubjectSequence: previousRevision } }),
  });
  return ack.seq;
}

/** delete (a DEL marker) or purge (a PURGE marker that rolls up the key's history). */
export async function removeKey(
  client: StateClient,
  bucket: string,
  key: string,
  how: "delete" | "purge",
): Promise<number> {
  const marker = headers();
  if (how === "delete") marker.set("KV-Operation", "DEL");
  else {
    marker.set("KV-Operation", "PURGE");
    marker.set("Nats-Rollup", "sub");
  }
  const ack = await client.js.publish(keySubject(bucket, key), undefined, {
    headers: marker,
    timeout: client.timeoutMs,
  });
  return ack.seq;
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

export function isPermissionViolation(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof PermissionViolationError) return true;
  }
  return false;
}
