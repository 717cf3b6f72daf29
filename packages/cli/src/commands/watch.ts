import type { WireWatchEvent } from "@mesh/state-protocol";
import { defineReaderCommand, READER_HELP_OPTIONS } from "../bucket-reader.js";
import { STOP_SIGNALS } from "../signals.js";

const HELP = `Usage: mesh-state watch BUCKET [FILTER] [--server URL | --context NAME] [auth options]
       [--consistency session|strong|local] [--json]

Prints every current value of the bucket (never a deletion among them), then a "current" line, then every
change as it happens, until Ctrl-C. FILTER takes NATS wildcards as whole tokens: all.*, node-1.>. Exits 0
on Ctrl-C, 1 if the watch ends on its own (the server went away for longer than the runtime's recovery
budget, the grant was withdrawn). Read-only: the same path as a bundle's \`watch\` verb.

Options:
${READER_HELP_OPTIONS}  (one event per line: {type, key, value, revision, updated})

Example:
  mesh-state watch operators-agent.mcp-servers --server nats://127.0.0.1:4222 \\
    --user state-node-1 --password "$STATE_PASSWORD"
  mesh-state watch operators-agent.mcp-servers --context mesh-inspector
`;

/** One event as an operator reads it. */
function describe(event: WireWatchEvent, initial: number): string {
  switch (event.type) {
    case "put":
      return `put     ${event.key}  rev ${event.revision}  ${event.updated}  ${JSON.stringify(event.value)}`;
    case "delete":
      return `delete  ${event.key}  rev ${event.revision}  ${event.updated}`;
    case "current":
      return `-- current: ${initial} key${initial === 1 ? "" : "s"} above; changes follow --`;
    case "ended":
      return `ended   ${event.reason}: ${event.message}`;
  }
}

export const command = defineReaderCommand({
  name: "watch",
  summary: "print a bucket's current values, then every change until Ctrl-C",
  help: HELP,
  async run(reader, filter, values, io) {
    let finish: (code: number) => void = () => undefined;
    const finished = new Promise<number>((resolve) => {
      finish = resolve;
    });
    let done = false;
    let initial = 0;
    let current = false;
    reader.bindWatch(async (_watch, events) => {
      // After Ctrl-C the service's own "closed" end is ours, not news.
      if (done) return;
      for (const event of events) {
        if (event.type === "put" && !current) initial += 1;
        if (event.type === "current") current = true;
        io.stdout.write(`${values.json ? JSON.stringify(event) : describe(event, initial)}\n`);
        if (event.type === "ended") {
          done = true;
          finish(1);
        }
      }
    });
    const onSignal = () => {
      done = true;
      finish(0);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
    try {
      await reader.call("mesh/state.watch", filter === undefined ? {} : { filter });
      return await finished;
    } finally {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    }
  },
});
