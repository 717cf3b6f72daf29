import { defineReaderCommand, preview, READER_HELP_OPTIONS, table } from "../bucket-reader.js";

const HELP = `Usage: mesh-state history BUCKET KEY [--server URL | --context NAME] [auth options]
       [--consistency session|strong|local] [--json]

Prints every kept revision of a key, oldest first, deletes included (a bucket keeps as many as its
manifest's \`history\`). Read-only: the same path as a bundle's \`history\` verb.

Options:
${READER_HELP_OPTIONS}  (an array of {type, key, value?, revision, updated})

Example:
  mesh-state history operators-agent.mcp-servers all.github --server nats://127.0.0.1:4222 \\
    --user state-node-1 --password "$STATE_PASSWORD"
  mesh-state history operators-agent.mcp-servers all.github --context mesh-inspector
`;

export const command = defineReaderCommand({
  name: "history",
  summary: "print the kept revisions of one key, deletes included",
  help: HELP,
  keyUsage: "give BUCKET and KEY: mesh-state history operators-agent.mcp-servers all.github",
  async run(reader, key, values, io) {
    const { entries } = await reader.call("mesh/state.history", { key });
    if (values.json) io.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    else if (entries.length === 0) io.stdout.write(`${reader.reference}: no history for ${key}\n`);
    else {
      const rows = entries.map((entry) => [
        String(entry.revision),
        entry.updated,
        entry.type,
        entry.type === "put" ? preview(entry.value) : "",
      ]);
      io.stdout.write(`${table([["REVISION", "UPDATED", "OP", "VALUE"], ...rows])}\n`);
    }
    return 0;
  },
});
