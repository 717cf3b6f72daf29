import { type ParseArgsConfig, parseArgs } from "node:util";

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

type ArgOptions = NonNullable<ParseArgsConfig["options"]>;
/** What parseArgs makes of argv with these options: `values` and `positionals`. */
export type Parsed<Options extends ArgOptions, Positionals extends boolean> = ReturnType<
  typeof parseArgs<{ args: string[]; options: Options; allowPositionals: Positionals }>
>;

/** A command as it is declared: its options (node:util's parseArgs), and a run of what they parse to. */
export interface CommandDeclaration<Options extends ArgOptions, Positionals extends boolean> {
  name: string;
  summary: string;
  help: string;
  options: Options;
  /** Whether it takes positional arguments; without, one is refused as parseArgs refuses it. */
  positionals?: Positionals;
  run(parsed: Parsed<Options, Positionals>, io: CliIo): Promise<number>;
}

/** A command whose argv is parsed with its declared options before its run sees it. */
export function defineCommand<const Options extends ArgOptions, const Positionals extends boolean = false>(
  declaration: CommandDeclaration<Options, Positionals>,
): Command {
  const { name, summary, help, options, positionals } = declaration;
  return {
    name,
    summary,
    help,
    async run(argv, io) {
      const parsed = parseArgs({ args: argv, options, allowPositionals: (positionals ?? false) as Positionals });
      return declaration.run(parsed, io);
    },
  };
}

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  readonly code = "usage";
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
