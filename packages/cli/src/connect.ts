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
  return connect({
    servers: options.server.split(","),
    name,
    ...(authenticator ? { authenticator } : {}),
    ...(options.user ? { user: options.user, pass: options.password ?? "" } : {}),
    ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
    ...tuning,
  });
}
