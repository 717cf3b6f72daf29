/** What every `mesh-state` command is (a name, a one-line summary, its --help text, a run function), and its usage error. The commands themselves are in `commands/`, listed in `registry.ts`. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface Command {
  name: string;
  /** One line, shown by `mesh-state --help`. */
  summary: string;
  /** Shown by `mesh-state <name> --help`: usage, options, and at least one example. */
  help: string;
  /** Runs the command; resolves with the exit code. */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  readonly code = "usage";
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
