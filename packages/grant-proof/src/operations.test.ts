import { describe, expect, it } from "vitest";
import { subjectMatches } from "./operations.js";

describe("subjectMatches: whether a refused subject is the one a minimality variant removed", () => {
  it("matches NATS wildcards as whole tokens", () => {
    expect(subjectMatches("$JS.API.CONSUMER.MSG.NEXT.KV_b.>", "$JS.API.CONSUMER.MSG.NEXT.KV_b.rs_1")).toBe(true);
    expect(subjectMatches("$JS.API.DIRECT.GET.KV_b.>", "$JS.API.DIRECT.GET.KV_b.$KV.b.seed.0")).toBe(true);
    expect(subjectMatches("_INBOX_m.>", "_INBOX_m.abc.*")).toBe(true);
    expect(subjectMatches("$KV.b.*", "$KV.b.k")).toBe(true);
  });

  it("refuses a subject the pattern does not cover", () => {
    // `>` needs at least one more token: the exact create is not below itself.
    expect(subjectMatches("$JS.API.CONSUMER.CREATE.KV_b.>", "$JS.API.CONSUMER.CREATE.KV_b")).toBe(false);
    expect(subjectMatches("$JS.API.CONSUMER.CREATE.KV_b", "$JS.API.CONSUMER.CREATE.KV_b.n")).toBe(false);
    expect(subjectMatches("$JS.API.CONSUMER.CREATE.KV_b", "$JS.API.CONSUMER.CREATE.KV_b")).toBe(true);
    expect(subjectMatches("$KV.b.*", "$KV.b.k.l")).toBe(false);
    expect(subjectMatches("$KV.b.>", "$KV.c.k")).toBe(false);
  });
});
