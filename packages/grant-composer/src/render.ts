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
  /** JetStream limits of the account, as nats-server sizes (`{ maxFile: "1G" }`); JetStream is enabled either way. */
  jetstream?: { maxFile?: string; maxMemory?: string };
}

const quote = (text: string) => JSON.stringify(text);
const list = (items: readonly string[]) => `[${items.map(quote).join(", ")}]`;
/** A JetStream size as nats-server parses it: unquoted (`1G`); a quoted "1G" is refused by the server. */
function size(option: string, value: string): string {
  if (!/^[0-9]+[KMGT]?B?$/i.test(value))
    throw new GrantError(
      "bad-limit",
      `jetstream.${option} ${quote(value)} is not a size: write it as 512M, 1G or a number of bytes`,
    );
  return value;
}

/** One direction of a user's permissions as a server reads it: an allow list, or deny-all when nothing is allowed. */
export type PermissionDirection = { allow: string[] } | { deny: string[] };

/** A grant's permissions as every rendered form carries them: the server config, the JSON form and a JWT. */
export interface RenderedPermissions {
  publish: PermissionDirection;
  subscribe: PermissionDirection;
}

/**
 * nats-server and nats-jwt read an empty allow list as "no restriction" (measured: a user with
 * `publish: { allow: [] }` published anywhere in its account and deleted a stream), so nothing allowed is
 * written as deny-all. Every renderer goes through this one function, so the forms cannot disagree.
 */
const direction = (allow: readonly string[]): PermissionDirection =>
  allow.length === 0 ? { deny: [">"] } : { allow: [...allow] };

/** A grant's permissions, safe to load as they are: no direction is ever an empty allow list. */
export function renderPermissions(grant: Grant): RenderedPermissions {
  return {
    publish: direction(grant.permissions.publish.allow),
    subscribe: direction(grant.permissions.subscribe.allow),
  };
}

/** A grant as printed and stored (`mesh-state grants --format json`): its `permissions` load into nats-server as they are. */
export interface GrantJson {
  user: string;
  inboxPrefix: string;
  permissions: RenderedPermissions;
}

/**
 * The JSON form of a grant. Print this, not the `Grant` itself: for a machine that needs nothing a `Grant`
 * holds an empty allow list, which a server reads as no restriction.
 *
 * @example renderGrantJson(composeMachineGrant({ machine: "idle", assignments: [], catalogue })).permissions.publish // { deny: [">"] }
 */
export function renderGrantJson(grant: Grant): GrantJson {
  return { user: grant.user, inboxPrefix: grant.inboxPrefix, permissions: renderPermissions(grant) };
}

const confDirection = (rendered: PermissionDirection) =>
  "allow" in rendered ? `{ allow: ${list(rendered.allow)} }` : `{ deny: ${list(rendered.deny)} }`;

/**
 * The nats-server config block of the state account: JetStream on, and only the users given (the
 * controller's state user and one state user per machine). The account holds only the `KV_mod_*` streams,
 * so what a consumer's deliver subject can reach (nats-server issue #8274) stays inside it.
 *
 * @example renderStateAccountConfig({ users: [{ grant: composeControllerGrant(), password: "s3cret" }] })
 */
export function renderStateAccountConfig(input: RenderStateAccountInput): string {
  return `accounts {\n${renderStateAccount(input)}}\n`;
}

/**
 * The state account's entry alone (`STATE { ... }`), for a server config that declares the mesh's other
 * accounts in the same `accounts { }` block — nats-server reads one such block, not several.
 *
 * @example `accounts {\n  MESH { users: [...] }\n${renderStateAccount({ users })}}`
 */
export function renderStateAccount(input: RenderStateAccountInput): string {
  const account = input.account ?? "STATE";
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(account))
    throw new GrantError("bad-user", `account name ${quote(account)} is not valid: use letters, digits, _ and -`);
  const seen = new Set<string>();
  const users = input.users.map(({ grant, password, nkey }) => {
    if (seen.has(grant.user))
      throw new GrantError(
        "bad-user",
        `user ${grant.user} appears twice in the state account: give each machine one user`,
      );
    seen.add(grant.user);
    if ((password === undefined) === (nkey === undefined)) {
      throw new GrantError("bad-user", `user ${grant.user} needs exactly one of password or nkey`);
    }
    const auth =
      nkey === undefined ? `user: ${quote(grant.user)}, password: ${quote(password!)}` : `nkey: ${quote(nkey)}`;
    const { publish, subscribe } = renderPermissions(grant);
    return [
      `      { ${auth},`,
      `        permissions: {`,
      `          publish: ${confDirection(publish)},`,
      `          subscribe: ${confDirection(subscribe)} } }`,
    ].join("\n");
  });
  const limits = [
    input.jetstream?.maxFile === undefined ? undefined : `max_file: ${size("maxFile", input.jetstream.maxFile)}`,
    input.jetstream?.maxMemory === undefined ? undefined : `max_mem: ${size("maxMemory", input.jetstream.maxMemory)}`,
  ].filter((line) => line !== undefined);
  const jetstream = limits.length === 0 ? "enabled" : `{ ${limits.join(", ")} }`;
  return [`  ${account} {`, `    jetstream: ${jetstream}`, `    users: [`, ...users, `    ]`, `  }`, ``].join("\n");
}

/** A direction of a user JWT's permissions: an allow list, or deny-all when nothing is allowed. */
export type JwtPermission = PermissionDirection;

/**
 * The permission claims of a user JWT (nats-jwt's `pub`/`sub` fields) for a composed grant. An empty
 * allow list becomes `deny: [">"]`, because an empty or missing allow list in a JWT allows everything.
 */
export function renderJwtPermissions(grant: Grant): { pub: JwtPermission; sub: JwtPermission } {
  const { publish, subscribe } = renderPermissions(grant);
  return { pub: publish, sub: subscribe };
}
