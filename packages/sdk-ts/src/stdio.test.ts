import { PassThrough } from "node:stream";
import { JsonRpcPeer, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";
import { describe, expect, it } from "vitest";
import { connectStdio } from "./stdio.js";

/** A runtime on the far side of two real streams, answering `get` with a fixed entry. */
function streamsWithRuntime() {
  const toBundle = new PassThrough();
  const fromBundle = new PassThrough();
  const runtime = new JsonRpcPeer({
    send: (line) => toBundle.write(`${line}\n`),
    onRequest: (method, params) => ({
      key: (params as { key: string }).key,
      value: method,
      revision: 1,
      updated: "now",
    }),
  });
  const reader = new NdjsonLineReader({ onLine: (line) => runtime.receiveLine(line), onOversize: () => {} });
  fromBundle.on("data", (chunk: Buffer) => reader.push(chunk));
  return { toBundle, fromBundle };
}

describe("the stdio transport", () => {
  it("carries requests and answers as NDJSON lines over real streams", async () => {
    const { toBundle, fromBundle } = streamsWithRuntime();
    const client = await connectStdio({ input: toBundle, output: fromBundle });
    const entries = await Promise.all(["a", "b", "c"].map((key) => client.state("items").get(key)));
    expect(entries.map((entry) => [entry?.key, entry?.value])).toEqual([
      ["a", "mesh/state.get"],
      ["b", "mesh/state.get"],
      ["c", "mesh/state.get"],
    ]);
    await client.close();
    expect(toBundle.listenerCount("data")).toBe(0);
  });

  it("closes the client when its input ends", async () => {
    const { toBundle, fromBundle } = streamsWithRuntime();
    const client = await connectStdio({ input: toBundle, output: fromBundle });
    toBundle.end();
    expect(await client.closed).toContain("stdin ended");
    await expect(client.state("items").get("a")).rejects.toMatchObject({ reason: "closed" });
  });
});
