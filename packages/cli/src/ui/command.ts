import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { connectAsReader } from "../bucket-reader.js";
import { loadCatalogue } from "../catalogue-files.js";
import { SERVER_ARG_OPTIONS, SERVER_HELP_OPTIONS } from "../connect.js";
import { STOP_SIGNALS } from "../signals.js";
import { defineCommand, UsageError } from "../types.js";
import { parseMachines } from "./model.js";
import { startUiServer } from "./server.js";

const HELP = `Usage: mesh-state ui --catalogue DIR [--machine NAME=MOD[,MOD...]]... [--port N] [--listen ADDR]
                     [--server URL | --context NAME] [auth options]

Serves a read-only web view of the mesh's state until Ctrl-C: the catalogue (modules, the buckets each owns
and reads, who reads each), each bucket's keys live (values, revisions, ages; changes as they happen, deletes
marked), a key's history, a bucket's health as far as the credentials see it, and each machine given with
--machine: the buckets its composed grant lets it read and write, and its keys in them. Connect as the
inspector (mesh-state grants --inspector): every bucket, read-only. Nothing is written, nothing opened: it
prints the URL. The page and its script ship in this package; it needs no internet.

Options:
  --catalogue DIR      folder of *.json manifests (every registered module)
  --machine NAME=MODS  a machine and the modules assigned to it, comma-separated; repeat per machine
  --port N             the port to listen on (default: a free one, printed)
  --listen ADDR        listen on ADDR instead of 127.0.0.1 (e.g. 0.0.0.0); then every request must carry the
                       token printed with the URL
${SERVER_HELP_OPTIONS}
  --inbox-prefix P     default the context's, else _INBOX_insp_inspector for the user inspector

Example:
  mesh-state ui --catalogue ./manifests --machine node-1=operators-agent --context mesh-inspector
  mesh-state ui --catalogue ./manifests --server nats://127.0.0.1:4222 --user inspector \\
    --password "$INSPECTOR_PASSWORD" --port 8080
`;

/** The page's script, built beside the CLI's entry point (`dist/ui/app.js`). */
async function readPageScript(): Promise<Buffer> {
  const path = fileURLToPath(new URL("./ui/app.js", import.meta.url));
  try {
    return await readFile(path);
  } catch {
    throw new Error(`the web view's script is missing (${path}): build the CLI (pnpm build)`);
  }
}

export const command = defineCommand({
  name: "ui",
  summary: "serve a read-only live web view of the catalogue, buckets and machines on loopback",
  help: HELP,
  options: {
    ...SERVER_ARG_OPTIONS,
    catalogue: { type: "string" },
    machine: { type: "string", multiple: true, default: [] },
    port: { type: "string", default: "0" },
    listen: { type: "string" },
  },
  async run({ values }, io) {
    if (!values.catalogue) throw new UsageError("--catalogue DIR is required");
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError("--port takes 0 to 65535");
    const catalogue = await loadCatalogue(values.catalogue, io.cwd);
    const machines = parseMachines(values.machine, catalogue);
    const script = await readPageScript();
    const reader = await connectAsReader(values, "ui", io.env);
    const token = values.listen === undefined ? undefined : randomBytes(24).toString("base64url");
    try {
      const server = await startUiServer({
        connection: reader.connection,
        ...(reader.inboxPrefix ? { inboxPrefix: reader.inboxPrefix } : {}),
        ...(reader.options.user ? { user: reader.options.user } : {}),
        catalogue,
        machines,
        script,
        host: values.listen ?? "127.0.0.1",
        port,
        ...(token ? { token } : {}),
      });
      io.stdout.write(`mesh-state ui: ${server.url}\n`);
      if (token) io.stdout.write("every request must carry this token: share the URL only with whom may read it\n");
      await new Promise<void>((resolve) => {
        const stop = () => {
          for (const signal of STOP_SIGNALS) process.off(signal, stop);
          resolve();
        };
        for (const signal of STOP_SIGNALS) process.on(signal, stop);
      });
      await server.close();
      return 0;
    } finally {
      await reader.connection.close().catch(() => undefined);
    }
  },
});
