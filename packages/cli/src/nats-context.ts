import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
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

/** natscli's rule for a context's name, which names its file. */
function checkContextName(name: string): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith("."))
    throw new UsageError(`context name ${JSON.stringify(name)} is not valid: letters, digits, _, . and -`);
}

/** The JSON field natscli gives each of ours. */
const CONTEXT_FIELDS = {
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

/**
 * Writes context `context.name` as natscli does (`nats context save`): `<config>/context/<name>.json`, mode 0600
 * (it may hold a password), only the fields given. Refuses to replace an existing one unless `replace`; with
 * `select`, also makes it the selected context (`context.txt`). Resolves with the file's path.
 */
export async function writeNatsContext(
  context: NatsContext & { description?: string },
  env: NodeJS.ProcessEnv,
  options: { select?: boolean; replace?: boolean } = {},
): Promise<string> {
  checkContextName(context.name);
  const dir = natsConfigDir(env);
  const path = join(dir, "context", `${context.name}.json`);
  const body: Record<string, string> = context.description ? { description: context.description } : {};
  for (const [ours, theirs] of Object.entries(CONTEXT_FIELDS)) {
    const value = context[ours as keyof typeof CONTEXT_FIELDS];
    if (value !== undefined) body[theirs] = value;
  }
  await mkdir(join(dir, "context"), { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, flag: options.replace ? "w" : "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      throw new UsageError(`NATS context ${path} exists: give --force to replace it, or another --name`);
    throw error;
  }
  // A replaced file keeps its old mode: it may now hold a password.
  await chmod(path, 0o600);
  if (options.select) await writeFile(join(dir, "context.txt"), context.name);
  return path;
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
  checkContextName(chosen);
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
  for (const [ours, theirs] of Object.entries(CONTEXT_FIELDS)) {
    const value = field(theirs);
    if (value !== undefined) context[ours as keyof typeof CONTEXT_FIELDS] = value;
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
