import type { HistoryEntry, PutEvent, WatchEvent } from "@mesh/state-protocol";
import { isOneLineJson } from "./json-check.js";
import { decodeValue } from "./stored-json.js";

/**
 * Watch events as the runtime forwards them, without re-encoding what NATS already holds as JSON.
 *
 * A stored value is UTF-8 JSON. The runtime checks once that it is (valid UTF-8, JSON, no line break), then
 * copies the stored bytes themselves into the batch line and sizes the batch by them: a value is never
 * decoded to a string for the line and encoded back. A stored value that fails the check (another client
 * wrote it) reads as `get` reads it (`decodeValue`) and is encoded, so an NDJSON line never breaks.
 */

const NOT_PARSED: unique symbol = Symbol("not parsed");

/**
 * A put read from the stream. Its own enumerable fields are a wire put's, in the wire's order, so it
 * serialises, spreads and compares as one; `value` is an accessor that parses the stored bytes on first use.
 * Holding the bytes alone while a batch waits for a slow bundle keeps the runtime to one copy of them.
 */
export class StoredPutEvent implements PutEvent {
  readonly type = "put";
  declare readonly key: string;
  declare readonly value: PutEvent["value"];
  declare readonly revision: number;
  declare readonly updated: string;
  /**
   * The value's JSON as stored, when it can go into a line as it is: as NATS handed it over, a view on the
   * socket chunk it arrived in, until `ownBytes` copies it out.
   */
  #stored: Uint8Array | undefined;
  #value: unknown = NOT_PARSED;
  /** The value's encoded size, in bytes. */
  readonly #bytes: number;

  constructor(key: string, data: Uint8Array, revision: number, updated: string) {
    this.#stored = isOneLineJson(data) ? data : undefined;
    if (this.#stored === undefined) this.#value = decodeValue(data);
    this.#bytes = this.#stored?.byteLength ?? Buffer.byteLength(JSON.stringify(this.#value));
    this.key = key;
    Object.defineProperty(this, "value", VALUE_PROPERTY);
    this.revision = revision;
    this.updated = updated;
  }

  /**
   * Copies the stored bytes out of the chunk they were read into, once, and returns this event. For an event
   * kept long (a shared watch's view): a view on a chunk keeps the whole chunk, and every other message read
   * with it, in memory.
   */
  ownBytes(): this {
    const stored = this.#stored;
    if (stored !== undefined && stored.byteLength !== stored.buffer.byteLength) this.#stored = stored.slice();
    return this;
  }

  /** The value's JSON as UTF-8 bytes for a line. */
  get valueBytesJson(): Uint8Array {
    return this.#stored ?? Buffer.from(JSON.stringify(this.#value));
  }

  /** The value's encoded size, in bytes, as a batch counts it. */
  get valueBytes(): number {
    return this.#bytes;
  }

  static parsedValue(event: StoredPutEvent): PutEvent["value"] {
    if (event.#value === NOT_PARSED) event.#value = decodeValue(event.#stored!);
    return event.#value as PutEvent["value"];
  }
}

/** One accessor shared by every event, so that they all keep one hidden class. */
const VALUE_PROPERTY: PropertyDescriptor = {
  enumerable: true,
  configurable: false,
  get(this: StoredPutEvent) {
    return StoredPutEvent.parsedValue(this);
  },
};

/** The params of one `mesh/state` request as JSON text: stored values spliced in, everything else encoded. */
export function encodeWatchEventsParams(watch: string, events: readonly WatchEvent[]): string {
  return Buffer.from(encodeWatchEventsParamsBytes(watch, events)).toString("utf8");
}

const ascii = (text: string) => Uint8Array.from(text, (char) => char.charCodeAt(0));
const PUT_HEAD = ascii('{"type":"put","key":');
const VALUE_FIELD = ascii(',"value":');
const REVISION_FIELD = ascii(',"revision":');
const UPDATED_FIELD = ascii(',"updated":');
/** A put's fixed text, in bytes: its fields' names and the closing brace. */
const PUT_FIXED_BYTES = PUT_HEAD.length + VALUE_FIELD.length + REVISION_FIELD.length + UPDATED_FIELD.length + 1;
/** At most 6 bytes per UTF-16 unit of a JSON string (`\u001f`); a revision is at most 16 digits. */
const JSON_STRING_BYTES_PER_UNIT = 6;
const REVISION_DIGITS = 16;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const ZERO = 0x30;

/** The params of one `mesh/state` request as UTF-8 bytes: `encodeEventsBytes` under the watch's id. */
export function encodeWatchEventsParamsBytes(watch: string, events: readonly WatchEvent[]): Uint8Array {
  return encodeEventsBytes(`{"watch":${JSON.stringify(watch)},"events":[`, events);
}

/**
 * `head` (an object's text up to an array's opening bracket), the events, then `]}`, as UTF-8 bytes built in
 * one buffer: each stored value is copied in as stored, everything else encoded. Sized by a bound first, then
 * cut to length. A put's fields are written byte by byte: with values of a few hundred bytes, a native
 * `Buffer#write` per field cost more than the value.
 */
export function encodeEventsBytes(head: string, events: readonly (WatchEvent | HistoryEntry)[]): Uint8Array {
  // Per event: a put's value bytes (encoded once, when not stored as they are), or any other event's text.
  const values = new Array<Uint8Array | undefined>(events.length);
  const others = new Array<string | undefined>(events.length);
  let bound = JSON_STRING_BYTES_PER_UNIT * head.length + 2 + events.length;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (event instanceof StoredPutEvent) {
      const value = event.valueBytesJson;
      values[index] = value;
      const strings = event.key.length + event.updated.length;
      bound += PUT_FIXED_BYTES + 4 + JSON_STRING_BYTES_PER_UNIT * strings + REVISION_DIGITS + value.byteLength;
    } else {
      const text = JSON.stringify(event);
      others[index] = text;
      bound += JSON_STRING_BYTES_PER_UNIT * text.length;
    }
  }
  const out = Buffer.allocUnsafe(bound);
  let at = out.write(head, 0);
  for (let index = 0; index < events.length; index++) {
    if (index > 0) out[at++] = COMMA;
    const event = events[index]!;
    if (!(event instanceof StoredPutEvent)) {
      at += out.write(others[index]!, at);
      continue;
    }
    out.set(PUT_HEAD, at);
    at = writeJsonString(out, at + PUT_HEAD.length, event.key);
    out.set(VALUE_FIELD, at);
    at += VALUE_FIELD.length;
    const value = values[index]!;
    out.set(value, at);
    at += value.byteLength;
    out.set(REVISION_FIELD, at);
    at = writeDigits(out, at + REVISION_FIELD.length, event.revision);
    out.set(UPDATED_FIELD, at);
    at = writeJsonString(out, at + UPDATED_FIELD.length, event.updated);
    out[at++] = CLOSE_BRACE;
  }
  out[at++] = CLOSE_BRACKET;
  out[at++] = CLOSE_BRACE;
  return out.subarray(0, at);
}

/** Writes `text` as a JSON string at `at`; returns where it ends. Printable ASCII needing no escape goes byte by byte. */
function writeJsonString(out: Buffer, at: number, text: string): number {
  out[at] = QUOTE;
  let end = at + 1;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) {
      return at + out.write(JSON.stringify(text), at);
    }
    out[end++] = code;
  }
  out[end++] = QUOTE;
  return end;
}

/** Writes a non-negative safe integer in decimal at `at`; returns where it ends. */
function writeDigits(out: Buffer, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = value;
  for (let index = at + digits - 1; index >= at; index--) {
    out[index] = ZERO + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}
