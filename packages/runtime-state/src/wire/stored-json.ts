import { ENCODED_JSON, type EncodedJsonResult, type Entry, type NdjsonBytesLine } from "@mesh/state-protocol";
import { isOneLineJson } from "./json-check.js";

/**
 * Stored values as the runtime reads them. A value is stored as UTF-8 JSON; what passes `isOneLineJson` goes
 * into an NDJSON line as the text NATS handed over, never parsed or encoded again by the runtime. Anything
 * else was written by another client and reads as `decodeValue` reads it, then is encoded: whatever bytes a
 * hostile machine stores, a line to a bundle never breaks.
 */

const decoder = new TextDecoder();
/** For bytes `isOneLineJson` passed: valid UTF-8, so decoded exactly (a BOM kept, though JSON never starts with one). */
const exactDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
/** The largest stored value a get's line carries as text rather than as bytes. */
const TEXT_SPLICE_MAX_BYTES = 16 * 1024;

/** Values are stored as JSON text; anything else (written by another client) reads as its text. */
export function decodeValue(data: Uint8Array): unknown {
  const text = decoder.decode(data);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const NOT_PARSED: unique symbol = Symbol("not parsed");

/**
 * The get verb's answer. In-process it is an entry like any other (its own enumerable fields are an entry's,
 * `value` parsed on first use); on a line it goes out as its own encoding, the stored value's bytes as read.
 */
export class EntryAnswer implements Entry, EncodedJsonResult {
  declare readonly key: string;
  declare readonly value: Entry["value"];
  declare readonly revision: number;
  declare readonly updated: string;
  /** The stored bytes when they can go into a line as they are (a view on the chunk NATS read them into). */
  readonly #stored: Uint8Array | undefined;
  #value: unknown = NOT_PARSED;

  constructor(key: string, data: Uint8Array, revision: number, updated: string) {
    this.#stored = isOneLineJson(data) ? data : undefined;
    if (this.#stored === undefined) this.#value = decodeValue(data);
    this.key = key;
    Object.defineProperty(this, "value", ANSWER_VALUE);
    this.revision = revision;
    this.updated = updated;
  }

  get [ENCODED_JSON](): string | NdjsonBytesLine | undefined {
    const stored = this.#stored;
    if (stored === undefined) return undefined;
    const head = `{"key":${JSON.stringify(this.key)},"value":`;
    const tail = `,"revision":${this.revision},"updated":${JSON.stringify(this.updated)}}`;
    // A small value goes as text, one string with the rest of the line (225 ns for 256 B, against 670 for the
    // pieces and their heads as bytes); a large one as its bytes, never made into a string at all.
    if (stored.byteLength <= TEXT_SPLICE_MAX_BYTES) return `${head}${exactDecoder.decode(stored)}${tail}`;
    // Buffer.from, not TextEncoder: a pooled slice, where `encode` allocated a buffer of its own (1 µs each).
    return [Buffer.from(head), stored, Buffer.from(tail)];
  }

  static parsedValue(answer: EntryAnswer): Entry["value"] {
    if (answer.#value === NOT_PARSED) answer.#value = decodeValue(answer.#stored!);
    return answer.#value as Entry["value"];
  }
}

/** One accessor shared by every answer, so that they all keep one hidden class. */
const ANSWER_VALUE: PropertyDescriptor = {
  enumerable: true,
  configurable: false,
  get(this: EntryAnswer) {
    return EntryAnswer.parsedValue(this);
  },
};
