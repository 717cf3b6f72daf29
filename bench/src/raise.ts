/**
 * Raising many declared buckets: controller-kv's `raise` (as the controller's state user) against the raw
 * client's `kvm.create()` for the same buckets, each in an empty account of its own, the first time and again.
 * An observer in each account subscribes to `$JS.API.>`, which sees every API request of the account; the
 * reply subject says whose request it was.
 */
import { raise } from "@mesh/controller-kv";
import { declaredBuckets, MESH_CAPS, parseCatalogue } from "@mesh/manifest-schema";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import type { Credentials, World } from "./world.js";

/**
 * JetStream reserves each file stream's max_bytes against the server's store limit when the stream is
 * created (err_code 10047 "insufficient storage resources" once they add up), so 1,000 buckets at the 64 MiB
 * default would need 64 GiB reserved. The bench's raised buckets declare 1 MiB each.
 */
const RAISED_BUCKET_BYTES = 1024 * 1024;

export interface RaiseRound {
  ms: number;
  requests: number;
  writes: number;
  lists: number;
}

export interface RaiseFigures {
  buckets: number;
  mesh: { first: RaiseRound; again: RaiseRound; againUnchanged: number };
  raw: { first: RaiseRound; again: RaiseRound };
}

async function observe(world: World, observer: Credentials, requester: Credentials) {
  const connection = await world.connect(observer);
  let subjects: string[] = [];
  connection.subscribe("$JS.API.>", {
    callback: (_error, message) => {
      if (message.reply?.startsWith(`${requester.inboxPrefix}.`)) subjects.push(message.subject);
    },
  });
  await connection.flush();
  return {
    connection,
    async take(): Promise<Pick<RaiseRound, "requests" | "writes" | "lists">> {
      // Copies were queued to the observer before the requester got its answers: one round trip brings them in.
      await connection.flush();
      const taken = subjects;
      subjects = [];
      return {
        requests: taken.length,
        writes: taken.filter((subject) => /^\$JS\.API\.STREAM\.(CREATE|UPDATE|DELETE|PURGE)\./.test(subject)).length,
        lists: taken.filter((subject) => subject === "$JS.API.STREAM.LIST" || subject === "$JS.API.STREAM.NAMES")
          .length,
      };
    },
  };
}

async function round(take: () => Promise<Omit<RaiseRound, "ms">>, run: () => Promise<unknown>): Promise<RaiseRound> {
  await take();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  return { ms, ...(await take()) };
}

export async function benchRaise(world: World, buckets: number): Promise<RaiseFigures> {
  const perModule = 10;
  const modules = Math.ceil(buckets / perModule);
  const catalogue = parseCatalogue(
    Array.from({ length: modules }, (_, module) => ({
      name: `raised-${module}`,
      state: Object.fromEntries(
        Array.from({ length: Math.min(perModule, buckets - module * perModule) }, (_, b) => [
          `bucket-${b}`,
          { maxBytes: RAISED_BUCKET_BYTES },
        ]),
      ),
    })),
  );
  const declared = declaredBuckets(catalogue);
  if (declared.length !== buckets) throw new Error(`catalogue declares ${declared.length} buckets, not ${buckets}`);

  const connections: NatsConnection[] = [];
  try {
    const { controller: meshUser, observer: meshObserverUser } = world.raiseAccount;
    const meshObserver = await observe(world, meshObserverUser, meshUser);
    const controller = await world.connect(meshUser);
    connections.push(meshObserver.connection, controller);
    let againUnchanged = 0;
    const first = await round(meshObserver.take, () => raise({ connection: controller, catalogue, replicas: 1 }));
    const again = await round(meshObserver.take, async () => {
      againUnchanged = (await raise({ connection: controller, catalogue, replicas: 1 })).unchanged.length;
    });

    const { controller: rawUser, observer: rawObserverUser } = world.rawRaiseAccount;
    const rawObserver = await observe(world, rawObserverUser, rawUser);
    const rawController = await world.connect(rawUser);
    connections.push(rawObserver.connection, rawController);
    const kvm = new Kvm(rawController);
    // The same buckets as the raise makes them, as far as kvm.create() takes options; one after another,
    // as the raise goes.
    const createAll = async () => {
      for (const bucket of declared) {
        await kvm.create(bucket.bucket, {
          history: bucket.history,
          max_bytes: bucket.maxBytes,
          maxValueSize: MESH_CAPS.maxValueSize + 512,
          replicas: 1,
          allow_direct: true,
        } as never);
      }
    };
    const rawFirst = await round(rawObserver.take, createAll);
    const rawAgain = await round(rawObserver.take, createAll);
    return { buckets, mesh: { first, again, againUnchanged }, raw: { first: rawFirst, again: rawAgain } };
  } finally {
    await Promise.all(connections.map((connection) => connection.close().catch(() => undefined)));
  }
}

/** The raise section's rows. */
export async function raiseSection(world: World, sizes: Sizes): Promise<void> {
  const figures = await benchRaise(world, sizes.raiseBuckets);
  const n = count(figures.buckets);
  const { mesh, raw } = figures;
  emit({ metric: `raise ${n} declared buckets, first time`, unit: "ms", mesh: mesh.first.ms, raw: raw.first.ms });
  emit({
    metric: `raise ${n} declared buckets, first time`,
    unit: "JetStream API requests",
    mesh: mesh.first.requests,
    raw: raw.first.requests,
  });
  emit({ metric: `raise ${n} declared buckets again`, unit: "ms", mesh: mesh.again.ms, raw: raw.again.ms });
  const againMet = mesh.again.writes === 0 && mesh.again.lists <= 5 && mesh.againUnchanged === figures.buckets;
  emit({
    metric: `raise ${n} declared buckets again`,
    unit: "JetStream API requests",
    mesh: mesh.again.requests,
    raw: raw.again.requests,
    target: { text: `0 writes, ≤ 5 lists (${mesh.again.writes} writes, ${mesh.again.lists} lists)`, met: againMet },
  });
  note(
    `raw: kvm.create() for each bucket, one after another; writes: raise ${mesh.first.writes} then ${mesh.again.writes}, kvm.create() ${raw.first.writes} then ${raw.again.writes}`,
  );
}
