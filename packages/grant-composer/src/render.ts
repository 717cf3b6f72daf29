import { GrantError } from "./errors.js";
import type { Grant } from "./grant.js";

/** A user of the state account: its grant and how it authenticates. */
export interface StateAccountUser {
  grant: Grant;
  /** Plain password (development, tests); prefer `nkey` in production. */
  password?: string;
  /** The user's public nkey (`U…`); the user then signs with its seed instead of a password. */
  nkey?: string;
}

export interface RenderStateAccountInput {
  /** The account's name; `STATE` by default. */
  account?: string;
  users: readonly StateAccountUser[];
  /** JetStream limits of the account, as nats-server config values (`max_file: "1G"`); enabled either way. */
  jetstream?: { maxFile?: string; maxMemory?: string };
}

const quote = (text: string) => JSON.stringify(text);
const list = (items: readonly string[]) => `[${items.map(quote).join(", ")}]`;

/**
 * The nats-server config block of the state account: JetStream on, and only the users given (the
 * controller's state user and one state user per machine). The account holds only the `KV_mod_*` streams,
 * so what a consumer's deliver subject can reach (nats-server issue #8274) stays inside it.
 *
 * @example renderStateAccountConfig({ users: [{ grant: composeControllerGrant(), password: "s3cret" }] })
 */
export function renderStateAccountConfig(input: RenderStateAccountInput): string {
  const account = input.account ?? "STATE";
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(account)) throw new GrantError("bad-user", `account name ${quote(account)} is not valid`);
  const seen = new Set<string>();
  const users = input.users.map(({ grant, password, nkey }) => {
    if (seen.has(grant.user)) throw new GrantError("bad-user", `user ${grant.user} appears twice in the state account`);
    seen.add(grant.user);
    if ((password === undefined) === (nkey === undefined)) {
      throw new GrantError("bad-user", `user ${grant.user} needs exactly one of password or nkey`);
    }
    const auth = nkey === undefined ? `user: ${quote(grant.user)}, password: ${quote(password!)}` : `nkey: ${quote(nkey)}`;
    const { publish, subscribe } = grant.permissions;
    return [
      `      { ${auth},`,
      `        permissions: {`,
      `          publish: { allow: ${list(publish.allow)} },`,
      `          subscribe: { allow: ${list(subscribe.allow)} } } }`,
    ].join("\n");
  });
  const limits = [
    input.jetstream?.maxFile === undefined ? undefined : `max_file: ${quote(input.jetstream.maxFile)}`,
    input.jetstream?.maxMemory === undefined ? undefined : `max_mem: ${quote(input.jetstream.maxMemory)}`,
  ].filter((line) => line !== undefined);
  const jetstream = limits.length === 0 ? "enabled" : `{ ${limits.join(", ")} }`;
  return [`accounts {`, `  ${account} {`, `    jetstream: ${jetstream}`, `    users: [`, users.join("\n"), `    ]`, `  }`, `}`, ``].join("\n");
}

/** The permission claims of a user JWT (nats-jwt's `pub`/`sub` fields) for a composed grant. */
export function renderJwtPermissions(grant: Grant): { pub: { allow: string[] }; sub: { allow: string[] } } {
  return {
    pub: { allow: [...grant.permissions.publish.allow] },
    sub: { allow: [...grant.permissions.subscribe.allow] },
  };
}
