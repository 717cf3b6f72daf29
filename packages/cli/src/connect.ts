import { readFile } from "node:fs/promises";
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import { credsAuthenticator } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { UsageError } from "./types.js";

/** The connection options every command that talks to a server takes. */
export interface ServerOptions {
  server?: string;
  creds?: string;
  user?: string;
  password?: string;
  inboxPrefix?: string;
}

/** The `parseArgs` option spec of the server options, to spread into a command's own. */
export const SERVER_ARG_OPTIONS = {
  server: { type: "string" },
  creds: { type: "string" },
  user: { type: "string" },
  password: { type: "string" },
  "inbox-prefix": { type: "string" },
} as const;

/** Connects with the given options; `--creds` and `--user/--password` are exclusive. `tuning` adds client options. */
export async function connectToServer(
  options: ServerOptions,
  name: string,
  tuning: Pick<ConnectionOptions, "noAsyncTraces"> = {},
): Promise<NatsConnection> {
  if (!options.server) throw new UsageError("--server URL is required");
  if (options.creds && (options.user || options.password))
    throw new UsageError("give --creds or --user/--password, not both");
  const authenticator = options.creds ? credsAuthenticator(await readFile(options.creds)) : undefined;
  const servers = options.server.split(",").map((server) => server.trim());
  try {
    return await connect({
      servers,
      name,
      ...(authenticator ? { authenticator } : {}),
      ...(options.user ? { user: options.user, pass: options.password ?? "" } : {}),
      ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
      ...tuning,
    });
  } catch (error) {
    throw new ServerUnreachableError(servers, error);
  }
}

/**
 * No server of the list took the connection. The message names every server and what was tried: the client
 * tries each server of the list once on a first connect, and gives up.
 */
export class ServerUnreachableError extends Error {
  readonly code = "server-unreachable";
  constructor(
    readonly servers: readonly string[],
    cause: unknown,
  ) {
    const count = `${servers.length} server${servers.length === 1 ? "" : "s"}`;
    const reason = cause instanceof Error ? cause.message || cause.name : String(cause);
    super(
      `cannot connect to ${servers.join(", ")} (tried ${count}, 1 attempt each): ${reason} — is nats-server running there, and are the credentials right? Use --server URL or --context NAME`,
      { cause },
    );
    this.name = "ServerUnreachableError";
  }
}
