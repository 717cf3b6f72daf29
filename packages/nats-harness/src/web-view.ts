// The web view (`mesh-state ui`) as the CLI's browser test and the bench's web-view script start it: the built
// CLI in a process of its own, as a reader of a mesh, and the Chromium that drives it (key-probe.ts times a row).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const CHROMIUM_SCRIPT = fileURLToPath(new URL("../../../scripts/chromium.sh", import.meta.url));

/** Debian's Chromium, installed by scripts/chromium.sh when it is missing. */
export async function chromiumPath(): Promise<string> {
  const { stdout } = await promisify(execFile)("bash", [CHROMIUM_SCRIPT], { env: process.env });
  return stdout.trim();
}

export interface UiOptions {
  /** The CLI's built entry point (`packages/cli/dist/main.js`). */
  main: string;
  /** The `--catalogue` folder of manifests. */
  catalogue: string;
  /** Each machine's modules, passed as `--machine NAME=MODULE,...`. */
  machines: Readonly<Record<string, readonly string[]>>;
  /** The server it connects to, and the reader it connects as (the inspector, say). */
  server: string;
  user: string;
  password: string;
  /** Arguments after those (`--port N`). */
  args?: readonly string[];
  /** Also copy what it writes on stderr to this process's stderr as it comes (it is kept either way). */
  echoStderr?: boolean;
}

export interface UiProcess extends AsyncDisposable {
  url: string;
  child: ChildProcess;
  /** Sends SIGTERM unless it has exited; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `mesh-state ui` and resolves with the URL it prints; rejects with its stderr if it exits first. */
export async function startUi(options: UiOptions): Promise<UiProcess> {
  const args = [
    options.main,
    "ui",
    "--catalogue",
    options.catalogue,
    ...Object.entries(options.machines).flatMap(([machine, modules]) => [
      "--machine",
      `${machine}=${modules.join(",")}`,
    ]),
    "--server",
    options.server,
    "--user",
    options.user,
    "--password",
    options.password,
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    if (options.echoStderr) process.stderr.write(chunk);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /mesh-state ui: (\S+)/.exec(stdout);
      if (found) resolve(found[1]!);
    });
    child.once("exit", (code) => reject(new Error(`mesh-state ui exited with ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  return { url, child, stop, [Symbol.asyncDispose]: async () => void (await stop()) };
}
