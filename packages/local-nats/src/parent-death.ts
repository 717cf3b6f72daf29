import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/** A command line to spawn. */
export interface Command {
  readonly file: string;
  readonly args: readonly string[];
}

let setpriv: string | null | undefined;

/**
 * The command that runs `file` so that it dies with this process, even when this process is SIGKILLed and no
 * exit hook runs: util-linux's `setpriv --pdeathsig KILL` sets Linux's parent-death signal, then execs `file`
 * (the same pid, so its ports file and `kill` stay right). Where setpriv is missing (macOS, a minimal image),
 * `file` runs directly and only the exit hook stands between it and an orphan.
 *
 * The signal is sent when the thread that spawned the child ends: spawn from the main thread (a worker thread
 * that ends would take its servers with it).
 */
export function diesWithThisProcess(file: string, args: readonly string[]): Command {
  const wrapper = findSetpriv();
  return wrapper === null ? { file, args } : { file: wrapper, args: ["--pdeathsig", "KILL", "--", file, ...args] };
}

/** setpriv on PATH, if it takes --pdeathsig; looked up once per process. */
function findSetpriv(): string | null {
  if (setpriv !== undefined) return setpriv;
  setpriv = null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "setpriv");
    if (dir === "" || !existsSync(candidate)) continue;
    const probe = spawnSync(candidate, ["--pdeathsig", "KILL", "--", candidate, "--version"], { stdio: "ignore" });
    if (probe.status === 0) setpriv = candidate;
    break;
  }
  return setpriv;
}
