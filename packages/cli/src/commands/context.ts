import { resolve } from "node:path";
import { composeInspectorGrant } from "@mesh/grant-composer";
import { writeNatsContext } from "../nats-context.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state context --inspector --server URL (--password PW | --creds FILE | --nkey FILE)
                         [--user NAME] [--name CONTEXT] [--select] [--force]

Writes a NATS CLI context for the inspector, the operator's read-only user (\`mesh-state grants --inspector\`
prints its grant): $XDG_CONFIG_HOME/nats/context/CONTEXT.json (else ~/.config/nats/...), mode 0600, with the
server, the authentication and the inspector's inbox prefix (_INBOX_insp_<user>: the only inbox its grant may
subscribe to, so natscli needs it). Then natscli v0.5.0 reads every bucket with it (\`nats --context CONTEXT
kv ls\`, \`kv info\`, \`kv get\`, \`kv history\`, \`kv watch\`, \`stream info\`), and so do mesh-state ls, get, watch
and history (--context CONTEXT). Writes are refused by the grant. No server is touched.

Options:
  --inspector        the context is the inspector's (the one kind this command writes)
  --server URL       nats://host:port, comma-separated for a cluster
  --user NAME        the inspector's user name (default inspector), as given to grants --inspector --user
  --password PW      the user's password (written into the context, as natscli does)
  --creds FILE       or a credentials file (decentralized auth); the context holds its absolute path
  --nkey FILE        or a file holding the user's nkey seed; the context holds its absolute path
  --name CONTEXT     the context's name (default mesh-inspector)
  --select           also make it natscli's selected context (context.txt)
  --force            replace a context of that name

Example:
  mesh-state context --inspector --server nats://10.0.0.5:4222 --password "$INSPECTOR_PASSWORD"
  nats --context mesh-inspector kv ls
  mesh-state ls operators-agent.mcp-servers --context mesh-inspector
`;

export const command = defineCommand({
  name: "context",
  summary: "write a NATS CLI context for the inspector (natscli and mesh-state read buckets with it)",
  help: HELP,
  options: {
    inspector: { type: "boolean", default: false },
    server: { type: "string" },
    user: { type: "string" },
    password: { type: "string" },
    creds: { type: "string" },
    nkey: { type: "string" },
    name: { type: "string", default: "mesh-inspector" },
    select: { type: "boolean", default: false },
    force: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    if (!values.inspector)
      throw new UsageError("--inspector is required: the inspector's is the one context this command writes");
    if (!values.server) throw new UsageError("--server URL is required");
    const auth = [values.password, values.creds, values.nkey].filter((value) => value !== undefined);
    if (auth.length !== 1) throw new UsageError("give exactly one of --password PW, --creds FILE or --nkey FILE");
    if (values.creds !== undefined && values.user !== undefined)
      throw new UsageError("--user goes with --password or --nkey: a credentials file names its own user");
    // The grant's own rule for the user name, and the inbox prefix the grant subscribes to.
    const user = values.user ?? "inspector";
    const { inboxPrefix } = composeInspectorGrant({ catalogue: [], user });
    const path = await writeNatsContext(
      {
        name: values.name,
        description: `mesh-state inspector (read-only): ${user}`,
        url: values.server,
        ...(values.password !== undefined ? { user, password: values.password } : {}),
        ...(values.creds !== undefined ? { creds: resolve(io.cwd, values.creds) } : {}),
        ...(values.nkey !== undefined ? { nkey: resolve(io.cwd, values.nkey) } : {}),
        inboxPrefix,
      },
      io.env,
      { select: values.select, replace: values.force },
    );
    io.stdout.write(
      `${path}: user ${user}, inbox prefix ${inboxPrefix}${values.select ? " (selected)" : ""}\n` +
        `  nats --context ${values.name} kv ls\n`,
    );
    return 0;
  },
});
