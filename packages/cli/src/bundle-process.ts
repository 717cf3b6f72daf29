import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";

/**
 * A bundle as a child process, the way a node runtime launches one: its stdin and stdout carry the state
 * verbs, its stderr is ours, its environment a safelist. Shut down by escalation on unref'd timers.
 */

/**
 * What a bundle inherits from our environment. The rest — above all NATS credentials a developer exported
 * for other commands — stays out, as it would under the node runtime. NODE_OPTIONS is kept on purpose:
 * `--inspect` or `--enable-source-maps` is how a module author debugs a bundle under `mesh-state dev`.
 */
export const INHERITED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "NODE_OPTIONS",
] as const;

/** The environment of a bundle: the safelist, the variables asked for by name, and MESH_MODULE/MESH_MACHINE. */
export function bundleEnv(
  parent: NodeJS.ProcessEnv,
  identity: { module: string; machine: string },
  extra: readonly string[] = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_ENV) if (parent[name] !== undefined) env[name] = parent[name];
  for (const item of extra) {
    const equals = item.indexOf("=");
    if (equals > 0) env[item.slice(0, equals)] = item.slice(equals + 1);
    else if (parent[item] !== undefined) env[item] = parent[item];
  }
  env.MESH_MODULE = identity.module;
  env.MESH_MACHINE = identity.machine;
  return env;
}

/** How long each step of the escalation waits for the bundle to exit before the next. */
export const GRACE_MS = 2_000;

export interface BundleProcess {
  readonly child: ChildProcess;
  /** Resolves with the bundle's exit status, shell-style: its code, or 128 + the signal's number. */
  readonly exited: Promise<number>;
  /**
   * Stops the bundle: `first` (a forwarded signal), or stdin EOF when none is given; then SIGTERM, then
   * SIGKILL, GRACE_MS apart. Calling it again skips to the next step at once (a second Ctrl-C).
   */
  stop(first?: NodeJS.Signals): Promise<number>;
}

export function spawnBundle(command: readonly string[], env: NodeJS.ProcessEnv, cwd: string): BundleProcess {
  const [file, ...args] = command;
  if (file === undefined) throw new Error("no bundle command given");
  // Its own process group: a terminal's Ctrl-C reaches the bundle once, forwarded by us in order, and the
  // group lets us reach what the bundle itself started (a shell, `pnpm run`, a watcher).
  const child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"], env, cwd, detached: true });
  const exited = new Promise<number>((resolve) => {
    child.once("error", () => resolve(127));
    child.once("exit", (code, signal) => {
      killGroup(child, "SIGKILL");
      resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
  let step = 0;
  const steps: (() => void)[] = [];
  const advance = () => {
    const next = steps[step];
    step += 1;
    next?.();
  };
  return {
    child,
    exited,
    stop(first) {
      if (steps.length === 0) {
        steps.push(
          () => (first ? killGroup(child, first) : child.stdin?.end()),
          () => killGroup(child, "SIGTERM"),
          () => killGroup(child, "SIGKILL"),
        );
        advance();
        const timer = setInterval(advance, GRACE_MS);
        timer.unref();
        void exited.then(() => clearInterval(timer));
      } else advance();
      return exited;
    },
  };
}

/** Signals the bundle's whole process group; a group already gone is what we wanted. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: nobody left in the group.
  }
}
