import { parseArgs } from "node:util";
import { issueBuckets } from "@mesh/controller-kv";
import { MachineNameSchema, ModuleNameSchema } from "@mesh/manifest-schema";
import { createStateService, serveStdio } from "@mesh/runtime-state";
import { pino } from "pino";
import { bundleEnv, spawnBundle } from "../bundle-process.js";
import { loadCatalogue } from "../catalogue-files.js";
import { SERVER_ARG_OPTIONS } from "../connect.js";
import { type DevMesh, startEmbeddedMesh, useNamedServer } from "../dev-mesh.js";
import { STOP_SIGNALS } from "../signals.js";
import { type Command, UsageError } from "../types.js";

const HELP = `Usage: mesh-state dev --catalogue DIR --module NAME [--machine NAME] [--env NAME[=VALUE]]...
                      [--server URL (--creds FILE | --user U --password P) [--inbox-prefix P] [--replicas N]]
                      [--verbose] -- COMMAND [ARGS...]

Runs COMMAND as the bundle of module NAME, with the state verbs on its stdin/stdout, as the node runtime
would: the membership issued from the catalogue, refusals decided before NATS is touched. The bundle's
stderr is this terminal. Exits with the bundle's exit code; Ctrl-C stops the bundle (the signal, then
SIGTERM, then SIGKILL, 2 s apart; a second Ctrl-C skips ahead), then the server; before the bundle has
started, Ctrl-C stops the server and exits with 130. Nothing is left running.

Without --server an embedded nats-server is started (the state account with the controller's and this
machine's users, composed from the catalogue), the catalogue's buckets are raised, and the bundle is served
as the machine's state user. Its store is removed on exit. With --server the user given must be able to
raise the buckets and use them (an administrator of the state account, in development).

The bundle's environment: PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR,
NODE_OPTIONS, the --env variables, and MESH_MODULE and MESH_MACHINE. Nothing else is passed on.

Options:
  --catalogue DIR      folder of *.json manifests; the module and every module it reads must be there
  --module NAME        the module whose bundle COMMAND is
  --machine NAME       the machine it runs on (default dev): its state user, inbox prefix, MESH_MACHINE
  --env NAME[=VALUE]   pass one more variable to the bundle (repeatable)
  --server URL         use this server instead of an embedded one; with --creds or --user/--password
  --replicas N         replicas of the buckets raised on --server (default 1)
  --verbose            log the raise and the service's info lines to stderr

Example:
  mesh-state dev --catalogue examples/operators-agent/manifests --module operators-agent --machine m1 \\
    -- node examples/operators-agent/dist/agent.js serve
`;

export const command: Command = {
  name: "dev",
  summary: "run a bundle locally with the state verbs, on an embedded nats-server",
  help: HELP,
  async run(argv, io) {
    const split = argv.indexOf("--");
    const bundleCommand = split < 0 ? [] : argv.slice(split + 1);
    if (bundleCommand.length === 0) throw new UsageError("give the bundle's command after --: ... -- node bundle.js");
    const { values } = parseArgs({
      args: argv.slice(0, split),
      options: {
        ...SERVER_ARG_OPTIONS,
        catalogue: { type: "string" },
        module: { type: "string" },
        machine: { type: "string", default: "dev" },
        env: { type: "string", multiple: true, default: [] },
        replicas: { type: "string", default: "1" },
        verbose: { type: "boolean", default: false },
      },
    });
    if (!values.catalogue) throw new UsageError("--catalogue DIR is required");
    if (!values.module || !ModuleNameSchema.safeParse(values.module).success)
      throw new UsageError(
        `--module NAME is required and must be a module name, got ${JSON.stringify(values.module ?? "")}`,
      );
    if (!MachineNameSchema.safeParse(values.machine).success)
      throw new UsageError(
        `--machine takes a machine name (lower-case letters, digits, -), got ${JSON.stringify(values.machine)}`,
      );
    const replicas = Number(values.replicas);
    if (!Number.isInteger(replicas) || replicas < 1)
      throw new UsageError(`--replicas takes a whole number, got ${values.replicas}`);
    const module = values.module;
    const machine = values.machine;

    const catalogue = await loadCatalogue(values.catalogue, io.cwd);
    issueBuckets({ module, catalogue }); // refuses a module the catalogue lacks before any server starts
    const logger = pino(
      { name: "mesh-state dev", level: values.verbose ? "info" : "warn" },
      pino.destination({ fd: 2, sync: true }),
    );
    const say = (line: string) => io.stderr.write(`mesh-state dev: ${line}\n`);

    const mesh: DevMesh = values.server
      ? await useNamedServer({
          catalogue,
          replicas,
          logger,
          server: { ...values, inboxPrefix: values["inbox-prefix"] },
        })
      : await startEmbeddedMesh({ catalogue, module, machine, logger });
    const { report } = mesh;
    // Issued after the raise: forgetDeletes only where the raise turned per-message ttls on.
    const membership = { module, buckets: issueBuckets({ module, catalogue, raised: report }) };
    say(`${module} on machine ${machine}, ${values.server ? "" : "embedded "}nats-server ${mesh.url}`);
    say(
      `raise: ${report.created.length} created, ${report.updated.length} updated, ${report.unchanged.length} unchanged`,
    );
    for (const [name, issued] of Object.entries(membership.buckets))
      say(
        `  ${name} -> ${issued.bucket} (${issued.access}${issued.forgetDeletes ? `, deletes forgotten after ${issued.forgetDeletes.afterSeconds} s` : ""})`,
      );
    if (mesh.inspect) {
      const first = Object.keys(membership.buckets)[0];
      const reference = first === undefined ? "<module>.<name>" : first.includes(".") ? first : `${module}.${first}`;
      say(
        `inspect: mesh-state ls ${reference} --server ${mesh.url} --user ${mesh.inspect.user} --password ${mesh.inspect.password}`,
      );
    }
    say(`running: ${bundleCommand.join(" ")}`);

    let bundle: ReturnType<typeof spawnBundle> | undefined;
    let exited = false;
    // First signals stop the bundle; once it is gone, a signal means "stop waiting": kill the server now.
    const onSignal = (signal: NodeJS.Signals) => {
      if (exited) return mesh.killNow();
      say(`${signal}: stopping the bundle`);
      void bundle?.stop(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
    try {
      const service = createStateService({ connection: mesh.connection, membership, logger });
      bundle = spawnBundle(bundleCommand, bundleEnv(io.env, { module, machine }, values.env), io.cwd);
      bundle.child.once("error", (error) => say(`could not start ${bundleCommand[0]}: ${error.message}`));
      const stdio = serveStdio({ service, input: bundle.child.stdout!, output: bundle.child.stdin!, logger });
      const code = await bundle.exited;
      exited = true;
      // A grandchild may still hold the bundle's stdout: stop serving now rather than wait for it.
      await stdio.close();
      say(`the bundle exited with ${code}`);
      return code;
    } finally {
      exited = true;
      await mesh.close();
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    }
  },
};
