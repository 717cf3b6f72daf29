import { type ChildProcess, spawn } from "node:child_process";
import {
  createStateService,
  type StateService,
  type StateServiceOptions,
  type StdioHandle,
  serveStdio,
} from "@mesh/runtime-state";

export interface ServedBundleOptions {
  /** The node script the bundle runs. */
  script: string;
  args?: readonly string[];
  /** The service to serve it with; or the options to create one (its own, as the node runtime gives each bundle). */
  service: StateService | StateServiceOptions;
  /** The bundle's stderr: handed through (the default) or piped for the caller to read. */
  stderr?: "inherit" | "pipe";
  /** An IPC channel beside stdio, for a test's bundle to report over (`process.send`); never the wire. */
  ipc?: boolean;
  /** The bundle's environment; a safelisted one (PATH only) by default, as the node runtime gives it. */
  env?: NodeJS.ProcessEnv;
}

export interface ServedBundle {
  child: ChildProcess;
  service: StateService;
  stdio: StdioHandle;
  /** Resolves when the bundle has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs the bundle if it still runs, then waits for it and for its stdio to close. */
  kill(): Promise<void>;
}

/** A bundle child process whose stdio runtime-state serves: the wire a bundle sees in production. */
export function spawnServedBundle(options: ServedBundleOptions): ServedBundle {
  const service = "handle" in options.service ? options.service : createStateService(options.service);
  const child = spawn(process.execPath, [options.script, ...(options.args ?? [])], {
    stdio: ["pipe", "pipe", options.stderr ?? "inherit", ...(options.ipc ? (["ipc"] as const) : [])],
    env: options.env ?? { PATH: process.env.PATH ?? "" },
  });
  const stdio = serveStdio({ service, input: child.stdout!, output: child.stdin! });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    service,
    stdio,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await stdio.closed;
    },
  };
}
