/** One nats-server (a local process here; the test harness adds containers): what startServer and startCluster drive. */
export interface ServerNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  readonly configPath: string;
  readonly pid: number | undefined;
  /** The monitoring endpoint of the current run, once started. */
  readonly monitorUrl: string | undefined;
  readonly running: boolean;
  /** Starts the server and resolves once it greets clients. */
  start(): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  logTail(lines?: number): string;
  /** Stops it and frees what it holds (container, files); safe to call twice. */
  destroy(): Promise<void>;
}

/** How long SIGTERM may take before SIGKILL: JetStream flushes its store on a clean shutdown. */
export const STOP_GRACE_MS = 5_000;
export const DEFAULT_LOG_LINES = 40;

export function lastLines(text: string, lines: number): string {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all.slice(-lines).join("\n");
}
