// The operator's agent on a machine: MCP servers registered for every machine (`all.<server>`) or for one
// (`<machine>.<server>`), one entry per server in the module's `mcp-servers` bucket.
//
//   agent serve                  read what applies to this machine, then follow changes until stopped
//   agent register <key> <json>  register (or replace) one server
//   agent unregister <key>       unregister one server (a delete)
//   agent list                   print every registration
//
// Run it as a bundle: `mesh-state dev --catalogue manifests --module operators-agent -- node dist/agent.js serve`.
import { ClientError, type StateClient, StateError, type StateHandle, type Watch } from "@mesh/sdk-ts";
import { connectStdio } from "@mesh/sdk-ts/stdio";
import { reporter } from "./output.js";
import { BUCKET, filtersFor, type McpServer, McpServerSchema, parseServerKey } from "./schema.js";

const report = reporter("operators-agent");
const USAGE = "usage: agent serve | agent register <key> <json> | agent unregister <key> | agent list";

async function main(argv: string[]): Promise<number> {
  const [mode, ...args] = argv;
  if (mode !== "serve" && mode !== "register" && mode !== "unregister" && mode !== "list") {
    report("usage", { problem: USAGE });
    return 2;
  }
  const mesh = await connectStdio();
  try {
    const servers = mesh.state(BUCKET, { schema: McpServerSchema });
    if (mode === "serve") return await serve(mesh, servers);
    if (mode === "list") return await list(servers);
    const [key, json] = args;
    const parsed = key === undefined ? { problem: USAGE } : parseServerKey(key);
    if ("problem" in parsed) {
      report("usage", { problem: parsed.problem });
      return 2;
    }
    if (mode === "unregister") {
      await servers.delete(key!);
      report("unregistered", { key });
      return 0;
    }
    let value: unknown;
    try {
      value = JSON.parse(json ?? "");
    } catch {
      report("usage", { problem: `the registration is not JSON: ${json ?? "(none)"}` });
      return 2;
    }
    return await register(servers, key!, value as McpServer);
  } catch (error) {
    return refusal(error);
  } finally {
    await mesh.close();
  }
}

/** Puts one registration. A refusal is reported with its reason and the field it names, never worked around. */
async function register(servers: StateHandle<McpServer>, key: string, server: McpServer): Promise<number> {
  const revision = await servers.put(key, server);
  report("registered", { key, revision });
  return 0;
}

function refusal(error: unknown): number {
  if (StateError.is(error)) {
    report("refused", { key: error.key, reason: error.reason, path: error.path, message: error.message });
    return 1;
  }
  if (ClientError.is(error, "invalid-value")) {
    report("refused", { key: error.key, reason: error.reason, issues: error.issues, message: error.message });
    return 1;
  }
  throw error;
}

async function list(servers: StateHandle<McpServer>): Promise<number> {
  const entries: Record<string, McpServer> = {};
  for (const key of await servers.keys()) {
    const entry = await servers.get(key);
    if (entry) entries[key] = entry.value;
  }
  report("listed", { servers: entries });
  return 0;
}

/**
 * Reads the current set that applies to this machine (`all.*` and `<machine>.*`, one watch each), reports
 * it once both watches reached `current`, then reports every change until stopped or the runtime goes.
 */
async function serve(mesh: StateClient, servers: StateHandle<McpServer>): Promise<number> {
  const machine = process.env.MESH_MACHINE;
  if (!machine) {
    report("usage", { problem: "MESH_MACHINE is not set: run the agent under a runtime or `mesh-state dev`" });
    return 2;
  }
  const applied = new Map<string, McpServer>();
  const watches = filtersFor(machine).map((filter) => servers.watch({ filter }));
  let current = 0;
  let stopping = false;
  const stop = () => {
    stopping = true;
    for (const watch of watches) void watch.stop();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  void mesh.closed.then(stop);

  const follow = async (watch: Watch<McpServer>): Promise<string | undefined> => {
    for await (const event of watch) {
      if (event.type === "current") {
        current += 1;
        if (current === watches.length) report("synced", { servers: [...applied.keys()].sort() });
      } else if (event.type === "put") {
        const known = applied.has(event.key);
        applied.set(event.key, event.value);
        if (current === watches.length) {
          report(known ? "updated" : "added", { key: event.key, server: event.value, revision: event.revision });
        }
      } else if (event.type === "delete") {
        if (applied.delete(event.key) && current === watches.length) report("removed", { key: event.key });
      } else if (event.type === "invalid") {
        report("invalid-entry", { key: event.key, issues: event.error.issues });
      } else if (event.type === "ended") {
        return stopping || event.reason === "closed" ? undefined : `${event.reason}: ${event.message}`;
      }
    }
    return undefined;
  };
  const failures = (await Promise.all(watches.map(follow))).filter((failure) => failure !== undefined);
  report("stopped", { servers: [...applied.keys()].sort(), ...(failures.length > 0 ? { failures } : {}) });
  return failures.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    report("failed", { message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  },
);
