import type { PutEvent, WatchEvent } from "@mesh/state-protocol";
import { decodeValue } from "./bucket.js";

/**
 * Watch events as the runtime forwards them, without re-encoding what NATS already holds as JSON.
 *
 * A stored value is UTF-8 JSON. The runtime checks once that it is (valid UTF-8, JSON, no line break), then
 * copies the stored bytes themselves into the batch line and sizes the batch by them: a value is never
 * decoded to a string for the line and encoded back. A stored value that fails the check (another client
 * wrote it) reads as `get` reads it (`decodeValue`) and is encoded, so an NDJSON line never breaks.
 */

/** Fatal and keeping a BOM: text that passes is exactly what `decodeValue` would have decoded and parsed. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
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
  /** The value's JSON as stored, when it can go into a line as it is. */
  readonly #stored: Uint8Array | undefined;
  #value: unknown = NOT_PARSED;
  /** The value's encoded size, in bytes. */
  readonly #bytes: number;

  constructor(key: string, data: Uint8Array, revision: number, updated: string) {
    this.#stored = isSpliceableJson(data) ? data : undefined;
    if (this.#stored === undefined) this.#value = decodeValue(data);
    this.#bytes = this.#stored?.byteLength ?? Buffer.byteLength(JSON.stringify(this.#value));
    this.key = key;
    Object.defineProperty(this, "value", VALUE_PROPERTY);
    this.revision = revision;
    this.updated = updated;
  }

  /** The value's JSON as UTF-8 bytes for a line. */
  get valueBytesJson(): Uint8Array {
    return this.#stored ?? Buffer.from(JSON.stringify(this.#value));
  }

  /** The value's JSON text for a line. */
  get valueJson(): string {
    return this.#stored === undefined ? JSON.stringify(this.#value) : Buffer.from(this.#stored).toString("utf8");
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

/** Valid UTF-8 that is JSON on one line: such bytes can go into an NDJSON line as they are. */
function isSpliceableJson(data: Uint8Array): boolean {
  try {
    // Searched in the text: `Uint8Array#includes` took 0.6 µs for 1 KiB, the decode and two searches 0.2.
    const text = strictDecoder.decode(data);
    if (text.includes("\n") || text.includes("\r")) return false;
    // Is it JSON? The result is not kept: `value` parses again only if someone reads it.
    JSON.parse(text);
    return true;
  } catch {
    return false;
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

/** A put's fixed text around its key, value, revision and time: ASCII, so one byte per character. */
const PUT_FIXED_CHARS = '{"type":"put","key":,"value":,"revision":,"updated":}'.length;
/** At most 3 bytes of UTF-8 per UTF-16 unit; an event's revision is at most 16 digits. */
const UTF8_PER_UNIT = 3;
const REVISION_CHARS = 16;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * The params of one `mesh/state` request as UTF-8 bytes, built in one buffer: each stored value is copied in
 * as stored, everything else encoded. Sized by a bound first (text at 3 bytes per unit), then cut to length.
 */
export function encodeWatchEventsParamsBytes(watch: string, events: readonly WatchEvent[]): Uint8Array {
  const head = `{"watch":${JSON.stringify(watch)},"events":[`;
  const keys = new Array<string>(events.length);
  let bound = UTF8_PER_UNIT * head.length + 2 + events.length;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    const text = event instanceof StoredPutEvent ? JSON.stringify(event.key) : JSON.stringify(event);
    keys[index] = text;
    bound += UTF8_PER_UNIT * text.length;
    if (event instanceof StoredPutEvent) {
      bound += PUT_FIXED_CHARS + REVISION_CHARS + UTF8_PER_UNIT * JSON.stringify(event.updated).length;
      bound += event.valueBytesJson.byteLength;
    }
  }
  const out = Buffer.allocUnsafe(bound);
  let at = out.write(head, 0);
  for (let index = 0; index < events.length; index++) {
    if (index > 0) out[at++] = COMMA;
    const event = events[index]!;
    if (!(event instanceof StoredPutEvent)) {
      at += out.write(keys[index]!, at);
      continue;
    }
    at += out.write(`{"type":"put","key":${keys[index]},"value":`, at);
    const value = event.valueBytesJson;
    out.set(value, at);
    at += value.byteLength;
    at += out.write(`,"revision":${event.revision},"updated":${JSON.stringify(event.updated)}}`, at);
  }
  out[at++] = CLOSE_BRACKET;
  out[at++] = CLOSE_BRACE;
  return out.subarray(0, at);
}
