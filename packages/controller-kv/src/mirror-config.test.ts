import { declaredBuckets } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { manifest } from "../test/support.js";
import { desiredStreamConfig } from "./bucket-config.js";
import { desiredMirrorConfig, domainApiPrefix } from "./mirror-config.js";

const [declared] = declaredBuckets([manifest("m", { b: { history: 3, ttl: "90s" } })]);

describe("desiredMirrorConfig", () => {
  it("is the hub bucket's stream, by name and limits, following it through the hub domain's API", () => {
    const mirror = desiredMirrorConfig(declared!, "hub", 1, "2.15.3");
    expect(mirror).toMatchObject({
      name: "KV_mod_m_b",
      mirror: { name: "KV_mod_m_b", external: { api: "$JS.hub.API", deliver: "" } },
      max_msgs_per_subject: 3,
      max_age: 90e9,
      allow_direct: true,
      allow_msg_ttl: true,
    });
  });

  it("takes no subjects and no delete marker ttl, which servers refuse on a mirror", () => {
    const hub = desiredStreamConfig(declared!, 1, "2.15.3");
    expect(hub.subject_delete_marker_ttl).toBeGreaterThan(0);
    const mirror = desiredMirrorConfig(declared!, "hub", 1, "2.15.3");
    expect(mirror).not.toHaveProperty("subjects");
    expect(mirror).not.toHaveProperty("subject_delete_marker_ttl");
  });

  it("names a domain's API as a leaf link maps it", () => {
    expect(domainApiPrefix("factory-7")).toBe("$JS.factory-7.API");
  });
});
