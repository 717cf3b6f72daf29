import {
  composeInspectorGrant,
  composeMachineGrant,
  renderGrantJson,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { assignedModules, loadCatalogue } from "../catalogue-files.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state grants --catalogue DIR --machine NAME --assign MOD[,MOD...] [--format json|conf]
                         [--nkey UKEY | --password PASSWORD]
       mesh-state grants --catalogue DIR --inspector [--user NAME] [--format json|conf] [...]

Prints the NATS permissions of one machine's state user, composed from a catalogue (a folder of manifest
JSON files) and the modules assigned to the machine: for each bucket a module owns, the owner's subjects;
for each bucket it reads, the reader's; and the machine's own inbox. No server is needed.

Options:
  --catalogue DIR   folder of manifest *.json files
  --machine NAME    the machine (its user is state-NAME, its inbox prefix _INBOX_NAME)
  --assign MODS     the modules assigned to the machine, comma-separated
  --inspector       instead of a machine: the inspector, an operator's read-only user that reads every
                    bucket of the catalogue (a reader's subjects on each) and writes none; its inbox
                    prefix is _INBOX_insp_<user>. ls, get, watch and history connect as it.
  --user NAME       with --inspector: the user's name (default inspector)
  --format FORMAT   json (default): the grant; its "permissions" load into nats-server as printed (nothing
                    allowed is printed as deny: [">"], never as an empty allow list); conf: the STATE
                    account block for nats-server's config
  --nkey UKEY       conf only: the user authenticates with this public nkey
  --password PW     conf only: the user authenticates with this password (development)

Example:
  mesh-state grants --catalogue examples/operators-agent/manifests --machine node-1 --assign operators-agent
  # { "user": "state-node-1", "inboxPrefix": "_INBOX_node-1", "permissions": { "publish": { "allow": [...
  mesh-state grants --catalogue examples/operators-agent/manifests --inspector --format conf --nkey "$UKEY"
`;

export const command = defineCommand({
  name: "grants",
  summary: "print the composed NATS permissions of one machine (no server)",
  help: HELP,
  options: {
    catalogue: { type: "string" },
    machine: { type: "string" },
    inspector: { type: "boolean", default: false },
    user: { type: "string" },
    assign: { type: "string" },
    format: { type: "string", default: "json" },
    nkey: { type: "string" },
    password: { type: "string" },
  },
  async run({ values }, io) {
    if (!values.catalogue) throw new UsageError("--catalogue DIR is required");
    if (values.inspector && (values.machine || values.assign !== undefined))
      throw new UsageError("give --inspector or --machine/--assign, not both");
    if (!values.inspector && !values.machine) throw new UsageError("--machine NAME is required");
    if (!values.inspector && values.assign === undefined) throw new UsageError("--assign MOD[,MOD...] is required");
    if (values.format !== "json" && values.format !== "conf")
      throw new UsageError(`--format is json or conf, not ${values.format}`);
    const catalogue = await loadCatalogue(values.catalogue, io.cwd);
    const assignments = assignedModules(values.assign ?? "");
    const grant = values.inspector
      ? composeInspectorGrant({ catalogue, ...(values.user ? { user: values.user } : {}) })
      : composeMachineGrant({ machine: values.machine!, assignments, catalogue });
    if (values.format === "json") {
      io.stdout.write(`${JSON.stringify(renderGrantJson(grant), null, 2)}\n`);
      return 0;
    }
    if ((values.nkey === undefined) === (values.password === undefined)) {
      throw new UsageError(
        "--format conf needs exactly one of --nkey UKEY or --password PASSWORD, for the user's authentication",
      );
    }
    const auth = values.nkey === undefined ? { password: values.password! } : { nkey: values.nkey };
    io.stdout.write(renderStateAccountConfig({ users: [{ grant, ...auth }] }));
    return 0;
  },
});
