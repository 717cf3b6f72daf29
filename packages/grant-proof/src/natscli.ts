import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CONSUMER_INACTIVE_LIMIT_NANOSECONDS, raise } from "@mesh/controller-kv";
import {
  bucketInspectorSubjects,
  composeControllerGrant,
  composeInspectorGrant,
  composeMachineGrant,
  type Grant,
  INSPECTOR_ACCOUNT_SUBJECTS,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { startServer } from "@mesh/local-nats";
import { bucketName, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { dataChange, snapshotStream } from "./buckets.js";
import { check, expect, type Recorder } from "./check.js";
import { lastingConsumerChecks } from "./lasting.js";
import { connectClient, type StateClient, subjectMatches } from "./operations.js";

/**
 * The inspector under the ecosystem's own client: natscli v0.5.0 (never v0.5.1), found where the tests find
 * it — `$MESH_TOOLS_DIR` (default ~/.cache/mesh-state-tools)/natscli-v0.5.0/nats, built by
 * scripts/nats-servers.sh. Its six reading commands work on every bucket, its writes are refused, and each
 * subject the inspector holds for natscli is necessary: with it removed, a command fails on exactly it.
 */
export const NATSCLI_VERSION = "v0.5.0";

/** Where the tools cache keeps natscli v0.5.0 (it may not be there). */
export function natscliPath(env: NodeJS.ProcessEnv = process.env): string {
  const tools = env.MESH_TOOLS_DIR || join(env.HOME || homedir(), ".cache", "mesh-state-tools");
  return join(tools, `natscli-${NATSCLI_VERSION}`, "nats");
}

const ROLE = "inspector (natscli)";
const NOTES = bucketName("natscli-notes", "notes");
/** 8 MiB and more: a push consumer's flow control starts well before (MEASURED: a stall at ~500 of 2,052). */
const BIG = bucketName("natscli-big", "big");
const BIG_VALUES = 2100;
const BIG_VALUE = "a".repeat(4096);
const COMMAND_TIMEOUT_MS = 30_000;
const WATCH_DEADLINE_MS = 20_000;
const REFUSAL_TIMEOUT = "1500ms";

interface Run {
  code: number;
  output: string;
}

interface Login {
  url: string;
  user: string;
  password: string;
  inboxPrefix: string;
  /** natscli's `--timeout`: how long it waits for an answer, so what a refused request costs. */
  timeout: string;
}

/** One natscli command as `login`, ignoring any context the machine has selected. */
function nats(binary: string, login: Login, args: readonly string[]): Promise<Run> {
  const flags = ["--no-context", "--server", login.url, "--user", login.user, "--password", login.password];
  return new Promise((resolve) => {
    execFile(
      binary,
      [...flags, "--inbox-prefix", login.inboxPrefix, "--timeout", login.timeout, ...args],
      { encoding: "utf8", timeout: COMMAND_TIMEOUT_MS },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** The subjects natscli reports the server refused, from its output. */
function refusedSubjects(output: string): string[] {
  return [...output.matchAll(/Permissions Violation for (?:Publish|Subscription) to "([^"]+)"/gi)].map(
    (match) => match[1]!,
  );
}

/** natscli failed because the server refused it a subject (its output names which). */
class NatscliRefused extends Error {
  readonly subjects: string[];
  constructor(command: string, subjects: string[]) {
    super(`${command}: the server refused ${subjects.join(", ")}`);
    this.name = "NatscliRefused";
    this.subjects = subjects;
  }
}

/** Runs `args`; resolves with the output when it exits 0, throws `NatscliRefused` or an error otherwise. */
async function succeed(binary: string, login: Login, args: readonly string[]): Promise<string> {
  const run = await nats(binary, login, args);
  if (run.code === 0) return run.output;
  if (refusedSubjects(run.output).length > 0)
    throw new NatscliRefused(`nats ${args.join(" ")}`, refusedSubjects(run.output));
  throw new Error(`nats ${args.join(" ")} exit ${run.code}: ${run.output.trim().slice(0, 400)}`);
}

/**
 * `nats kv watch <bucket>` until it printed every current value and then `live` (written by `write` once the
 * current values are in); stopped at once when it reports a refused subject, or at the deadline.
 */
function watch(
  binary: string,
  login: Login,
  bucket: string,
  current: number,
  write: () => Promise<unknown>,
): Promise<string> {
  const flags = ["--no-context", "--server", login.url, "--user", login.user, "--password", login.password];
  const child = spawn(binary, [...flags, "--inbox-prefix", login.inboxPrefix, "kv", "watch", bucket], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The output of an 8 MiB bucket is counted line by line as it comes, never kept whole.
  let partial = "";
  let errors = "";
  let lines = 0;
  let live = false;
  let wrote = false;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      child.kill("SIGKILL");
      if (error) reject(error);
      else resolve(`${lines - 1} current values, then the live one`);
    };
    const deadline = setTimeout(
      () =>
        finish(new Error(`kv watch printed ${lines} of ${current} values and the live one in ${WATCH_DEADLINE_MS} ms`)),
      WATCH_DEADLINE_MS,
    );
    const seen = (text: string) => {
      const refused = refusedSubjects(errors);
      if (refused.length > 0) return finish(new NatscliRefused(`nats kv watch ${bucket}`, refused));
      const all = (partial + text).split("\n");
      partial = all.pop()!;
      for (const line of all) {
        if (!line.includes(` ${bucket} > `)) continue;
        lines += 1;
        if (line.includes(` ${bucket} > live.natscli`)) live = true;
      }
      if (lines >= current && !wrote) {
        wrote = true;
        write().catch((error: unknown) => finish(error instanceof Error ? error : new Error(String(error))));
      }
      if (live) finish();
    };
    child.stdout.on("data", (chunk: Buffer) => seen(String(chunk)));
    child.stderr.on("data", (chunk: Buffer) => {
      errors += chunk;
      seen("");
    });
    child.once("exit", (code) => {
      if (!live) finish(new Error(`kv watch exited ${code} after ${lines} values: ${errors.slice(-300)}`));
    });
  });
}

interface Seeded {
  bucket: string;
  key: string;
  /** The key's stored values, oldest first, as natscli prints them (the runtime's JSON). */
  values: string[];
  keys: number;
}

/** The six commands on `bucket`, in the order an operator runs them; one entry per command. */
function commands(
  binary: string,
  login: Login,
  seeded: Seeded,
  write: () => Promise<unknown>,
): [string, () => Promise<string>][] {
  const { bucket, key, values } = seeded;
  return [
    [
      "nats kv ls",
      async () => {
        const output = await succeed(binary, login, ["kv", "ls"]);
        expect(output.includes(` ${bucket} `), `kv ls does not list ${bucket}: ${output}`);
        return `lists ${bucket}`;
      },
    ],
    [
      "nats kv info",
      async () => {
        const output = await succeed(binary, login, ["kv", "info", bucket]);
        expect(output.includes(`Bucket Name: ${bucket}`), `kv info: ${output.slice(0, 300)}`);
        return "the bucket's configuration";
      },
    ],
    [
      "nats kv get",
      async () => {
        const output = (await succeed(binary, login, ["kv", "get", bucket, key, "--raw"])).replace(/\n$/, "");
        expect(output === values.at(-1), `kv get printed ${output.slice(0, 80)}, not ${values.at(-1)!.slice(0, 80)}`);
        return `${key}: the last value`;
      },
    ],
    [
      "nats kv history",
      async () => {
        const output = await succeed(binary, login, ["kv", "history", bucket, key]);
        const rows = output.split("\n").filter((line) => line.split("│")[1]?.trim() === key).length;
        expect(rows === values.length, `kv history printed ${rows} revisions of ${key}, not ${values.length}`);
        return `${rows} revisions of ${key}`;
      },
    ],
    ["nats kv watch", () => watch(binary, login, bucket, seeded.keys, write)],
    [
      "nats stream info",
      async () => {
        const output = await succeed(binary, login, ["stream", "info", streamName(bucket)]);
        expect(output.includes(`Information for Stream ${streamName(bucket)}`), `stream info: ${output.slice(0, 300)}`);
        return "the stream's configuration and state";
      },
    ],
  ];
}

/** The subjects shown necessary by natscli: the account-wide ones, and those of the big bucket natscli uses. */
function natscliSubjects(): string[] {
  const stream = streamName(BIG);
  // The exact create, MSG.NEXT and the leader's MSG.GET (strong reads) are the runtime's (mesh-state's); the
  // reader's minimality shows them necessary.
  const runtimeOnly = [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
  ];
  return [...INSPECTOR_ACCOUNT_SUBJECTS, ...bucketInspectorSubjects(BIG).filter((s) => !runtimeOnly.includes(s))];
}

/**
 * The natscli part of the proof, on a server of its own: one failing row saying how to get natscli when it is
 * missing (never a silent skip), else the six commands on a small and an 8 MiB bucket, the three writes
 * refused with nothing stored and no consumer added, no lasting consumer, and every natscli subject necessary.
 */
export async function natscliChecks(
  recorder: Recorder,
  options: { timeoutMs: number; natscli?: string },
): Promise<void> {
  const binary = options.natscli ?? natscliPath();
  const installed = await check(
    recorder,
    { role: ROLE, operation: `natscli ${NATSCLI_VERSION} is installed`, bucket: "-", expected: "allowed" },
    async () => {
      expect(
        existsSync(binary),
        `natscli ${NATSCLI_VERSION} is missing at ${binary}: build it with bash scripts/nats-servers.sh (go install github.com/nats-io/natscli/nats@${NATSCLI_VERSION}, never v0.5.1), or set MESH_TOOLS_DIR to the tools cache that has it`,
      );
      const version = await new Promise<string>((resolve) =>
        execFile(binary, ["--version"], { encoding: "utf8" }, (_error, stdout, stderr) =>
          resolve(`${stdout}${stderr}`.trim()),
        ),
      );
      expect(version === NATSCLI_VERSION, `${binary} is natscli ${version}, not ${NATSCLI_VERSION}`);
      return `${binary}: ${version}`;
    },
  );
  if (!installed.pass) return;

  const catalogue = parseCatalogue([
    { name: "natscli-notes", state: { notes: { history: 5 } } },
    { name: "natscli-big", state: { big: { history: 1 } } },
  ]);
  const password = (user: string) => `${user}-natscli-proof`;
  const controllerGrant = composeControllerGrant({ catalogue });
  const ownerGrant = composeMachineGrant({
    machine: "natscli-owner",
    assignments: ["natscli-notes", "natscli-big"],
    catalogue,
  });
  const inspectorGrant = composeInspectorGrant({ catalogue });
  const variants = natscliSubjects().map((removed, index) => {
    const grant = composeInspectorGrant({ catalogue, user: `inspector-minus-${index}` });
    grant.permissions.publish.allow = grant.permissions.publish.allow.filter((subject) => subject !== removed);
    return { removed, grant };
  });
  // Not a composed grant: the proof's instrument, to read the consumers' configs (no composed user may).
  const observerGrant: Grant = {
    user: "natscli-observer",
    inboxPrefix: "_INBOX_natscli_observer",
    permissions: { publish: { allow: [">"] }, subscribe: { allow: ["_INBOX_natscli_observer.>"] } },
  };
  const grants: Grant[] = [controllerGrant, ownerGrant, inspectorGrant, observerGrant, ...variants.map((v) => v.grant)];
  await using server = await startServer({
    name: "grant-proof-natscli",
    config: renderStateAccountConfig({ users: grants.map((grant) => ({ grant, password: password(grant.user) })) }),
  });
  // A refused request is answered by no one: natscli waits out its timeout, so where a refusal is expected it waits less.
  const login = (grant: Grant, timeout = "3s"): Login => ({
    url: server.url,
    user: grant.user,
    password: password(grant.user),
    inboxPrefix: grant.inboxPrefix,
    timeout,
  });
  const clients: StateClient[] = [];
  const client = async (grant: Grant) => {
    const opened = await connectClient(server.url, login(grant), options.timeoutMs);
    clients.push(opened);
    return opened;
  };
  try {
    const controller = await client(controllerGrant);
    const owner = await client(ownerGrant);
    await raise({ connection: controller.nc, catalogue, replicas: 1, timeoutMs: controller.timeoutMs });
    const notes: Seeded = { bucket: NOTES, key: "note.a", values: [], keys: 2 };
    for (const value of ["first", "second", "third"]) {
      await owner.bucket(NOTES).put(notes.key, value);
      notes.values.push(JSON.stringify(value));
    }
    await owner.bucket(NOTES).put("note.b", "other");
    const big: Seeded = { bucket: BIG, key: "seed.0", values: [JSON.stringify(BIG_VALUE)], keys: BIG_VALUES };
    for (let start = 0; start < BIG_VALUES; start += 64) {
      const batch = [];
      for (let index = start; index < Math.min(BIG_VALUES, start + 64); index += 1)
        batch.push(owner.bucket(BIG).put(`seed.${index}`, BIG_VALUE));
      await Promise.all(batch);
    }
    const writeLive = (bucket: string) => () => owner.bucket(bucket).put("live.natscli", "live");

    // Every command works on every bucket. Each watch leaves its consumer (natscli does not delete it on a kill).
    for (const seeded of [notes, big]) {
      for (const [operation, run] of commands(binary, login(inspectorGrant), seeded, writeLive(seeded.bucket))) {
        await check(recorder, { role: ROLE, operation, bucket: seeded.bucket, expected: "allowed" }, run);
      }
    }
    await check(
      recorder,
      { role: ROLE, operation: "every consumer it left is ephemeral and bounded", bucket: NOTES, expected: "allowed" },
      async () => boundedConsumers(await client(observerGrant), [NOTES, BIG]),
    );

    const refused = (operation: string, args: string[]) =>
      check(
        recorder,
        {
          role: ROLE,
          operation,
          bucket: NOTES,
          expected: "refused",
          isRefusal: (error) => error instanceof NatscliRefused,
        },
        async () => {
          await succeed(binary, login(inspectorGrant, REFUSAL_TIMEOUT), args);
          return "it exited 0";
        },
      );
    const before = await snapshotStream(controller, streamName(NOTES));
    await refused("nats kv put", ["kv", "put", NOTES, notes.key, "from-the-inspector"]);
    await refused("nats kv del", ["kv", "del", NOTES, notes.key, "--force"]);
    await refused("nats consumer add (durable)", [
      "consumer",
      "add",
      streamName(NOTES),
      "kept",
      "--pull",
      "--defaults",
    ]);
    await check(
      recorder,
      {
        role: ROLE,
        operation: "nothing stored, no consumer added by the refused writes",
        bucket: NOTES,
        expected: "allowed",
      },
      async () => {
        const after = await snapshotStream(controller, streamName(NOTES));
        const changed = dataChange(before, after);
        expect(changed === undefined, `the bucket changed: ${changed}`);
        expect(after.consumers === before.consumers, `consumers ${before.consumers} -> ${after.consumers}`);
        return `messages ${after.messages}, last seq ${after.lastSeq}, consumers ${after.consumers}: unchanged`;
      },
    );
    // The create subject natscli needs takes a durable_name too (its name in the subject): bounded, never lasting.
    await lastingConsumerChecks(recorder, await client(inspectorGrant), controller, NOTES, {
      role: ROLE,
      factPrefix: "inspector.",
    });

    for (const variant of variants) {
      await check(
        recorder,
        {
          role: `inspector minus ${variant.removed}`,
          operation: "a natscli command is refused on that subject",
          bucket: BIG,
          expected: "refused",
          isRefusal: (error) =>
            error instanceof Error &&
            error.cause instanceof NatscliRefused &&
            error.cause.subjects.some((subject) => subjectMatches(variant.removed, subject)),
        },
        async () => {
          for (const [operation, run] of commands(binary, login(variant.grant, REFUSAL_TIMEOUT), big, writeLive(BIG))) {
            try {
              await run();
            } catch (error) {
              throw new Error(`${operation} failed`, { cause: error });
            }
          }
          return "all six commands succeeded";
        },
      );
    }
  } finally {
    for (const opened of clients) await opened.nc.close().catch(() => undefined);
  }
}

/**
 * The consumers left on `buckets` (natscli's watches, killed): none durable, each with an inactivity bound no
 * longer than the bucket's consumer limit, so each goes by itself. They are then deleted, as compaction would.
 */
async function boundedConsumers(observer: StateClient, buckets: readonly string[]): Promise<string> {
  const seen: string[] = [];
  for (const bucket of buckets) {
    const stream = streamName(bucket);
    for await (const info of observer.jsm.consumers.list(stream)) {
      const threshold = info.config.inactive_threshold ?? 0;
      expect(!info.config.durable_name, `${info.name} on ${stream} is durable`);
      expect(
        threshold > 0 && threshold <= CONSUMER_INACTIVE_LIMIT_NANOSECONDS,
        `${info.name} on ${stream} has inactive_threshold ${threshold / 1e9} s`,
      );
      seen.push(`${info.name} ${threshold / 1e9} s`);
      await observer.jsm.consumers.delete(stream, info.name);
    }
  }
  expect(seen.length > 0, "no consumer found: the watches' consumers were not where natscli made them");
  return `${seen.length} left by the killed watches, each gone after its idle limit: ${seen.join(", ")}`;
}
