import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

// The safety net: a test run that crashes or forgets to dispose must leave no nats-server process and no temp dir.
const tracked = new Set<ChildProcess>();
const trackedDirs = new Set<string>();
let exitHookInstalled = false;
let signalHandlersInstalled = false;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Kills every live process the harness started, synchronously (usable from an 'exit' handler). */
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

/** Pids of the processes the harness started that have not exited yet. */
export function trackedPids(): number[] {
  return [...tracked].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

/** Kills every tracked process, then removes every tracked temp dir: what runs on 'exit'. */
export function cleanUpAllSync(): void {
  killAllTrackedSync();
  for (const dir of trackedDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort while the process ends; nothing can be reported any more.
    }
  }
  trackedDirs.clear();
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

function onSignal(signal: NodeJS.Signals): void {
  cleanUpAllSync();
  // Alone, our listener would swallow the signal's default (exit); give it back. Others decide for themselves.
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

// The exit hook only kills and removes what the harness itself started, so it is always there.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", cleanUpAllSync);
}

/**
 * Opt-in: on SIGINT/SIGTERM/SIGHUP, SIGKILL every tracked server and remove its store, then let the signal
 * do what it would have done. Right for a test run (a Ctrl-C leaves nothing behind); wrong for a program
 * that stops its own children in order on a signal (`mesh-state dev`), which therefore never calls it.
 */
export function reapOnSignals(): void {
  installExitHook();
  if (signalHandlersInstalled) return;
  signalHandlersInstalled = true;
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
