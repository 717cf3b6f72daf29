import { isUtf8 } from "node:buffer";

/**
 * Whether stored bytes can go into an NDJSON line as they are: valid UTF-8, no CR or LF byte anywhere, and
 * exactly one JSON text (RFC 8259; JSON.parse's grammar). Decides what `JSON.parse` of the strictly decoded
 * text would, without building the text or the value: a stored value is checked once per read and, on a
 * line, never parsed by the runtime at all.
 *
 * Measured on node 20 against the strict decode and `JSON.parse` it replaces (per check): 256 B 0.30 against
 * 0.45 µs; a 1 KiB value of one long string, 0.90 against 0.83 µs; an object of 400 B, 0.47 against 1.9 µs;
 * 207 KiB of 2,600 small objects, 0.29–0.36 against 1.8–1.9 ms. Linear in the bytes whatever they hold: a
 * hostile value costs what any value of its size does, and nesting uses a heap stack, never recursion.
 */
export function isOneLineJson(data: Uint8Array): boolean {
  // Whitespace is then only space and tab, and no line break can hide inside the text.
  if (data.indexOf(LF) !== -1 || data.indexOf(CR) !== -1 || !isUtf8(data)) return false;
  const end = data.length;
  /** The closing byte of each open container, innermost last. */
  const open: number[] = [];
  let at = 0;
  for (;;) {
    // A value.
    at = skipSpace(data, at, end);
    const first = data[at];
    if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      const close = first === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
      at = skipSpace(data, at + 1, end);
      if (data[at] === close) at += 1;
      else {
        open.push(close);
        if (close === CLOSE_BRACKET) continue;
        at = afterMemberName(data, at, end);
        if (at < 0) return false;
        continue;
      }
    } else {
      at = afterScalar(data, at, end);
      if (at < 0) return false;
    }
    // What follows a value: the end, a comma, or the close of its container (and perhaps of outer ones).
    for (;;) {
      at = skipSpace(data, at, end);
      if (open.length === 0) return at === end;
      const close = open[open.length - 1];
      const next = data[at];
      if (next === close) {
        open.pop();
        at += 1;
        continue;
      }
      if (next !== COMMA) return false;
      at += 1;
      if (close === CLOSE_BRACE) {
        at = afterMemberName(data, skipSpace(data, at, end), end);
        if (at < 0) return false;
      }
      break;
    }
  }
}

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const UPPER_E = 0x45;
const LOWER_E = 0x65;
const LOWER_U = 0x75;

/** Bytes that end a run of plain string content: control characters, the quote and the backslash. */
const STRING_STOP = new Uint8Array(256);
for (let byte = 0; byte < SPACE; byte++) STRING_STOP[byte] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;
/** The characters a backslash may escape, but `u`: `"` `\` `/` `b` `f` `n` `r` `t`. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const char of '"\\/bfnrt') SIMPLE_ESCAPE[char.charCodeAt(0)] = 1;
const HEX_DIGIT = new Uint8Array(256);
for (const char of "0123456789abcdefABCDEF") HEX_DIGIT[char.charCodeAt(0)] = 1;
const KEYWORDS = [
  Uint8Array.from("true", (char) => char.charCodeAt(0)),
  Uint8Array.from("false", (char) => char.charCodeAt(0)),
  Uint8Array.from("null", (char) => char.charCodeAt(0)),
];

function skipSpace(data: Uint8Array, at: number, end: number): number {
  while (at < end && (data[at] === SPACE || data[at] === TAB)) at += 1;
  return at;
}

/** Past `"name"` and its colon; -1 when that is not what is there. */
function afterMemberName(data: Uint8Array, at: number, end: number): number {
  if (data[at] !== QUOTE) return -1;
  at = afterString(data, at, end);
  if (at < 0) return -1;
  at = skipSpace(data, at, end);
  return data[at] === COLON ? at + 1 : -1;
}

/** Past a string, a number, `true`, `false` or `null` starting at `at`; -1 when none starts there. */
function afterScalar(data: Uint8Array, at: number, end: number): number {
  const first = data[at];
  if (first === QUOTE) return afterString(data, at, end);
  if (first === MINUS || (first !== undefined && first >= ZERO && first <= NINE)) return afterNumber(data, at, end);
  for (const keyword of KEYWORDS) {
    if (first !== keyword[0]) continue;
    if (at + keyword.length > end) return -1;
    for (let index = 1; index < keyword.length; index++) if (data[at + index] !== keyword[index]) return -1;
    return at + keyword.length;
  }
  return -1;
}

/** Past the string whose opening quote is at `at`; -1 when it is not a complete, valid string. */
function afterString(data: Uint8Array, at: number, end: number): number {
  at += 1;
  for (;;) {
    while (at < end && STRING_STOP[data[at]!] === 0) at += 1;
    if (at >= end) return -1;
    const byte = data[at]!;
    if (byte === QUOTE) return at + 1;
    if (byte !== BACKSLASH) return -1; // a control character
    const escaped = data[at + 1];
    if (escaped === undefined) return -1;
    if (SIMPLE_ESCAPE[escaped] === 1) at += 2;
    else if (escaped === LOWER_U) {
      if (at + 6 > end) return -1;
      for (let index = at + 2; index < at + 6; index++) if (HEX_DIGIT[data[index]!] === 0) return -1;
      at += 6;
    } else return -1;
  }
}

/** Past the number at `at`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; -1 when there is none. */
function afterNumber(data: Uint8Array, at: number, end: number): number {
  if (data[at] === MINUS) at += 1;
  if (data[at] === ZERO) at += 1;
  else if (isDigitFrom(data[at], ONE)) at = afterDigits(data, at, end);
  else return -1;
  if (data[at] === DOT) {
    if (!isDigitFrom(data[at + 1], ZERO)) return -1;
    at = afterDigits(data, at + 1, end);
  }
  if (data[at] === LOWER_E || data[at] === UPPER_E) {
    at += 1;
    if (data[at] === PLUS || data[at] === MINUS) at += 1;
    if (!isDigitFrom(data[at], ZERO)) return -1;
    at = afterDigits(data, at, end);
  }
  return at;
}

function isDigitFrom(byte: number | undefined, lowest: number): boolean {
  return byte !== undefined && byte >= lowest && byte <= NINE;
}

function afterDigits(data: Uint8Array, at: number, end: number): number {
  while (at < end && isDigitFrom(data[at], ZERO)) at += 1;
  return at;
}
