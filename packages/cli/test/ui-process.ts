// This package's test kit (outside src/, never built): `mesh-state ui` from the built CLI, and Chromium.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Manifest } from "@mesh/manifest-schema";
import { MAIN } from "./mesh-state.js";

const SCRIPT = fileURLToPath(new URL("../../../scripts/chromium.sh", import.meta.url));

/** Debian's Chromium, installed by scripts/chromium.sh when it is missing. */
export async function chromiumPath(): Promise<string> {
  const { stdout } = await promisify(execFile)("bash", [SCRIPT], { env: process.env });
  return stdout.trim();
}

/** Writes the manifests into a fresh folder, as `--catalogue DIR` reads them. */
export async function catalogueFolder(manifests: readonly Manifest[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mesh-ui-catalogue-"));
  for (const manifest of manifests) await writeFile(join(dir, `${manifest.name}.json`), JSON.stringify(manifest));
  return dir;
}

export interface UiProcess extends AsyncDisposable {
  url: string;
  child: ChildProcess;
  stop(): Promise<number | null>;
}

/** Starts `mesh-state ui ARGS` and resolves with the URL it prints. */
export async function startUi(args: readonly string[]): Promise<UiProcess> {
  const child = spawn(process.execPath, [MAIN, "ui", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
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
