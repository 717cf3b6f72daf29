import { describe, expect, it } from "vitest";
import { durationToMilliseconds, durationToNanoseconds } from "./duration.js";
import {
  bucketName,
  bucketOfStream,
  bucketSubjects,
  isValidName,
  parseBucketName,
  parseReadReference,
  streamName,
} from "./names.js";

describe("names", () => {
  it("accepts 1 to 63 characters and refuses 64", () => {
    expect(isValidName("a")).toBe(true);
    expect(isValidName(`a${"b".repeat(62)}`)).toBe(true);
    expect(isValidName(`a${"b".repeat(63)}`)).toBe(false);
    for (const bad of ["", "A", "1a", "-a", "a_b", "a.b", "a b", "é"]) expect(isValidName(bad), bad).toBe(false);
  });

  it("builds and splits bucket names injectively", () => {
    const bucket = bucketName("operators-agent", "mcp-servers");
    expect(bucket).toBe("mod_operators-agent_mcp-servers");
    expect(streamName(bucket)).toBe("KV_mod_operators-agent_mcp-servers");
    expect(bucketSubjects(bucket)).toBe("$KV.mod_operators-agent_mcp-servers.>");
    expect(parseBucketName(bucket)).toEqual({ module: "operators-agent", name: "mcp-servers" });
    expect(parseBucketName("KV_mod_a_b")).toBeUndefined();
    expect(parseBucketName("mod_a_b_c")).toBeUndefined();
  });

  it("splits a read reference", () => {
    expect(parseReadReference("licence-manager.bindings")).toEqual({ module: "licence-manager", name: "bindings" });
    expect(parseReadReference("a.b.c")).toBeUndefined();
  });
});

describe("durations", () => {
  it("converts each unit", () => {
    expect(durationToMilliseconds("90s")).toBe(90_000);
    expect(durationToMilliseconds("15m")).toBe(900_000);
    expect(durationToMilliseconds("12h")).toBe(43_200_000);
    expect(durationToNanoseconds("30d")).toBe(30 * 86_400 * 1e9);
  });

  it("keeps the longest duration within JetStream's int64 nanoseconds", () => {
    expect(durationToNanoseconds("99999d")).toBeLessThan(2 ** 63);
  });

  it("throws a RangeError on anything else", () => {
    expect(() => durationToMilliseconds("1w")).toThrow(RangeError);
  });
});

describe("bucketOfStream", () => {
  it("is the inverse of streamName, and undefined for a stream that is not a bucket's", () => {
    expect(bucketOfStream(streamName("mod_a_b"))).toBe("mod_a_b");
    expect(bucketOfStream("ORDERS")).toBeUndefined();
  });
});
