/**
 * The secret rule: a value may not carry an object field whose name says it is a credential, nor a string
 * (a field's value, an array item, the bare value, a field's name) that carries one by its shape
 * (credential-shapes.ts). Both in one walk. The check is partial by design: it catches the ordinary
 * mistakes (`{"Authorization": "…"}`, a private key pasted into `note`), not a determined one.
 *
 * @example findCredential({ headers: { Authorization: "Bearer x" } }) // { path: "headers.Authorization", kind: "field-name" }
 * @example findCredential({ max_tokens: 10, publicKey: "…" })          // undefined
 */
import { type CredentialKind, credentialShapeOf } from "./credential-shapes.js";

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
  "creds",
  "cookie",
  "cookies",
  "apikey",
  "apikeys",
  "jwt",
  "jwts",
  "bearer",
]);

/** Two-word credentials: the last word, and the words that make it one when they come just before it. */
const CREDENTIAL_PAIRS = new Map<string, ReadonlySet<string>>([
  ["key", new Set(["api", "private", "access", "secret", "signing", "encryption"])],
  ["keys", new Set(["api", "private", "access", "secret", "signing", "encryption"])],
  ["seed", new Set(["nkey"])],
  ["seeds", new Set(["nkey"])],
]);

/**
 * A word after a credential that only says how it is written down: `privateKeyPem` is still the key.
 * `base` is `Base64` once the trailing digits are gone.
 */
const ENCODING_WORDS = new Set(["pem", "der", "base", "hex", "jwk", "raw", "bytes", "value"]);

/** Splits a field name into lower-case words: camelCase (acronym runs kept), snake, kebab, dots, spaces. */
export function fieldNameWords(name: string): string[] {
  const words: string[] = [];
  for (const part of name.split(/[\s_.-]+/)) {
    for (const word of part.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? []) words.push(word.toLowerCase());
  }
  while (words.length > 0 && /^[0-9]+$/.test(words[words.length - 1]!)) words.pop();
  return words;
}

/**
 * Whether a field name, split into words, ends in a credential word or pair, or in one followed by a
 * single encoding word (`private_key_pem`, `tokenValue`).
 */
export function isCredentialFieldName(name: string): boolean {
  const words = fieldNameWords(name);
  if (endsInCredential(words, words.length)) return true;
  return words.length > 1 && ENCODING_WORDS.has(words[words.length - 1]!) && endsInCredential(words, words.length - 1);
}

/** Whether `words[0..end)` ends in a credential word or pair. */
function endsInCredential(words: string[], end: number): boolean {
  const last = words[end - 1];
  if (last === undefined) return false;
  if (CREDENTIAL_WORDS.has(last)) return true;
  const before = words[end - 2];
  return before !== undefined && CREDENTIAL_PAIRS.get(last)?.has(before) === true;
}

/**
 * Verdicts on field names, kept across calls: a bucket's values repeat the same names, and splitting a name
 * into words (two regexes) was most of the scan's cost per call. Bounded: short names only, and forgotten
 * all at once when full.
 */
const judgedNames = new Map<string, boolean>();
const MOST_JUDGED_NAMES = 4096;
const LONGEST_JUDGED_NAME = 64;

function isCredentialName(name: string): boolean {
  let verdict = judgedNames.get(name);
  if (verdict !== undefined) return verdict;
  verdict = isCredentialFieldName(name);
  if (name.length <= LONGEST_JUDGED_NAME) {
    if (judgedNames.size >= MOST_JUDGED_NAMES) judgedNames.clear();
    judgedNames.set(name, verdict);
  }
  return verdict;
}

/** Where a value carries a credential, and what was recognised. Never any part of the credential itself. */
export interface CredentialFinding {
  /** `""` for the bare value; `a.b[2]["odd name"]` otherwise. A credential in a field's name is reported at
   * the object holding that field, so the path never repeats it. */
  path: string;
  kind: CredentialKind;
}

/** A place in the value still to look at; its path is spelled out only if something is found there. */
interface Place {
  value: unknown;
  parent: Place | undefined;
  /** The field name or array index that leads here from `parent`. */
  step: string | number | undefined;
}

/**
 * The first credential in the value, depth first in field order: for each field, its name's shape, then
 * its name, then its value. Iterative, so a deeply nested value (a 2 MiB line of `[[[[…`) cannot overflow
 * the stack. `path` prefixes every path found.
 */
export function findCredential(value: unknown, path = ""): CredentialFinding | undefined {
  const stack: Place[] = [{ value, parent: undefined, step: undefined }];
  while (stack.length > 0) {
    const place = stack.pop()!;
    if (typeof place.step === "string") {
      const shape = credentialShapeOf(place.step);
      if (shape !== undefined) return { path: pathOf(place.parent!, path), kind: shape };
      if (isCredentialName(place.step)) return { path: pathOf(place, path), kind: "field-name" };
    }
    const current = place.value;
    if (typeof current === "string") {
      const shape = credentialShapeOf(current);
      if (shape !== undefined) return { path: pathOf(place, path), kind: shape };
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        stack.push({ value: current[index], parent: place, step: index });
      }
    } else if (current !== null && typeof current === "object") {
      const record = current as Record<string, unknown>;
      const names = Object.keys(record);
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index]!;
        stack.push({ value: record[name], parent: place, step: name });
      }
    }
  }
  return undefined;
}

/** The path of the first credential (see `findCredential`), or `undefined`: the older, path-only form. */
export function findSecretField(value: unknown, path = ""): string | undefined {
  return findCredential(value, path)?.path;
}

function pathOf(place: Place, root: string): string {
  const steps: Array<string | number> = [];
  for (let at: Place | undefined = place; at?.step !== undefined; at = at.parent) steps.push(at.step);
  let path = root;
  for (let index = steps.length - 1; index >= 0; index--) path = pathStep(path, steps[index]!);
  return path;
}

function pathStep(parent: string, step: string | number): string {
  if (typeof step === "number") return `${parent}[${step}]`;
  const plain = /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(step);
  if (plain) return parent === "" ? step : `${parent}.${step}`;
  return `${parent}[${JSON.stringify(step)}]`;
}
