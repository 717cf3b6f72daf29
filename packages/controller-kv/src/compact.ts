import { JETSTREAM_CODES } from "@mesh/jetstream-calls";
import { type DeclaredBucket, declaredBuckets } from "@mesh/manifest-schema";
import type { Logger } from "pino";
import type { BucketCompaction, CompactOptions, CompactReport, FailedCompaction, StreamSize } from "./compact-types.js";
import { ControllerKvError } from "./errors.js";
import { ApiRequestError, type JetStreamApi, jetStreamApi } from "./jsapi.js";
import { IncompleteScan, scanMarkers } from "./marker-scan.js";
import { checkCompactOptions, silentLogger } from "./options.js";
import { forEachBounded } from "./stop-gate.js";

/** Purges in flight at once on one bucket. */
const PURGE_CONCURRENCY = 8;

/**
 * Removes the delete markers older than `olderThanMs` from every bucket the catalogue declares. Per bucket:
 * one scan of the keys' last entries (marker-scan.ts), then for each key whose last entry is an old marker one
 * `STREAM.PURGE` of that key below the marker's sequence + 1 — the marker and the key's older entries go; an
 * entry written after the scan has a higher sequence and stays. A value is never removed. Buckets run one
 * after another; a bucket that fails is reported and the others still run, then `incomplete` (or `denied`
 * when the server refused a permission) is thrown with the report.
 *
 * @example
 * const report = await compact({ connection, catalogue, olderThanMs: durationToMilliseconds("7d") });
 */
export async function compact(options: CompactOptions): Promise<CompactReport> {
  const { connection, catalogue, olderThanMs, plan, timeoutMs } = checkCompactOptions(options);
  const logger = options.logger ?? silentLogger();
  const cutoffMs = (options.now ?? Date.now)() - olderThanMs;
  const report: CompactReport = {
    plan,
    olderThanMs,
    cutoff: new Date(cutoffMs).toISOString(),
    buckets: [],
    absent: [],
    failed: [],
  };
  const api = jetStreamApi(connection, timeoutMs);
  const context = { ...options, connection, api, timeoutMs, plan, cutoffMs, logger };
  const causes: unknown[] = [];
  for (const bucket of declaredBuckets(catalogue)) {
    const ref = { bucket: bucket.bucket, module: bucket.module, name: bucket.name };
    try {
      const done = await compactBucket(bucket, context);
      if (done) report.buckets.push(done);
      else report.absent.push(ref);
    } catch (error) {
      const failed = describeFailure(ref, error);
      report.failed.push(failed);
      causes.push(error);
      logger.warn(failed, `bucket ${bucket.bucket} not compacted: ${failed.message}`);
    }
  }
  if (report.failed.length > 0) {
    const deniedAt = report.failed.findIndex((failed) => failed.failure === "denied");
    const denied = deniedAt >= 0;
    const names = report.failed.map((failed) => `${failed.bucket} (${failed.message})`).join("; ");
    throw new ControllerKvError(
      denied ? "denied" : "incomplete",
      denied
        ? `the server refused part of the compaction; connect as the controller's state user composed with this catalogue (composeControllerGrant({ catalogue })): ${names}`
        : `compaction did not finish ${report.failed.length} bucket(s); what was purged stays purged, run it again: ${names}`,
      // The cause is the first refusal (or failure): the server's own error, for a caller that looks.
      { compaction: report, cause: causes[denied ? deniedAt : 0] },
    );
  }
  return report;
}

interface BucketContext extends CompactOptions {
  api: JetStreamApi;
  timeoutMs: number;
  plan: boolean;
  cutoffMs: number;
  logger: Logger;
}

/** One bucket, or null when its stream does not exist. */
async function compactBucket(bucket: DeclaredBucket, context: BucketContext): Promise<BucketCompaction | null> {
  const started = performance.now();
  const { connection, timeoutMs, cutoffMs, logger } = context;
  const before = await streamSize(context.api, bucket.stream);
  if (!before) return null;
  const scan = await scanMarkers(connection, bucket.stream, bucket.bucket, timeoutMs);
  const old = scan.markers.filter((marker) => marker.storedAtMs < cutoffMs);
  const result: BucketCompaction = {
    bucket: bucket.bucket,
    module: bucket.module,
    name: bucket.name,
    keys: scan.keys,
    markers: scan.markers.length,
    markersOlder: old.length,
    removedMarkers: 0,
    removedMessages: 0,
    before,
    durationMs: 0,
  };
  if (!context.plan && old.length > 0) {
    await context.beforePurge?.({ ...result });
    await forEachBounded(old, PURGE_CONCURRENCY, async (marker) => {
      // The marker and the key's older entries: everything of that subject up to the marker's sequence.
      const purged = await context.api.purgeSubject(bucket.stream, marker.subject, marker.sequence + 1);
      result.removedMessages += purged;
      // Nothing purged: a write since the scan had already replaced the marker (history 1).
      if (purged > 0) result.removedMarkers += 1;
    });
  }
  if (!context.plan) result.after = (await streamSize(context.api, bucket.stream)) ?? { messages: 0, bytes: 0 };
  result.durationMs = Math.round(performance.now() - started);
  logger.debug(
    result,
    `bucket ${bucket.bucket}: ${result.markersOlder} of ${result.markers} markers older than the cut`,
  );
  return result;
}

async function streamSize(api: JetStreamApi, stream: string): Promise<StreamSize | null> {
  try {
    const { state } = await api.streamInfo(stream);
    return { messages: state.messages, bytes: state.bytes };
  } catch (error) {
    if (error instanceof ApiRequestError && error.serverCode === JETSTREAM_CODES.streamNotFound) return null;
    throw error;
  }
}

function describeFailure(ref: Omit<FailedCompaction, "failure" | "message">, error: unknown): FailedCompaction {
  if (error instanceof ApiRequestError) {
    return {
      ...ref,
      failure: error.failure,
      ...(error.serverCode === undefined ? {} : { serverCode: error.serverCode }),
      message: error.message,
    };
  }
  if (error instanceof IncompleteScan) return { ...ref, failure: "incomplete-scan", message: error.message };
  return { ...ref, failure: "server", message: error instanceof Error ? error.message : String(error) };
}
