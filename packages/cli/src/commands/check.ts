import { relative } from "node:path";
import { checkManifestFiles, readManifestFiles } from "../catalogue-files.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state check PATH...

Checks manifests as one catalogue, without a server: each manifest against the schema (names, state
options, mesh caps), then the catalogue (module names unique, every reads entry names a declared bucket of
another module). A PATH is a manifest file or a folder of *.json manifests. Prints every problem with its
file and path; exits 1 if there is any.

Example:
  mesh-state check examples/operators-agent/manifests
  # manifests/agent.json state.applied.history: at most 64, got 100
`;

export const command = defineCommand({
  name: "check",
  summary: "check manifests and the catalogue they make (no server)",
  help: HELP,
  options: {},
  positionals: true,
  async run({ positionals }, io) {
    if (positionals.length === 0) throw new UsageError("give at least one manifest file or folder");
    const files = await readManifestFiles(positionals, io.cwd);
    if (files.length === 0) throw new UsageError(`no manifest (*.json) in ${positionals.join(", ")}`);
    const { issues } = checkManifestFiles(files);
    for (const issue of issues) {
      io.stdout.write(
        `${relative(io.cwd, issue.file) || issue.file}${issue.path ? ` ${issue.path}` : ""}: ${issue.message}\n`,
      );
    }
    const count = `${files.length} manifest${files.length === 1 ? "" : "s"}`;
    if (issues.length > 0) {
      io.stderr.write(`${count}: ${issues.length} problem${issues.length === 1 ? "" : "s"}\n`);
      return 1;
    }
    io.stdout.write(`${count}: no problems\n`);
    return 0;
  },
});
