import { desiredStreamConfig, raise } from "@mesh/controller-kv";
import { startServer } from "@mesh/local-nats";
import { type Catalogue, declaredBuckets, MESH_CAPS, streamName } from "@mesh/manifest-schema";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import { capConfigChecks, consumerCapChecks, maxConsumersUpdateFact, streamAdminChecks } from "./bounds.js";
import { snapshotStream } from "./buckets.js";
import { check, expect, fact, type Recorder } from "./check.js";
import { compactionChecks } from "./compaction.js";
import { flowControlFact, lingeringConsumerFact, ttlExpiryFact } from "./consumer-facts.js";
import { GrantProofError } from "./errors.js";
import { eavesdropChecks, escapeChecks } from "./escape.js";
import { FIXTURE, type ProofUser, proofAccountsConfig, proofCatalogue, proofUsers } from "./fixture.js";
import { inspectorChecks } from "./inspector.js";
import { lastingConsumerChecks } from "./lasting.js";
import { type MatrixClients, ownerChecks, readerChecks, type SeededBucket, strangerChecks } from "./matrix.js";
import { minimalityChecks } from "./minimality.js";
import { natscliChecks } from "./natscli.js";
import { connectClient, type StateClient } from "./operations.js";
import type { GrantProofResult, RunGrantProofOptions } from "./types.js";

const EIGHT_MIB = 8 * 1024 * 1024;
const BIG_VALUE_BYTES = 4096;

/**
 * Starts a nats-server (through the harness: whatever `nats-server` is installed) whose state account is
 * rendered from composed grants, creates the buckets as the controller does, and checks every operation
 * of every role, the eavesdropping and escape paths, the bounds, and that every granted subject is
 * necessary. A failing check is a row with `pass: false`; only a proof that cannot start throws.
 *
 * @example const { pass, rows } = await runGrantProof(); if (!pass) console.table(rows.filter((r) => !r.pass));
 */
export async function runGrantProof(options: RunGrantProofOptions = {}): Promise<GrantProofResult> {
  const started = performance.now();
  const logger = options.logger ?? pino({ enabled: false });
  const timeoutMs = options.operationTimeoutMs ?? 2000;
  const smallCap = options.smallBucketMaxConsumers ?? 8;
  const catalogue = proofCatalogue(options.catalogue ?? []);
  const users = proofUsers(
    catalogue,
    (options.catalogue ?? []).map((manifest) => manifest.name),
  );
  await using server = await startServer({ config: proofAccountsConfig(users), name: "grant-proof" });
  const login = (user: ProofUser) =>
    connectClient(
      server.url,
      { user: user.grant.user, password: user.password, inboxPrefix: user.grant.inboxPrefix },
      timeoutMs,
    );
  const opened: StateClient[] = [];
  const open = async (user: ProofUser) => {
    const client = await login(user);
    opened.push(client);
    return client;
  };
  const recorder: Recorder = { rows: [], facts: [], logger };
  try {
    const clients: MatrixClients = {
      controller: await open(users.controller),
      owner: await open(users.machines.owner),
      reader: await open(users.machines.reader),
      stranger: await open(users.machines.stranger),
    };
    const idle = await open(users.idle);
    const mesh = await connect({
      servers: server.url,
      user: users.mesh.user,
      pass: users.mesh.password,
      name: users.mesh.user,
    });
    const serverVersion = clients.controller.nc.info?.version ?? "unknown";
    logger.info({ serverVersion, url: server.url }, "grant proof server started");
    fact(recorder, "server.version", serverVersion, "the nats-server version, from its INFO");
    try {
      await createBuckets(recorder, clients.controller, catalogue, smallCap, serverVersion);
      for (const [index, user] of users.catalogue.entries()) {
        await check(
          recorder,
          {
            role: user.grant.user,
            operation: "composed grant loads and connects",
            bucket: options.catalogue![index]!.name,
            expected: "allowed",
          },
          async () => {
            const client = await open(user);
            await client.nc.flush();
            return `${user.grant.permissions.publish.allow.length} publish subjects, inbox ${user.grant.inboxPrefix}`;
          },
        );
      }
      const seeded = [await seedSmall(clients.owner), await seedBig(clients, options.bigBucketBytes ?? EIGHT_MIB)];
      await capConfigChecks(recorder, clients.controller, {
        [FIXTURE.small]: smallCap,
        [FIXTURE.big]: MESH_CAPS.maxConsumersPerBucket,
      });
      for (const bucket of seeded) {
        await ownerChecks(recorder, clients, bucket);
        await readerChecks(recorder, clients, bucket);
        await strangerChecks(recorder, clients, bucket);
      }
      const escapeClients = { ...clients, mesh };
      await eavesdropChecks(recorder, escapeClients, FIXTURE.small);
      await escapeChecks(recorder, escapeClients, FIXTURE.small);
      await consumerCapChecks(recorder, clients.reader, clients.controller, FIXTURE.small, smallCap);
      await lastingConsumerChecks(recorder, clients.reader, clients.controller, FIXTURE.small);
      await flowControlFact(recorder, clients.owner, clients.controller, FIXTURE.big);
      await lingeringConsumerFact(recorder, clients.owner, clients.controller, FIXTURE.big);
      for (const [role, client] of [
        ["owner", clients.owner],
        ["reader", clients.reader],
        ["stranger", clients.stranger],
        ["idle machine", idle],
      ] as const) {
        await streamAdminChecks(recorder, role, client, FIXTURE.small);
      }
      await check(
        recorder,
        { role: "idle machine", operation: "put", bucket: FIXTURE.small, expected: "refused" },
        async () => {
          return `revision ${await idle.bucket(FIXTURE.small).put("idle.k", "x")}`;
        },
      );
      await inspectorChecks(recorder, timeoutMs);
      await natscliChecks(recorder, { timeoutMs, ...(options.natscli ? { natscli: options.natscli } : {}) });
      await minimalityChecks(recorder, server.url, users.variants, clients.owner, timeoutMs);
      await compactionChecks(recorder, clients, catalogue, users.compactionVariants, server.url);
      await maxConsumersUpdateFact(recorder, clients.controller, FIXTURE.other);
      await ttlExpiryFact(recorder, clients.stranger, clients.controller, FIXTURE.other);
      const rows = recorder.rows;
      return {
        rows,
        facts: recorder.facts,
        pass: rows.every((row) => row.pass),
        serverVersion,
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      await mesh.close();
    }
  } catch (error) {
    if (error instanceof GrantProofError) throw error;
    throw new GrantProofError(
      "setup-failed",
      `the grant proof stopped: ${error instanceof Error ? error.message : String(error)}\n${server.logTail(20)}`,
      { cause: error },
    );
  } finally {
    for (const client of opened) await client.nc.close().catch(() => undefined);
  }
}

/**
 * The buckets, as the controller makes them: the small one first, from controller-kv's `desiredStreamConfig`
 * with the proof's small `max_consumers` (so the cap can be reached); then controller-kv's own `raise` over
 * the whole catalogue with the small one's ceiling, which creates every other bucket and changes nothing on
 * the small one.
 */
async function createBuckets(
  recorder: Recorder,
  controller: StateClient,
  catalogue: Catalogue,
  smallCap: number,
  serverVersion: string,
): Promise<void> {
  const declared = declaredBuckets(catalogue);
  const small = declared.find((bucket) => bucket.bucket === FIXTURE.small)!;
  await check(
    recorder,
    { role: "controller", operation: "create bucket", bucket: FIXTURE.small, expected: "allowed" },
    async () => {
      await controller.jsm.streams.add({
        ...desiredStreamConfig(small, 1, serverVersion),
        max_consumers: smallCap,
      } as never);
      return `desiredStreamConfig for nats-server ${serverVersion}, max_consumers ${smallCap}`;
    },
  );
  let created: string[] = [];
  await check(recorder, { role: "controller", operation: "raise", bucket: "-", expected: "allowed" }, async () => {
    // The small bucket's ceiling is the raise's own (maxConsumers), so a server that updates max_consumers
    // in place (2.12+) keeps it small too.
    const report = await raise({
      connection: controller.nc,
      catalogue,
      replicas: 1,
      timeoutMs: controller.timeoutMs,
      maxConsumers: { [FIXTURE.small]: smallCap },
    });
    created = report.created.map((bucket) => bucket.bucket);
    const conflicts = report.conflicts.map((conflict) => `${conflict.bucket} ${conflict.change.field}`);
    expect(conflicts.length === 0, `conflicts: ${conflicts.join(", ")}`);
    expect(created.length === declared.length - 1, `created ${created.length} of ${declared.length - 1} buckets`);
    const { config } = await controller.jsm.streams.info(streamName(FIXTURE.small));
    expect(config.max_consumers === smallCap, `${FIXTURE.small} has max_consumers ${config.max_consumers}`);
    return `created ${created.length} buckets; ${FIXTURE.small} kept max_consumers ${smallCap} (its own ceiling)`;
  });
  for (const bucket of created) {
    await check(recorder, { role: "controller", operation: "create bucket", bucket, expected: "allowed" }, async () => {
      const { config } = await controller.jsm.streams.info(streamName(bucket));
      const limits = (config as { consumer_limits?: { inactive_threshold?: number } }).consumer_limits;
      return `by the raise: history ${config.max_msgs_per_subject}, max_bytes ${config.max_bytes}, max_consumers ${config.max_consumers}, consumer idle limit ${(limits?.inactive_threshold ?? 0) / 1e9} s`;
    });
  }
}

/** The small bucket: `seed.0` written three times (history 5 keeps all), and nine other keys. */
async function seedSmall(owner: StateClient): Promise<SeededBucket> {
  const bucket = owner.bucket(FIXTURE.small);
  const revisions: number[] = [];
  for (const value of ["a", "b", "c"]) revisions.push(await bucket.put("seed.0", value));
  for (let index = 1; index < 10; index += 1) await bucket.put(`seed.${index}`, `value ${index}`);
  return { bucket: FIXTURE.small, keys: 10, seedRevisions: revisions };
}

/** The big bucket: 4 KiB values until it holds at least `bytes`, written 64 at a time. */
async function seedBig(clients: MatrixClients, bytes: number): Promise<SeededBucket> {
  const bucket = clients.owner.bucket(FIXTURE.big);
  const value = "a".repeat(BIG_VALUE_BYTES);
  const count = Math.ceil(bytes / BIG_VALUE_BYTES);
  for (let start = 0; start < count; start += 64) {
    const batch = [];
    for (let index = start; index < Math.min(count, start + 64); index += 1) {
      batch.push(bucket.put(`seed.${index}`, value));
    }
    await Promise.all(batch);
  }
  const seedZero = (await bucket.read("seed.0"))!.revision;
  const state = await snapshotStream(clients.controller, streamName(FIXTURE.big));
  expect(state.bytes >= bytes, `the big bucket holds ${state.bytes} bytes, less than ${bytes}`);
  return { bucket: FIXTURE.big, keys: count, seedRevisions: [seedZero] };
}
