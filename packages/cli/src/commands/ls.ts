import type { WireEntry } from "@mesh/state-protocol";
import { defineReaderCommand, preview, READER_HELP_OPTIONS, table } from "../bucket-reader.js";

const HELP = `Usage: mesh-state ls BUCKET [FILTER] [--server URL | --context NAME] [auth options]
       [--consistency session|strong|local] [--json]

Lists the current keys of a bucket (never deleted ones), with each key's revision, when it was written and
its value on one line. FILTER takes NATS wildcards as whole tokens: all.*, node-1.>. Read-only: the same
path as a bundle's \`keys\` and \`get\` verbs, through a membership that issues BUCKET for reading.

Options:
${READER_HELP_OPTIONS}  (an array of {key, value, revision, updated})

Example:
  mesh-state ls operators-agent.mcp-servers 'all.*' --server nats://127.0.0.1:4222 \\
    --user state-node-1 --password "$STATE_PASSWORD"
  mesh-state ls operators-agent.mcp-servers --context mesh-inspector   # the inspector's NATS CLI context
`;

export const command = defineReaderCommand({
  name: "ls",
  summary: "list a bucket's current keys and values",
  help: HELP,
  async run(reader, filter, values, io) {
    const { keys } = await reader.call("mesh/state.keys", filter === undefined ? {} : { filter });
    const entries: WireEntry[] = [];
    for (const key of keys.sort()) {
      // A key deleted since the listing reads as null: it is simply no longer current.
      const entry = await reader.call("mesh/state.get", { key });
      if (entry) entries.push(entry);
    }
    if (values.json) io.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    else if (entries.length === 0)
      io.stdout.write(`${reader.reference}: no keys${filter ? ` matching ${filter}` : ""}\n`);
    else {
      const rows = entries.map((entry) => [entry.key, String(entry.revision), entry.updated, preview(entry.value)]);
      io.stdout.write(`${table([["KEY", "REVISION", "UPDATED", "VALUE"], ...rows])}\n`);
    }
    return 0;
  },
});
