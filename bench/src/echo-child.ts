/**
 * The floor's other end: a child process that answers every JSON-RPC request on its stdin with `{}` on its
 * stdout, and nothing else. `bench-echo.js` frames with state-protocol's NdjsonLineReader and JsonRpcPeer
 * (what the mesh's two ends use); `bench-echo.js bare` with a hand-written line split, the floor of the
 * framing itself. Reports its CPU time over IPC.
 */
import process from "node:process";
import { IpcPeer } from "./ipc.js";
import { peerOnOwnStdio } from "./stdio-peer.js";

if (process.argv[2] === "bare") {
  let buffer = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
      const { id } = JSON.parse(buffer.slice(0, newline)) as { id: number };
      buffer = buffer.slice(newline + 1);
      process.stdout.write(`{"jsonrpc":"2.0","id":${id},"result":{}}\n`);
    }
  });
} else {
  peerOnOwnStdio(() => ({}));
}

new IpcPeer(process as never, (request) => {
  if (request.cmd !== "cpu") throw new Error(`unknown command ${String(request.cmd)}`);
  return process.cpuUsage();
});
process.on("disconnect", () => process.exit(0));
