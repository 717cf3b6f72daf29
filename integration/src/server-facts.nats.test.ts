// @server-versions supported below-floor — scripts/test.sh runs this file on every pinned nats-server version, below the floor too.
import { desiredStreamConfig } from "@mesh/controller-kv";
import { declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { recordProven, versionAtLeast } from "./proven.js";

/**
 * Facts about the installed nats-server that the design depends on, measured again on every run so a
 * server upgrade that changes them is noticed. docs/decisions/0004-full-buckets-and-nats-server-4771.md.
 */

describe("the installed nats-server", () => {
  it("keeps every key of a full discard-new bucket only from 2.10.5 on (nats-server#4771)", async () => {
    await using server = await startTestServer();
    const connection = await connect({ servers: server.url });
    try {
      const version = connection.info!.version;
      const manager = await jetstreamManager(connection);
      const client = jetstream(connection);
      // A bucket as controller-kv's raise makes it (its stream config, for this server's version), with a long
      // name and a 4 KiB limit: the server's discard-new check before 2.10.5 leaves out the stored record's
      // overhead (22 bytes + the subject), so a small write at the edge is accepted and the limit is then
      // enforced by evicting the oldest message. (The raise itself refuses a server below the floor.)
      const [declared] = declaredBuckets(
        parseCatalogue([{ name: "operators-agent", state: { "mcp-servers": { maxBytes: 4096 } } }]),
      );
      const { bucket, stream } = declared!;
      await manager.streams.add(desiredStreamConfig(declared!, 1, version));
      for (let index = 0; index < 10; index++)
        await client.publish(`$KV.${bucket}.all.server-${index}`, "x".repeat(200));
      const room = 4096 - (await manager.streams.info(stream)).state.bytes;
      // A payload one byte smaller than the room left: it fits by the old check, not once stored.
      const edge = await client.publish(`$KV.${bucket}.all.edge`, "y".repeat(room - 1)).then(
        () => "accepted",
        () => "refused",
      );
      const state = (await manager.streams.info(stream)).state;
      recordProven(
        version,
        "a full bucket (nats-server#4771)",
        edge === "refused" && state.first_seq === 1
          ? "refuses the write, keeps every key"
          : `accepts the write, evicts the oldest key (first seq ${state.first_seq})`,
      );
      if (versionAtLeast(version, [2, 10, 5])) {
        expect(edge, `nats-server ${version} should refuse a write that does not fit`).toBe("refused");
        expect(state.first_seq).toBe(1);
      } else {
        // The defect, as measured on 2.9.10: no refusal, the oldest keys evicted.
        expect(edge, `nats-server ${version}: if this now refuses, update decision 0004`).toBe("accepted");
        expect(state.first_seq, "the oldest key was evicted").toBeGreaterThan(1);
      }
    } finally {
      await connection.close();
    }
  });
});
