import { describe, expect, it } from "vitest";
import { z } from "zod";
import { prng } from "../test/prng.js";
import { NdjsonLineReader } from "./jsonrpc/ndjson.js";
import { JsonRpcError, JsonRpcPeer } from "./jsonrpc/peer.js";

// A small deterministic fuzz: seeded mutations of well-formed lines go through the reader and the peer.
// Whatever arrives, nothing throws and every line the peer answers with is a valid JSON-RPC 2.0 response.

const SEEDS = [
  '{"jsonrpc":"2.0","id":1,"method":"mesh/state.get","params":{"bucket":"mcp-servers","key":"all.github"}}',
  '{"jsonrpc":"2.0","id":"w-2","method":"mesh/state.put","params":{"bucket":"b","key":"k","value":{"é":"🚀","n":[1,2.5,null]}}}',
  '{"jsonrpc":"2.0","id":3,"method":"fail","params":[]}',
  '{"jsonrpc":"2.0","id":4,"method":"crash"}',
  '{"jsonrpc":"2.0","method":"note","params":{"x":1}}',
  '{"jsonrpc":"2.0","id":1,"result":{"revision":3}}',
  '{"jsonrpc":"2.0","id":2,"error":{"code":-32011,"message":"read-only","data":{"reason":"read-only"}}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}',
  '{"__proto__":{"jsonrpc":"2.0"},"id":5,"method":"m"}',
];
const NOISE = ["\n", "\r", "{", "}", "[", "]", '"', ",", ":", "\\", "é", "🚀", "\u0000", "null", "1e400", "-0", " "];

function mutate(random: () => number, line: string): Uint8Array {
  let text = line;
  const steps = 1 + Math.floor(random() * 4);
  for (let step = 0; step < steps; step++) {
    const at = Math.floor(random() * (text.length + 1));
    const choice = random();
    if (choice < 0.3) text = text.slice(0, at) + NOISE[Math.floor(random() * NOISE.length)] + text.slice(at);
    else if (choice < 0.55) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 8));
    else if (choice < 0.7) text = text.slice(0, at);
    else if (choice < 0.85) text = text + text.slice(at);
    else text = SEEDS[Math.floor(random() * SEEDS.length)]! + text.slice(at);
  }
  const bytes = new TextEncoder().encode(`${text}\n`);
  // Sometimes a raw byte that is not UTF-8 at all.
  if (random() < 0.1) bytes[Math.floor(random() * bytes.length)] = 0xff;
  return bytes;
}

const ResponseSchema = z.union([
  z.strictObject({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number().int()]), result: z.unknown() }),
  z.strictObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number().int(), z.null()]),
    error: z.strictObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);

describe("fuzz: mutated lines through NdjsonLineReader and JsonRpcPeer", () => {
  it.each([1, 2, 3, 42, 2025])("seed %i: never throws, answers only with valid responses", async (seed) => {
    const random = prng(seed);
    const sent: string[] = [];
    const peer = new JsonRpcPeer({
      send: (line) => sent.push(line),
      onRequest: async (method, params) => {
        if (method === "fail") throw new JsonRpcError(-32011, "read-only", { reason: "read-only" });
        if (method === "crash") throw new Error("crash");
        return { method, params };
      },
      onNotification: () => {},
      onProtocolError: () => {},
    });
    const outcomes: Array<Promise<unknown>> = [];
    const reader = new NdjsonLineReader({
      maxLineBytes: 512,
      onLine: (line) => peer.receiveLine(line),
      onOversize: () => {},
    });
    for (let round = 0; round < 400; round++) {
      // Requests of our own, so that mutated responses can hit pending ids.
      if (round % 50 === 0) outcomes.push(peer.request("ours", round, { timeoutMs: 60_000 }).catch((error) => error));
      const bytes = mutate(random, SEEDS[Math.floor(random() * SEEDS.length)]!);
      let offset = 0;
      while (offset < bytes.length) {
        const size = 1 + Math.floor(random() * 40);
        expect(() => reader.push(bytes.subarray(offset, offset + size))).not.toThrow();
        offset += size;
      }
    }
    reader.end();
    await new Promise((resolve) => setImmediate(resolve));
    peer.close("fuzz over");
    await Promise.all(outcomes);

    const answers = sent.map((line) => JSON.parse(line) as Record<string, unknown>).filter((m) => !("method" in m));
    expect(answers.length).toBeGreaterThan(100);
    for (const answer of answers) expect(ResponseSchema.safeParse(answer).success, JSON.stringify(answer)).toBe(true);
  });
});
