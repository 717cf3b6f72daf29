import { bucketName, type Catalogue, parseCatalogue } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { GrantError } from "./errors.js";
import { composeControllerGrant, composeInspectorGrant, composeMachineGrant } from "./grant.js";
import {
  bucketCompactionSubjects,
  bucketGrantSubjects,
  bucketInspectorSubjects,
  INSPECTOR_ACCOUNT_SUBJECTS,
} from "./subjects.js";

const catalogue = parseCatalogue([
  {
    name: "operators-agent",
    state: { "mcp-servers": {}, applied: { history: 5 } },
    reads: ["licence-manager.bindings"],
  },
  { name: "licence-manager", state: { bindings: {} } },
  { name: "dashboard", reads: ["licence-manager.bindings", "operators-agent.applied"] },
]);

/** A small seeded PRNG (mulberry32), so a failing random catalogue can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCatalogue(next: () => number): Catalogue {
  const count = 1 + Math.floor(next() * 8);
  const modules = Array.from({ length: count }, (_, index) => ({
    name: `m${index}-${Math.floor(next() * 1000)}`,
    states: Array.from({ length: Math.floor(next() * 4) }, (_, s) => `s${s}`),
  }));
  return parseCatalogue(
    modules.map((module) => {
      const readable = modules
        .filter((other) => other !== module)
        .flatMap((other) => other.states.map((s) => `${other.name}.${s}`));
      const reads = readable.filter(() => next() < 0.3);
      return {
        name: module.name,
        state: Object.fromEntries(module.states.map((s) => [s, {}])),
        ...(reads.length ? { reads } : {}),
      };
    }),
  );
}

const BUCKET_SUBJECT =
  /^((\$JS\.API\.(CONSUMER\.(DELETE|MSG\.NEXT)|DIRECT\.GET)\.KV_mod_[a-z][a-z0-9-]*_[a-z][a-z0-9-]*|\$KV\.mod_[a-z][a-z0-9-]*_[a-z][a-z0-9-]*)\.>|\$JS\.API\.(CONSUMER\.CREATE|STREAM\.MSG\.GET)\.KV_mod_[a-z][a-z0-9-]*_[a-z][a-z0-9-]*)$/;

describe("composeMachineGrant", () => {
  it("is the union of owner and reader subjects, sorted, with the machine's inbox", () => {
    const grant = composeMachineGrant({ machine: "node-1", assignments: ["operators-agent"], catalogue });
    const expected = [
      ...bucketGrantSubjects(bucketName("operators-agent", "mcp-servers"), "owner"),
      ...bucketGrantSubjects(bucketName("operators-agent", "applied"), "owner"),
      ...bucketGrantSubjects(bucketName("licence-manager", "bindings"), "reader"),
    ].sort();
    expect(grant).toEqual({
      user: "state-node-1",
      inboxPrefix: "_INBOX_node-1",
      permissions: { publish: { allow: expected }, subscribe: { allow: ["_INBOX_node-1.>"] } },
    });
  });

  it("gives the owner's subjects to a bucket one module owns and another reads, in either order", () => {
    const orders = [
      ["dashboard", "licence-manager"],
      ["licence-manager", "dashboard"],
    ];
    for (const assignments of orders) {
      const { publish } = composeMachineGrant({ machine: "node-2", assignments, catalogue }).permissions;
      expect(publish.allow).toContain("$KV.mod_licence-manager_bindings.>");
      expect(publish.allow).not.toContain("$KV.mod_operators-agent_applied.>");
    }
  });

  it("grants a machine with nothing assigned nothing but its inbox", () => {
    const grant = composeMachineGrant({ machine: "idle", assignments: [], catalogue });
    expect(grant.permissions).toEqual({ publish: { allow: [] }, subscribe: { allow: ["_INBOX_idle.>"] } });
  });

  it("refuses an unknown module and a bad machine name with stable codes", () => {
    const unknown = () => composeMachineGrant({ machine: "node-1", assignments: ["ghost"], catalogue });
    expect(unknown).toThrow(/ghost.*not in the catalogue: register it first/);
    try {
      unknown();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(GrantError);
      expect((error as GrantError).code).toBe("unknown-module");
    }
    try {
      composeMachineGrant({ machine: "Node_1", assignments: [], catalogue });
      expect.unreachable();
    } catch (error) {
      expect((error as GrantError).code).toBe("bad-machine");
    }
  });

  it("holds its invariants over random catalogues (seeded, replayable)", () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const next = random(seed);
      const randomCat = randomCatalogue(next);
      const assignments = randomCat.filter(() => next() < 0.5).map((manifest) => manifest.name);
      const input = { machine: `machine-${seed}`, assignments, catalogue: randomCat };
      const grant = composeMachineGrant(input);
      const again = composeMachineGrant({ ...input, assignments: [...assignments].reverse().concat(assignments) });
      const { publish, subscribe } = grant.permissions;
      const context = `seed ${seed}`;
      expect(again, context).toEqual(grant); // deterministic, order and repeats of assignments do not matter
      expect(publish.allow, context).toEqual([...new Set(publish.allow)].sort());
      expect(subscribe.allow, context).toEqual([`_INBOX_machine-${seed}.>`]);
      for (const subject of publish.allow) expect(subject, context).toMatch(BUCKET_SUBJECT);
      for (const wide of ["$JS.>", "$KV.>", "_INBOX.>", ">", "$JS.API.>"])
        expect(publish.allow, context).not.toContain(wide);
      // Owner wins; a read-only bucket has no write subject; nothing unassigned appears.
      const owned = new Set<string>();
      const read = new Set<string>();
      for (const manifest of randomCat.filter((m) => assignments.includes(m.name))) {
        for (const name of Object.keys(manifest.state ?? {})) owned.add(bucketName(manifest.name, name));
        for (const reference of manifest.reads ?? [])
          read.add(bucketName(...(reference.split(".") as [string, string])));
      }
      const expected = new Set([
        ...[...owned].flatMap((bucket) => bucketGrantSubjects(bucket, "owner")),
        ...[...read].filter((bucket) => !owned.has(bucket)).flatMap((bucket) => bucketGrantSubjects(bucket, "reader")),
      ]);
      expect(publish.allow, context).toEqual([...expected].sort());
    }
  });
});

describe("composeControllerGrant", () => {
  it("may create, update, inspect and list streams, and never delete or purge", () => {
    const grant = composeControllerGrant();
    expect(grant.user).toBe("controller");
    expect(grant.permissions.subscribe.allow).toEqual(["_INBOX_ctl_controller.>"]);
    for (const subject of grant.permissions.publish.allow) expect(subject).not.toMatch(/DELETE|PURGE|\$KV|>$/);
    expect(grant.permissions.publish.allow).toEqual([...grant.permissions.publish.allow].sort());
  });

  it("with a catalogue, may compact exactly the buckets it declares, each by its own stream's subjects", () => {
    const plain = composeControllerGrant().permissions.publish.allow;
    const grant = composeControllerGrant({ catalogue });
    const compaction = [
      ...bucketCompactionSubjects("mod_licence-manager_bindings"),
      ...bucketCompactionSubjects("mod_operators-agent_applied"),
      ...bucketCompactionSubjects("mod_operators-agent_mcp-servers"),
    ];
    expect(grant.permissions.publish.allow).toEqual([...plain, ...compaction].sort());
    expect(bucketCompactionSubjects("mod_licence-manager_bindings")).toEqual([
      "$JS.API.CONSUMER.CREATE.KV_mod_licence-manager_bindings",
      "$JS.API.CONSUMER.DELETE.KV_mod_licence-manager_bindings.>",
      "$JS.API.CONSUMER.MSG.NEXT.KV_mod_licence-manager_bindings.>",
      "$JS.API.STREAM.PURGE.KV_mod_licence-manager_bindings",
    ]);
    // Never a wildcard in the stream's place, never a stream delete, never a bucket's own subjects.
    for (const subject of compaction) expect(subject).not.toMatch(/\.\*|STREAM\.DELETE|^\$KV\./);
  });
});

describe("composeInspectorGrant", () => {
  const inspected = parseCatalogue([
    { name: "agent", state: { notes: {}, config: {} } },
    { name: "dashboard", reads: ["agent.notes"] },
  ]);
  it("reads every declared bucket as a reader does, and as natscli asks to, and writes none", () => {
    const grant = composeInspectorGrant({ catalogue: inspected });
    expect(grant.user).toBe("inspector");
    expect(grant.inboxPrefix).toBe("_INBOX_insp_inspector");
    const allow = grant.permissions.publish.allow;
    for (const bucket of ["mod_agent_config", "mod_agent_notes"]) {
      for (const subject of bucketGrantSubjects(bucket, "reader")) expect(allow).toContain(subject);
      expect(bucketInspectorSubjects(bucket)).toEqual([
        `$JS.API.CONSUMER.CREATE.KV_${bucket}`,
        `$JS.API.CONSUMER.CREATE.KV_${bucket}.*.$KV.${bucket}.>`,
        `$JS.API.CONSUMER.DELETE.KV_${bucket}.>`,
        `$JS.API.CONSUMER.MSG.NEXT.KV_${bucket}.>`,
        `$JS.API.DIRECT.GET.KV_${bucket}.>`,
        `$JS.API.STREAM.INFO.KV_${bucket}`,
        `$JS.API.STREAM.MSG.GET.KV_${bucket}`,
        `$JS.FC.KV_${bucket}.>`,
      ]);
    }
    expect(allow).toEqual(
      [
        ...INSPECTOR_ACCOUNT_SUBJECTS,
        ...bucketInspectorSubjects("mod_agent_config"),
        ...bucketInspectorSubjects("mod_agent_notes"),
      ].sort(),
    );
    // Nothing that writes, administers or makes a durable; no JetStream API wholesale.
    for (const subject of allow) {
      expect(subject).not.toMatch(
        /^\$KV\.|DELETE\.KV_[^.]+$|PURGE|STREAM\.(CREATE|UPDATE|DELETE)|DURABLE|^\$JS\.(API\.)?>$/,
      );
      // A create subject names a filter below its bucket, or is the exact one, which refuses a durable.
      if (subject.includes("CONSUMER.CREATE."))
        expect(subject).toMatch(/^\$JS\.API\.CONSUMER\.CREATE\.KV_([^.]+)(\.\*\.\$KV\.\1\.>)?$/);
    }
    expect(grant.permissions.subscribe.allow).toEqual(["_INBOX_insp_inspector.>"]);
  });
  it("takes another user name, and refuses one that is not a name", () => {
    expect(composeInspectorGrant({ catalogue: inspected, user: "ops" }).inboxPrefix).toBe("_INBOX_insp_ops");
    expect(() => composeInspectorGrant({ catalogue: inspected, user: "a b" })).toThrow(/not valid/);
  });
});
