// This package's test kit (outside src/, never built): the built CLI, run as an operator runs it.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The built entry point; the test command builds before it tests. */
export const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

const run = promisify(execFile);

/** Runs `mesh-state ARGS...` to completion; a non-zero exit is a result, not a throw. */
export async function meshState(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], options);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
