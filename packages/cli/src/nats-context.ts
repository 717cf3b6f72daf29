import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./types.js";

/**
 * A NATS CLI context (`nats context save`), the fields `mesh-state` uses. The format is natscli's (jsm.go
 * `natscontext.Settings`): `nkey` is the path of a seed file, `creds` of a credentials file, `cert`, `key`
 * and `ca` of PEM files.
 */
export interface NatsContext {
  name: string;
  url?: string;
  user?: string;
  password?: string;
  creds?: string;
  nkey?: string;
  token?: string;
  cert?: string;
  key?: string;
  ca?: string;
  inboxPrefix?: string;
}

/** `$XDG_CONFIG_HOME/nats`, else `~/.config/nats`: where natscli keeps its contexts. */
export function natsConfigDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "nats");
}

/**
 * The context to use: `name` (from `--context`), else `NATS_CONTEXT`, else the one selected in
 * `context.txt`; undefined when none is named or selected. A named context that does not exist is an error.
 */
export async function loadNatsContext(
  name: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<NatsContext | undefined> {
  const dir = natsConfigDir(env);
  const chosen = name || env.NATS_CONTEXT || (await readOptional(join(dir, "context.txt")))?.trim();
  if (!chosen) return undefined;
  if (!/^[A-Za-z0-9_.-]+$/.test(chosen) || chosen.startsWith("."))
    throw new UsageError(`context name ${JSON.stringify(chosen)} is not valid: letters, digits, _, . and -`);
  const path = join(dir, "context", `${chosen}.json`);
  const text = await readOptional(path);
  if (text === undefined)
    throw new UsageError(
      `no NATS context ${JSON.stringify(chosen)}: ${path} does not exist (nats context ls lists them)`,
    );
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`NATS context ${path} is not JSON: ${(error as Error).message}`);
  }
  const field = (key: string) => (typeof raw[key] === "string" && raw[key] !== "" ? (raw[key] as string) : undefined);
  const context: NatsContext = { name: chosen };
  const fields = {
    url: "url",
    user: "user",
    password: "password",
    creds: "creds",
    nkey: "nkey",
    token: "token",
    cert: "cert",
    key: "key",
    ca: "ca",
    inboxPrefix: "inbox_prefix",
  } as const;
  for (const [ours, theirs] of Object.entries(fields)) {
    const value = field(theirs);
    if (value !== undefined) context[ours as keyof typeof fields] = value;
  }
  return context;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
