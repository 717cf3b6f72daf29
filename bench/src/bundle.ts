/**
 * The bench's bundle: a real child process of a runtime host, speaking NDJSON JSON-RPC on its stdio as a
 * module author's bundle does (through `@mesh/sdk-ts/stdio`). The bench drives it over the IPC channel and
 * it times its own work, so what it reports is what a module author would see.
 *
 * `bundle.js slow` is the memory scenario's bundle instead: it speaks the wire by hand so that it can
 * answer each `mesh/state` batch a set time after receiving it: `delayMs` per `perValues` events in it.
 * `bundle.js chain` is the chain's sender (chain.ts): state-protocol's peer on stdio, no SDK.
 */
import process from "node:process";
import { connectStdio } from "@mesh/sdk-ts/stdio";
import { IpcPeer } from "./ipc.js";
import { peerOnOwnStdio } from "./stdio-peer.js";
import { benchValue, largeValue, runPipelined, runSequential, wallClock } from "./workload.js";

type Request = Record<string, unknown>;

if (process.argv[2] === "slow") slowBundle();
else if (process.argv[2] === "chain") chainBundle();
else await sdkBundle();

async function sdkBundle(): Promise<void> {
  const mesh = await connectStdio({ onProtocolError: (problem) => process.stderr.write(`bundle: ${problem}\n`) });
  const ipc = new IpcPeer(process as never, async (request: Request) => {
    if (request.cmd === "cpu") return process.cpuUsage();
    const bucket = mesh.state(String(request.bucket));
    const keys = Number(request.keys ?? 1000);
    // The value is built before the clock starts (as the raw side does), so only the put is timed.
    const large = request.value === "large" ? largeValue(0) : undefined;
    const op =
      request.op === "put"
        ? (index: number) => bucket.put(`k.${index % keys}`, large ?? benchValue(index))
        : (index: number) => bucket.get(`k.${index % keys}`);
    switch (request.cmd) {
      case "sequential":
        return runSequential(Number(request.count), op);
      case "pipelined":
        return runPipelined(Number(request.count), Number(request.inFlight), op);
      case "time-to-current": {
        const started = performance.now();
        let puts = 0;
        for await (const event of bucket.watch()) {
          if (event.type === "put") puts++;
          else if (event.type === "current") return { ms: performance.now() - started, puts };
          else if (event.type === "ended") throw new Error(`watch ended before current: ${event.message}`);
        }
        throw new Error("watch finished before current");
      }
      case "follow": {
        // Stays open: every `tick.*` put is reported with the instant it reached this process.
        const watch = bucket.watch();
        const iterator = watch[Symbol.asyncIterator]();
        for (;;) {
          const { value: event, done } = await iterator.next();
          if (done) throw new Error("watch finished before current");
          if (event.type === "current") break;
          if (event.type === "ended") throw new Error(`watch ended before current: ${event.message}`);
        }
        void (async () => {
          for (;;) {
            const { value: event, done } = await iterator.next();
            if (done) return;
            if (event.type === "put" && event.key.startsWith("tick."))
              ipc.event({ key: event.key, arrived: wallClock() });
          }
        })();
        return { following: true };
      }
      case "close":
        await mesh.close();
        setImmediate(() => process.exit(0));
        return { closed: true };
      default:
        throw new Error(`unknown command ${String(request.cmd)}`);
    }
  });
  process.on("disconnect", () => process.exit(0));
}

/** The chain's sender: the SDK bundle's get/put loops on a bare peer (as the echo's sender has). */
function chainBundle(): void {
  const peer = peerOnOwnStdio();
  new IpcPeer(process as never, (request: Request) => {
    if (request.cmd === "cpu") return process.cpuUsage();
    const bucket = String(request.bucket);
    const keys = Number(request.keys ?? 1000);
    const op =
      request.op === "put"
        ? (index: number) =>
            peer.request("mesh/state.put", { bucket, key: `k.${index % keys}`, value: benchValue(index) })
        : (index: number) => peer.request("mesh/state.get", { bucket, key: `k.${index % keys}` });
    if (request.cmd === "sequential") return runSequential(Number(request.count), op);
    if (request.cmd === "pipelined") return runPipelined(Number(request.count), Number(request.inFlight), op);
    throw new Error(`unknown command ${String(request.cmd)}`);
  });
  process.on("disconnect", () => process.exit(0));
}

/**
 * Watches by hand on the wire, answering each batch `delayMs` per `perValues` of its events after it arrived
 * (a pace per value, as the raw client's slow consumer has, whatever size the runtime cuts batches at);
 * reports once `current` came.
 */
function slowBundle(): void {
  let buffer = "";
  let watchStarted: ((result: unknown) => void) | undefined;
  let report: { events: number; batches: number; started: number; done?: (result: unknown) => void } | undefined;
  let delayMs = 50;
  let perValues = 256;
  const write = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
  process.stdin.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, newline)) as {
        id?: number;
        method?: string;
        params?: { events: { type: string }[] };
        result?: unknown;
        error?: { message: string };
      };
      buffer = buffer.slice(newline + 1);
      if (message.method === "mesh/state" && report) {
        const events = message.params!.events;
        report.batches++;
        report.events += events.length;
        const current = events.some((event) => event.type === "current");
        const id = message.id;
        setTimeout(
          () => {
            write({ jsonrpc: "2.0", id, result: {} });
            if (current && report?.done) {
              report.done({ ms: performance.now() - report.started, events: report.events, batches: report.batches });
              report.done = undefined;
            }
          },
          (delayMs * events.length) / perValues,
        );
      } else if (message.id === 1 && watchStarted) {
        if (message.error) throw new Error(`watch refused: ${message.error.message}`);
        watchStarted(message.result);
      }
    }
  });
  new IpcPeer(process as never, (request: Request) => {
    if (request.cmd !== "slow-watch") throw new Error(`unknown command ${String(request.cmd)}`);
    delayMs = Number(request.delayMs);
    perValues = Number(request.perValues);
    return new Promise((resolve) => {
      report = { events: 0, batches: 0, started: performance.now(), done: resolve };
      watchStarted = () => undefined;
      write({ jsonrpc: "2.0", id: 1, method: "mesh/state.watch", params: { bucket: request.bucket } });
    });
  });
  process.on("disconnect", () => process.exit(0));
}
