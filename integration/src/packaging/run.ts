import { spawn } from "node:child_process";

export interface RunResult {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long; the result then has `signal` set. */
  timeoutMs?: number;
}

/** Runs a command to completion and captures its output; never rejects for a non-zero exit. */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const shown = [command, ...args].join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: options.timeoutMs ?? 120_000,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code, signal) =>
      resolve({ command: shown, code, signal, stdout, stderr, ms: Math.round(performance.now() - started) }),
    );
  });
}

/** A failed run as text for an assertion message: the command, how it ended, and its output. */
export function describeRun(result: RunResult): string {
  const how = result.signal ? `killed by ${result.signal}` : `exit ${result.code}`;
  return `${result.command} (${how}, ${result.ms} ms)\n--- stdout\n${result.stdout.trimEnd()}\n--- stderr\n${result.stderr.trimEnd()}`;
}

/** Runs `jobs` with at most `limit` at once (the machine is small and shared), keeping their order. */
export async function inBatches<T, R>(items: readonly T[], limit: number, job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await job(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
