import { describe, expect, it } from "vitest";
import { ManifestError } from "./errors.js";
import { checkMembership, parseMembership } from "./parse.js";

const designExample = {
  module: "operators-agent",
  buckets: {
    "mcp-servers": { bucket: "mod_operators-agent_mcp-servers", access: "write", maxValueSize: 262144 },
    "licence-manager.bindings": { bucket: "mod_licence-manager_bindings", access: "read" },
  },
};

describe("parseMembership", () => {
  it("accepts the design's example and keeps unknown top-level fields", () => {
    const membership = parseMembership({ ...designExample, assignment: "a-17" });
    expect(membership.buckets["licence-manager.bindings"]).toEqual({
      bucket: "mod_licence-manager_bindings",
      access: "read",
    });
    expect(membership.assignment).toBe("a-17");
  });

  it("accepts a membership with no buckets", () => {
    expect(checkMembership({ module: "m", buckets: {} })).toEqual({ ok: true, value: { module: "m", buckets: {} } });
  });

  it("refuses bad use names, bucket names, access and sizes, each with its path", () => {
    const result = checkMembership({
      module: "m",
      buckets: {
        Bad: { bucket: "mod_m_bad", access: "read" },
        "a.b.c": { bucket: "mod_a_b", access: "read" },
        ok: { bucket: "KV_mod_m_ok", access: "admin", maxValueSize: 262_145, replicas: 3 },
      },
    });
    expect(result.ok ? [] : result.issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      'buckets.Bad: a bucket is named as in the module\'s verbs: a state name or <module>.<name>, got "Bad"',
      'buckets["a.b.c"]: a bucket is named as in the module\'s verbs: a state name or <module>.<name>, got "a.b.c"',
      'buckets.ok.bucket: a bucket name is mod_<module>_<name>, got "KV_mod_m_ok"',
      'buckets.ok.access: Invalid option: expected one of "read"|"write", got "admin"',
      "buckets.ok.maxValueSize: at most 262144, got 262145",
      'buckets.ok: unknown field "replicas"',
    ]);
  });

  it("accepts forgetDeletes in seconds and refuses anything else in it", () => {
    const sessions = { bucket: "mod_m_sessions", access: "write", forgetDeletes: { afterSeconds: 2_592_000 } };
    expect(parseMembership({ module: "m", buckets: { sessions } }).buckets.sessions?.forgetDeletes).toEqual({
      afterSeconds: 2_592_000,
    });
    const result = checkMembership({
      module: "m",
      buckets: {
        zero: { ...sessions, forgetDeletes: { afterSeconds: 0 } },
        written: { ...sessions, forgetDeletes: "30d" },
        extra: { ...sessions, forgetDeletes: { afterSeconds: 1, as: "purge" } },
      },
    });
    expect(result.ok ? [] : result.issues.map((issue) => issue.path)).toEqual([
      "buckets.zero.forgetDeletes.afterSeconds",
      "buckets.written.forgetDeletes",
      "buckets.extra.forgetDeletes",
    ]);
  });

  it("refuses an own __proto__ bucket instead of dropping it", () => {
    const input = JSON.parse('{"module":"m","buckets":{"__proto__":{"bucket":"mod_a_b","access":"write"}}}');
    expect(checkMembership(input)).toEqual({
      ok: false,
      issues: [
        {
          path: 'buckets["__proto__"]',
          message: 'a bucket is named as in the module\'s verbs: a state name or <module>.<name>, got "__proto__"',
        },
      ],
    });
  });

  it("throws a ManifestError with code invalid-membership", () => {
    let caught: unknown;
    try {
      parseMembership({ module: "m" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ManifestError);
    expect((caught as ManifestError).code).toBe("invalid-membership");
    expect((caught as ManifestError).message).toBe(
      "the membership has 1 problem:\n  - buckets: required: expected an object",
    );
  });
});
