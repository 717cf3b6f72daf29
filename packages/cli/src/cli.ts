import { describeFailure, formatFailure } from "./failure.js";
import { COMMANDS } from "./registry.js";
import { type CliIo, UsageError } from "./types.js";

async function overview(): Promise<string> {
  const lines = ["mesh-state: module state on the bus", "", "Usage: mesh-state <command> [options]", "", "Commands:"];
  for (const load of Object.values(COMMANDS)) {
    const command = await load();
    lines.push(`  ${command.name.padEnd(14)} ${command.summary}`);
  }
  lines.push("", "Run `mesh-state <command> --help` for a command's options and an example.", "");
  return lines.join("\n");
}

/**
 * `mesh-state ARGV...` against the given io, resolving with the exit code: main.ts runs it with the process's
 * own streams, environment and folder; a test may run it in its own process with streams it reads.
 */
export async function runMeshState(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(await overview());
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`mesh-state: unknown command ${JSON.stringify(name)}\n\n${await overview()}`);
    return 2;
  }
  const command = await load();
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout.write(`${command.help.trimEnd()}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    const failure = describeFailure(error);
    // With --json, stdout stays one JSON document: the failure as a stable object.
    if (rest.includes("--json")) io.stdout.write(`${JSON.stringify({ error: failure }, null, 2)}\n`);
    if (error instanceof UsageError) {
      io.stderr.write(`mesh-state ${name}: ${error.message}\n\n${command.help.trimEnd()}\n`);
    } else io.stderr.write(formatFailure(name, failure));
    return failure.exitCode;
  }
}
