import { describe, expect, it } from "vitest";
import { ManifestError } from "./errors.js";
import { checkManifest, parseManifest } from "./parse.js";

function errorOf(action: () => unknown): ManifestError {
  try {
    action();
  } catch (error) {
    if (error instanceof ManifestError) return error;
    throw error;
  }
  throw new Error("expected a ManifestError");
}

describe("parseManifest", () => {
  it("returns the manifest of the design's example", () => {
    const manifest = parseManifest({
      name: "operators-agent",
      state: { "mcp-servers": {}, applied: { history: 5, ttl: "30d" } },
      reads: ["licence-manager.bindings"],
    });
    expect(manifest.state?.applied).toEqual({ history: 5, ttl: "30d" });
  });

  it("names the path and the limit of a capped option", () => {
    const error = errorOf(() => parseManifest({ name: "operators-agent", state: { applied: { history: 100 } } }));
    expect(error.code).toBe("invalid-manifest");
    expect(error.message).toBe(
      'manifest "operators-agent" has 1 problem:\n  - state.applied.history: at most 64, got 100',
    );
    expect(error.issues).toEqual([{ path: "state.applied.history", message: "at most 64, got 100" }]);
  });

  it("lists every problem, not only the first", () => {
    const error = errorOf(() =>
      parseManifest({
        name: "Agent",
        state: { big: { maxValueSize: 262_145, maxBytes: 67_108_865, ttl: "1w", replicas: 3 } },
        reads: ["alone"],
      }),
    );
    expect(error.message.split("\n")[0]).toBe('manifest "Agent" has 6 problems:');
    expect(error.issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      'name: a module name is lower-case letters, digits and -, starting with a letter, at most 63 characters, got "Agent"',
      'state.big.ttl: a ttl is a whole number (1 to 5 digits) and s, m, h or d, such as 90s, 12h or 30d, got "1w"',
      "state.big.maxValueSize: at most 262144, got 262145",
      "state.big.maxBytes: at most 67108864, got 67108865",
      'state.big: unknown field "replicas": a state declaration takes only history, ttl, forgetDeletes, maxValueSize, maxBytes',
      'reads[0]: a read reference is <module>.<name>, each part lower-case letters, digits and -, starting with a letter, at most 63 characters, got "alone"',
    ]);
  });

  it("says a missing or mistyped field is required, and what was given", () => {
    expect(errorOf(() => parseManifest({})).message).toBe(
      "the manifest has 1 problem:\n  - name: required: expected a string",
    );
    expect(checkManifest({ name: "m", reads: "a.b" })).toEqual({
      ok: false,
      issues: [{ path: "reads", message: 'expected an array, got "a.b"' }],
    });
    expect(checkManifest([])).toEqual({
      ok: false,
      issues: [{ path: "", message: "expected an object, got an array" }],
    });
    expect(checkManifest({ name: "m", state: { s: { history: 1.5 } } })).toEqual({
      ok: false,
      issues: [{ path: "state.s.history", message: "expected an integer, got 1.5" }],
    });
  });

  it("reports a huge number once, against the field's own cap", () => {
    const unsafe = JSON.parse('{"name":"m","state":{"s":{"history":9007199254740993}}}');
    expect(checkManifest(unsafe)).toEqual({
      ok: false,
      issues: [{ path: "state.s.history", message: "at most 64, got 9007199254740992" }],
    });
    const infinite = JSON.parse('{"name":"m","state":{"s":{"maxBytes":1e400}}}');
    expect(checkManifest(infinite)).toEqual({
      ok: false,
      issues: [{ path: "state.s.maxBytes", message: "expected a number, got Infinity" }],
    });
  });

  it("quotes a state name that is not a plain identifier in the path", () => {
    const result = checkManifest({ name: "m", state: { "mcp.servers": {} } });
    expect(result.ok ? [] : result.issues.map((issue) => issue.path)).toEqual(['state["mcp.servers"]']);
  });
});

describe("unknown fields", () => {
  it("keeps them as they are, in the input's order, by reference", () => {
    const bundle = { command: ["node", "main.js"] };
    const input = { version: 3, name: "m", bundle, state: { s: {} } };
    const manifest = parseManifest(input);
    expect(Object.keys(manifest)).toEqual(["version", "name", "bundle", "state"]);
    expect(manifest.bundle).toBe(bundle);
    expect(manifest).toEqual(input);
  });

  it("keeps a top-level own __proto__ as an own field, without setting the prototype", () => {
    const input = JSON.parse(
      '{"name":"m","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    );
    const manifest = parseManifest(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(manifest)).toBe(Object.prototype);
    expect(Object.hasOwn(manifest, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(manifest, "__proto__")?.value).toEqual({ polluted: true });
    expect(manifest.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(manifest)).toBe(
      '{"name":"m","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    );
  });

  it("refuses __proto__ as a state name, which zod's record alone would skip without a word", () => {
    const input = JSON.parse('{"name":"m","state":{"__proto__":{"history":2},"ok":{}}}');
    const result = checkManifest(input);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues.map((issue) => issue.path)).toEqual(['state["__proto__"]']);
  });

  it("accepts constructor as a state name and keeps it as an own field", () => {
    const manifest = parseManifest(JSON.parse('{"name":"m","state":{"constructor":{"history":2}}}'));
    expect(Object.hasOwn(manifest.state!, "constructor")).toBe(true);
    expect(manifest.state?.constructor).toEqual({ history: 2 });
  });
});
