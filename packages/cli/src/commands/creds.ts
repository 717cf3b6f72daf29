import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { composeMachineGrant, issueUserCredentials } from "@mesh/grant-composer";
import { assignedModules, loadCatalogue } from "../catalogue-files.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state creds --catalogue DIR --machine NAME --assign MOD[,MOD...] --account AKEY
                        --signing-key FILE [--user-seed FILE] [--out FILE]

Issues the credentials of one machine's state user for decentralized auth (operator, account and user JWTs):
a user JWT with the machine's composed permissions (as \`grants\` prints them), signed by a signing key of
the state account, and the .creds file (JWT and the user's nkey seed) the machine connects with. No server
is touched: the server trusts the account's signing key from the account JWT.

Options:
  --catalogue DIR      folder of manifest *.json files
  --machine NAME       the machine (its user is state-NAME, its inbox prefix _INBOX_NAME)
  --assign MODS        the modules assigned to the machine, comma-separated
  --account AKEY       the state account's public key (A...)
  --signing-key FILE   a file holding the seed (SA...) of a signing key listed in the account JWT
  --user-seed FILE     the user's nkey seed (SU...) to keep; a new user key is made when absent
  --out FILE           where to write the .creds (mode 0600); default state-NAME.creds

Example:
  mesh-state creds --catalogue ./manifests --machine node-1 --assign operators-agent \\
    --account "$STATE_ACCOUNT" --signing-key ./state-signing.nk --out node-1.creds
  mesh-state ls operators-agent.mcp-servers --server nats://10.0.0.5:4222 --creds node-1.creds
`;

export const command = defineCommand({
  name: "creds",
  summary: "issue a machine's signed user JWT and .creds file (decentralized auth; no server)",
  help: HELP,
  options: {
    catalogue: { type: "string" },
    machine: { type: "string" },
    assign: { type: "string" },
    account: { type: "string" },
    "signing-key": { type: "string" },
    "user-seed": { type: "string" },
    out: { type: "string" },
  },
  async run({ values }, io) {
    for (const required of ["catalogue", "machine", "assign", "account", "signing-key"] as const) {
      if (values[required] === undefined) throw new UsageError(`--${required} is required`);
    }
    const catalogue = await loadCatalogue(values.catalogue!, io.cwd);
    const assignments = assignedModules(values.assign!);
    const grant = composeMachineGrant({ machine: values.machine!, assignments, catalogue });
    const read = (file: string) => readFile(resolve(io.cwd, file), "utf8");
    const issued = await issueUserCredentials({
      grant,
      account: values.account!,
      signingKeySeed: await read(values["signing-key"]!),
      ...(values["user-seed"] ? { userSeed: await read(values["user-seed"]) } : {}),
    });
    const out = resolve(io.cwd, values.out ?? `${grant.user}.creds`);
    await writeFile(out, issued.creds, { mode: 0o600 });
    io.stdout.write(`${out}: ${grant.user} (${issued.publicKey}), inbox prefix ${grant.inboxPrefix}\n`);
    return 0;
  },
});
