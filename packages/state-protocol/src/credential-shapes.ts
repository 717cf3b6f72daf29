/**
 * The shape half of the secret rule: a string that carries a credential by its look, whatever field holds
 * it. Only high-confidence shapes — a prefix, an armour line or a structure that real credentials carry,
 * checked for length, alphabet and (where there is one) a checksum. Where in doubt, a string passes.
 * docs/decisions/0007-the-secret-rule.md holds the rules and what is deliberately allowed.
 *
 * @example credentialShapeOf("note: S" + "UA…")   // "nats-seed" (when the 58 characters check out)
 * @example credentialShapeOf("ssh-ed25519 AAAAC3…") // undefined
 */

/** What the secret rule recognised: a field's name, or the shape of a string. */
export type CredentialKind =
  | "field-name"
  | "nats-creds"
  | "pem-private-key"
  | "bearer-token"
  | "jwt"
  | "nats-seed"
  | "url-password"
  | "aws-access-key-id"
  | "github-token"
  | "gitlab-token"
  | "slack-token"
  | "stripe-key"
  | "google-api-key"
  | "npm-token"
  | "api-key";

/** The shape kinds, in the order they are tried on one string: the first that matches names it. */
export const CREDENTIAL_SHAPE_KINDS = [
  "nats-creds",
  "pem-private-key",
  "bearer-token",
  "jwt",
  "nats-seed",
  "url-password",
  "aws-access-key-id",
  "github-token",
  "gitlab-token",
  "slack-token",
  "stripe-key",
  "google-api-key",
  "npm-token",
  "api-key",
] as const satisfies readonly CredentialKind[];

/** Strings shorter than this carry no shape (the shortest, `a://b:c@d`, is 9 long). */
const SHORTEST_SHAPE = 9;

/**
 * One scan that every string takes: a string with none of these can carry no shape, and most ordinary
 * strings stop here. Each shape below starts with one of them.
 */
const HINT =
  /-----BEGIN |[Bb][Ee][Aa][Rr][Ee][Rr]\s|eyJ|S[UAOCNX][A-Z2-7]{56}|:\/\/|A[KS]IA|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|[rs]k_(?:live|test)_|AIza|npm_|sk-/;

// The look-behind and look-ahead keep a shape from being a slice of a longer word.
const SHAPES: ReadonlyArray<{ kind: (typeof CREDENTIAL_SHAPE_KINDS)[number]; pattern: RegExp; check?: Check }> = [
  { kind: "nats-creds", pattern: /-----BEGIN (?:NATS USER JWT|USER NKEY SEED)-----/ },
  // PKCS#1 (RSA, EC, DSA), PKCS#8 (plain and ENCRYPTED), OPENSSH, and an OpenPGP private key block.
  { kind: "pem-private-key", pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/ },
  {
    kind: "bearer-token",
    pattern: /(?<![A-Za-z])[Bb](?:earer|EARER)\s+([A-Za-z0-9\-._~+/]{16,}=*)/g,
    check: isOpaqueToken,
  },
  {
    kind: "jwt",
    pattern: /(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]*)\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
    check: hasJwtHeader,
  },
  { kind: "nats-seed", pattern: /(?<![A-Z2-7])(S[UAOCNX][A-Z2-7]{56})(?![A-Z2-7])/g, check: isNatsSeed },
  // userinfo with a non-empty password; the scheme as RFC 3986 spells it.
  {
    kind: "url-password",
    pattern: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:([^\s/?#@]+)@/g,
    check: isRealPassword,
  },
  { kind: "aws-access-key-id", pattern: /(?<![A-Za-z0-9])A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])/ },
  {
    kind: "github-token",
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{82,})(?![A-Za-z0-9_])/,
  },
  { kind: "gitlab-token", pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/ },
  { kind: "slack-token", pattern: /(?<![A-Za-z0-9])xox[abprs]-[0-9]+-[0-9A-Za-z-]{10,}/ },
  { kind: "stripe-key", pattern: /(?<![A-Za-z0-9_])[rs]k_(?:live|test)_[0-9A-Za-z]{24,}/ },
  { kind: "google-api-key", pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/ },
  { kind: "npm-token", pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/ },
  // OpenAI (`sk-…`, `sk-proj-…`) and Anthropic (`sk-ant-…`) keys: long, and mixed like random text is.
  { kind: "api-key", pattern: /(?<![A-Za-z0-9_-])sk-([A-Za-z0-9_-]{32,})/g, check: isMixedCase },
];

/** A second look at a match: `group` is the pattern's first capture. */
type Check = (group: string) => boolean;

/** The kind of the first credential shape the string carries, or `undefined`. */
export function credentialShapeOf(text: string): CredentialKind | undefined {
  if (text.length < SHORTEST_SHAPE || !HINT.test(text)) return undefined;
  for (const { kind, pattern, check } of SHAPES) {
    if (check === undefined) {
      if (pattern.test(text)) return kind;
      continue;
    }
    for (const match of text.matchAll(pattern)) if (check(match[1]!)) return kind;
  }
  return undefined;
}

/** A Bearer value that is a token, not a word of prose: it has letters and digits. */
function isOpaqueToken(token: string): boolean {
  return /[A-Za-z]/.test(token) && /[0-9]/.test(token);
}

/** Random text of 32 or more characters has upper case, lower case and digits; a kebab-case slug does not. */
function isMixedCase(text: string): boolean {
  return /[A-Z]/.test(text) && /[a-z]/.test(text) && /[0-9]/.test(text);
}

/** A JWT's header segment decodes to a JSON object with `alg`. */
function hasJwtHeader(segment: string): boolean {
  if (segment.length > 4096) return false;
  try {
    const base64 = segment.replaceAll("-", "+").replaceAll("_", "/");
    const header: unknown = JSON.parse(atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), "=")));
    return typeof header === "object" && header !== null && !Array.isArray(header) && "alg" in header;
  } catch {
    return false;
  }
}

/** A password that is a placeholder (`***`, `xxx`, `${DB_PASSWORD}`, `{{pw}}`, `<password>`, `$PW`, `%s`) passes. */
function isRealPassword(password: string): boolean {
  return !/^(?:\*+|[xX]+|\$\{[^}]*\}|\{\{[^}]*\}\}|<[^>]*>|\$[A-Za-z_][A-Za-z0-9_]*|%s)$/.test(password);
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** An nkey seed: 58 base32 characters decoding to two prefix bytes, 32 bytes of seed and a CRC-16 of them. */
function isNatsSeed(text: string): boolean {
  const bytes = new Uint8Array(36);
  let buffer = 0;
  let bits = 0;
  let length = 0;
  for (const char of text) {
    buffer = ((buffer << 5) | BASE32.indexOf(char)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      if (length < bytes.length) bytes[length++] = (buffer >> bits) & 0xff;
    }
  }
  if (length !== bytes.length) return false;
  const stored = bytes[34]! | (bytes[35]! << 8);
  return crc16(bytes.subarray(0, 34)) === stored;
}

/** CRC-16/XMODEM (polynomial 0x1021, initial 0), as nkeys computes it. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
