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

/** Every shape kind the rule knows. */
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

type ShapeKind = (typeof CREDENTIAL_SHAPE_KINDS)[number];

/** Strings shorter than this carry no shape (the shortest, `a://b:c@d`, is 9 long). */
const SHORTEST_SHAPE = 9;

/**
 * Where a shape can start: the one scan every string takes, left to right. Most ordinary strings have no
 * hint and stop here; at each hint only the shapes that begin with it are tried, anchored there.
 */
const HINT =
  /-----BEGIN |[Bb](?:earer|EARER)\s|eyJ|S[UAOCNX][A-Z2-7]{56}|:\/\/|A[KS]IA|AIza|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|[rs]k_(?:live|test)_|npm_|sk-/g;

/** A shape anchored at its hint (sticky); the look-behind keeps it from being a slice of a longer word. */
interface Shape {
  kind: ShapeKind;
  pattern: RegExp;
  /** A second look at the pattern's first capture. */
  check?: (group: string) => boolean;
}

const shape = (kind: ShapeKind, pattern: RegExp, check?: (group: string) => boolean): Shape =>
  check === undefined ? { kind, pattern } : { kind, pattern, check };

const NATS_CREDS = shape("nats-creds", /-----BEGIN (?:NATS USER JWT|USER NKEY SEED)-----/y);
// PKCS#1 (RSA, EC, DSA), PKCS#8 (plain and ENCRYPTED), OPENSSH, and an OpenPGP private key block.
const PEM_PRIVATE_KEY = shape("pem-private-key", /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/y);
const BEARER = shape("bearer-token", /(?<![A-Za-z])[Bb](?:earer|EARER)\s+([A-Za-z0-9\-._~+/]{16,}=*)/y, isOpaqueToken);
const JWT = shape("jwt", /(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{10,})\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/y, hasJwtHeader);
const NATS_SEED = shape("nats-seed", /(?<![A-Z2-7])(S[UAOCNX][A-Z2-7]{56})(?![A-Z2-7])/y, isNatsSeed);
// Anchored at `://`: the scheme before it as RFC 3986 spells it, then userinfo with a non-empty password.
const URL_PASSWORD = shape(
  "url-password",
  /(?<=(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*):\/\/[^\s/?#@:]*:([^\s/?#@]+)@/y,
  isRealPassword,
);
const AWS = shape("aws-access-key-id", /(?<![A-Za-z0-9])A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])/y);
const GOOGLE = shape("google-api-key", /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/y);
const GITHUB = shape(
  "github-token",
  /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{82,})(?![A-Za-z0-9_])/y,
);
const GITLAB = shape("gitlab-token", /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/y);
const SLACK = shape("slack-token", /(?<![A-Za-z0-9])xox[abprs]-[0-9]+-[0-9A-Za-z-]{10,}/y);
const STRIPE = shape("stripe-key", /(?<![A-Za-z0-9_])[rs]k_(?:live|test)_[0-9A-Za-z]{24,}/y);
const NPM = shape("npm-token", /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y);
// OpenAI (`sk-…`, `sk-proj-…`) and Anthropic (`sk-ant-…`) keys: long, and mixed as random text is.
const API_KEY = shape("api-key", /(?<![A-Za-z0-9_-])sk-([A-Za-z0-9_-]{32,})/y, isMixedCase);

/** The shapes that can begin with a hint, told apart by its first characters. */
function shapesFor(hint: string): readonly Shape[] {
  switch (hint[0]) {
    case "-":
      return [NATS_CREDS, PEM_PRIVATE_KEY];
    case "B":
    case "b":
      return [BEARER];
    case "e":
      return [JWT];
    case "S":
      return [NATS_SEED];
    case ":":
      return [URL_PASSWORD];
    case "A":
      return [hint[1] === "I" ? GOOGLE : AWS];
    case "g":
      return [hint[1] === "l" ? GITLAB : GITHUB];
    case "x":
      return [SLACK];
    case "n":
      return [NPM];
    default:
      return [hint[2] === "-" ? API_KEY : STRIPE];
  }
}

/**
 * The kind of the first credential shape the string carries, left to right, or `undefined`. A string that
 * carries two (a creds file holds a JWT and a seed) is named by the one that starts first.
 */
export function credentialShapeOf(text: string): CredentialKind | undefined {
  if (text.length < SHORTEST_SHAPE) return undefined;
  HINT.lastIndex = 0;
  for (let hint = HINT.exec(text); hint !== null; hint = HINT.exec(text)) {
    for (const { kind, pattern, check } of shapesFor(hint[0])) {
      pattern.lastIndex = hint.index;
      const match = pattern.exec(text);
      if (match !== null && (check === undefined || check(match[1]!))) return kind;
    }
    // A seed's hint that failed is a run of base32 in which no other shape can start (each wants a
    // non-alphanumeric character before it): skip the run, so a long upper-case string stays linear.
    HINT.lastIndex = hint.index + (hint[0][0] === "S" ? hint[0].length : 1);
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
  if (segment.length > 4096 || segment.length % 4 === 1) return false;
  const base64 = segment.replaceAll("-", "+").replaceAll("_", "/");
  const text = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), "="));
  // Most look-alikes fail here, without the cost of a JSON parse error.
  if (!text.includes('"alg"') || !text.trimEnd().endsWith("}")) return false;
  try {
    const header: unknown = JSON.parse(text);
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
