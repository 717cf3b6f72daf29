import { describe, expect, it } from "vitest";
import { catalogueIssues, declaredBuckets, findModule } from "./catalogue.js";
import { ManifestError } from "./errors.js";
import type { Manifest } from "./manifest.js";
import { checkCatalogue, parseCatalogue } from "./parse.js";

const licence: Manifest = { name: "licence-manager", state: { bindings: {} } };
const agent: Manifest = {
  name: "operators-agent",
  state: { "mcp-servers": {}, applied: { history: 5, ttl: "30d", maxValueSize: 1024, maxBytes: 1_048_576 } },
  reads: ["licence-manager.bindings"],
};

describe("catalogueIssues", () => {
  it("finds nothing wrong with a consistent catalogue", () => {
    expect(catalogueIssues([licence, agent])).toEqual([]);
  });

  it("refuses a read of a module that is not in the catalogue", () => {
    expect(catalogueIssues([agent])).toEqual([
      {
        manifest: 0,
        module: "operators-agent",
        path: "reads[0]",
        message: "licence-manager.bindings: no module licence-manager in the catalogue",
      },
    ]);
  });

  it("refuses a read of a bucket its module does not declare, even one inherited from Object", () => {
    const reader: Manifest = { name: "reader", reads: ["licence-manager.keys", "licence-manager.constructor"] };
    expect(catalogueIssues([licence, reader]).map((issue) => issue.message)).toEqual([
      "licence-manager.keys: module licence-manager declares no state keys",
      "licence-manager.constructor: module licence-manager declares no state constructor",
    ]);
  });

  it("refuses a module reading its own bucket through reads", () => {
    const selfReader: Manifest = { name: "m", state: { s: {} }, reads: ["m.s"] };
    expect(catalogueIssues([selfReader])).toEqual([
      {
        manifest: 0,
        module: "m",
        path: "reads[0]",
        message: "m.s is this module's own bucket: it reads and writes it through state, not reads",
      },
    ]);
  });

  it("refuses a duplicate module name, pointing at the later manifest", () => {
    expect(catalogueIssues([licence, agent, { name: "licence-manager" }])).toEqual([
      {
        manifest: 2,
        module: "licence-manager",
        path: "name",
        message: "module licence-manager is already registered (manifest 0)",
      },
    ]);
  });

  it("refuses a read listed twice, once", () => {
    const twice: Manifest = { name: "r", reads: ["licence-manager.bindings", "licence-manager.bindings"] };
    expect(catalogueIssues([licence, twice])).toEqual([
      { manifest: 1, module: "r", path: "reads[1]", message: "licence-manager.bindings is listed twice" },
    ]);
  });
});

describe("checkCatalogue and parseCatalogue", () => {
  it("parses every manifest, then checks the catalogue", () => {
    expect(checkCatalogue([licence, agent])).toEqual({ ok: true, value: [licence, agent] });
    const error = (() => {
      try {
        parseCatalogue([agent]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).code).toBe("invalid-catalogue");
    expect((error as ManifestError).message).toBe(
      "the catalogue has 1 problem:\n  - operators-agent: reads[0]: licence-manager.bindings: no module licence-manager in the catalogue",
    );
  });

  it("reports each invalid manifest with its index, and the cross checks over every manifest at once", () => {
    const result = checkCatalogue([{ name: "ok", reads: ["missing.bucket"] }, { state: {} }, { name: "x", reads: 1 }]);
    expect(result).toEqual({
      ok: false,
      issues: [
        { manifest: 1, path: "name", message: "required: expected a string" },
        { manifest: 2, module: "x", path: "reads", message: "expected an array, got 1" },
        { manifest: 0, module: "ok", path: "reads[0]", message: "missing.bucket: no module missing in the catalogue" },
      ],
    });
  });

  it("reports a dangling read of a manifest whose other fields fail, and reads of its declared state resolve", () => {
    const result = checkCatalogue([
      { name: "owner", state: { kept: { history: 1000 } } },
      { name: "reader", state: { Bad: {} }, reads: ["owner.kept", "owner.gone"] },
    ]);
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues.map((issue) => `${issue.manifest} ${issue.path}`)).toEqual([
      "0 state.kept.history",
      "1 state.Bad",
      "1 reads[1]",
    ]);
    expect(issues[2]!.message).toBe("owner.gone: module owner declares no state gone");
  });
});

describe("declaredBuckets", () => {
  it("carries forgetDeletes as written, and leaves it out when not declared", () => {
    const sessions: Manifest = { name: "m", state: { sessions: { forgetDeletes: "7d" }, plain: {} } };
    expect(declaredBuckets([sessions]).map((bucket) => [bucket.name, bucket.forgetDeletes])).toEqual([
      ["plain", undefined],
      ["sessions", "7d"],
    ]);
    expect(Object.hasOwn(declaredBuckets([sessions])[0]!, "forgetDeletes")).toBe(false);
  });

  it("fills in the defaults and the NATS names, sorted by bucket", () => {
    expect(declaredBuckets([agent, licence])).toEqual([
      {
        module: "licence-manager",
        name: "bindings",
        bucket: "mod_licence-manager_bindings",
        stream: "KV_mod_licence-manager_bindings",
        history: 1,
        maxValueSize: 262_144,
        maxBytes: 67_108_864,
      },
      {
        module: "operators-agent",
        name: "applied",
        bucket: "mod_operators-agent_applied",
        stream: "KV_mod_operators-agent_applied",
        history: 5,
        ttl: "30d",
        maxValueSize: 1024,
        maxBytes: 1_048_576,
      },
      {
        module: "operators-agent",
        name: "mcp-servers",
        bucket: "mod_operators-agent_mcp-servers",
        stream: "KV_mod_operators-agent_mcp-servers",
        history: 1,
        maxValueSize: 262_144,
        maxBytes: 67_108_864,
      },
    ]);
    expect(declaredBuckets([{ name: "reader", reads: ["a.b"] }])).toEqual([]);
  });

  it("finds a module by name", () => {
    expect(findModule([licence, agent], "operators-agent")).toBe(agent);
    expect(findModule([licence, agent], "constructor")).toBeUndefined();
  });
});
