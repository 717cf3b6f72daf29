import { describe, expect, it } from "vitest";
import { renderConfig } from "./config.js";

const parts = { serverName: "s", host: "127.0.0.1", port: -1, monitorPort: -1, storeDir: "/tmp/store" };

describe("renderConfig", () => {
  it("states a JetStream domain inside the jetstream block, and none unless asked", () => {
    expect(renderConfig({ ...parts, jetstreamDomain: "site1" })).toMatch(/jetstream \{[^}]*domain: "site1"\n\}/);
    expect(renderConfig(parts)).not.toContain("domain:");
  });
});
