// What the demo plays of a node runtime: one state connection per machine, as its own state user with its
// own inbox prefix, and per bundle a runtime-state service over the child's stdio. Bundles report on stderr
// as JSON lines; the demo waits for those reports, never for time to pass.
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { spawnServedBundle } from "@mesh/dev-mesh";
import type { StateService } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";

export const EXAMPLE = fileURLToPath(new URL("../../operators-agent/", import.meta.url));
const GRACE_MS = 2_000;

/** One line a bundle reported: `{module, machine, event, ...}`. */
export type Report = { module: string; machine: string; event: string } & Record<string, unknown>;

/** Every pid the demo started that may still run: killed on exit whatever happens, checked at the end. */
export const startedPids = new Set<number>();
process.once("exit", () => {
  for (const pid of startedPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

export class BundleRun {
  readonly reports: Report[] = [];
  readonly exited: Promise<number>;
  private readonly waiters = new Set<() => void>();
  private exitCode: number | undefined;

  constructor(
    readonly label: string,
    readonly child: ChildProcess,
    readonly service: StateService,
    private readonly served: { close(): Promise<void> },
  ) {
    if (child.pid !== undefined) startedPids.add(child.pid);
    let buffered = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        try {
          this.reports.push(JSON.parse(line) as Report);
        } catch {
          this.reports.push({ module: "?", machine: "?", event: "stderr", line });
        }
        for (const wake of this.waiters) wake();
      }
    });
    // "close", not "exit": by then stderr is drained, so every report the bundle made is in `reports`.
    this.exited = new Promise((resolve) =>
      child.once("close", (code, signal) => {
        if (child.pid !== undefined) startedPids.delete(child.pid);
        this.exitCode = code ?? (signal ? 128 : 1);
        for (const wake of this.waiters) wake();
        resolve(this.exitCode);
      }),
    );
  }

  /** The first report (from `from` on) that matches; rejects if the bundle exits or `deadlineMs` passes first. */
  async waitFor(match: (report: Report) => boolean, what: string, deadlineMs = 10_000, from = 0): Promise<Report> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.reports.slice(from).find(match);
        if (found) return done(() => resolve(found));
        if (this.exitCode !== undefined) {
          done(() =>
            reject(new Error(`${this.label} exited (${this.exitCode}) before ${what}; it said:\n${this.said()}`)),
          );
        }
      };
      const timer = setTimeout(
        () =>
          done(() => reject(new Error(`${this.label}: no ${what} within ${deadlineMs} ms; it said:\n${this.said()}`))),
        deadlineMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Stops the bundle as a runtime does: stdin EOF, then SIGTERM, then SIGKILL; then the service. */
  async stop(): Promise<number> {
    if (this.exitCode === undefined) {
      this.child.stdin?.end();
      const term = setTimeout(() => this.child.kill("SIGTERM"), GRACE_MS);
      const kill = setTimeout(() => this.child.kill("SIGKILL"), 2 * GRACE_MS);
      term.unref();
      kill.unref();
      await this.exited;
      clearTimeout(term);
      clearTimeout(kill);
    }
    await this.served.close();
    return this.exitCode!;
  }

  said(): string {
    return this.reports.map((report) => `  ${JSON.stringify(report)}`).join("\n");
  }
}

/** A machine: its state connection, and bundles of its assigned modules served over it. */
export class Machine {
  constructor(
    readonly name: string,
    /** The machine's state connection, as its state user with its inbox prefix (dev-mesh's). */
    readonly connection: NatsConnection,
    private readonly memberships: Record<string, unknown>,
  ) {}

  /** Runs `node examples/operators-agent/dist/<script>.js ...args` as the bundle of `module`. */
  run(module: string, script: string, args: string[] = []): BundleRun {
    const membership = this.memberships[module];
    if (membership === undefined) throw new Error(`${module} is not assigned to ${this.name}`);
    const bundle = spawnServedBundle({
      script: `${EXAMPLE}dist/${script}.js`,
      args,
      service: { connection: this.connection, membership },
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", MESH_MODULE: module, MESH_MACHINE: this.name },
    });
    return new BundleRun(`${module} ${args[0] ?? script} on ${this.name}`, bundle.child, bundle.service, bundle.stdio);
  }

  /** Runs a one-shot bundle to its end: its last report and its exit code. */
  async once(module: string, script: string, args: string[]): Promise<{ code: number; report: Report | undefined }> {
    const bundle = this.run(module, script, args);
    const code = await bundle.exited;
    await bundle.stop();
    return { code, report: bundle.reports.at(-1) };
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** Whether a process still runs (signal 0 only asks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
