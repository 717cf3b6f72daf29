import { inspectorInboxPrefix, machineInboxPrefix } from "@mesh/grant-composer";
import { bucketName, parseReadReference } from "@mesh/manifest-schema";
import { createStateService, type DeliverWatchEvents, StateRefusal, type StateService } from "@mesh/runtime-state";
import {
  CONSISTENCY_LEVELS,
  type Consistency,
  ConsistencySchema,
  type StateMethod,
  type StateParams,
  type StateResult,
} from "@mesh/state-protocol";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  connectToServer,
  resolveServerOptions,
  SERVER_ARG_OPTIONS,
  SERVER_HELP_OPTIONS,
  type ServerOptions,
} from "./connect.js";
import { type CliIo, type Command, defineCommand, type Parsed, UsageError } from "./types.js";

/**
 * What `ls`, `get`, `watch` and `history` share: they read one bucket through runtime-state's service, with
 * a membership that issues that bucket read-only. So an operator sees exactly what a bundle's verbs see —
 * current keys without deleted ones, history with deletes, a watch's `current` marker — from one code
 * path, and the connection needs only the reader subjects of grant-composer (a machine's state user whose
 * modules own or read the bucket will do).
 */

export const READER_ARG_OPTIONS = {
  ...SERVER_ARG_OPTIONS,
  consistency: { type: "string" },
  json: { type: "boolean", default: false },
} as const;

/** The module name the reading membership is issued to; never a bucket owner, never on the wire. */
export const OPERATOR_MODULE = "operator";

export const READER_HELP_OPTIONS = `  BUCKET               <module>.<name>, as a module's \`reads\` names it: operators-agent.mcp-servers
${SERVER_HELP_OPTIONS}
                       connect as a user with the bucket's reader subjects: the inspector (every bucket,
                       read-only), or the state user of a machine whose modules own or read it
  --inbox-prefix P     default the context's, else _INBOX_<machine> for a user state-<machine> (its grant's
                       inbox), _INBOX_insp_inspector for the user inspector, else _INBOX; an inspector
                       named otherwise: _INBOX_insp_<user>
  --consistency LEVEL  how current the read must be (docs/decisions/0011-read-consistency.md): strong (from
                       the stream's leader: every write acknowledged anywhere before the read began; needs a
                       leader), session (the default: never behind what this command already read; a fresh
                       command has read nothing, so its first read is as fresh as local's) or local (any
                       replica's answer, fastest, may be behind)
  --json               machine-readable output`;

export interface BucketReader {
  /** `<module>.<name>` */
  reference: string;
  /** `mod_<module>_<name>` */
  bucket: string;
  service: StateService;
  /** The level every read asks for; absent: the runtime's default. */
  consistency: Consistency | undefined;
  /** One verb on the bucket, read verbs at `consistency`; a refusal becomes an error that says what to do. */
  call<M extends StateMethod>(method: M, params: Omit<StateParams<M>, "bucket">): Promise<StateResult<M>>;
  /** Where the service sends watch events. */
  bindWatch(deliver: DeliverWatchEvents): void;
  close(): Promise<void>;
}

/**
 * The inbox prefix the grant of `user` allows: a machine's state user subscribes only below its own, and
 * the inspector (default name `inspector`) below `_INBOX_insp_inspector`.
 */
export function defaultInboxPrefix(user: string | undefined): string | undefined {
  if (user === "inspector") return inspectorInboxPrefix(user);
  const machine = user === undefined ? undefined : /^state-([a-z][a-z0-9-]{0,62})$/.exec(user)?.[1];
  return machine === undefined ? undefined : machineInboxPrefix(machine);
}

/** A reader's connection: the options completed by the context, and the inbox prefix its grant allows. */
export interface ReaderConnection {
  connection: NatsConnection;
  inboxPrefix: string | undefined;
  options: ServerOptions;
}

/** Connects as a reader (the inspector, or a machine's state user): what every reading command shares. */
export async function connectAsReader(
  given: ServerOptions & { "inbox-prefix"?: string },
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReaderConnection> {
  const options = await resolveServerOptions(given, env);
  const inboxPrefix = options.inboxPrefix ?? defaultInboxPrefix(options.user);
  const connection: NatsConnection = await connectToServer(
    { ...options, ...(inboxPrefix ? { inboxPrefix } : {}) },
    `mesh-state ${command}`,
    // A runtime connection: no stack captured per request for async traces (runtime-state's README).
    { noAsyncTraces: true },
    env,
  );
  return { connection, inboxPrefix, options };
}

/** The verbs that take `consistency` (state-protocol's read verbs). */
const READ_METHODS: ReadonlySet<StateMethod> = new Set([
  "mesh/state.get",
  "mesh/state.keys",
  "mesh/state.history",
  "mesh/state.watch",
]);

/** `--consistency`, checked before anything connects: one of the wire's words, or absent. */
export function parseConsistency(given: string | undefined): Consistency | undefined {
  if (given === undefined) return undefined;
  const parsed = ConsistencySchema.safeParse(given);
  if (!parsed.success)
    throw new UsageError(`--consistency is one of ${CONSISTENCY_LEVELS.join(", ")}, got ${JSON.stringify(given)}`);
  return parsed.data;
}

export async function openBucketReader(
  reference: string | undefined,
  given: ServerOptions & { "inbox-prefix"?: string; consistency?: string },
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BucketReader> {
  const parts = reference === undefined ? undefined : parseReadReference(reference);
  if (!parts || reference === undefined)
    throw new UsageError(
      `BUCKET is <module>.<name> (e.g. operators-agent.mcp-servers), got ${JSON.stringify(reference ?? "")}`,
    );
  const consistency = parseConsistency(given.consistency);
  const bucket = bucketName(parts.module, parts.name);
  const { connection, inboxPrefix, options } = await connectAsReader(given, command, env);
  const service = createStateService({
    connection,
    membership: { module: OPERATOR_MODULE, buckets: { [reference]: { bucket, access: "read" } } },
    ...(inboxPrefix ? { inboxPrefix } : {}),
  });
  return {
    reference,
    bucket,
    service,
    consistency,
    async call<M extends StateMethod>(method: M, params: Omit<StateParams<M>, "bucket">) {
      // Passed through as a bundle would send it: absent unless asked, so the runtime's default applies.
      const level = consistency !== undefined && READ_METHODS.has(method) ? { consistency } : {};
      try {
        // The service answers with the verb's result schema (state-protocol's STATE_VERBS).
        return (await service.handle(method, { bucket: reference, ...params, ...level })) as StateResult<M>;
      } catch (error) {
        throw explain(error, reference, options.user);
      }
    },
    bindWatch: (deliver) => service.bindBundle(deliver),
    async close() {
      await service.close("the command finished");
      await connection.close().catch(() => undefined);
    },
  };
}

/** A refusal as an operator reads it: the reason, the runtime's message, and for `denied` which user to use. */
export function explain(error: unknown, reference: string, user: string | undefined): Error {
  if (!(error instanceof StateRefusal)) return error instanceof Error ? error : new Error(String(error));
  const hint =
    error.reason === "denied"
      ? `\n  the server refused ${user ?? "this user"} on ${reference}: connect as a user whose grant reads it (the state user of a machine whose modules own or read it)`
      : "";
  return new Error(`${error.reason}: ${error.message}${hint}`, { cause: error });
}

/** A value on one line, cut to `width` characters. */
export function preview(value: unknown, width = 60): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Rows as aligned columns. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The reader options as parsed. */
export type ReaderValues = Parsed<typeof READER_ARG_OPTIONS, true>["values"];

interface ReaderCommandBase {
  name: string;
  summary: string;
  help: string;
}
type ReaderRun<Argument> = (
  reader: BucketReader,
  argument: Argument,
  values: ReaderValues,
  io: CliIo,
) => Promise<number>;

/**
 * A command that reads one bucket (`ls`, `get`, `history`, `watch`): the reader options, then BUCKET and one
 * more positional, a KEY it needs (`keyUsage` is the usage line without one) or else an optional FILTER. The
 * KEY is checked before anything connects; the bucket reader is opened for the run and closed after it.
 */
export function defineReaderCommand(
  declaration: ReaderCommandBase & { keyUsage: string; run: ReaderRun<string> },
): Command;
export function defineReaderCommand(
  declaration: ReaderCommandBase & { keyUsage?: undefined; run: ReaderRun<string | undefined> },
): Command;
export function defineReaderCommand(
  declaration: ReaderCommandBase & { keyUsage?: string; run: ReaderRun<string> | ReaderRun<string | undefined> },
): Command {
  const { name, summary, help, keyUsage } = declaration;
  return defineCommand({
    name,
    summary,
    help,
    options: READER_ARG_OPTIONS,
    positionals: true,
    async run({ values, positionals }, io) {
      const [reference, argument] = positionals;
      if (keyUsage !== undefined && argument === undefined) throw new UsageError(keyUsage);
      const reader = await openBucketReader(reference, values, name, io.env);
      try {
        // With a keyUsage the KEY is there (checked above); without, the run takes an absent FILTER.
        return await (declaration.run as ReaderRun<string | undefined>)(reader, argument, values, io);
      } finally {
        await reader.close();
      }
    },
  });
}
