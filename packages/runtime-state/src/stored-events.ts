import type { PutEvent, WatchEvent } from "@mesh/state-protocol";

/**
 * Watch events as the runtime forwards them, without re-encoding what NATS already holds as JSON text.
 *
 * A stored value is UTF-8 JSON text. The runtime parses it once to check that it is JSON, writes the
 * stored text itself into the batch line and sizes the batch by the stored bytes. A stored value that is
 * not JSON (another client wrote it) reads as its text, a JSON string, as `get` reads it; one holding a
 * line break (pretty-printed JSON from another client) is re-encoded, so an NDJSON line never breaks.
 */

const decoder = new TextDecoder();
const NOT_PARSED: unique symbol = Symbol("not parsed");

/**
 * A put read from the stream. Its own enumerable fields are a wire put's, in the wire's order, so it
 * serialises, spreads and compares as one; `value` is an accessor that parses the stored text on first use.
 * Holding the text alone while a batch waits for a slow bundle keeps the runtime's heap to one copy of it.
 */
export class StoredPutEvent implements PutEvent {
  readonly type = "put";
  declare readonly key: string;
  declare readonly value: PutEvent["value"];
  declare readonly revision: number;
  declare readonly updated: string;
  /** The value's JSON text as stored, when it can go into a line as it is. */
  readonly #json: string | undefined;
  #value: unknown = NOT_PARSED;
  /** The value's encoded size, in bytes. */
  readonly #bytes: number;

  constructor(key: string, data: Uint8Array, revision: number, updated: string) {
    const text = decoder.decode(data);
    let json: string | undefined;
    try {
      JSON.parse(text); // is it JSON? The result is not kept: `value` parses again only if someone reads it.
      json = text.includes("\n") || text.includes("\r") ? undefined : text;
      if (json === undefined) this.#value = JSON.parse(text);
    } catch {
      this.#value = text;
    }
    this.#json = json;
    this.#bytes = json === undefined ? Buffer.byteLength(JSON.stringify(this.#value)) : data.byteLength;
    this.key = key;
    Object.defineProperty(this, "value", VALUE_PROPERTY);
    this.revision = revision;
    this.updated = updated;
  }

  /** The value's JSON text for a line. */
  get valueJson(): string {
    return this.#json ?? JSON.stringify(this.#value);
  }

  /** The value's encoded size, in bytes, as a batch counts it. */
  get valueBytes(): number {
    return this.#bytes;
  }

  static parsedValue(event: StoredPutEvent): PutEvent["value"] {
    if (event.#value === NOT_PARSED) event.#value = JSON.parse(event.#json!);
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
  const parts = new Array<string>(events.length);
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    parts[index] =
      event instanceof StoredPutEvent
        ? `{"type":"put","key":${JSON.stringify(event.key)},"value":${event.valueJson},"revision":${event.revision},"updated":${JSON.stringify(event.updated)}}`
        : JSON.stringify(event);
  }
  return `{"watch":${JSON.stringify(watch)},"events":[${parts.join(",")}]}`;
}
