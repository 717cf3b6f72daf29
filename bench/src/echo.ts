/**
 * The floor, measured in the same run: a bare echo between two Node processes over NDJSON on stdio. The
 * bench process sends the params of a put (the same 256-byte value) and a child answers `{}`. Two framings:
 * state-protocol's NdjsonLineReader + JsonRpcPeer on both sides (the framing the mesh uses), and a
 * hand-written line split with one JSON.parse per line (the floor of the framing itself). The watch's floor
 * (watch-floor.ts) sends the peer framing's child whole watch batches (`batch`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { JsonRpcPeer, type NdjsonBytesLine, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";
import { type CpuSpan, cpuSpan } from "./cpu.js";
import { IpcPeer } from "./ipc.js";
import { profileArgs } from "./profile.js";
import { benchValue } from "./workload.js";

const echoScript = fileURLToPath(new URL("./bench-echo.js", import.meta.url));

export type Framing = "peer" | "bare";
const NEWLINE = Buffer.from("\n");

export class Echo {
  private constructor(
    private readonly child: ChildProcess,
    private readonly ipc: IpcPeer,
    private readonly call: (params: unknown) => Promise<unknown>,
    private readonly callBytes: (params: Uint8Array) => Promise<unknown>,
    private readonly exited: Promise<void>,
  ) {}

  static start(framing: Framing): Echo {
    const child = spawn(
      process.execPath,
      [...profileArgs("bundle"), echoScript, ...(framing === "bare" ? ["bare"] : [])],
      {
        stdio: ["pipe", "pipe", "inherit", "ipc"],
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    const ipc = new IpcPeer(child as never, () => undefined);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const send = (line: string) => child.stdin!.write(`${line}\n`);
    let call: (params: unknown) => Promise<unknown>;
    let callBytes: (params: Uint8Array) => Promise<unknown> = () => Promise.reject(new Error("peer framing only"));
    if (framing === "peer") {
      // As the runtime sends a watch batch: its pieces corked into one write.
      const sendBytes = (pieces: NdjsonBytesLine) => {
        const stdin = child.stdin!;
        stdin.cork();
        for (const piece of pieces) stdin.write(piece);
        stdin.write(NEWLINE);
        stdin.uncork();
      };
      const peer = new JsonRpcPeer({ send, sendBytes, onRequest: () => undefined });
      const reader = new NdjsonLineReader({ onLine: (line) => peer.receiveLine(line), onOversize: () => undefined });
      child.stdout!.on("data", (chunk: Buffer) => reader.push(chunk));
      call = (params) => peer.request("mesh/state.put", params);
      callBytes = (params) => peer.requestEncodedBytes("mesh/state", params);
    } else {
      const pending = new Map<number, (result: unknown) => void>();
      let nextId = 1;
      let buffer = "";
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => {
        buffer += chunk;
        for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
          const { id, result } = JSON.parse(buffer.slice(0, newline)) as { id: number; result: unknown };
          buffer = buffer.slice(newline + 1);
          pending.get(id)?.(result);
          pending.delete(id);
        }
      });
      call = (params) =>
        new Promise((resolve) => {
          const id = nextId++;
          pending.set(id, resolve);
          send(JSON.stringify({ jsonrpc: "2.0", id, method: "mesh/state.put", params }));
        });
    }
    return new Echo(child, ipc, call, callBytes, exited);
  }

  /** One put-shaped request, answered by the child. */
  readonly op = (index: number): Promise<unknown> =>
    this.call({ bucket: "items", key: `k.${index % 1000}`, value: benchValue(index) });

  /** One `mesh/state` request whose params are already encoded (a watch batch), answered by the child. */
  batch(params: Uint8Array): Promise<unknown> {
    return this.callBytes(params);
  }

  /** The child's CPU time so far. */
  childCpu(): Promise<NodeJS.CpuUsage> {
    return this.ipc.request<NodeJS.CpuUsage>({ cmd: "cpu" });
  }

  /** CPU time of both ends (this process and the child) over `work`. */
  async measure<T>(work: () => Promise<T>): Promise<{ result: T; parent: CpuSpan; child: CpuSpan }> {
    const childBefore = await this.childCpu();
    const parentBefore = process.cpuUsage();
    const result = await work();
    const parent = cpuSpan(parentBefore, process.cpuUsage());
    const child = cpuSpan(childBefore, await this.childCpu());
    return { result, parent, child };
  }

  async stop(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    this.child.stdin?.end();
    const kill = setTimeout(() => this.child.kill("SIGKILL"), 2_000);
    await this.exited;
    clearTimeout(kill);
  }
}
