/**
 * A machine of the bench, in a process of its own so its memory is its own.
 *
 * - role `runtime`: what the node runtime does for module state — one state connection as the machine's
 *   user, and for each bundle a child process served by `createStateService` + `serveStdio` over its stdio.
 * - role `raw`: the baseline — the raw `@nats-io/kv` client doing the same watching in a process alike.
 *
 * Driven by the bench over IPC; bundles' reports are relayed up as events.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createStateService, type StdioHandle, serveStdio } from "@mesh/runtime-state";
import { jetstream } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { serveChain } from "./chain.js";
import { cpuSpan } from "./cpu.js";
import { Echo } from "./echo.js";
import { IpcPeer } from "./ipc.js";
import { profileArgs, profileEnv } from "./profile.js";
import { type FloorLimits, floorTimeToCurrent } from "./watch-floor.js";
import { wallClock } from "./workload.js";

type Request = Record<string, unknown>;

interface Bundle {
  child: ChildProcess;
  peer: IpcPeer;
  stdio: Pick<StdioHandle, "closed">;
  exited: Promise<void>;
}

const bundleScript = fileURLToPath(new URL("./bench-bundle.js", import.meta.url));
let connection: NatsConnection | undefined;
const bundles = new Map<string, Bundle>();
const rawWatches: { stop(): void }[] = [];
/** The watch floor's child (watch-floor.ts), started on first use. */
let floorEcho: Echo | undefined;
let samplePeak = 0;
/** The largest heap and off-heap sizes seen by the sampler since the last reset. */
let parts = { heapTotal: 0, external: 0, arrayBuffers: 0 };
let sampler: ReturnType<typeof setInterval> | undefined;

const parent = new IpcPeer(process as never, async (request: Request) => {
  switch (request.cmd) {
    case "init":
      connection = await connect({
        servers: String(request.url),
        user: String(request.user),
        pass: String(request.pass),
        inboxPrefix: String(request.inboxPrefix),
        name: String(request.name ?? "bench-host"),
        // As runtime-state's README recommends for a runtime; the raw hosts get the same, so it stays fair.
        noAsyncTraces: true,
      });
      return { pid: process.pid };
    case "start-bundle":
      return startBundle(String(request.bundle), request.membership, String(request.mode ?? "sdk"));
    case "bundle": {
      const bundle = bundles.get(String(request.bundle));
      if (!bundle) throw new Error(`no bundle ${String(request.bundle)}`);
      return bundle.peer.request(request.call as Request);
    }
    case "raw-follow":
      return rawFollow(String(request.bucket), Number(request.watches));
    case "raw-time-to-current":
      return rawTimeToCurrent(String(request.bucket), Number(request.expected));
    case "floor-time-to-current":
      return floorWatch(String(request.bucket), Number(request.expected), {
        batchEvents: Number(request.batchEvents),
        batchLineBytes: Number(request.batchLineBytes),
      });
    case "raw-slow-watch":
      return rawSlowWatch(
        String(request.bucket),
        Number(request.expected),
        Number(request.batch),
        Number(request.delayMs),
      );
    case "memory-reset":
      return memoryReset();
    case "memory-peak":
      return memoryPeak();
    case "memory-retained":
      return memoryRetained();
    case "cpu":
      return process.cpuUsage();
    case "stop":
      await stop();
      setImmediate(() => process.exit(0));
      return { stopped: true };
    default:
      throw new Error(`unknown command ${String(request.cmd)}`);
  }
});
process.on("disconnect", () => void stop().finally(() => process.exit(0)));

function startBundle(id: string, membership: unknown, mode: string): { pid: number | undefined } {
  if (!connection) throw new Error("init first");
  const child = spawn(process.execPath, [...profileArgs("bundle"), bundleScript, ...(mode === "sdk" ? [] : [mode])], {
    stdio: ["pipe", "pipe", "inherit", "ipc"],
    env: { PATH: process.env.PATH ?? "", ...profileEnv() },
  });
  // `chain`: the chain (chain.ts), the raw client answering; otherwise the runtime serves the bundle.
  const stdio =
    mode === "chain"
      ? serveChain(connection, child.stdout!, child.stdin!)
      : serveStdio({
          service: createStateService({ connection, membership }),
          input: child.stdout!,
          output: child.stdin!,
        });
  const peer = new IpcPeer(
    child as never,
    () => undefined,
    (event) => parent.event({ bundle: id, ...event }),
  );
  // A bundle that died makes IPC sends fail with EPIPE: its requests fail below, the host goes on.
  child.on("error", (error) => process.stderr.write(`bundle ${id}: ${error.message}\n`));
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      peer.failAll(`bundle ${id} exited`);
      resolve();
    }),
  );
  bundles.set(id, { child, peer, stdio, exited });
  return { pid: child.pid };
}

async function rawKv(bucket: string): Promise<KV> {
  if (!connection) throw new Error("init first");
  return new Kvm(connection).open(bucket, { allow_direct: true } as never);
}

/** `watches` raw watchers on one bucket; each `tick.*` put is reported with the instant it arrived. */
async function rawFollow(bucket: string, watches: number): Promise<{ following: number }> {
  const kv = await rawKv(bucket);
  await Promise.all(
    Array.from({ length: watches }, async () => {
      const watch = await kv.watch();
      rawWatches.push(watch);
      // The bucket holds one seed key: its arrival is this watcher's "current".
      let ready!: () => void;
      const seeded = new Promise<void>((resolve) => {
        ready = resolve;
      });
      void (async () => {
        for await (const entry of watch) {
          if (entry.key.startsWith("tick.")) parent.event({ key: entry.key, arrived: wallClock() });
          else ready();
        }
      })();
      await seeded;
    }),
  );
  return { following: watches };
}

/** The raw client's time until it holds every current value of a bucket of `expected` keys. */
async function rawTimeToCurrent(bucket: string, expected: number): Promise<{ ms: number; entries: number }> {
  const kv = await rawKv(bucket);
  const started = performance.now();
  const watch = await kv.watch();
  let entries = 0;
  for await (const _entry of watch) {
    if (++entries >= expected) break;
  }
  const ms = performance.now() - started;
  watch.stop();
  return { ms, entries };
}

/** The watch's floor (watch-floor.ts), with the CPU time its child spent. */
async function floorWatch(
  bucket: string,
  expected: number,
  limits: FloorLimits,
): Promise<{ ms: number; entries: number; childCpu: number }> {
  if (!connection) throw new Error("init first");
  floorEcho ??= Echo.start("peer");
  const before = await floorEcho.childCpu();
  const result = await floorTimeToCurrent(jetstream(connection), bucket, floorEcho, expected, limits);
  return { ...result, childCpu: cpuSpan(before, await floorEcho.childCpu()) };
}

/** The raw client watching a bucket with a consumer that takes `delayMs` per `batch` entries. */
async function rawSlowWatch(
  bucket: string,
  expected: number,
  batch: number,
  delayMs: number,
): Promise<{ ms: number; entries: number }> {
  const kv = await rawKv(bucket);
  const started = performance.now();
  const watch = await kv.watch();
  let entries = 0;
  for await (const _entry of watch) {
    entries++;
    if (entries >= expected) break;
    if (entries % batch === 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  const ms = performance.now() - started;
  watch.stop();
  return { ms, entries };
}

function residentBytes(field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Collects garbage, resets the kernel's peak-RSS mark to now, and starts sampling as a second opinion. */
function memoryReset(): { rss: number; heapTotal: number; external: number; arrayBuffers: number } {
  (globalThis as { gc?: () => void }).gc?.();
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // Not Linux, or not allowed: the sampler alone measures the peak.
  }
  const rss = process.memoryUsage.rss();
  samplePeak = rss;
  parts = { heapTotal: 0, external: 0, arrayBuffers: 0 };
  if (sampler) clearInterval(sampler);
  sampler = setInterval(() => {
    const usage = process.memoryUsage();
    samplePeak = Math.max(samplePeak, usage.rss);
    parts.heapTotal = Math.max(parts.heapTotal, usage.heapTotal);
    parts.external = Math.max(parts.external, usage.external);
    parts.arrayBuffers = Math.max(parts.arrayBuffers, usage.arrayBuffers);
  }, 5);
  const usage = process.memoryUsage();
  return { rss, heapTotal: usage.heapTotal, external: usage.external, arrayBuffers: usage.arrayBuffers };
}

/** What the heap and off-heap hold after a full GC: heapUsed plus external (which counts array buffers). */
function memoryRetained(): { retained: number; heapUsed: number; external: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("the host runs without --expose-gc");
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return { retained: heapUsed + external, heapUsed, external };
}

function memoryPeak(): {
  peak: number;
  sampledPeak: number;
  rss: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
} {
  if (sampler) clearInterval(sampler);
  sampler = undefined;
  const rss = process.memoryUsage.rss();
  samplePeak = Math.max(samplePeak, rss);
  const kernelPeak = residentBytes("VmHWM");
  return {
    peak: Number.isNaN(kernelPeak) ? samplePeak : Math.max(kernelPeak, samplePeak),
    sampledPeak: samplePeak,
    rss,
    ...parts,
  };
}

async function stop(): Promise<void> {
  for (const watch of rawWatches.splice(0)) watch.stop();
  await floorEcho?.stop();
  floorEcho = undefined;
  await Promise.all(
    [...bundles.values()].map(async (bundle) => {
      // Disconnecting lets the bundle exit on its own (and write its CPU profile when one is asked for).
      if (bundle.child.connected) bundle.child.disconnect();
      const kill = setTimeout(() => bundle.child.kill("SIGKILL"), 2_000);
      await bundle.exited;
      clearTimeout(kill);
      await bundle.stdio.closed;
    }),
  );
  bundles.clear();
  await connection?.close().catch(() => undefined);
  connection = undefined;
}
