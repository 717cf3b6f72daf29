import { PassThrough } from "node:stream";
import { NdjsonLineReader } from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { ownerMembership, stateServer, until } from "../../test/kit.js";
import { rssMiB, settledRssMiB } from "../../test/misbehaving.js";
import { type SeededRandom, seededRandom } from "../../test/random.js";
import { createStateService } from "../verbs/service.js";
import { serveStdio } from "./stdio.js";

/**
 * A seeded fuzzer of the runtime's wire: random sequences of valid and invalid requests, and of answers
 * (right, wrong, broken, never) to the runtime's watch batches, in randomly split chunks, against a real
 * server. Every well-formed request must be answered exactly once, the process must not crash, and what the
 * runtime holds must stay bounded. WIRE_FUZZ_SEED replays a run; WIRE_FUZZ_MS sets its length (default 8 s).
 */
const SEED = process.env.WIRE_FUZZ_SEED ? Number(process.env.WIRE_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const DURATION_MS = Number(process.env.WIRE_FUZZ_MS ?? 8_000);
const MAX_LINE = 64 * 1024;
/** How much more the process may hold (after a full GC) than before the run: 40–46 MiB measured, of ~270 MiB sent. */
const BOUND_MIB = 96;

type Random = SeededRandom;

function randomValue(rng: Random, depth = 0): unknown {
  switch (rng.int(depth > 3 ? 4 : 7)) {
    case 0:
      return rng.int(1000) - 500;
    case 1:
      return "s".repeat(rng.int(40));
    case 2:
      return rng.next() < 0.5;
    case 3:
      return null;
    case 4:
      return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
    case 5:
      return Object.fromEntries(
        Array.from({ length: rng.int(4) }, () => [
          rng.pick(["a", "name", "token", "apiKey", "max_tokens", "__proto__", "é"]),
          randomValue(rng, depth + 1),
        ]),
      );
    default:
      return { nested: randomValue(rng, depth + 1) };
  }
}

const KEYS = ["a", "b", "all.x", "m1.y", "", "bad key", "a..b", "x".repeat(300), ">", "*"];
const BUCKETS = ["notes", "notes", "notes", "other", 7];

describe("wire fuzzer", () => {
  it(`random requests and answers against a real server (seed ${SEED}; WIRE_FUZZ_SEED=${SEED} replays it)`, async () => {
    process.stderr.write(`wire fuzzer: seed ${SEED}, ${DURATION_MS} ms\n`);
    const rng = seededRandom(SEED);
    await using nats = await stateServer();
    const service = createStateService({
      connection: await nats.machine("m1"),
      membership: ownerMembership,
      limits: { maxWatches: 4, maxInFlight: 8, maxUnreadBytes: 16 * 1024, maxLineBytes: MAX_LINE },
    });
    const input = new PassThrough();
    const output = new PassThrough();
    const stdio = serveStdio({ service, input, output });

    const unanswered = new Set<string>();
    const answeredTwice: string[] = [];
    const answered = new Set<string>();
    const batches: number[] = [];
    const watches: string[] = [];
    let nextId = 1;
    const reader = new NdjsonLineReader({
      maxLineBytes: 32 * 1024 * 1024,
      onOversize: () => undefined,
      onLine: (line) => {
        const message = JSON.parse(line) as { id?: unknown; method?: string; result?: { watch?: string } };
        if (message.method === "mesh/state") {
          batches.push(message.id as number);
          return;
        }
        // Only the fuzzer's unique ids (f<n>) are counted; "deep", "huge" and "z" repeat on purpose.
        if (typeof message.id !== "string" || !/^f\d+$/.test(message.id)) return;
        if (answered.has(message.id)) answeredTwice.push(message.id);
        answered.add(message.id);
        unanswered.delete(message.id);
        if (typeof message.result?.watch === "string") watches.push(message.result.watch);
      },
    });
    // The fuzzer reads its stdin only some of the time, so the runtime's back-pressure is exercised too.
    let reading = true;
    output.on("data", (chunk: Buffer) => reader.push(chunk));

    const request = (method: string, params: unknown) => {
      const id = `f${nextId++}`;
      unanswered.add(id);
      return JSON.stringify({ jsonrpc: "2.0", id, method, params });
    };
    const line = (): string => {
      switch (rng.int(16)) {
        case 0:
          return request("mesh/state.get", { bucket: rng.pick(BUCKETS), key: rng.pick(KEYS) });
        case 1:
        case 2:
          return request("mesh/state.put", {
            bucket: rng.pick(BUCKETS),
            key: rng.pick(KEYS),
            value: randomValue(rng),
            ...(rng.next() < 0.3 ? { revision: rng.int(20) } : {}),
          });
        case 3:
          return request("mesh/state.delete", { bucket: "notes", key: rng.pick(KEYS) });
        case 4:
          return request("mesh/state.keys", {
            bucket: "notes",
            ...(rng.next() < 0.5 ? { filter: rng.pick(KEYS) } : {}),
          });
        case 5:
          return request("mesh/state.history", { bucket: "notes", key: rng.pick(KEYS) });
        case 6:
          return request("mesh/state.watch", {
            bucket: "notes",
            ...(rng.next() < 0.3 ? { filter: rng.pick(KEYS) } : {}),
          });
        case 7:
          return request("mesh/state.unwatch", {
            watch: rng.next() < 0.7 && watches.length > 0 ? rng.pick(watches) : "w999",
          });
        case 8: {
          // An answer to a watch batch: right, an error, broken, or to an id never sent.
          const id =
            batches.length > 0 && rng.next() < 0.8 ? batches.splice(rng.int(batches.length), 1)[0]! : rng.int(1e6);
          return rng.pick([
            JSON.stringify({ jsonrpc: "2.0", id, result: {} }),
            JSON.stringify({ jsonrpc: "2.0", id, error: { code: -1, message: "no" } }),
            JSON.stringify({ jsonrpc: "2.0", id }),
            JSON.stringify({ jsonrpc: "2.0", id, result: {}, error: { code: 1, message: "both" } }),
          ]);
        }
        case 9:
          return request(rng.pick(["mesh/state.nope", "mesh/publish", ""]), {});
        case 10:
          return request(
            rng.pick(["mesh/state.get", "mesh/state.put"]),
            rng.pick([null, [], "x", { bucket: "notes" }, 1]),
          );
        case 11:
          return rng.pick(["not json", "[]", "1", "{}", '{"jsonrpc":"1.0","id":"z","method":"m"}', "\u0000\u0001"]);
        case 12:
          return JSON.stringify({ jsonrpc: "2.0", method: "mesh/state.get", params: { bucket: "notes", key: "a" } });
        case 13:
          return `{"jsonrpc":"2.0","id":"deep","method":"mesh/state.put","params":{"bucket":"notes","key":"d","value":${"[".repeat(300)}${"]".repeat(300)}}}`;
        case 14:
          return `{"jsonrpc":"2.0","id":"huge","method":"mesh/state.get","params":{"key":"${"h".repeat(MAX_LINE)}"}}`;
        default:
          return String.fromCharCode(...Array.from({ length: rng.int(64) }, () => rng.int(256)));
      }
    };

    // What the process holds, after a full GC, at the start and every 512 writes: a runtime that kept what it was sent
    // would grow it steadily. The raw peak, garbage included, is reported only: it depends on when V8 collects
    // (105–125 MiB without these GCs, against the 128 MiB this test once bounded it by).
    const rssBefore = settledRssMiB();
    let peakRss = rssBefore;
    let rawPeakRss = rssMiB();
    const end = Date.now() + DURATION_MS;
    let sent = 0;
    let totalBytes = 0;
    try {
      while (Date.now() < end) {
        const text = Array.from({ length: 1 + rng.int(20) }, line)
          .join("\n")
          .concat("\n");
        // Split anywhere, even inside a character: the reader must put lines back together.
        const bytes = Buffer.from(text);
        totalBytes += bytes.length;
        for (let at = 0; at < bytes.length; ) {
          const size = 1 + rng.int(4096);
          input.write(bytes.subarray(at, at + size));
          at += size;
        }
        sent += 1;
        if (rng.next() < 0.1) {
          reading = !reading;
          if (reading) output.resume();
          else output.pause();
        }
        // Wait while the runtime holds back: what it buffered from us stays bounded.
        await until(() => input.writableLength < 1024 * 1024, 30_000, "the runtime reads again");
        if (!reading && input.writableLength > 0) {
          reading = true;
          output.resume();
        }
        expect(service.watchCount).toBeLessThanOrEqual(4);
        expect(service.inFlight).toBeLessThanOrEqual(8);
        rawPeakRss = Math.max(rawPeakRss, rssMiB());
        if (sent % 512 === 0) peakRss = Math.max(peakRss, settledRssMiB());
        await new Promise((resolve) => setImmediate(resolve));
      }
      output.resume();
      await until(() => unanswered.size === 0, 30_000, `an answer to every request (${unanswered.size} missing)`);
      expect(answeredTwice).toEqual([]);
      peakRss = Math.max(peakRss, settledRssMiB());
      process.stderr.write(
        `wire fuzzer: ${sent} writes, ${answered.size} answered, ${(totalBytes / 1048576).toFixed(0)} MiB, settled RSS +${(peakRss - rssBefore).toFixed(1)} MiB at most, raw peak +${(rawPeakRss - rssBefore).toFixed(1)} MiB\n`,
      );
      expect(peakRss - rssBefore).toBeLessThan(BOUND_MIB);
      input.end();
      await stdio.closed;
      await until(async () => (await nats.consumerNames()).length === 0, 10_000, "every consumer deleted");
    } catch (error) {
      throw new Error(`wire fuzzer failed with seed ${SEED} (WIRE_FUZZ_SEED=${SEED} replays it): ${String(error)}`, {
        cause: error,
      });
    }
  });
});
