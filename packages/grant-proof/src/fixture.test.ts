import { bucketCompactionSubjects } from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { GrantProofError } from "./errors.js";
import { FIXTURE, proofAccountsConfig, proofCatalogue, proofUsers } from "./fixture.js";
import { formatProofTable } from "./table.js";

describe("the proof's fixture", () => {
  it("refuses a catalogue that already uses a fixture module's name", () => {
    const clash = parseCatalogue([{ name: FIXTURE.ownerModule, state: { x: {} } }]);
    try {
      proofCatalogue(clash);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(GrantProofError);
      expect((error as GrantProofError).code).toBe("catalogue-conflict");
    }
  });

  it("has one minimality variant per subject of the owner's and the reader's grant, each missing exactly it", () => {
    const users = proofUsers(proofCatalogue(), []);
    for (const role of ["owner", "reader"] as const) {
      const { publish, subscribe } = users.machines[role].grant.permissions;
      const variants = users.variants.filter((variant) => variant.role === role);
      expect(variants.map((variant) => variant.removed)).toEqual([...publish.allow, ...subscribe.allow]);
      for (const variant of variants) {
        const granted = variant.user.grant.permissions;
        const total = granted.publish.allow.length + granted.subscribe.allow.length;
        expect(total, variant.removed).toBe(publish.allow.length + subscribe.allow.length - 1);
        expect(granted.publish.allow).not.toContain(variant.removed);
      }
    }
  });

  it("has one compaction variant per compaction subject of the big bucket, each missing exactly it", () => {
    const catalogue = proofCatalogue();
    const users = proofUsers(catalogue, []);
    const full = users.controller.grant.permissions.publish.allow;
    expect(users.compactionVariants.map((variant) => variant.removed)).toEqual(bucketCompactionSubjects(FIXTURE.big));
    for (const variant of users.compactionVariants) {
      expect(variant.user.grant.permissions.publish.allow).toEqual(
        full.filter((subject) => subject !== variant.removed),
      );
    }
  });

  it("refuses a catalogue that uses the outside module's name, which the controller's grant must not cover", () => {
    expect(() => proofCatalogue(parseCatalogue([{ name: FIXTURE.outsideModule, state: { kept: {} } }]))).toThrow(
      GrantProofError,
    );
  });

  it("renders one accounts block with the state account and the other account", () => {
    const config = proofAccountsConfig(proofUsers(proofCatalogue(), []));
    expect(config.match(/^accounts \{/gm)).toHaveLength(1);
    expect(config).toMatch(/\n {2}MESH \{/);
    expect(config).toMatch(/\n {2}STATE \{/);
  });

  it("formats rows as a table with failures marked", () => {
    const row = {
      role: "reader",
      operation: "put",
      bucket: "b",
      expected: "refused" as const,
      actual: "allowed" as const,
      pass: false,
      detail: "revision 3",
    };
    expect(formatProofTable([row])).toMatch(/^pass +role.*\nFAIL +reader +put +b +refused +allowed +revision 3$/);
  });
});
