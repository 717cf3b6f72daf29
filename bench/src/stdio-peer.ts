/** The bare JSON-RPC end a bench child keeps on its own stdio: the echo's child, and the chain's sender. */
import process from "node:process";
import { JsonRpcPeer, type JsonRpcPeerOptions, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";

/** A peer on this process's stdin and stdout, with state-protocol's framing and no SDK. */
export function peerOnOwnStdio(onRequest?: JsonRpcPeerOptions["onRequest"]): JsonRpcPeer {
  const peer = new JsonRpcPeer({ send: (line) => process.stdout.write(`${line}\n`), onRequest });
  // Keeping what the SDK keeps between lines (its stdio transport), so that watch batches meet the same reader.
  const reader = new NdjsonLineReader({
    onLine: (line) => peer.receiveLine(line),
    onOversize: () => undefined,
    retainBytes: 2 * 1024 * 1024,
  });
  process.stdin.on("data", (chunk: Buffer) => reader.push(chunk));
  return peer;
}
