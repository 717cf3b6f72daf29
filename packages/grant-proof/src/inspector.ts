import { raise } from "@mesh/controller-kv";
import {
  composeControllerGrant,
  composeInspectorGrant,
  composeMachineGrant,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { startServer } from "@mesh/local-nats";
import { declaredBuckets, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { streamAdminChecks } from "./bounds.js";
import { check, expect, type Recorder } from "./check.js";
import { connectClient, type StateClient } from "./operations.js";
import { keyHistory, listKeys } from "./reads.js";

/**
 * The inspector (grant-composer's `composeInspectorGrant`), proven on a server of its own: it reads every
 * bucket of the catalogue — get, keys, history, and its stream's info — and writes none, may not administer a
 * bucket, and leaves no consumer behind. Its own server keeps the main proof's fixture and users untouched.
 */
export async function inspectorChecks(recorder: Recorder, timeoutMs: number): Promise<void> {
  const catalogue = parseCatalogue([
    { name: "inspected-a", state: { notes: {} } },
    { name: "inspected-b", state: { config: {} } },
  ]);
  const passwords = { controller: "ctl", owner: "own", inspector: "insp" };
  const controllerGrant = composeControllerGrant();
  const ownerGrant = composeMachineGrant({ machine: "owner", assignments: ["inspected-a", "inspected-b"], catalogue });
  const inspectorGrant = composeInspectorGrant({ catalogue });
  await using server = await startServer({
    name: "grant-proof-inspector",
    config: renderStateAccountConfig({
      users: [
        { grant: controllerGrant, password: passwords.controller },
        { grant: ownerGrant, password: passwords.owner },
        { grant: inspectorGrant, password: passwords.inspector },
      ],
    }),
  });
  const login = (grant: typeof ownerGrant, password: string) =>
    connectClient(server.url, { user: grant.user, password, inboxPrefix: grant.inboxPrefix }, timeoutMs);
  const clients: StateClient[] = [];
  try {
    const controller = await login(controllerGrant, passwords.controller);
    clients.push(controller);
    const owner = await login(ownerGrant, passwords.owner);
    clients.push(owner);
    const inspector = await login(inspectorGrant, passwords.inspector);
    clients.push(inspector);
    // The buckets are raised as the controller raises them, and read and written by the runtime's own client.
    await raise({ connection: controller.nc, catalogue, replicas: 1, timeoutMs: controller.timeoutMs });
    for (const declared of declaredBuckets(catalogue)) {
      const bucket = declared.bucket;
      const written = await owner.bucket(bucket).put("k", "v");
      const row = (operation: string, expected: "allowed" | "refused") => ({
        role: "inspector",
        operation,
        bucket,
        expected,
      });
      await check(recorder, row("get", "allowed"), async () => {
        const entry = await inspector.bucket(bucket).read("k");
        expect(entry?.revision === written, `get k read ${JSON.stringify(entry)}, the owner wrote revision ${written}`);
        return `revision ${entry?.revision}`;
      });
      await check(recorder, row("strong get (from the stream's leader)", "allowed"), async () => {
        const entry = await inspector.bucket(bucket).readFromLeader("k");
        expect(entry?.revision === written, `strong get k read ${JSON.stringify(entry)}, the owner wrote ${written}`);
        return `revision ${entry?.revision}`;
      });
      await check(recorder, row("keys", "allowed"), async () => {
        const keys = await listKeys(inspector, bucket);
        expect(keys.join() === "k", `keys read ${keys.join()}`);
        return "k";
      });
      await check(recorder, row("history", "allowed"), async () => {
        const entries = await keyHistory(inspector, bucket, "k");
        expect(entries.length === 1, `history read ${entries.length} entries`);
        return "1 entry";
      });
      await check(recorder, row("no consumer outlives its read", "allowed"), async () => {
        const info = await controller.jsm.streams.info(streamName(bucket));
        expect(info.state.consumer_count === 0, `${info.state.consumer_count} consumers left on the bucket`);
        return "0 consumers after keys and history";
      });
      await check(
        recorder,
        row("put", "refused"),
        async () => `revision ${await inspector.bucket(bucket).put("k", "x")}`,
      );
      await streamAdminChecks(recorder, "inspector", inspector, bucket, true);
    }
  } finally {
    for (const client of clients) await client.nc.close().catch(() => undefined);
  }
}
