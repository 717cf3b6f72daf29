import { encodeUser, fmtCreds } from "@nats-io/jwt";
import { createUser, fromSeed, type KeyPair } from "@nats-io/nkeys";
import { GrantError } from "./errors.js";
import type { Grant } from "./grant.js";
import { renderJwtPermissions } from "./render.js";

export interface IssueCredentialsInput {
  grant: Grant;
  /** The state account's public key (`A…`): the user's issuer account. */
  account: string;
  /** The seed (`SA…`) of one of the account's signing keys, listed in the account JWT's `signing_keys`. */
  signingKeySeed: string;
  /** The user's seed (`SU…`); a new user key is made when absent. */
  userSeed?: string;
  /** Seconds since the epoch after which the server refuses the JWT; none by default. */
  expires?: number;
}

/** A user's signed JWT, its keys, and the `.creds` file (JWT and seed) a client connects with. */
export interface IssuedCredentials {
  user: string;
  publicKey: string;
  jwt: string;
  creds: string;
}

/**
 * Issues a state user's credentials for decentralized auth: a user JWT named after the grant's user, with
 * the grant's permissions (`renderJwtPermissions`: deny-all where nothing is allowed), signed by a signing
 * key of the state account, so a machine gets its credentials without touching the server's config.
 *
 * @example const { creds } = await issueUserCredentials({ grant, account: "AB…", signingKeySeed: "SA…" });
 */
export async function issueUserCredentials(input: IssueCredentialsInput): Promise<IssuedCredentials> {
  const signer = keyPair(input.signingKeySeed, "A", "signingKeySeed");
  const user = input.userSeed === undefined ? createUser() : keyPair(input.userSeed, "U", "userSeed");
  if (!/^A[A-Z2-7]{55}$/.test(input.account))
    throw new GrantError("bad-user", `account ${JSON.stringify(input.account)} is not an account public key (A…)`);
  const { pub, sub } = renderJwtPermissions(input.grant);
  const jwt = await encodeUser(
    input.grant.user,
    user,
    input.account,
    { pub, sub },
    { signer, ...(input.expires === undefined ? {} : { exp: input.expires }) },
  );
  return {
    user: input.grant.user,
    publicKey: user.getPublicKey(),
    jwt,
    creds: new TextDecoder().decode(fmtCreds(jwt, user)),
  };
}

function keyPair(seed: string, prefix: "A" | "U", field: string): KeyPair {
  try {
    const pair = fromSeed(new TextEncoder().encode(seed.trim()));
    if (pair.getPublicKey().startsWith(prefix)) return pair;
  } catch {
    // reported below
  }
  throw new GrantError("bad-user", `${field} is not an ${prefix === "A" ? "account" : "user"} nkey seed (S${prefix}…)`);
}
