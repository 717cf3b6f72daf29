import {
  describeLoss,
  describeServerShortfall,
  describeShortfall,
  type FieldChange,
  type RaiseReport,
  type RaiseWaitProgress,
  raise,
} from "@mesh/controller-kv";
import { type Level, pino } from "pino";
import { loadEachManifest } from "../catalogue-files.js";
import { connectAsController, resolveServerOptions, SERVER_ARG_OPTIONS, SERVER_HELP_OPTIONS } from "../connect.js";
import { runAsController } from "../controller-run.js";
import { describeFailure, EXIT, formatFailure } from "../failure.js";
import { formatReportTable } from "../report-table.js";
import { defineCommand, UsageError } from "../types.js";

const HELP = `Usage: mesh-state raise --catalogue DIR [--server URL | --context NAME] [--creds FILE | --user U --password P]
                        [--replicas N] [--plan] [--json] [--accept-loss BUCKET]... [--log-level LEVEL]
                        [--allow-unsupported-server] [--monitor URL]... [--wait SECONDS]
                        [--fleet-size N] [--max-consumers BUCKET=N]...

Asserts a bucket for every state declaration of the catalogue's manifests, as the controller's state user:
creates what is missing, updates in place what can change without losing a value, and reports conflicts
(what JetStream will not change, or what would discard stored values), orphans (buckets whose declaration is
gone: kept) and dangling reads. Never deletes or purges a bucket. Exits 1 on any conflict or failure.
First it reads the account's JetStream limits ($JS.API.INFO): when the buckets to create do not fit its file
store beside what its streams reserve, it creates nothing and names the shortfall (NO STORAGE). Given every
server's monitoring endpoint (--monitor), it also checks each server's own max_file_store, which no account
but the system account can read otherwise (decision 0012). On a cluster not ready yet (no meta leader, fewer
servers than replicas) it waits up to --wait seconds, saying what it sees, then goes on or fails.

Options:
  --catalogue DIR        folder of *.json manifests (every registered module)
${SERVER_HELP_OPTIONS}
  --inbox-prefix P       default the context's, else _INBOX_ctl_<user> (the controller grant's inbox)
  --replicas N           1 on one server (default), 3 on a cluster
  --plan                 compute the report and write nothing
  --accept-loss BUCKET   apply a history or ttl cut of this bucket although the report shows values it discards
  --allow-unsupported-server
                         raise on a nats-server below the supported floor (2.10.5), accepting its defects
                         (a full bucket evicts its oldest key, nats-server#4771); refused otherwise
  --monitor URL          a server's monitoring endpoint (http://host:8222), once per server or comma-separated:
                         the raise then also checks each server's own file store and, waiting, its meta group
  --wait SECONDS         how long to wait for a young cluster (default 60; 0: fail at once, with the reason)
  --fleet-size N         machines in the fleet: every bucket's max_consumers becomes 2 per machine + 64
                         (updated in place on nats-server 2.12+; on older servers a conflict: recreate)
  --max-consumers B=N    bucket B's own consumer ceiling (mod_<module>_<name>=N), over --fleet-size
  --json                 print the report as JSON
  --log-level LEVEL      pino JSON lines on stderr: one per bucket created or updated, a warning per orphan,
                         conflict, dangling read, nearly full bucket and failure; fatal, error, warn, info
                         (default), debug, trace or silent

Example:
  mesh-state raise --catalogue ./manifests --server nats://127.0.0.1:4222 \\
    --user controller --password "$STATE_PASSWORD" --replicas 1 --plan
  mesh-state raise --catalogue ./manifests --context state-controller   # a NATS CLI context
`;

export const command = defineCommand({
  name: "raise",
  summary: "create and update the declared buckets; report conflicts, orphans and dangling reads",
  help: HELP,
  options: {
    ...SERVER_ARG_OPTIONS,
    catalogue: { type: "string" },
    replicas: { type: "string", default: "1" },
    plan: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    "accept-loss": { type: "string", multiple: true, default: [] },
    "allow-unsupported-server": { type: "boolean", default: false },
    "log-level": { type: "string", default: "info" },
    "fleet-size": { type: "string" },
    "max-consumers": { type: "string", multiple: true, default: [] },
    monitor: { type: "string", multiple: true, default: [] },
    wait: { type: "string", default: "60" },
  },
  async run({ values }, io) {
    if (!values.catalogue) throw new UsageError("--catalogue DIR is required");
    const level = values["log-level"];
    if (!LOG_LEVELS.includes(level as Level | "silent"))
      throw new UsageError(`--log-level takes one of ${LOG_LEVELS.join(", ")}, got ${level}`);
    // Logs go to stderr so that stdout stays the report alone (`--json | jq` keeps working). No pino `name`:
    // the raise's lines carry the bucket's own `name` field, which would overwrite it.
    const logger = pino({ level }, io.stderr);
    const replicas = Number(values.replicas);
    if (!Number.isInteger(replicas) || replicas < 1)
      throw new UsageError(`--replicas takes a whole number, got ${values.replicas}`);
    const sizing = consumerSizing(values["fleet-size"], values["max-consumers"]);
    if (!/^\d+$/.test(values.wait)) throw new UsageError(`--wait takes a whole number of seconds, got ${values.wait}`);
    const monitorUrls = values.monitor.flatMap((urls) => urls.split(",").map((url) => url.trim()));
    const catalogue = await loadEachManifest(values.catalogue, io.cwd, "nothing was raised");
    const server = await resolveServerOptions(values, io.env);
    const connection = await connectAsController(server, "mesh-state raise", io.env);
    const { report, failure } = await runAsController(
      connection,
      () =>
        raise({
          connection,
          catalogue,
          replicas,
          plan: values.plan,
          acceptLoss: values["accept-loss"],
          allowUnsupportedServer: values["allow-unsupported-server"],
          logger,
          ...sizing,
          monitorUrls,
          waitMs: Number(values.wait) * 1_000,
          // On a terminal a person watches: a line per try. Off one, the logger's info line says the same.
          ...(isTerminal(io.stderr) ? { onWait: (seen) => io.stderr.write(`${describeWait(seen)}\n`) } : {}),
        }),
      (error) => error.report,
    );
    const described = failure ? { ...describeFailure(failure), changed: changedBy(report) } : undefined;
    const printed = described ? { ...report, error: described } : report;
    io.stdout.write(values.json ? `${JSON.stringify(printed, null, 2)}\n` : formatReport(report, server.server ?? ""));
    if (described) io.stderr.write(formatFailure("raise", described));
    const problems = report.conflicts.length + report.failed.length + report.notAttempted.length;
    return problems > 0 || report.storeShortfall || report.serverShortfall ? EXIT.failed : EXIT.ok;
  },
});

/** What a raise that failed with a report changed: what it created or updated; a create with no answer may be made. */
function changedBy(report: RaiseReport): "nothing" | "partly" | "unknown" {
  if (!report.plan && report.created.length + report.updated.length > 0) return "partly";
  return report.failed.some((failure) => failure.failure === "timeout") ? "unknown" : "nothing";
}

function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

function describeWait(seen: RaiseWaitProgress): string {
  const meta = seen.peers === undefined ? "" : `; meta group ${seen.peers}, leader ${seen.leader ?? "none"}`;
  return `waiting for the cluster (${Math.round(seen.elapsedMs / 1000)} of ${Math.round(seen.waitMs / 1000)} s): ${seen.reason}${meta}`;
}

/** `--fleet-size N` and `--max-consumers BUCKET=N`, as the raise takes them (it checks the ranges). */
function consumerSizing(
  fleetSize: string | undefined,
  ceilings: string[],
): { fleetSize?: number; maxConsumers?: Record<string, number> } {
  const whole = (text: string, flag: string) => {
    if (!/^\d+$/.test(text)) throw new UsageError(`${flag} takes a whole number, got ${text}`);
    return Number(text);
  };
  const sizing: { fleetSize?: number; maxConsumers?: Record<string, number> } = {};
  if (fleetSize !== undefined) sizing.fleetSize = whole(fleetSize, "--fleet-size");
  for (const ceiling of ceilings) {
    const [bucket, value] = ceiling.split("=");
    if (!bucket || value === undefined) throw new UsageError(`--max-consumers takes BUCKET=N, got ${ceiling}`);
    sizing.maxConsumers = { ...sizing.maxConsumers, [bucket]: whole(value, "--max-consumers") };
  }
  return sizing;
}

const LOG_LEVELS: readonly (Level | "silent")[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

const NANOS_PER_SECOND = 1_000_000_000;

function formatValue(field: FieldChange["field"], value: FieldChange["from"]): string {
  if ((field === "ttl" || field === "duplicateWindow") && typeof value === "number") {
    if (value <= 0) return "none";
    const seconds = value / NANOS_PER_SECOND;
    for (const [unit, size] of [
      ["d", 86_400],
      ["h", 3_600],
      ["m", 60],
    ] as const) {
      if (seconds % size === 0) return `${seconds / size}${unit}`;
    }
    return `${seconds}s`;
  }
  return Array.isArray(value) ? value.join(",") : String(value);
}

function formatChange(change: FieldChange): string {
  return `${change.field} ${formatValue(change.field, change.from)} -> ${formatValue(change.field, change.to)}`;
}

/** The report as a table a person reads: one line per bucket, conflicts with what to do. */
export function formatReport(report: RaiseReport, server: string): string {
  const rows: [string, string, string][] = [];
  if (report.storeShortfall) rows.push(["NO STORAGE", "", describeShortfall(report.storeShortfall)]);
  if (report.serverShortfall) rows.push(["NO STORAGE", "", describeServerShortfall(report.serverShortfall)]);
  for (const bucket of report.created) {
    const s = bucket.settings;
    const ttl = formatValue("ttl", s.ttl);
    rows.push([
      "created",
      bucket.bucket,
      `history ${s.history}, ttl ${ttl}, max value ${s.maxValueSize} B, max ${s.maxBytes} B, R${s.replicas}`,
    ]);
  }
  for (const bucket of report.updated) {
    const loss = (bucket.loss ?? []).map((item) => `; accepted: ${describeLoss(item)}`).join("");
    rows.push(["updated", bucket.bucket, `${bucket.changes.map(formatChange).join(", ")}${loss}`]);
  }
  if (report.unchanged.length > 0)
    rows.push(["unchanged", `${report.unchanged.length} bucket${report.unchanged.length === 1 ? "" : "s"}`, ""]);
  for (const conflict of report.conflicts) {
    rows.push(["CONFLICT", conflict.bucket, `${formatChange(conflict.change)} not applied: ${conflict.advice}`]);
  }
  for (const failed of report.failed) rows.push(["FAILED", failed.bucket, `${failed.action}: ${failed.message}`]);
  for (const skipped of report.notAttempted) {
    rows.push(["NOT DONE", skipped.bucket, `${skipped.action} not sent: JetStream stopped answering; raise again`]);
  }
  for (const bucket of report.forgetDeletes.filter((entry) => entry.state === "unsupported")) {
    rows.push([
      "UNSUPPORTED",
      bucket.bucket,
      `forgetDeletes ${bucket.after} needs nats-server 2.11 or later: delete markers stay until mesh-state compact`,
    ]);
  }
  for (const full of report.nearlyFull) {
    rows.push(["NEARLY FULL", full.bucket, `${full.percent} % of max bytes (${full.bytes} of ${full.maxBytes} B)`]);
  }
  for (const orphan of report.orphans) {
    rows.push([
      "orphan",
      orphan.bucket,
      `no longer declared; kept: ${orphan.keys} keys, ${orphan.messages} messages, ${orphan.bytes} bytes`,
    ]);
  }
  for (const read of report.danglingReads) {
    rows.push([
      "dangling",
      `${read.module} reads ${read.reference}`,
      read.exists ? `${read.bucket} is not declared (still on the server)` : `${read.bucket} does not exist`,
    ]);
  }
  const title = `${report.plan ? "plan (nothing written)" : "raise"} on ${server}, replicas ${report.replicas}`;
  return formatReportTable(title, rows, "no buckets declared, none found");
}
