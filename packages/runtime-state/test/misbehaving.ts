// Test helpers (not exported from index.ts): misbehaving bundles (fixtures/misbehave.mjs) served over stdio,
// and the measures the back-pressure and chaos tests take of the runtime (this process).
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { StateService } from "../src/types.js";
import { serveStdio } from "../src/wire/stdio.js";
import type { spawnBundle } from "./kit.js";

const MISBEHAVE = fileURLToPath(new URL("./fixtures/misbehave.mjs", import.meta.url));

export type Misbehaviour = "flood" | "silent-watcher" | "no-newline" | "random" | "abandon-watches";

export function serveMisbehaving(service: StateService, mode: Misbehaviour, count?: number) {
  const args = count === undefined ? [mode] : [mode, String(count)];
  const child: ChildProcess = spawn(process.execPath, [MISBEHAVE, ...args], {
    stdio: ["pipe", "pipe", "inherit", "ipc"],
  });
  const stdio = serveStdio({ service, input: child.stdout!, output: child.stdin! });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const reports: Array<Record<string, number>> = [];
  child.on("message", (message: Record<string, number>) => reports.push(message));
  return {
    child,
    stdio,
    reports,
    /** Kills the bundle and stops serving it, as a runtime does when a bundle exits. */
    async stop() {
      child.kill("SIGKILL");
      await exited;
      await stdio.close();
    },
  };
}

/** The median and 99th percentile of `rounds` sequential gets by a well-behaved bundle, in ms. */
export async function getLatency(bundle: ReturnType<typeof spawnBundle>, rounds: number) {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const answer = await bundle.call("mesh/state.get", { bucket: "notes", key: "steady" });
    times.push(performance.now() - started);
    if (answer.error) throw new Error(`the well-behaved bundle was refused: ${answer.error.message}`);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(rounds / 2)]!, p99: times[Math.floor(rounds * 0.99)]! };
}

export const rssMiB = () => process.memoryUsage.rss() / (1024 * 1024);
/**
 * RSS after a full garbage collection: what the process holds, not garbage it has not collected yet (the
 * test process is a vitest worker, whose young generation otherwise sizes itself to whatever ran before).
 */
export function settledRssMiB(): number {
  collectGarbage();
  return rssMiB();
}
let gc: (() => void) | undefined;
function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
}
export const openFds = () => readdirSync("/proc/self/fd").length;
/** Active handles and timers by type (process.getActiveResourcesInfo), to compare before and after. */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}
