import { expect, it } from "vitest";
import { manifest } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { issueBuckets } from "./issue.js";

const catalogue = [
  manifest("operators-agent", { "mcp-servers": {}, applied: { history: 5, ttl: "30d", maxValueSize: 4096 } }, [
    "licence-manager.bindings",
  ]),
  manifest("licence-manager", { bindings: {} }),
];

it("issues the membership's buckets exactly as DESIGN.md shows them", () => {
  expect(issueBuckets({ module: "operators-agent", catalogue })).toEqual({
    applied: { bucket: "mod_operators-agent_applied", access: "write", maxValueSize: 4096 },
    "mcp-servers": { bucket: "mod_operators-agent_mcp-servers", access: "write", maxValueSize: 262144 },
    "licence-manager.bindings": { bucket: "mod_licence-manager_bindings", access: "read" },
  });
  expect(issueBuckets({ module: "licence-manager", catalogue })).toEqual({
    bindings: { bucket: "mod_licence-manager_bindings", access: "write", maxValueSize: 262144 },
  });
});

it("refuses a module the catalogue does not hold", () => {
  expect(() => issueBuckets({ module: "nobody", catalogue })).toThrow(ControllerKvError);
  expect(() => issueBuckets({ module: "nobody", catalogue })).toThrow(/register it/);
});

it("issues forgetDeletes in seconds only for a bucket the raise's report lists as on", () => {
  const forgetful = [
    manifest("forgetful", {
      on: { forgetDeletes: "12h" },
      old: { forgetDeletes: "7d" },
      failed: { forgetDeletes: "1s" },
    }),
  ];
  const ref = { module: "forgetful", after: "" };
  const raised = {
    forgetDeletes: [
      { ...ref, bucket: "mod_forgetful_on", name: "on", state: "on" as const },
      { ...ref, bucket: "mod_forgetful_old", name: "old", state: "unsupported" as const },
    ],
  };
  const issued = issueBuckets({ module: "forgetful", catalogue: forgetful, raised });
  expect(issued.on?.forgetDeletes).toEqual({ afterSeconds: 43_200 });
  expect(Object.hasOwn(issued.old!, "forgetDeletes")).toBe(false);
  expect(Object.hasOwn(issued.failed!, "forgetDeletes")).toBe(false);
  // A plan's report changed nothing: its "on" issues nothing.
  const planned = issueBuckets({ module: "forgetful", catalogue: forgetful, raised: { ...raised, plan: true } });
  expect(Object.hasOwn(planned.on!, "forgetDeletes")).toBe(false);
  // Another module's report entry never lends the option to a bucket that does not declare it.
  expect(issueBuckets({ module: "operators-agent", catalogue, raised }).applied).not.toHaveProperty("forgetDeletes");
});
