import type { ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

// Every nats-server process this package starts, and every temp dir it makes: killed and removed when this
// process exits, however it exits, so nothing is left running. Signals are left alone: what a signal means is
// the program's to decide (`mesh-state dev` stops its bundle first; the test harness's `reapOnSignals` reaps).
const tracked = new Set<ChildProcess>();
const trackedDirs = new Set<string>();
let exitHookInstalled = false;

/** Kills every live process this package started, synchronously (usable from an 'exit' handler). */
export function killAllTrackedSync(): void {
  for (const child of tracked) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // Already gone: nothing to do.
      }
    }
  }
}

/** Pids of the processes this package started that have not exited yet. */
export function trackedPids(): number[] {
  return [...tracked].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

/** How long the exit hook waits for the processes it killed to die before it removes their stores. */
const DEATH_WAIT_MS = 2_000;

/** Kills every tracked process, waits for them to die, then removes every tracked temp dir: what runs on 'exit'. */
export function cleanUpAllSync(): void {
  const pids = trackedPids();
  killAllTrackedSync();
  // A SIGKILL takes effect when its target next runs; a server still running could write its store again.
  awaitDeathSync(pids, DEATH_WAIT_MS);
  for (const dir of trackedDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort while the process ends; nothing can be reported any more.
    }
  }
  trackedDirs.clear();
}

/**
 * Waits, synchronously (an 'exit' handler cannot await), until none of `pids` runs or `timeoutMs` has passed.
 * Reads Linux's /proc; where there is none, it does not wait.
 */
function awaitDeathSync(pids: readonly number[], timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (pids.some(processRuns) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 1);
}

/** A process's state letter ("Z": a zombie, dead and not yet reaped), parent and process group. */
export interface ProcessStat {
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
}

/** `pid`'s stat, read from Linux's /proc; undefined where /proc does not show it (gone, or no /proc). */
export function processStat(pid: number | string): ProcessStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // pid (comm) state ppid pgrp …; comm may hold spaces, so split after its closing parenthesis.
  const [state = "", ppid, pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, ppid: Number(ppid), pgrp: Number(pgrp) };
}

/** Whether `pid` runs: a zombie does not, nor a pid /proc does not show. */
export function processRuns(pid: number): boolean {
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== "Z";
}

/** A temp dir to remove on exit unless `untrackDir` is called first. */
export function trackDir(dir: string): void {
  installExitHook();
  trackedDirs.add(dir);
}

export function untrackDir(dir: string): void {
  trackedDirs.delete(dir);
}

export function track(child: ChildProcess): void {
  installExitHook();
  tracked.add(child);
  child.once("exit", () => tracked.delete(child));
}

// The exit hook only kills and removes what this package itself started, so it is always there.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", cleanUpAllSync);
}
