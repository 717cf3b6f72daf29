import { type CompactReport, compact } from "@mesh/controller-kv";
import { DURATION_PATTERN, durationToMilliseconds } from "@mesh/manifest-schema";
import { pino } from "pino";
import { loadEachManifest } from "../catalogue-files.js";
import { connectAsController, SERVER_ARG_OPTIONS, SERVER_HELP_OPTIONS } from "../connect.js";
import { runAsController } from "../controller-run.js";
import { formatReportTable } from "../report-table.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state compact --catalogue DIR --older-than DURATION [--plan] [--format text|json]
                          [--server URL | --context NAME] [--creds FILE | --user U --password P]

Removes the delete markers older than DURATION from every bucket of the catalogue, as the controller's state
user. A bucket without a ttl keeps a marker for every key ever deleted, and watches, keys and the bucket's
max bytes count them. For each key whose last entry is a delete or purge written before now - DURATION, the
marker and the key's older entries are purged: the key stays deleted. A value is never removed, nor anything
written meanwhile. The controller's grant must be composed with the catalogue (mesh-state grants shows it).
Exits 1 when a bucket could not be compacted (the others are still done).

Options:
  --catalogue DIR        folder of *.json manifests (every registered module)
  --older-than DURATION  a whole number and a unit: 90s, 15m, 24h, 7d
  --plan                 scan and report what would go; remove nothing
  --format FORMAT        text (default) or json (the report as controller-kv's compact returns it)
  --json                 the same as --format json
${SERVER_HELP_OPTIONS}
  --inbox-prefix P       default the context's, else _INBOX_ctl_<user> (the controller grant's inbox)

Example:
  mesh-state compact --catalogue ./manifests --older-than 7d --plan --context state-controller
  mesh-state compact --catalogue ./manifests --older-than 7d --server nats://127.0.0.1:4222 \\
    --user controller --password "$STATE_PASSWORD" --format json
`;

export const command = defineCommand({
  name: "compact",
  summary: "remove delete markers older than a duration from every declared bucket",
  help: HELP,
  options: {
    ...SERVER_ARG_OPTIONS,
    catalogue: { type: "string" },
    "older-than": { type: "string" },
    plan: { type: "boolean", default: false },
    format: { type: "string", default: "text" },
    json: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    if (!values.catalogue) throw new UsageError("--catalogue DIR is required");
    const olderThan = values["older-than"];
    if (!olderThan) throw new UsageError("--older-than DURATION is required (90s, 15m, 24h, 7d)");
    if (!DURATION_PATTERN.test(olderThan))
      throw new UsageError(`--older-than takes a whole number and s, m, h or d (7d), got ${olderThan}`);
    const format = values.json ? "json" : values.format;
    if (format !== "text" && format !== "json") throw new UsageError(`--format is text or json, not ${format}`);
    const catalogue = await loadEachManifest(values.catalogue, io.cwd, "nothing was compacted");
    const connection = await connectAsController(values, "mesh-state compact", io.env);
    const { report, failure } = await runAsController(
      connection,
      () =>
        compact({
          connection,
          catalogue,
          olderThanMs: durationToMilliseconds(olderThan),
          plan: values.plan,
          logger: pino({ level: "warn" }, io.stderr),
        }),
      (error) => error.compaction,
    );
    io.stdout.write(format === "json" ? `${JSON.stringify(report, null, 2)}\n` : formatCompaction(report, olderThan));
    if (failure) io.stderr.write(`mesh-state compact: ${failure.message}\n`);
    return report.failed.length > 0 ? 1 : 0;
  },
});

/** One line per bucket: what was found, what went, and the stream's size before and after. */
export function formatCompaction(report: CompactReport, olderThan: string): string {
  const rows: [string, string, string][] = [];
  for (const bucket of report.buckets) {
    const found = `${count(bucket.keys, "key")}, ${count(bucket.markers, "marker")}, ${bucket.markersOlder} older than ${olderThan}`;
    const done = report.plan
      ? `would remove ${bucket.markersOlder}`
      : `removed ${count(bucket.removedMarkers, "marker")} (${count(bucket.removedMessages, "message")})`;
    const size = bucket.after
      ? `; ${bucket.before.bytes} -> ${bucket.after.bytes} bytes`
      : `; ${bucket.before.bytes} bytes`;
    rows.push([report.plan ? "plan" : "compacted", bucket.bucket, `${found}: ${done}${size}, ${bucket.durationMs} ms`]);
  }
  for (const absent of report.absent) rows.push(["absent", absent.bucket, "not created yet (raise creates it)"]);
  for (const failed of report.failed) rows.push(["FAILED", failed.bucket, failed.message]);
  const title = `${report.plan ? "plan (nothing removed)" : "compact"}: markers written before ${report.cutoff}`;
  return formatReportTable(title, rows, "no buckets declared");
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
