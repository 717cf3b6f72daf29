import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serverVersion } from "./binary.js";
import { type ConfigParts, renderConfig, type SyncInterval } from "./config.js";
import { LocalNatsError } from "./errors.js";
import { natsGreets, portOf, readPortsFile } from "./net.js";
import { DEFAULT_LOG_LINES, lastLines, type ServerNode, STOP_GRACE_MS } from "./node.js";
import { diesWithThisProcess } from "./parent-death.js";
import { pollUntil } from "./poll.js";
import { track } from "./processes.js";

export interface LocalNodeOptions {
  readonly binary: string;
  /** The node's own directory: config, log, ports files and store live here. */
  readonly dir: string;
  readonly name: string;
  /** A fixed port, or undefined to let the kernel pick on the first start (later starts reuse it). */
  readonly port?: number;
  readonly jetstream: boolean;
  readonly cluster?: ConfigParts["cluster"];
  readonly extraConfig?: string;
  readonly syncInterval?: SyncInterval;
  readonly maxFileStore?: number;
  readonly jetstreamDomain?: string;
  readonly timeoutMs: number;
}

const HOST = "127.0.0.1";
const STDERR_KEEP = 16 * 1024;
const LOG_READ = 64 * 1024;

/** nats-server as a child process of this one. */
export class LocalNode implements ServerNode {
  readonly name: string;
  readonly storeDir: string;
  readonly configPath: string;
  readonly #options: LocalNodeOptions;
  readonly #logFile: string;
  #port: number | undefined;
  #monitorUrl: string | undefined;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #stderr = "";

  constructor(options: LocalNodeOptions) {
    this.#options = options;
    this.name = options.name;
    this.#port = options.port;
    this.storeDir = join(options.dir, "store");
    this.configPath = join(options.dir, "nats-server.conf");
    this.#logFile = join(options.dir, "nats-server.log");
  }

  get port(): number {
    if (this.#port === undefined) throw new Error(`nats-server ${this.name} has not started yet: it has no port`);
    return this.#port;
  }
  get url(): string {
    return `nats://${HOST}:${this.port}`;
  }
  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }
  get monitorUrl(): string | undefined {
    return this.running ? this.#monitorUrl : undefined;
  }
  get running(): boolean {
    const child = this.#child;
    return child?.pid !== undefined && child.exitCode === null && child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`nats-server ${this.name} is already running (pid ${this.pid})`);
    this.#statesSyncInterval ??= await binaryTakesSyncInterval(this.#options.binary);
    this.#writeConfig();
    const command = diesWithThisProcess(this.#options.binary, ["-c", this.configPath]);
    const child = spawn(command.file, command.args, {
      cwd: this.#options.dir,
      stdio: ["ignore", "ignore", "pipe"],
      env: safeEnv(),
      // Its own process group: a terminal's Ctrl-C reaches the caller (e.g. `mesh-state dev`), which stops
      // its bundle first and the server last; the exit hook still kills the server when the caller exits.
      detached: true,
    });
    this.#child = child;
    this.#stderr = "";
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.once("error", (error) => {
      this.#stderr += `spawn failed: ${error.message}\n`;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_KEEP);
    });
    if (child.pid !== undefined) track(child);
    const pid = child.pid;
    const ports = await pollUntil(() => (pid === undefined ? undefined : readPortsFile(this.#options.dir, pid)), {
      what: `nats-server ${this.name} to write its ports file`,
      timeoutMs: this.#options.timeoutMs,
      abort: () => this.#exitedEarly(child),
      logTail: () => this.logTail(),
    });
    const firstStart = this.#port === undefined;
    this.#port = portOf(ports.nats[0]!);
    this.#monitorUrl = ports.monitoring?.[0];
    await pollUntil(async () => ((await natsGreets(HOST, this.#port!)) ? true : undefined), {
      what: `nats-server ${this.name} to greet a client on port ${this.#port}`,
      timeoutMs: this.#options.timeoutMs,
      abort: () => this.#exitedEarly(child),
      logTail: () => this.logTail(),
    });
    // From now on the config names the port, so a restart comes back where clients expect it.
    if (firstStart) this.#writeConfig();
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || !this.running) return;
    child.kill("SIGTERM");
    const escalation = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    escalation.unref();
    await this.#exited;
    clearTimeout(escalation);
  }

  async kill(): Promise<void> {
    if (!this.#child || !this.running) return;
    this.#child.kill("SIGKILL");
    await this.#exited;
  }

  logTail(lines = DEFAULT_LOG_LINES): string {
    const stderr = this.#stderr.trim() ? `\n[stderr]\n${this.#stderr}` : "";
    return lastLines(readTail(this.#logFile, LOG_READ) + stderr, lines);
  }

  async destroy(): Promise<void> {
    await this.stop();
  }

  /** Whether this node's binary takes `sync_interval` (2.10 and later); known from its first start. */
  #statesSyncInterval: boolean | undefined;

  #writeConfig(): void {
    mkdirSync(this.#options.dir, { recursive: true });
    const config = renderConfig({
      serverName: this.name,
      host: HOST,
      port: this.#port ?? -1,
      monitorPort: -1,
      portsFileDir: this.#options.dir,
      logFile: this.#logFile,
      storeDir: this.#options.jetstream ? this.storeDir : undefined,
      syncInterval: this.#statesSyncInterval === false ? null : this.#options.syncInterval,
      maxFileStore: this.#options.maxFileStore,
      jetstreamDomain: this.#options.jetstreamDomain,
      cluster: this.#options.cluster,
      extra: this.#options.extraConfig,
    });
    writeFileSync(this.configPath, config);
  }

  #exitedEarly(child: ChildProcess): LocalNatsError | undefined {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) return undefined;
    const how = child.pid === undefined ? "could not be spawned" : `exited (${child.exitCode ?? child.signalCode})`;
    const logTail = this.logTail();
    // nats-server says so in its log, the one place its reason is told.
    const portTaken = logTail.includes("address already in use");
    return new LocalNatsError(
      portTaken ? "port-taken" : "server-exited",
      `nats-server ${this.name} ${how} before it accepted clients${portTaken ? ": a port it was given was taken" : ""}; its config is ${this.configPath}`,
      { logTail },
    );
  }
}

// nats-server needs no secrets from our environment; the config is the whole input.
function safeEnv(): NodeJS.ProcessEnv {
  const keep = ["PATH", "HOME", "TMPDIR", "TZ", "LANG"];
  return Object.fromEntries(keep.flatMap((key) => (process.env[key] === undefined ? [] : [[key, process.env[key]]])));
}

function readTail(path: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether each binary takes `sync_interval`: asked once per binary for the process, not once per node started. */
const syncIntervalTakenBy = new Map<string, Promise<boolean>>();

function binaryTakesSyncInterval(binary: string): Promise<boolean> {
  let taken = syncIntervalTakenBy.get(binary);
  if (taken === undefined) {
    taken = serverVersion(binary).then(takesSyncInterval);
    taken.catch(() => syncIntervalTakenBy.delete(binary)); // a failed ask is asked again at the next start
    syncIntervalTakenBy.set(binary, taken);
  }
  return taken;
}

/** nats-server takes JetStream's `sync_interval` from 2.10 on; 2.9 refuses the config. */
function takesSyncInterval(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 2 || (major === 2 && minor >= 10);
}
