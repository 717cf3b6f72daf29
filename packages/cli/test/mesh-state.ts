// This package's test kit (outside src/, never built): the CLI run as an operator runs it (the built entry
// point, in a process of its own) or, where a test needs no process, in the test's own process.
import { execFile } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { runMeshState } from "../src/cli.js";

/** The built entry point; the test command builds before it tests. */
export const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

const run = promisify(execFile);

export interface MeshStateResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface MeshStateOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs `mesh-state ARGS...` to completion; a non-zero exit is a result, not a throw. */
export async function meshState(args: readonly string[], options: MeshStateOptions = {}): Promise<MeshStateResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], options);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A stream that keeps what is written to it, as text. */
function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

/**
 * The same run as `meshState`, with the same result, in this process: what main.ts runs (`runMeshState`)
 * with streams the test reads. For commands that start no process and need no signal handling.
 */
export async function meshStateInProcess(
  args: readonly string[],
  options: MeshStateOptions = {},
): Promise<MeshStateResult> {
  const stdout = collector();
  const stderr = collector();
  const code = await runMeshState(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: options.env ?? process.env,
    cwd: options.cwd ?? process.cwd(),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
