import { defineReaderCommand, READER_HELP_OPTIONS } from "../bucket-reader.js";

const HELP = `Usage: mesh-state get BUCKET KEY [--server URL | --context NAME] [auth options]
       [--consistency session|strong|local] [--json]

Prints a key's current value, its revision and when it was written. Exits 1 when the key is absent or
deleted (with --json, \`null\` is printed). Read-only: the same path as a bundle's \`get\` verb.

Options:
${READER_HELP_OPTIONS}  ({key, value, revision, updated} or null)

Example:
  mesh-state get operators-agent.mcp-servers all.github --server nats://127.0.0.1:4222 \\
    --user state-node-1 --password "$STATE_PASSWORD" --json
  mesh-state get operators-agent.mcp-servers all.github --context mesh-inspector
  mesh-state get operators-agent.mcp-servers all.github --context mesh-inspector --consistency strong
`;

export const command = defineReaderCommand({
  name: "get",
  summary: "print one key's current value",
  help: HELP,
  keyUsage: "give BUCKET and KEY: mesh-state get operators-agent.mcp-servers all.github",
  async run(reader, key, values, io) {
    const entry = await reader.call("mesh/state.get", { key });
    if (values.json) io.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    else if (entry === null) io.stderr.write(`${reader.reference}: no key ${key} (absent or deleted)\n`);
    else {
      io.stdout.write(`key       ${entry.key}\nrevision  ${entry.revision}\nupdated   ${entry.updated}\n`);
      io.stdout.write(`value     ${JSON.stringify(entry.value, null, 2).replaceAll("\n", "\n          ")}\n`);
    }
    return entry === null ? 1 : 0;
  },
});
