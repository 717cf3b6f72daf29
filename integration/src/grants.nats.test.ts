// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { formatProofTable, runGrantProof } from "@mesh/grant-proof";
import { describe, expect, it } from "vitest";
import { recordProven } from "./proven.js";

// The grant proof against a real nats-server (issue 3): every role, every operation, on a small bucket and
// an 8 MiB one; eavesdropping, escape, bounds; and every subject of the owner's and reader's grants removed
// one at a time. One server serves it all: each minimality variant is a user of its own.
describe("composed grants against a real nats-server", () => {
  it("every row of the proof passes", async () => {
    const result = await runGrantProof();
    if (process.env.GRANT_PROOF_TABLE) console.log(formatProofTable(result.rows), result.facts);
    const failures = result.rows.filter((row) => !row.pass);
    // Every fact of DESIGN.md's grants section, as this version showed it (docs/server-versions.md's table).
    for (const fact of result.facts)
      if (fact.name !== "server.version") recordProven(result.serverVersion, fact.name, fact.value);
    recordProven(
      result.serverVersion,
      "grant proof: checks passed",
      `${result.rows.length - failures.length}/${result.rows.length}`,
    );
    expect(failures, `grant proof on nats-server ${result.serverVersion}:\n${formatProofTable(result.rows)}`).toEqual(
      [],
    );
    // The proof covers what issue 3 lists; a proof that silently stopped checking would pass with fewer rows.
    const covered = (role: string, operation: string) =>
      result.rows.some((row) => row.role === role && row.operation === operation);
    for (const role of ["owner", "reader", "stranger"]) {
      for (const operation of [
        "get",
        "strong get (from the stream's leader)",
        "put",
        "create (only if absent)",
        "update (CAS)",
        "delete",
        "keys",
        "watch with live updates",
        "history",
      ]) {
        expect(covered(role, operation), `${role} ${operation}`).toBe(true);
      }
    }
    for (const operation of [
      "get",
      "strong get (from the stream's leader)",
      "keys",
      "history",
      "no consumer outlives its read",
      "put",
      "delete bucket (STREAM.DELETE)",
    ])
      expect(covered("inspector", operation), `inspector ${operation}`).toBe(true);
    // natscli v0.5.0 as the inspector: its six reading commands on each bucket, its writes refused, and each
    // subject it needs shown necessary (issue 40).
    for (const operation of [
      "nats kv ls",
      "nats kv info",
      "nats kv get",
      "nats kv history",
      "nats kv watch",
      "nats stream info",
      "every consumer it left is ephemeral and bounded",
      "nats kv put",
      "nats kv del",
      "nats consumer add (durable)",
      "nothing stored, no consumer added by the refused writes",
    ])
      expect(covered("inspector (natscli)", operation), `inspector (natscli) ${operation}`).toBe(true);
    expect(result.rows.filter((row) => row.role.startsWith("inspector minus ")).length).toBe(5);
    expect(result.rows.filter((row) => row.role.includes(" minus ")).length).toBeGreaterThanOrEqual(20);
    // Compaction (decision 0009): allowed on the catalogue, refused outside it, each of its subjects necessary.
    for (const operation of [
      "compact (old markers go, values stay)",
      "compact a bucket outside the catalogue",
      "purge a bucket outside the catalogue",
    ])
      expect(covered("controller", operation), `controller ${operation}`).toBe(true);
    expect(result.rows.filter((row) => row.role.startsWith("controller minus ")).length).toBe(4);
  });
});
