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
