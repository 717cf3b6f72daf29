/**
 * The secret rule: a value may not carry an object field whose name says it is a credential.
 * The check is partial by design: it catches the ordinary mistake (`{"Authorization": "Bearer …"}`),
 * not a determined one (a credential under an innocent name, or inside a string).
 *
 * @example findSecretField({ headers: { Authorization: "Bearer x" } }) // "headers.Authorization"
 * @example findSecretField({ max_tokens: 10, publicKey: "…" })          // undefined
 */

const CREDENTIAL_WORDS = new Set([
  "password",
  "passwords",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "secrets",
  "token",
  "authorization",
  "credential",
  "credentials",
  "cookie",
  "cookies",
  "apikey",
  "apikeys",
]);

const CREDENTIAL_PAIR_FIRST_WORDS = new Set(["api", "private", "access", "secret", "signing", "encryption"]);
const KEY_WORDS = new Set(["key", "keys"]);

/** Splits a field name into lower-case words: camelCase (acronym runs kept), snake, kebab, dots, spaces. */
export function fieldNameWords(name: string): string[] {
  const words: string[] = [];
  for (const part of name.split(/[\s_.-]+/)) {
    for (const word of part.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? []) words.push(word.toLowerCase());
  }
  while (words.length > 0 && /^[0-9]+$/.test(words[words.length - 1]!)) words.pop();
  return words;
}

/** Whether a field name, split into words, ends in a credential word or pair. */
export function isCredentialFieldName(name: string): boolean {
  const words = fieldNameWords(name);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (CREDENTIAL_WORDS.has(last)) return true;
  const before = words[words.length - 2];
  return before !== undefined && KEY_WORDS.has(last) && CREDENTIAL_PAIR_FIRST_WORDS.has(before);
}

function pathStep(parent: string, name: string): string {
  const plain = /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(name);
  if (plain) return parent === "" ? name : `${parent}.${name}`;
  return `${parent}[${JSON.stringify(name)}]`;
}

/**
 * Returns the path of the first field whose name is a credential, depth first in field order, or `undefined`.
 * Iterative, so a deeply nested value (a 2 MiB line of `[[[[…`) cannot overflow the stack.
 */
export function findSecretField(value: unknown, path = ""): string | undefined {
  // Each entry is a value to look into; `field` is set when the value sits under a field whose name is still to judge.
  const stack: Array<{ value: unknown; path: string; field?: string }> = [{ value, path }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next.field !== undefined && isCredentialFieldName(next.field)) return next.path;
    if (Array.isArray(next.value)) {
      for (let index = next.value.length - 1; index >= 0; index--) {
        stack.push({ value: next.value[index], path: `${next.path}[${index}]` });
      }
    } else if (next.value !== null && typeof next.value === "object") {
      const record = next.value as Record<string, unknown>;
      const names = Object.keys(record);
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index]!;
        stack.push({ value: record[name], path: pathStep(next.path, name), field: name });
      }
    }
  }
  return undefined;
}
