import { formatProofTable, runGrantProof } from "@mesh/grant-proof";
import type { Catalogue } from "@mesh/manifest-schema";
import { loadCatalogue } from "../catalogue-files.js";
import { defineCommand } from "../types.js";

const HELP = `Usage: mesh-state verify-grants [--catalogue DIR] [--failures-only]

Proves the composed grants on the nats-server installed here (found on PATH, or NATS_SERVER_BIN): starts an
embedded server on a free loopback port with the STATE account rendered from composed grants, creates
buckets as the controller does, and checks, for an owner, a reader and a stranger machine, every state
operation on a small bucket and an 8 MiB one; that no machine can hear another's inbox; that a consumer's
deliveries cannot leave the state account; the bounds (max_consumers, no stream delete/purge/update); and
that every subject of a grant is necessary. Server behaviour changes between versions: run this on the
version you deploy. With --catalogue, every module's grant is also composed and loaded, and every bucket it
declares is created. Prints a pass/fail table; exits 1 if any check fails. Takes about 20 seconds.

Options:
  --catalogue DIR    folder of manifest *.json files to check besides the proof's own modules
  --failures-only    print only the failing rows

Example:
  mesh-state verify-grants --catalogue examples/operators-agent/manifests
  # pass  role   operation  bucket  expected  actual  detail
  # ok    owner  get        mod_grant-proof-owner_small  allowed  allowed  seed.0 at revision 3
  # ...
  # 131 checks on nats-server 2.9.10 in 16.2 s: all pass
`;

export const command = defineCommand({
  name: "verify-grants",
  summary: "prove the composed grants on the installed nats-server; prints a pass/fail table",
  help: HELP,
  options: { catalogue: { type: "string" }, "failures-only": { type: "boolean", default: false } },
  async run({ values }, io) {
    const catalogue: Catalogue | undefined = values.catalogue
      ? await loadCatalogue(values.catalogue, io.cwd)
      : undefined;
    const result = await runGrantProof(catalogue ? { catalogue } : {});
    const failed = result.rows.filter((row) => !row.pass);
    const shown = values["failures-only"] ? failed : result.rows;
    if (shown.length > 0) io.stdout.write(`${formatProofTable(shown)}\n`);
    const seconds = (result.durationMs / 1000).toFixed(1);
    const verdict = failed.length === 0 ? "all pass" : `${failed.length} FAILED`;
    io.stdout.write(
      `${result.rows.length} checks on nats-server ${result.serverVersion} in ${seconds} s: ${verdict}\n`,
    );
    return failed.length === 0 ? 0 : 1;
  },
});
