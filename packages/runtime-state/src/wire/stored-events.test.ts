import { KV_OPERATION_HEADER } from "@mesh/manifest-schema";
import { ENCODED_JSON } from "@mesh/state-protocol";
import { jetstream } from "@nats-io/jetstream";
import { headers } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { BUCKET, readerMembership, spawnBundle, stateServer } from "../../test/kit.js";
import { STORED } from "../../test/stored-values.js";
import { HistoryAnswer } from "../nats/scan.js";
import { createStateService } from "../verbs/service.js";
import { encodeWatchEventsParams, encodeWatchEventsParamsBytes, StoredPutEvent } from "./stored-events.js";

const encoder = new TextEncoder();

function deleteHeaders() {
  const header = headers();
  header.set(KV_OPERATION_HEADER, "DEL");
  return header;
}

describe("stored values go into the batch line as stored, and never break it", () => {
  it("encodes a batch exactly as JSON.stringify would, field for field", () => {
    const events = [
      ...STORED.map(({ key, data }, index) => new StoredPutEvent(key, data, index + 1, "2026-01-01T00:00:00.000Z")),
      { type: "delete", key: "gone", revision: 20, updated: "2026-01-01T00:00:00.000Z" } as const,
      { type: "current" } as const,
      { type: "ended", reason: "closed", message: 'said "bye"\n' } as const,
    ];
    const line = encodeWatchEventsParams("w1", events);
    expect(line).not.toMatch(/[\n\r]/);
    expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify({ watch: "w1", events })));
    // To any other transport an event is a plain wire put: same fields, same order, value parsed.
    const first = events[0] as StoredPutEvent;
    expect(Object.keys(first)).toEqual(["type", "key", "value", "revision", "updated"]);
    expect({ ...first }).toEqual({
      type: "put",
      key: "compact",
      value: STORED[0]!.value,
      revision: 1,
      updated: first.updated,
    });
    // Sized by what is stored when it goes in as stored; by its encoding otherwise.
    expect((events[0] as StoredPutEvent).valueBytes).toBe(STORED[0]!.data.byteLength);
    expect((events[2] as StoredPutEvent).valueBytes).toBe(Buffer.byteLength(JSON.stringify({ a: 1, b: "two" })));
  });

  it("encodes any key, time and revision as JSON.stringify would, over seeded batches", () => {
    let seed = 11;
    const next = (below: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % below;
    };
    const alphabet = [
      "a",
      "Z",
      "0",
      "-",
      "/",
      "_",
      "=",
      ".",
      '"',
      "\\",
      "\n",
      "\u0001",
      "\u007f",
      "é",
      "€",
      "😀",
      "\u2028",
    ];
    const text = (length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)]).join("");
    const revisions = [0, 1, 9, 10, 99, 100, 123_456, 2 ** 31, Number.MAX_SAFE_INTEGER];
    for (let round = 0; round < 300; round++) {
      const events = Array.from({ length: 1 + next(20) }, (_, index) => {
        if (next(6) === 0) return { type: "delete", key: text(next(12)), revision: index, updated: text(3) } as const;
        const key = next(2) === 0 ? `k.${index}` : text(1 + next(12));
        const value = next(2) === 0 ? { n: index, s: text(next(8)) } : text(next(8));
        const updated = next(3) === 0 ? text(next(30)) : "2026-12-02T04:50:00.123Z";
        const revision = revisions[next(revisions.length)]!;
        return new StoredPutEvent(key, encoder.encode(JSON.stringify(value)), revision, updated);
      });
      const bytes = encodeWatchEventsParamsBytes("w1", events);
      const line = Buffer.from(bytes).toString("utf8");
      expect(line).not.toMatch(/[\n\r]/);
      expect(line).toBe(JSON.stringify({ watch: "w1", events }));
    }
  });

  it("copies its bytes out of the chunk they were read into when asked, and encodes the same", () => {
    const chunk = encoder.encode('xx{"a":1}yy{"b":2}zz');
    const event = new StoredPutEvent("k", chunk.subarray(2, 9), 5, "2026-12-02T05:40:00.000Z");
    const before = encodeWatchEventsParams("w1", [event]);
    expect(event.valueBytesJson.buffer).toBe(chunk.buffer);
    expect(event.ownBytes()).toBe(event);
    expect(event.valueBytesJson.buffer).not.toBe(chunk.buffer);
    expect(event.valueBytesJson.buffer.byteLength).toBe(7);
    chunk.fill(0x20);
    expect(encodeWatchEventsParams("w1", [event])).toBe(before);
    expect(event.value).toEqual({ a: 1 });
  });

  it("a history answer carries stored values as stored, and parses to the entries it holds", () => {
    const updated = "2026-01-01T00:00:00.000Z";
    const entries = [
      ...STORED.map(({ key, data }, index) => new StoredPutEvent(key, data, index + 1, updated)),
      { type: "delete", key: "gone", revision: 20, updated } as const,
    ];
    const answer = new HistoryAnswer(entries);
    const line = Buffer.concat(answer[ENCODED_JSON]).toString("utf8");
    expect(line).not.toMatch(/[\n\r]/);
    expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify({ ...answer })));
    expect(line).toContain('"value": { "a" : 1 } ,');
  });

  it("a bundle watching values other clients stored reads what get reads, on intact lines", async () => {
    await using nats = await stateServer();
    const js = jetstream(nats.admin);
    for (const { key, data } of STORED) await js.publish(`$KV.${BUCKET}.${key}`, data);
    const bundle = spawnBundle(
      createStateService({ connection: await nats.machine("m2"), membership: readerMembership }),
    );
    const { watch } = (await bundle.call("mesh/state.watch", { bucket: "notes-app.notes" })).result as {
      watch: string;
    };
    // Every line the bundle read was parsed as JSON by the test kit: a broken line would have failed it.
    await bundle.untilEvents(watch, (events) => events.some((event) => event.type === "current"));
    const watched = new Map(bundle.events(watch).map((event) => [event.key, event.value]));
    for (const { key, value } of STORED) {
      const got = (await bundle.call("mesh/state.get", { bucket: "notes-app.notes", key })).result as {
        value: unknown;
      };
      expect({ key, value: watched.get(key) }).toEqual({ key, value });
      expect({ key, value: got.value }).toEqual({ key, value });
    }
    // A history carries the stored bytes too: four values other clients stored on a key, then a delete (the
    // bucket keeps five revisions of a key).
    for (let first = 0; first < STORED.length; first += 4) {
      const stored = STORED.slice(first, first + 4);
      const key = `history-${first}`;
      for (const { data } of stored) await js.publish(`$KV.${BUCKET}.${key}`, data);
      await js.publish(`$KV.${BUCKET}.${key}`, new Uint8Array(0), { headers: deleteHeaders() });
      const { entries } = (await bundle.call("mesh/state.history", { bucket: "notes-app.notes", key })).result as {
        entries: Array<{ type: string; value?: unknown }>;
      };
      expect(entries.map((entry) => entry.type)).toEqual([...stored.map(() => "put"), "delete"]);
      expect(entries.slice(0, -1).map((entry) => entry.value)).toEqual(stored.map(({ value }) => value));
    }
    await bundle.kill();
  });
});
