import { streamName } from "@mesh/manifest-schema";
import { WrongRevision } from "@mesh/runtime-state/internal";
import { dataChange, snapshotStream } from "./buckets.js";
import { check, expect, type Recorder, record } from "./check.js";
import type { StateClient } from "./operations.js";
import { keyHistory, listKeys, stopWatch, watchWithLiveUpdate } from "./reads.js";

/** The clients of the role matrix. */
export interface MatrixClients {
  controller: StateClient;
  owner: StateClient;
  reader: StateClient;
  stranger: StateClient;
}

/** What the bucket held before the matrix: the seeded keys and the revisions of `seed.0`. */
export interface SeededBucket {
  bucket: string;
  keys: number;
  /** Revisions of `seed.0`, oldest first (as many as the bucket's history keeps). */
  seedRevisions: number[];
}

const SEED_KEY = "seed.0";

/** Resolves with what `write` did, or `"refused as a conflict"` when it threw runtime-state's `WrongRevision`. */
async function conflictOf(write: () => Promise<unknown>): Promise<string> {
  return write().then(
    (revision) => `written at ${revision}`,
    (error: unknown) => {
      if (error instanceof WrongRevision) return "refused as a conflict";
      throw error;
    },
  );
}

/** Owner: every operation succeeds and does what it says, through runtime-state's BucketClient. */
export async function ownerChecks(recorder: Recorder, clients: MatrixClients, seeded: SeededBucket): Promise<void> {
  const { owner } = clients;
  const { bucket } = seeded;
  const client = owner.bucket(bucket);
  const at = (operation: string) => ({ role: "owner", operation, bucket, expected: "allowed" as const });
  await check(recorder, at("get"), async () => {
    const entry = await client.read(SEED_KEY);
    expect(entry?.revision === seeded.seedRevisions.at(-1), `get ${SEED_KEY} gave revision ${entry?.revision}`);
    return `${SEED_KEY} at revision ${entry?.revision}`;
  });
  let revision = 0;
  await check(recorder, at("put"), async () => {
    revision = await client.put("owner.k", "one");
    return `revision ${revision}`;
  });
  await check(recorder, at("create (only if absent)"), async () => {
    const created = await client.put("owner.new", "fresh", 0);
    const again = await conflictOf(() => client.put("owner.new", "again", 0));
    expect(again === "refused as a conflict", `a second create of owner.new: ${again}`);
    return `created at ${created}; a second create was refused as a conflict`;
  });
  await check(recorder, at("update (CAS)"), async () => {
    const updated = await client.put("owner.k", "two", revision);
    const stale = await conflictOf(() => client.put("owner.k", "three", revision));
    expect(stale === "refused as a conflict", `an update with a stale revision: ${stale}`);
    return `${revision} -> ${updated}; a stale revision was refused`;
  });
  await check(recorder, at("delete"), async () => {
    await client.delete("owner.k");
    const entry = await client.read("owner.k");
    expect(entry?.deleted === true, "owner.k still readable after delete");
    const history = await keyHistory(owner, bucket, "owner.k");
    expect(history.at(-1)?.operation === "delete", `history of owner.k ends in ${history.at(-1)?.operation}`);
    return "owner.k reads as deleted; its history ends in a delete";
  });
  await readChecks(recorder, "owner", clients.owner, clients, seeded, seeded.keys);
}

/**
 * Reads every role with read access makes: get, keys, watch with a live update (made by the owner),
 * stopping the watch by deleting its consumer, history. `extraKeys` counts keys the role's own writes added.
 */
async function readChecks(
  recorder: Recorder,
  role: string,
  client: StateClient,
  clients: MatrixClients,
  seeded: SeededBucket,
  minimumKeys: number,
): Promise<void> {
  const { bucket } = seeded;
  const at = (operation: string) => ({ role, operation, bucket, expected: "allowed" as const });
  if (role !== "owner") {
    await check(recorder, at("get"), async () => {
      const entry = await client.bucket(bucket).read(SEED_KEY);
      expect(entry?.revision === seeded.seedRevisions.at(-1), `get ${SEED_KEY} gave revision ${entry?.revision}`);
      return `${SEED_KEY} at revision ${entry?.revision}`;
    });
  }
  await check(recorder, at("strong get (from the stream's leader)"), async () => {
    const entry = await client.bucket(bucket).readFromLeader(SEED_KEY);
    expect(entry?.revision === seeded.seedRevisions.at(-1), `get ${SEED_KEY} gave revision ${entry?.revision}`);
    return `${SEED_KEY} at revision ${entry?.revision}`;
  });
  await check(recorder, at("keys"), async () => {
    const keys = await listKeys(client, bucket);
    expect(
      keys.length >= minimumKeys && keys.includes(SEED_KEY),
      `keys gave ${keys.length}, expected at least ${minimumKeys}`,
    );
    return `${keys.length} keys`;
  });
  let watch: Awaited<ReturnType<typeof watchWithLiveUpdate>> | undefined;
  await check(recorder, at("watch with live updates"), async () => {
    watch = await watchWithLiveUpdate(client, bucket, () => clients.owner.bucket(bucket).put(`live.${role}`, "now"));
    return `${watch.initial} current values, then live revision ${watch.liveRevision}`;
  });
  await check(recorder, at("stop watch, delete its consumer"), async () => {
    expect(watch !== undefined, "no watch to stop");
    await stopWatch(client, bucket, watch!.reader);
    return `${watch!.reader.name} deleted and gone`;
  });
  await check(recorder, at("history"), async () => {
    const history = await keyHistory(client, bucket, SEED_KEY);
    const revisions = history.map((entry) => entry.revision);
    expect(
      revisions.join() === seeded.seedRevisions.join(),
      `history ${revisions.join()} != ${seeded.seedRevisions.join()}`,
    );
    return `${history.length} entries of ${SEED_KEY}`;
  });
}

/** The writes a role without write access tries; every one must be refused by the server. */
async function refusedWrites(
  recorder: Recorder,
  role: string,
  client: StateClient,
  seeded: SeededBucket,
): Promise<void> {
  const { bucket } = seeded;
  const at = (operation: string) => ({ role, operation, bucket, expected: "refused" as const });
  const last = seeded.seedRevisions.at(-1)!;
  const target = client.bucket(bucket);
  await check(recorder, at("put"), async () => `revision ${await target.put(`${role}.k`, "x")}`);
  await check(
    recorder,
    at("create (only if absent)"),
    async () => `revision ${await target.put(`${role}.new`, "x", 0)}`,
  );
  await check(recorder, at("update (CAS)"), async () => `revision ${await target.put(SEED_KEY, "x", last)}`);
  await check(recorder, at("delete"), async () => {
    await target.delete(SEED_KEY);
    return "deleted";
  });
}

/** Compares the stream's data, as the controller sees it, around `body`: a refused write changes nothing. */
async function unchangedAround(
  recorder: Recorder,
  role: string,
  clients: MatrixClients,
  bucket: string,
  body: () => Promise<void>,
) {
  const before = await snapshotStream(clients.controller, streamName(bucket));
  await body();
  const after = await snapshotStream(clients.controller, streamName(bucket));
  const change = dataChange(before, after);
  record(
    recorder,
    { role, operation: "any write landed (stream state, as controller)", bucket, expected: "refused" },
    change === undefined ? "refused" : "allowed",
    change ?? `unchanged: ${after.messages} messages, last sequence ${after.lastSeq}`,
  );
}

/** Reader: every write refused and nothing changed; every read succeeds. */
export async function readerChecks(recorder: Recorder, clients: MatrixClients, seeded: SeededBucket): Promise<void> {
  await unchangedAround(recorder, "reader", clients, seeded.bucket, () =>
    refusedWrites(recorder, "reader", clients.reader, seeded),
  );
  await readChecks(recorder, "reader", clients.reader, clients, seeded, seeded.keys);
}

/** Stranger: everything refused, nothing changed — including deleting a consumer someone else made. */
export async function strangerChecks(recorder: Recorder, clients: MatrixClients, seeded: SeededBucket): Promise<void> {
  const { stranger, owner } = clients;
  const { bucket } = seeded;
  const at = (operation: string) => ({ role: "stranger", operation, bucket, expected: "refused" as const });
  await unchangedAround(recorder, "stranger", clients, bucket, async () => {
    await refusedWrites(recorder, "stranger", stranger, seeded);
    await check(recorder, at("get"), async () => `got ${JSON.stringify(await stranger.bucket(bucket).read(SEED_KEY))}`);
    await check(
      recorder,
      at("strong get (from the stream's leader)"),
      async () => `got ${JSON.stringify(await stranger.bucket(bucket).readFromLeader(SEED_KEY))}`,
    );
    await check(recorder, at("keys"), async () => `${(await listKeys(stranger, bucket)).length} keys`);
    await check(recorder, at("watch with live updates"), async () => {
      const watch = await watchWithLiveUpdate(stranger, bucket, () => Promise.resolve(-1));
      return `${watch.initial} current values`;
    });
    await check(
      recorder,
      at("history"),
      async () => `${(await keyHistory(stranger, bucket, SEED_KEY)).length} entries`,
    );
  });
  // The owner's watch, and the stranger deleting its consumer (a raw request: the runtime deletes only its own).
  const victim = owner.reader(bucket, ">", { policy: "last_per_subject" });
  await victim.open();
  try {
    await check(recorder, at("stop watch, delete its consumer (the owner's)"), async () => {
      await stranger.jsm.consumers.delete(streamName(bucket), victim.name);
      return `${victim.name} deleted`;
    });
  } finally {
    await stopWatch(owner, bucket, victim);
  }
}
