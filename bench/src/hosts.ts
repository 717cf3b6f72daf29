import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { IpcPeer } from "./ipc.js";
import { profileArgs } from "./profile.js";
import type { Credentials } from "./world.js";

const hostScript = fileURLToPath(new URL("./bench-host.js", import.meta.url));

/** A runtime host or raw host process (host.ts), driven over IPC. */
export class Host {
  private readonly listeners = new Set<(event: Record<string, unknown>) => void>();
  private readonly peer: IpcPeer;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    this.peer = new IpcPeer(
      child as never,
      () => undefined,
      (event) => {
        for (const listener of this.listeners) listener(event);
      },
    );
    child.on("error", (error) => process.stderr.write(`bench host: ${error.message}\n`));
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.peer.failAll(`host exited (${code ?? signal})`);
        resolve();
      }),
    );
  }

  /** `nodeFlags`: for the host process itself (the memory section runs the runtime as its README recommends). */
  static async start(url: string, who: Credentials, name: string, nodeFlags: string[] = []): Promise<Host> {
    const child = fork(hostScript, [], {
      execArgv: ["--expose-gc", ...nodeFlags, ...profileArgs("host")],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const host = new Host(child);
    await host.request({ cmd: "init", url, ...who, name });
    return host;
  }

  request<T = Record<string, unknown>>(body: Record<string, unknown>): Promise<T> {
    return this.peer.request<T>(body);
  }

  /** A request to one of this runtime host's bundles. */
  bundle<T = Record<string, unknown>>(bundle: string, call: Record<string, unknown>): Promise<T> {
    return this.peer.request<T>({ cmd: "bundle", bundle, call });
  }

  onEvent(listener: (event: Record<string, unknown>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.request({ cmd: "stop" }).catch(() => undefined);
    await this.exited;
    clearTimeout(timer);
  }
}

export type StartHost = (who: Credentials, name: string, nodeFlags?: string[]) => Promise<Host>;
export type StopHosts = (hosts: Host[]) => Promise<void>;

/** The hosts a run's sections start on one server: each section stops its own, and the run stops what is left. */
export class HostPool {
  private readonly hosts: Host[] = [];

  constructor(private readonly url: string) {}

  readonly start: StartHost = async (who, name, nodeFlags = []) => {
    const host = await Host.start(this.url, who, name, nodeFlags);
    this.hosts.push(host);
    return host;
  };

  readonly stop: StopHosts = async (some) => {
    await Promise.all(some.map((host) => host.stop()));
    for (const host of some) this.hosts.splice(this.hosts.indexOf(host), 1);
  };

  async stopAll(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.stop()));
  }
}
