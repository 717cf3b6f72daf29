import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import { processStat } from "@mesh/local-nats";

/** One process as Linux's /proc shows it. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** Its process group. */
  readonly pgrp: number;
  /** False for a zombie: dead, not yet reaped. */
  readonly running: boolean;
  readonly argv: readonly string[];
  /** Its working directory, when this process may read it. */
  readonly cwd: string | undefined;
}

/**
 * Every process /proc shows, read once: what a test filters to prove that nothing it started is left running.
 * Linux only (an empty list elsewhere). A process that ends while it is read is left out.
 */
export function listProcesses(): ProcessEntry[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const stat = processStat(entry);
    if (stat === undefined) return [];
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").slice(0, -1);
      const { ppid, pgrp, state } = stat;
      return [{ pid: Number(entry), ppid, pgrp, running: state !== "Z", argv, cwd: cwdOf(entry) }];
    } catch {
      return [];
    }
  });
}

/** A nats-server that local-nats started, and the folder of its config and store. */
export interface StartedServer {
  readonly pid: number;
  readonly dir: string;
}

/** The nats-servers `parent` started and that still run: each is given its config with -c (`--version` is not). */
export function natsServersStartedBy(parent: number): StartedServer[] {
  return listProcesses().flatMap(({ pid, ppid, running, argv }) => {
    const config = argv.includes("-c") ? argv[argv.indexOf("-c") + 1] : undefined;
    if (ppid !== parent || !running || !argv[0]?.endsWith("nats-server") || !config) return [];
    return [{ pid, dir: dirname(config) }];
  });
}

function cwdOf(pid: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}
