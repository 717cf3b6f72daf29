// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { declaredBuckets } from "@mesh/manifest-schema";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { manifest, serverForFile } from "../test/support.js";
import { desiredStreamConfig, serverFeatures } from "./bucket-config.js";
import { issueBuckets } from "./issue.js";
import { raise } from "./raise.js";

// forgetDeletes (decision 0009): from nats-server 2.11 the raise lets the bucket's stream hold per-message ttls
// and the membership issues the option; on 2.10 the raise reports it unsupported and nothing is issued.

const file = serverForFile();

function capturingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, warnings: () => lines.filter((line) => line.level === pino.levels.values.warn) };
}

async function streamConfig(stream: string): Promise<Record<string, unknown>> {
  return (await file.admin.jsm.streams.info(stream)).config as unknown as Record<string, unknown>;
}

describe("a bucket declaring forgetDeletes", () => {
  it("is created with per-message ttls from 2.11, and only then does its membership carry the option", async () => {
    const version = file.controller.info!.version;
    const supported = serverFeatures(version).deleteMarkers;
    const catalogue = [manifest("forgetful", { sessions: { forgetDeletes: "30d" }, plain: {} })];
    const { logger, warnings } = capturingLogger();
    const report = await raise({ connection: file.controller, catalogue, replicas: 1, logger });
    const ref = { bucket: "mod_forgetful_sessions", module: "forgetful", name: "sessions", after: "30d" };
    expect(report.forgetDeletes, `nats-server ${version}`).toEqual([
      { ...ref, state: supported ? "on" : "unsupported" },
    ]);
    const sessions = await streamConfig("KV_mod_forgetful_sessions");
    // Without a ttl the bucket gets no server markers, only the permission for a message's own ttl.
    expect(sessions.allow_msg_ttl ?? false, `nats-server ${version}`).toBe(supported);
    expect(sessions.subject_delete_marker_ttl ?? 0).toBe(0);
    expect((await streamConfig("KV_mod_forgetful_plain")).allow_msg_ttl ?? false).toBe(false);

    const issued = issueBuckets({ module: "forgetful", catalogue, raised: report });
    expect(issued.sessions?.forgetDeletes, `nats-server ${version}`).toEqual(
      supported ? { afterSeconds: 30 * 86_400 } : undefined,
    );
    expect(Object.hasOwn(issued.plain!, "forgetDeletes")).toBe(false);
    // Without the raise's report the option is never issued: the manifest alone does not say the stream allows it.
    expect(Object.hasOwn(issueBuckets({ module: "forgetful", catalogue }).sessions!, "forgetDeletes")).toBe(false);

    const unsupported = warnings().filter((line) => line.msg.includes("forgetDeletes"));
    expect(unsupported.map((line) => line.msg)).toEqual(
      supported
        ? []
        : [
            `bucket mod_forgetful_sessions declares forgetDeletes 30d, which needs nats-server 2.11 or later (this is ${version}): its delete markers stay until mesh-state compact removes them`,
          ],
    );

    const again = await raise({ connection: file.controller, catalogue, replicas: 1 });
    expect(again).toMatchObject({ created: [], updated: [], conflicts: [], failed: [] });
    expect(again.forgetDeletes).toEqual(report.forgetDeletes);
  });

  it("made before the option, gets per-message ttls by an update from 2.11, its values kept", async () => {
    const version = file.controller.info!.version;
    const supported = serverFeatures(version).deleteMarkers;
    const before = [manifest("later-forgetful", { leases: { history: 5 } })];
    await raise({ connection: file.controller, catalogue: before, replicas: 1 });
    const [declared] = declaredBuckets(before);
    const kv = await file.admin.kvm.open(declared!.bucket);
    for (const value of ["a", "b", "c"]) await kv.put("k", value);
    expect((await streamConfig(declared!.stream)).allow_msg_ttl ?? false).toBe(false);

    const catalogue = [manifest("later-forgetful", { leases: { history: 5, forgetDeletes: "12h" } })];
    const report = await raise({ connection: file.controller, catalogue, replicas: 1 });
    expect(report.updated.flatMap((bucket) => bucket.changes.map((change) => change.field))).toEqual(
      supported ? ["allowMessageTtl"] : [],
    );
    expect(report.forgetDeletes.map((bucket) => bucket.state)).toEqual([supported ? "on" : "unsupported"]);
    const info = await file.admin.jsm.streams.info(declared!.stream);
    expect((info.config as unknown as Record<string, unknown>).allow_msg_ttl ?? false).toBe(supported);
    expect(info.state.messages).toBe(3);
    expect(desiredStreamConfig(declared!, 1, version).allow_msg_ttl).toBeUndefined();
  });
});
