import { desiredStreamConfig } from "@mesh/controller-kv";
import { bucketName, declaredBuckets, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { jetstreamManager } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { startMesh, unrestrictedGrant } from "./index.js";

const catalogue = parseCatalogue([
  { name: "notes-app", state: { notes: { history: 5, ttl: "30s" } } },
  { name: "dash", reads: ["notes-app.notes"] },
]);

it("raises with controller-kv's stream config, and each machine connects with exactly its grant", async () => {
  await using mesh = await startMesh({ catalogue, machines: { m1: ["notes-app"], m2: ["dash"] }, admin: true });
  const jsm = await jetstreamManager(await mesh.connect("admin"));
  const [declared] = declaredBuckets(catalogue);
  const { config } = await jsm.streams.info(declared!.stream);
  expect(config).toMatchObject(desiredStreamConfig(declared!, 1));

  const reader = await mesh.connect("m2");
  expect(reader.info?.client_id).toBeDefined();
  expect(mesh.credentials("m2").inboxPrefix).toMatch(/^_INBOX_/);
  // The reader may not write the bucket: its grant has no publish on the bucket's subjects.
  await expect(reader.request("$KV.mod_notes-app_notes.k", "1", { timeout: 2_000 })).rejects.toThrow();
  expect(mesh.membership("dash").buckets).toEqual({
    "notes-app.notes": { bucket: "mod_notes-app_notes", access: "read" },
  });
});

it("has no user it was not given", async () => {
  await using mesh = await startMesh({ catalogue, machines: { m1: ["notes-app"] } });
  expect(() => mesh.credentials("admin")).toThrow(/no user admin/);
});

it("adds users to the state account and accounts beside it, and passes the raise its options", async () => {
  const notes = bucketName("notes-app", "notes");
  await using mesh = await startMesh({
    catalogue,
    machines: { m1: ["notes-app"] },
    users: { raw: unrestrictedGrant("raw") },
    accounts: { EMPTY: { observer: unrestrictedGrant("observer") } },
    raise: { maxConsumers: { [notes]: 16 } },
  });
  // raw is in the state account: it sees the raised bucket, with the ceiling the raise was given.
  const raw = await jetstreamManager(await mesh.connect("raw"));
  expect((await raw.streams.info(streamName(notes))).config.max_consumers).toBe(16);
  // observer is in an account of its own, where nothing was raised.
  const observer = await jetstreamManager(await mesh.connect("observer"));
  expect((await observer.getAccountInfo()).streams).toBe(0);
  expect(mesh.credentials("observer").inboxPrefix).toBe("_INBOX_observer");
});

it("refuses a user named twice before it starts a server", async () => {
  await expect(
    startMesh({ catalogue, machines: { m1: ["notes-app"] }, accounts: { OTHER: { m1: unrestrictedGrant("x") } } }),
  ).rejects.toThrow(/user m1 is named twice/);
});
