import { JETSTREAM_CODES } from "@mesh/jetstream-calls";
import {
  bucketName,
  bucketOfStream,
  type DeclaredBucket,
  declaredBuckets,
  parseBucketName,
  parseReadReference,
} from "@mesh/manifest-schema";
import type { StreamInfo } from "@nats-io/jetstream";
import type { Logger } from "pino";
import { immutableAdvice, lossAdvice } from "./advice.js";
import {
  allowsMessageTtl,
  deleteMarkerChanges,
  desiredStreamConfig,
  diffBucket,
  duplicateWindowChange,
  type KvStreamConfig,
  serverFeatures,
  setField,
  settingsOf,
} from "./bucket-config.js";
import { checkConsumerSizing, consumerCeiling, updatableCeiling } from "./consumer-ceiling.js";
import { ControllerKvError } from "./errors.js";
import { fillAdvice, nearlyFullBuckets } from "./fill.js";
import {
  ApiRequestError,
  type JetStreamApi,
  jetStreamApi,
  jetStreamCannotAnswer,
  type StreamListing,
} from "./jsapi.js";
import { lossMayBeAccepted, measureLoss } from "./loss.js";
import { checkRaiseOptions, silentLogger } from "./options.js";
import { checkServerFloor } from "./server-floor.js";
import { forEachBounded, NotSentError, stopGate } from "./stop-gate.js";
import {
  describeServerShortfall,
  describeShortfall,
  metaGroupSeen,
  serverShortfall,
  storeShortfall,
} from "./store-check.js";
import type { BucketRef, Conflict, FieldChange, Loss, RaiseClock, RaiseOptions, RaiseReport } from "./types.js";

/**
 * Asserts a bucket for every `state` declaration of the catalogue: creates what is missing, updates in
 * place what differs and can change without losing a value, and reports the rest. Never deletes or purges.
 * A raise with nothing to change sends one STREAM.LIST request per 256 streams and nothing else. Creates
 * and updates run a few at a time; once JetStream shows it cannot answer, the rest are not sent.
 *
 * @example
 * const report = await raise({ connection, catalogue, replicas: 1, logger });
 * // report.created[0].bucket === "mod_operators-agent_mcp-servers"
 */
export async function raise(options: RaiseOptions): Promise<RaiseReport> {
  const checked = checkRaiseOptions(options);
  const { connection, replicas } = checked;
  checkConsumerSizing(options);
  const logger = options.logger ?? silentLogger();
  checkServerFloor(connection.info?.version, options.allowUnsupportedServer === true, logger);
  if (replicas > 1 && !connection.info?.cluster) {
    throw new ControllerKvError(
      "bad-options",
      `replicas ${replicas} needs a JetStream cluster, and the server ${connection.info?.server_name ?? ""} is not clustered: raise with replicas 1`,
    );
  }
  const monitorUrls = options.monitorUrls ?? [];
  if (monitorUrls.length > 0 && monitorUrls.length < replicas) {
    throw new ControllerKvError(
      "bad-options",
      `give the monitoring endpoint of every server: ${monitorUrls.length} given, and each bucket needs ${replicas} servers`,
    );
  }
  const once = () => raiseOnce(checked, options, logger, monitorUrls);
  return untilClusterReady(once, { ...checked, monitorUrls, options, logger });
}

/**
 * Tries the raise until it gets past a cluster that cannot take the buckets yet (no meta leader, fewer servers
 * in the meta group than replicas), for up to `waitMs`. A try that failed so wrote nothing but what the next
 * try finds in place; buckets created by an earlier try are still reported as created.
 */
async function untilClusterReady(
  once: () => Promise<RaiseReport>,
  context: {
    replicas: number;
    timeoutMs: number;
    monitorUrls: readonly string[];
    options: RaiseOptions;
    logger: Logger;
  },
): Promise<RaiseReport> {
  const waitMs = checkWait(context.options.waitMs);
  const clock = context.options.clock ?? DEFAULT_CLOCK;
  const start = clock.now();
  const createdBefore: RaiseReport["created"] = [];
  const withEarlier = (report: RaiseReport) => {
    const earlier = createdBefore.filter((bucket) => report.unchanged.includes(bucket.bucket));
    report.unchanged = report.unchanged.filter((name) => !earlier.some((bucket) => bucket.bucket === name));
    report.created.unshift(...earlier);
    return report;
  };
  for (;;) {
    try {
      return withEarlier(await once());
    } catch (error) {
      const reason = notReadyReason(error);
      if (reason === undefined) {
        if (error instanceof ControllerKvError && error.report) withEarlier(error.report);
        throw error;
      }
      if (error instanceof ControllerKvError && error.report) createdBefore.push(...error.report.created);
      const elapsedMs = Math.round(clock.now() - start);
      const meta = context.monitorUrls.length > 0 ? await metaGroupSeen(context.monitorUrls, 1_000) : undefined;
      const seen = meta
        ? `; meta group: ${meta.peers} server${meta.peers === 1 ? "" : "s"}, leader ${meta.leader ?? "none"}`
        : "";
      if (elapsedMs + WAIT_STEP_MS > waitMs) {
        const waited =
          waitMs > 0
            ? `waited ${Math.round(elapsedMs / 1000)} s for the cluster, it was still not ready`
            : "the cluster is not ready";
        const advice = waitMs > 0 ? "" : " (wait for it with waitMs / --wait SECONDS)";
        throw new ControllerKvError(
          error instanceof ControllerKvError ? error.code : "unavailable",
          `${waited}: ${reason}${seen}${advice}. ${error instanceof Error ? error.message : String(error)}`,
          {
            cause: error,
            ...(error instanceof ControllerKvError && error.report ? { report: withEarlier(error.report) } : {}),
          },
        );
      }
      const progress = { elapsedMs, waitMs, reason, ...(meta ?? {}) };
      context.logger.info(
        progress,
        `waiting for the cluster (${Math.round(elapsedMs / 1000)} of ${Math.round(waitMs / 1000)} s): ${reason}${seen}`,
      );
      context.options.onWait?.(progress);
      await clock.sleep(WAIT_STEP_MS);
    }
  }
}

/** Between two tries of a waiting raise. */
const WAIT_STEP_MS = 1_000;

const DEFAULT_CLOCK: RaiseClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

function checkWait(value: number | undefined): number {
  const waitMs = value ?? 0;
  if (!Number.isSafeInteger(waitMs) || waitMs < 0)
    throw new ControllerKvError(
      "bad-options",
      `waitMs must be a whole number of milliseconds, 0 or more, got ${JSON.stringify(value)}`,
    );
  return waitMs;
}

/**
 * Why a failed try says the cluster is not ready yet, or undefined when it failed for another reason. Not
 * ready: JetStream could not answer (no meta leader: a timeout, 503), the meta group seen on the
 * monitoring endpoints is too small, or every create that failed was refused for lack of peers (10005).
 */
function notReadyReason(error: unknown): string | undefined {
  if (!(error instanceof ControllerKvError)) return undefined;
  if (error.code === "unavailable") return notReadyCause(error.cause) ?? error.message.split(": ")[0];
  if (error.code !== "incomplete" || !error.report) return undefined;
  const { failed } = error.report;
  const lacking = failed.filter((failure) => failure.serverCode === JETSTREAM_CODES.clusterNoPeers);
  const unanswered = failed.filter(
    (failure) => failure.failure === "timeout" || failure.serverCode === JETSTREAM_CODES.clusterNotAvailable,
  );
  if (lacking.length + unanswered.length !== failed.length) return undefined;
  if (lacking.length > 0)
    return `fewer servers can take a bucket than its replicas (err_code 10005, ${lacking.length} bucket${lacking.length === 1 ? "" : "s"})`;
  return "JetStream did not answer the creates (no meta leader?)";
}

function notReadyCause(cause: unknown): string | undefined {
  if (cause instanceof NotReadyError) return cause.message;
  // No responders is not a young cluster: a server with JetStream answers even without a meta leader (503),
  // so nobody listening means JetStream is off for this account (a user of another account?).
  if (!jetStreamCannotAnswer(cause) || (cause as ApiRequestError).failure === "no-responders") return undefined;
  if ((cause as ApiRequestError).serverCode === JETSTREAM_CODES.notEnabledForAccount) return undefined;
  const failure = (cause as ApiRequestError).failure;
  if (failure === "timeout") return "JetStream did not answer in time (no meta leader yet?)";
  return "JetStream is temporarily unavailable (503: no meta leader)";
}

/** The meta group seen on the monitoring endpoints cannot take the buckets yet. */
class NotReadyError extends Error {}

async function raiseOnce(
  checked: ReturnType<typeof checkRaiseOptions>,
  options: RaiseOptions,
  logger: Logger,
  monitorUrls: readonly string[],
): Promise<RaiseReport> {
  const { connection, catalogue, replicas, plan, acceptLoss, timeoutMs, concurrency } = checked;
  const now = (options.now ?? Date.now)();
  if (monitorUrls.length > 0 && replicas > 1) {
    const meta = await metaGroupSeen(monitorUrls, timeoutMs);
    if (!meta || meta.leader === null || meta.peers < replicas) {
      const seen = meta
        ? `${meta.peers} in the meta group, leader ${meta.leader ?? "none"}`
        : "no server's /jsz answered";
      const cause = new NotReadyError(`the meta group cannot take ${replicas} replicas yet (${seen})`);
      throw new ControllerKvError("unavailable", `${cause.message}, so nothing was changed`, { cause });
    }
  }
  const { existing, missing } = await listBuckets(jetStreamApi(connection, timeoutMs));
  const gate = stopGate(jetStreamApi(connection, timeoutMs));
  const declared = declaredBuckets(catalogue);
  const report = emptyReport(plan, replicas);
  const shortfall = await storeShortfall({ connection, timeoutMs, declared, existing, missing, replicas });
  if (shortfall) {
    report.storeShortfall = shortfall;
    logger.error(shortfall, describeShortfall(shortfall));
    if (!plan) throw new ControllerKvError("no-storage", describeShortfall(shortfall), { report });
  }
  if (monitorUrls.length > 0) {
    const onServers = await serverShortfall({ timeoutMs, declared, existing, missing, replicas, monitorUrls });
    if (onServers) {
      report.serverShortfall = onServers;
      logger.error(onServers, describeServerShortfall(onServers));
      if (!plan) throw new ControllerKvError("no-storage", describeServerShortfall(onServers), { report });
    }
  }

  // Each bucket writes into a part of its own, merged in declaration order, so the report does not depend
  // on which request answered first.
  const parts = declared.map(() => emptyReport(plan, replicas));
  await forEachBounded(declared, concurrency, async (bucket, index) => {
    const context = { api: gate.api, plan, logger, report: parts[index]!, serverVersion: connection.info?.version };
    const desired = desiredStreamConfig(bucket, replicas, connection.info?.version);
    desired.max_consumers = consumerCeiling(bucket.bucket, options);
    const current = existing.get(bucket.stream);
    if (missing.has(bucket.stream)) notChecked(bucket.bucket, context.report, logger);
    else if (current) await assertExisting(bucket, desired, current, { ...context, acceptLoss, now });
    else await create(bucket, desired, context);
  });
  for (const part of parts) mergeInto(report, part);

  const declaredStreams = new Set(declared.map((bucket) => bucket.stream));
  for (const [stream, info] of existing) {
    if (declaredStreams.has(stream)) continue;
    const bucket = bucketOfStream(stream)!;
    const names = parseBucketName(bucket)!;
    const orphan = {
      bucket,
      ...names,
      keys: info.state.num_subjects ?? 0,
      messages: info.state.messages,
      bytes: info.state.bytes,
    };
    report.orphans.push(orphan);
    logger.warn(orphan, `bucket ${bucket} is no longer declared by module ${names.module}: kept with its values`);
  }
  for (const stream of missing) {
    if (!declaredStreams.has(stream)) notChecked(bucketOfStream(stream)!, report, logger);
  }

  const declaredBucketNames = new Set(declared.map((bucket) => bucket.bucket));
  for (const manifest of catalogue) {
    for (const reference of manifest.reads ?? []) {
      const parts = parseReadReference(reference);
      if (!parts) continue;
      const bucket = bucketName(parts.module, parts.name);
      if (declaredBucketNames.has(bucket)) continue;
      const exists = existing.has(`KV_${bucket}`) || missing.has(`KV_${bucket}`);
      const dangling = { module: manifest.name, reference, bucket, exists };
      report.danglingReads.push(dangling);
      logger.warn(dangling, `module ${manifest.name} reads ${reference}, which no module declares`);
    }
  }

  report.nearlyFull = nearlyFullBuckets(existing, report.updated);
  for (const full of report.nearlyFull) logger.warn(full, fillAdvice(full, connection.info?.version));

  if (report.failed.length > 0 || report.notAttempted.length > 0) throw incomplete(report, gate.stoppedBy());
  return report;
}

/** A bucket the listing could not describe: left as it is, and said so. */
function notChecked(bucket: string, report: RaiseReport, logger: Logger): void {
  const ref = { bucket, ...parseBucketName(bucket)! };
  report.notAttempted.push({ ...ref, action: "check" });
  logger.warn(ref, `bucket ${bucket} not checked: its stream's leader did not answer the listing (a server down?)`);
}

function emptyReport(plan: boolean, replicas: number): RaiseReport {
  return {
    plan,
    replicas,
    created: [],
    updated: [],
    unchanged: [],
    conflicts: [],
    orphans: [],
    danglingReads: [],
    failed: [],
    notAttempted: [],
    nearlyFull: [],
    forgetDeletes: [],
  };
}

function mergeInto(report: RaiseReport, part: RaiseReport): void {
  report.created.push(...part.created);
  report.updated.push(...part.updated);
  report.unchanged.push(...part.unchanged);
  report.conflicts.push(...part.conflicts);
  report.failed.push(...part.failed);
  report.notAttempted.push(...part.notAttempted);
  report.forgetDeletes.push(...part.forgetDeletes);
}

function incomplete(report: RaiseReport, stoppedBy: Error | undefined): ControllerKvError {
  const plural = (count: number) => `${count} bucket${count === 1 ? "" : "s"}`;
  const lines = report.failed.map((failure) => `  ${failure.action} ${failure.bucket}: ${failure.message}`);
  if (report.notAttempted.length > 0) {
    lines.push(
      `  not attempted, ${plural(report.notAttempted.length)}: ${report.notAttempted.map((item) => `${item.action} ${item.bucket}`).join(", ")}`,
    );
  }
  const why = stoppedBy ? ` JetStream stopped answering (${stoppedBy.message}), so nothing more was sent.` : "";
  return new ControllerKvError(
    "incomplete",
    `the raise did not finish ${plural(report.failed.length + report.notAttempted.length)}; everything else is done.${why} Raise again once the servers answer:\n${lines.join("\n")}`,
    { report },
  );
}

/**
 * The `mod_*` buckets on the server, by stream name, from one STREAM.LIST request per 256 streams; and the
 * `mod_*` streams the listing named as missing (their leader did not answer), which exist but are unknown.
 */
async function listBuckets(api: JetStreamApi): Promise<{ existing: Map<string, StreamInfo>; missing: Set<string> }> {
  let listing: StreamListing;
  try {
    listing = await api.listStreams();
  } catch (error) {
    const denied = error instanceof ApiRequestError && error.failure === "denied";
    const elsewhere = error instanceof ApiRequestError && error.serverCode === JETSTREAM_CODES.notEnabledForAccount;
    throw new ControllerKvError(
      denied ? "denied" : elsewhere ? "wrong-account" : "unavailable",
      `cannot list the buckets, so nothing was changed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const isBucket = (name: string) => parseBucketName(bucketOfStream(name) ?? "") !== undefined;
  const existing = new Map<string, StreamInfo>();
  for (const info of listing.streams) if (isBucket(info.config.name)) existing.set(info.config.name, info);
  return { existing, missing: new Set(listing.missing.filter(isBucket)) };
}

interface Context {
  api: JetStreamApi;
  /** The server's version, for what a bucket's stream may use there. */
  serverVersion: string | undefined;
  plan: boolean;
  logger: Logger;
  report: RaiseReport;
}

function refOf(bucket: DeclaredBucket): BucketRef {
  return { bucket: bucket.bucket, module: bucket.module, name: bucket.name };
}

async function create(bucket: DeclaredBucket, desired: KvStreamConfig, context: Context): Promise<void> {
  const ref = refOf(bucket);
  if (!context.plan) {
    try {
      await context.api.createStream(desired);
    } catch (error) {
      recordFailure(context, ref, "create", error);
      return;
    }
    context.logger.info({ ...ref, settings: settingsOf(desired) }, `created bucket ${bucket.bucket}`);
  }
  context.report.created.push({ ...ref, settings: settingsOf(desired) });
  recordForgetDeletes(bucket, desired.allow_msg_ttl === true, context);
}

/**
 * Lists a bucket declaring `forgetDeletes` in the report, once its stream is as the raise leaves it: `on` if
 * the stream allows per-message ttls; below 2.11 `unsupported`, with a warning.
 */
function recordForgetDeletes(bucket: DeclaredBucket, allowsTtl: boolean, context: Context): void {
  if (bucket.forgetDeletes === undefined) return;
  const entry = { ...refOf(bucket), after: bucket.forgetDeletes };
  if (allowsTtl) {
    context.report.forgetDeletes.push({ ...entry, state: "on" });
    return;
  }
  if (serverFeatures(context.serverVersion).deleteMarkers) return; // cannot happen: the raise asked for it
  context.report.forgetDeletes.push({ ...entry, state: "unsupported" });
  context.logger.warn(
    { ...entry, serverVersion: context.serverVersion },
    `bucket ${bucket.bucket} declares forgetDeletes ${bucket.forgetDeletes}, which needs nats-server 2.11 or later (this is ${context.serverVersion ?? "unknown"}): its delete markers stay until mesh-state compact removes them`,
  );
}

async function assertExisting(
  bucket: DeclaredBucket,
  desired: KvStreamConfig,
  current: StreamInfo,
  context: Context & { acceptLoss: ReadonlySet<string>; now: number },
): Promise<void> {
  const ref = refOf(bucket);
  const currentConfig = current.config as unknown as Record<string, unknown>;
  const diff = diffBucket(currentConfig, desired);
  const ceiling = updatableCeiling(diff.immutable, context.serverVersion);
  const apply: FieldChange[] = [...diff.safe, ...ceiling.apply];
  const conflicts: Conflict[] = ceiling.immutable.map((change) => ({
    ...ref,
    change,
    reason: "immutable",
    advice: immutableAdvice(change, context.serverVersion),
  }));
  const accepted: Loss[] = [];
  for (const change of diff.shrinks) {
    let loss: Loss | undefined;
    try {
      loss = await measureLoss(change, current, context.api, bucket.bucket, context.now);
    } catch (error) {
      recordFailure(context, ref, "update", error);
      return;
    }
    if (!loss) apply.push(change);
    else if (context.acceptLoss.has(bucket.bucket) && lossMayBeAccepted(loss)) {
      apply.push(change);
      accepted.push(loss);
    } else conflicts.push({ ...ref, change, reason: "would-lose-data", loss, advice: lossAdvice(bucket.bucket, loss) });
  }
  const ttl = apply.find((change) => change.field === "ttl");
  const maxAge = ttl ? desired.max_age : Number(currentConfig.max_age ?? 0);
  const window = duplicateWindowChange(currentConfig, maxAge);
  if (window) apply.push(window);
  apply.push(...deleteMarkerChanges(currentConfig, maxAge, context.serverVersion, bucket.forgetDeletes !== undefined));
  const allowsTtl =
    allowsMessageTtl(currentConfig) || apply.some((change) => change.field === "allowMessageTtl" && change.to === true);

  for (const conflict of conflicts) {
    context.report.conflicts.push(conflict);
    context.logger.warn(
      conflict,
      `bucket ${bucket.bucket}: ${conflict.change.field} stays ${JSON.stringify(conflict.change.from)}, declared ${JSON.stringify(conflict.change.to)}: ${conflict.advice}`,
    );
  }
  if (apply.length === 0) {
    if (conflicts.length === 0) context.report.unchanged.push(bucket.bucket);
    recordForgetDeletes(bucket, allowsTtl, context);
    return;
  }
  if (!context.plan) {
    const update: Record<string, unknown> = { ...currentConfig };
    for (const change of apply) setField(update, change.jetstreamField, change.to);
    try {
      await context.api.updateStream(update as { name: string });
    } catch (error) {
      recordFailure(context, ref, "update", error);
      return;
    }
    context.logger.info(
      { ...ref, changes: apply },
      `updated bucket ${bucket.bucket}: ${apply.map((c) => c.field).join(", ")}`,
    );
  }
  context.report.updated.push({ ...ref, changes: apply, ...(accepted.length > 0 ? { loss: accepted } : {}) });
  recordForgetDeletes(bucket, allowsTtl, context);
}

function recordFailure(context: Context, ref: BucketRef, action: "create" | "update", error: unknown): void {
  if (error instanceof NotSentError) {
    context.report.notAttempted.push({ ...ref, action });
    context.logger.warn({ ...ref, action }, `did not ${action} bucket ${ref.bucket}: ${error.message}`);
    return;
  }
  const failure = error instanceof ApiRequestError ? error.failure : "server";
  const serverCode = error instanceof ApiRequestError ? error.serverCode : undefined;
  const message = error instanceof Error ? error.message : String(error);
  context.report.failed.push({ ...ref, action, failure, ...(serverCode === undefined ? {} : { serverCode }), message });
  const outcome = failure === "timeout" ? " (no answer: the server may still apply it; the next raise sees)" : "";
  context.logger.warn({ ...ref, action, failure, message }, `could not ${action} bucket ${ref.bucket}${outcome}`);
}
