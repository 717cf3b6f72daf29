/**
 * The chain, measured in the same run: the raw client behind the design's pipe, as one chain of three
 * processes woken in turn (a sender child, a host holding the raw client, nats-server), the mesh's shape with
 * none of its code. The sender (`bench-bundle.js chain`) sends get/put requests over NDJSON on stdio with
 * state-protocol's framing, as the echo's sender does; the host answers each with what the raw line does
 * (`kv.get` and `json()`, `kv.put` of `JSON.stringify`). The floor adds the raw client and the echo measured
 * apart, each of them waking two processes; the chain wakes the three in turn, as the mesh does. It is no
 * lower bound of the mesh's latency (the runtime does less per call than `kv.get`/`kv.put`), but its sender
 * is the bundle's CPU floor in that shape.
 */
import type { Readable, Writable } from "node:stream";
import { JsonRpcError, JsonRpcPeer, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

interface ChainParams {
  bucket: string;
  key: string;
  value?: unknown;
}

/** Serves one sender's requests with the raw client; `closed` resolves once its input ended. */
export function serveChain(connection: NatsConnection, input: Readable, output: Writable): { closed: Promise<void> } {
  const buckets = new Map<string, Promise<KV>>();
  const open = (bucket: string) => {
    let kv = buckets.get(bucket);
    if (!kv) {
      kv = new Kvm(connection).open(bucket, { allow_direct: true } as never);
      buckets.set(bucket, kv);
    }
    return kv;
  };
  const peer = new JsonRpcPeer({
    send: (line) => output.write(`${line}\n`),
    onRequest: async (method, params) => {
      const { bucket, key, value } = params as ChainParams;
      const kv = await open(bucket);
      if (method === "mesh/state.get") {
        const entry = await kv.get(key);
        return entry ? { key, value: entry.json(), revision: entry.revision } : null;
      }
      if (method === "mesh/state.put") return { revision: await kv.put(key, JSON.stringify(value)) };
      throw new JsonRpcError(-32601, `the chain serves get and put, not ${method}`);
    },
  });
  const reader = new NdjsonLineReader({ onLine: (line) => peer.receiveLine(line), onOversize: () => undefined });
  input.on("data", (chunk: Buffer) => reader.push(chunk));
  return { closed: new Promise((resolve) => input.once("close", () => resolve())) };
}
