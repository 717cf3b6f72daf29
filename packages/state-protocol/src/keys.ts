/**
 * The key and filter rules of the wire. A key is NATS's KV rule, bounded; a filter may also use the
 * NATS wildcards `*` and `>` as whole tokens.
 *
 * @example checkKey("all.github") // undefined: a valid key
 * @example checkKey("_kv.x")      // "a key may not start with _kv (reserved by NATS)"
 */

/** The longest key the wire accepts, in UTF-8 bytes (every valid key is ASCII). */
export const MAX_KEY_BYTES = 1024;

const encoder = new TextEncoder();
const KEY_CHARACTERS = /^[-/_=.a-zA-Z0-9]+$/;
const TOKEN_CHARACTERS = /^[-/_=a-zA-Z0-9]+$/;

// Checked in UTF-16 units first, which never exceed UTF-8 bytes: a longer string is over the bound either
// way, and a shorter one with non-ASCII characters is refused by the character rule.
function byteLength(text: string): number {
  return encoder.encode(text).byteLength;
}

function describe(text: string): string {
  return text.length > 40 ? `${JSON.stringify(text.slice(0, 40))}…` : JSON.stringify(text);
}

/** Returns why `key` is not a valid key, or `undefined` when it is. */
export function checkKey(key: string): string | undefined {
  if (key.length === 0) return "a key may not be empty";
  if (key.length > MAX_KEY_BYTES) return `a key is at most ${MAX_KEY_BYTES} bytes, got ${byteLength(key)}`;
  if (!KEY_CHARACTERS.test(key)) return `key ${describe(key)} may use only letters, digits and - / _ = .`;
  if (key.startsWith(".") || key.endsWith(".")) return `key ${describe(key)} may not start or end with "."`;
  if (key.includes("..")) return `key ${describe(key)} may not contain an empty token ("..")`;
  if (key.startsWith("_kv")) return `key ${describe(key)} may not start with _kv (reserved by NATS)`;
  return undefined;
}

/** Returns why `filter` is not a valid watch/keys filter, or `undefined` when it is. */
export function checkFilter(filter: string): string | undefined {
  if (filter.length === 0) return "a filter may not be empty";
  if (filter.length > MAX_KEY_BYTES) return `a filter is at most ${MAX_KEY_BYTES} bytes, got ${byteLength(filter)}`;
  if (filter.startsWith("_kv")) return `filter ${describe(filter)} may not start with _kv (reserved by NATS)`;
  const tokens = filter.split(".");
  for (const [index, token] of tokens.entries()) {
    if (token === "*") continue;
    if (token === ">") {
      if (index !== tokens.length - 1) return `filter ${describe(filter)}: ">" may only be the last token`;
      continue;
    }
    if (token.length === 0) return `filter ${describe(filter)} has an empty token`;
    if (!TOKEN_CHARACTERS.test(token)) {
      return `filter ${describe(filter)}: token ${describe(token)} may use only letters, digits and - / _ =, or be * or >`;
    }
  }
  return undefined;
}

export function isValidKey(key: string): boolean {
  return checkKey(key) === undefined;
}

export function isValidFilter(filter: string): boolean {
  return checkFilter(filter) === undefined;
}
