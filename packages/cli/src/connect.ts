import { readFile } from "node:fs/promises";
import { controllerInboxPrefix } from "@mesh/grant-composer";
import type { Authenticator, ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import { AuthorizationError, ConnectionError, credsAuthenticator, nkeyAuthenticator } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { loadNatsContext } from "./nats-context.js";
import { UsageError } from "./types.js";

/** The connection options every command that talks to a server takes; the NATS CLI's names. */
export interface ServerOptions {
  server?: string;
  context?: string;
  creds?: string;
  /** Path of a file holding the user's nkey seed (`SU…`). */
  nkey?: string;
  token?: string;
  user?: string;
  password?: string;
  tlscert?: string;
  tlskey?: string;
  tlsca?: string;
  inboxPrefix?: string;
}

/** The `parseArgs` option spec of the server options, to spread into a command's own. */
export const SERVER_ARG_OPTIONS = {
  server: { type: "string" },
  context: { type: "string" },
  creds: { type: "string" },
  nkey: { type: "string" },
  token: { type: "string" },
  user: { type: "string" },
  password: { type: "string" },
  tlscert: { type: "string" },
  tlskey: { type: "string" },
  tlsca: { type: "string" },
  "inbox-prefix": { type: "string" },
} as const;

/** The --help lines of the server options, for every command that connects. */
export const SERVER_HELP_OPTIONS = `  --server URL         nats://host:port, comma-separated for a cluster; else NATS_URL, else the context's
  --context NAME       a NATS CLI context (~/.config/nats/context/NAME.json); else NATS_CONTEXT, else the
                       context selected in context.txt (nats context select). Options given override it
  --creds FILE         a credentials file (JWT and nkey seed)
  --nkey FILE          a file holding the user's nkey seed
  --token TOKEN        a token
  --user U --password P
  --tlscert FILE --tlskey FILE   a client certificate and its key
  --tlsca FILE         the CA that signed the server's certificate`;

/**
 * The options as given, completed by the NATS CLI's context and environment, in natscli's order: an option
 * given wins, then `NATS_URL` for the server, then the context (`--context`, `NATS_CONTEXT`, `context.txt`).
 */
export async function resolveServerOptions(
  options: ServerOptions & { "inbox-prefix"?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServerOptions> {
  const context = await loadNatsContext(options.context, env);
  const given = (value: string | undefined, fallback: string | undefined) =>
    value !== undefined && value !== "" ? value : fallback;
  // Authentication comes from one place: given options replace the context's authentication as a whole.
  const authGiven = [options.creds, options.nkey, options.token, options.user].some((value) => value !== undefined);
  const auth = authGiven ? options : (context ?? {});
  const resolved: ServerOptions = {
    server: given(options.server, given(env.NATS_URL, context?.url)),
    creds: auth.creds,
    nkey: auth.nkey,
    token: auth.token,
    user: auth.user,
    password: auth.password,
    tlscert: given(options.tlscert, context?.cert),
    tlskey: given(options.tlskey, context?.key),
    tlsca: given(options.tlsca, context?.ca),
    inboxPrefix: given(options.inboxPrefix ?? options["inbox-prefix"], context?.inboxPrefix),
  };
  return Object.fromEntries(Object.entries(resolved).filter(([, value]) => value !== undefined)) as ServerOptions;
}

/** Connects with the given options, completed by the context (`resolveServerOptions`). `tuning` adds client options. */
export async function connectToServer(
  given: ServerOptions,
  name: string,
  tuning: Pick<ConnectionOptions, "noAsyncTraces"> = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<NatsConnection> {
  const options = await resolveServerOptions(given, env);
  if (!options.server)
    throw new UsageError("no server: give --server URL, set NATS_URL, or select a NATS context (--context NAME)");
  const ways = [options.creds, options.nkey, options.token, options.user].filter((value) => value !== undefined);
  if (ways.length > 1) throw new UsageError("give one of --creds, --nkey, --token or --user/--password");
  if ((options.tlscert === undefined) !== (options.tlskey === undefined))
    throw new UsageError("--tlscert and --tlskey go together");
  let authenticator: Authenticator | undefined;
  if (options.creds) authenticator = credsAuthenticator(await readFile(options.creds));
  if (options.nkey)
    authenticator = nkeyAuthenticator(new TextEncoder().encode((await readFile(options.nkey, "utf8")).trim()));
  const tls =
    options.tlscert || options.tlsca
      ? {
          ...(options.tlscert ? { certFile: options.tlscert, keyFile: options.tlskey! } : {}),
          ...(options.tlsca ? { caFile: options.tlsca } : {}),
        }
      : undefined;
  const servers = options.server.split(",").map((server) => server.trim());
  try {
    return await connect({
      servers,
      name,
      ...(authenticator ? { authenticator } : {}),
      ...(options.token ? { token: options.token } : {}),
      ...(options.user ? { user: options.user, pass: options.password ?? "" } : {}),
      ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
      ...(tls ? { tls } : {}),
      ...tuning,
    });
  } catch (error) {
    throw new ServerUnreachableError(servers, error);
  }
}
/**
 * A connection as the controller's state user (raise, compact): the inbox prefix defaults to the controller
 * grant's, `_INBOX_ctl_<user>`, since that grant allows no other.
 */
export async function connectAsController(
  values: ServerOptions,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<NatsConnection> {
  const server = await resolveServerOptions(values, env);
  const inboxPrefix = server.inboxPrefix ?? controllerInboxPrefix(server.user ?? "controller");
  return connectToServer({ ...server, inboxPrefix }, name, {}, env);
}

/** Why no server took the connection: nothing listening there, the credentials refused, or TLS not agreed. */
export type ConnectFailure = "server-unreachable" | "auth-failed" | "tls-mismatch";

/**
 * No server of the list took the connection. The message names every server and what was tried: the client
 * tries each server of the list once on a first connect, and gives up. `reason` says which of the three it
 * was, from the client's error class (the TLS cases from Node's certificate codes and nats.js's one message).
 */
export class ServerUnreachableError extends Error {
  readonly code = "server-unreachable";
  readonly reason: ConnectFailure;
  readonly advice: string;
  constructor(
    readonly servers: readonly string[],
    cause: unknown,
  ) {
    const count = `${servers.length} server${servers.length === 1 ? "" : "s"}`;
    const reason = cause instanceof Error ? cause.message || cause.name : String(cause);
    const kind = connectFailure(cause);
    const advice = CONNECT_ADVICE[kind];
    super(`cannot connect to ${servers.join(", ")} (tried ${count}, 1 attempt each): ${reason} — ${advice}`, { cause });
    this.name = "ServerUnreachableError";
    this.reason = kind;
    this.advice = advice;
  }
}

const CONNECT_ADVICE: Record<ConnectFailure, string> = {
  "server-unreachable":
    "is nats-server running there, and are the credentials right? Use --server URL or --context NAME",
  "auth-failed":
    "the server refused the credentials: check --user/--password, --creds, --nkey or --token (or the context's) against the server's users",
  "tls-mismatch":
    "TLS did not agree: a server that requires TLS needs its CA (--tlsca FILE) and, if it verifies clients, --tlscert/--tlskey; a server without TLS needs none of them",
};

function connectFailure(cause: unknown): ConnectFailure {
  if (cause instanceof AuthorizationError) return "auth-failed";
  const code = (cause as { code?: unknown } | null)?.code;
  const certificate =
    typeof code === "string" && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
  // nats.js says only this, in a plain ConnectionError, when the client asked for TLS and the server has none.
  const tlsUnsupported = cause instanceof ConnectionError && cause.message.includes("does not support 'tls'");
  return certificate || tlsUnsupported ? "tls-mismatch" : "server-unreachable";
}
