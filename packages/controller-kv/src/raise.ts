import {
  bucketName,
  type DeclaredBucket,
  declaredBuckets,
  parseBucketName,
  parseReadReference,
} from "@mesh/manifest-schema";
import type { StreamInfo } from "@nats-io/jetstream";
import type { Logger } from "pino";
import {
  desiredStreamConfig,
  diffBucket,
  duplicateWindowChange,
  type KvStreamConfig,
  settingsOf,
} from "./bucket-config.js";
import { ControllerKvError } from "./errors.js";
import { ApiRequestError, type JetStreamApi, jetStreamApi } from "./jsapi.js";
import { describeLoss, lossMayBeAccepted, measureLoss } from "./loss.js";
import { checkRaiseOptions, silentLogger } from "./options.js";
import type { BucketRef, Conflict, FieldChange, Loss, RaiseOptions, RaiseReport } from "./types.js";

/**
 * Asserts a bucket for every `state` declaration of the catalogue: creates what is missing, updates in
 * place what differs and can change without losing a value, and reports the rest. Never deletes or purges.
 * A raise with nothing to change sends one STREAM.LIST request per 256 streams and nothing else.
 *
 * @example
 * const report = await raise({ connection, catalogue, replicas: 1, logger });
 * // report.created[0].bucket === "mod_operators-agent_mcp-servers"
 */
export async function raise(options: RaiseOptions): Promise<RaiseReport> {
  const { connection, catalogue, replicas, plan, acceptLoss, timeoutMs } = checkRaiseOptions(options);
  const logger = options.logger ?? silentLogger();
  const now = (options.now ?? Date.now)();
  if (replicas > 1 && !connection.info?.cluster) {
    throw new ControllerKvError(
      "bad-options",
      `replicas ${replicas} needs a JetStream cluster, and the server ${connection.info?.server_name ?? ""} is not clustered: raise with replicas 1`,
    );
  }
  const api = jetStreamApi(connection, timeoutMs);
  const existing = await listBuckets(api);
  const declared = declaredBuckets(catalogue);
  const report: RaiseReport = {
    plan,
    replicas,
    created: [],
    updated: [],
    unchanged: [],
    conflicts: [],
    orphans: [],
    danglingReads: [],
    failed: [],
  };

  for (const bucket of declared) {
    const desired = desiredStreamConfig(bucket, replicas);
    const current = existing.get(bucket.stream);
    if (current) await assertExisting(bucket, desired, current, { api, plan, acceptLoss, now, logger, report });
    else await create(bucket, desired, { api, plan, logger, report });
  }

  const declaredStreams = new Set(declared.map((bucket) => bucket.stream));
  for (const [stream, info] of existing) {
    if (declaredStreams.has(stream)) continue;
    const bucket = stream.slice("KV_".length);
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

  const declaredBucketNames = new Set(declared.map((bucket) => bucket.bucket));
  for (const manifest of catalogue) {
    for (const reference of manifest.reads ?? []) {
      const parts = parseReadReference(reference);
      if (!parts) continue;
      const bucket = bucketName(parts.module, parts.name);
      if (declaredBucketNames.has(bucket)) continue;
      const dangling = { module: manifest.name, reference, bucket, exists: existing.has(`KV_${bucket}`) };
      report.danglingReads.push(dangling);
      logger.warn(dangling, `module ${manifest.name} reads ${reference}, which no module declares`);
    }
  }

  if (report.failed.length > 0) {
    const lines = report.failed.map((failure) => `  ${failure.action} ${failure.bucket}: ${failure.message}`);
    throw new ControllerKvError(
      "incomplete",
      `the raise did not finish ${report.failed.length} bucket${report.failed.length === 1 ? "" : "s"}; everything else is done. Raise again once the servers answer:\n${lines.join("\n")}`,
      { report },
    );
  }
  return report;
}

/** The `mod_*` buckets on the server, by stream name, from one STREAM.LIST request per 256 streams. */
async function listBuckets(api: JetStreamApi): Promise<Map<string, StreamInfo>> {
  let streams: StreamInfo[];
  try {
    streams = await api.listStreams();
  } catch (error) {
    const denied = error instanceof ApiRequestError && error.failure === "denied";
    throw new ControllerKvError(
      denied ? "denied" : "unavailable",
      `cannot list the buckets, so nothing was changed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const buckets = new Map<string, StreamInfo>();
  for (const info of streams) {
    const name = info.config.name;
    if (name.startsWith("KV_") && parseBucketName(name.slice("KV_".length))) buckets.set(name, info);
  }
  return buckets;
}

interface Context {
  api: JetStreamApi;
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
  const apply: FieldChange[] = [...diff.safe];
  const conflicts: Conflict[] = diff.immutable.map((change) => ({
    ...ref,
    change,
    reason: "immutable",
    advice: immutableAdvice(change),
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

  for (const conflict of conflicts) {
    context.report.conflicts.push(conflict);
    context.logger.warn(
      conflict,
      `bucket ${bucket.bucket}: ${conflict.change.field} stays ${JSON.stringify(conflict.change.from)}, declared ${JSON.stringify(conflict.change.to)}: ${conflict.advice}`,
    );
  }
  if (apply.length === 0) {
    if (conflicts.length === 0) context.report.unchanged.push(bucket.bucket);
    return;
  }
  if (!context.plan) {
    const update: Record<string, unknown> = { ...currentConfig };
    for (const change of apply) update[change.jetstreamField] = change.to;
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
}

function recordFailure(context: Context, ref: BucketRef, action: "create" | "update", error: unknown): void {
  const serverCode = error instanceof ApiRequestError ? error.serverCode : undefined;
  const message = error instanceof Error ? error.message : String(error);
  context.report.failed.push({ ...ref, action, ...(serverCode === undefined ? {} : { serverCode }), message });
  context.logger.warn({ ...ref, action, message }, `could not ${action} bucket ${ref.bucket}`);
}

function immutableAdvice(change: FieldChange): string {
  switch (change.field) {
    case "maxConsumers":
      return "JetStream sets max_consumers only when a stream is created; the bucket and its values stay as they are (moving them to a new bucket is an operator's decision, never a raise's)";
    case "storage":
    case "retention":
    case "mirror":
    case "sources":
      return `JetStream does not change ${change.jetstreamField} of an existing stream; the bucket and its values stay as they are`;
    default:
      return `JetStream does not turn ${change.jetstreamField} off once it is on; the bucket stays as it is`;
  }
}

function lossAdvice(bucket: string, loss: Loss): string {
  if (loss.kind === "maxBytes") {
    return `${describeLoss(loss)}. A raise never applies it: delete keys through the owning module, or declare maxBytes of at least ${loss.bytes}`;
  }
  return `${describeLoss(loss)}. To apply it anyway, raise again accepting loss for ${bucket} (acceptLoss, --accept-loss ${bucket})`;
}
