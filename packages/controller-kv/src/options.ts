import { type Catalogue, checkManifest, formatIssue } from "@mesh/manifest-schema";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Logger, pino } from "pino";
import type { CompactOptions } from "./compact-types.js";
import { ControllerKvError } from "./errors.js";
import type { RaiseOptions } from "./types.js";

/** JetStream's largest replica count. */
export const MAX_REPLICAS = 5;
export const DEFAULT_TIMEOUT_MS = 5_000;
/** Enough to hide the round trips of a large first raise, few enough not to flood a meta leader. */
export const DEFAULT_CONCURRENCY = 8;
const MAX_CONCURRENCY = 64;

export interface CheckedRaiseOptions {
  connection: NatsConnection;
  catalogue: Catalogue;
  replicas: number;
  plan: boolean;
  acceptLoss: ReadonlySet<string>;
  timeoutMs: number;
  concurrency: number;
}

/**
 * The edge of `raise`: every manifest is checked with the manifest schema (a caller may hand in JSON it
 * never parsed). Cross-manifest problems other than a module registered twice are not refused: a `reads`
 * whose bucket is gone is what the report's dangling reads are for.
 */
export function checkRaiseOptions(options: RaiseOptions): CheckedRaiseOptions {
  checkConnectionOption(options, "raise");
  const { connection, catalogue, replicas } = options;
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new ControllerKvError(
      "bad-options",
      `replicas must be a whole number from 1 to ${MAX_REPLICAS} (1 on one server, 3 on a cluster), got ${JSON.stringify(replicas)}`,
    );
  }
  checkCatalogueOption(catalogue);
  const acceptLoss = options.acceptLoss ?? [];
  if (!Array.isArray(acceptLoss) || acceptLoss.some((bucket) => typeof bucket !== "string")) {
    throw new ControllerKvError("bad-options", "acceptLoss must be a list of bucket names (mod_<module>_<name>)");
  }
  const timeoutMs = checkTimeout(options.timeoutMs);
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw new ControllerKvError(
      "bad-options",
      `concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${JSON.stringify(concurrency)}`,
    );
  }
  return {
    connection,
    catalogue,
    replicas,
    plan: options.plan === true,
    acceptLoss: new Set(acceptLoss),
    timeoutMs,
    concurrency,
  };
}

/**
 * Every manifest is checked with the manifest schema (a caller may hand in JSON it never parsed). Cross-manifest
 * problems other than a module registered twice are not refused: the raise reports dangling reads.
 */
function checkCatalogueOption(catalogue: unknown): void {
  if (!Array.isArray(catalogue)) throw new ControllerKvError("bad-options", "catalogue must be an array of manifests");
  const problems: string[] = [];
  const seen = new Set<string>();
  catalogue.forEach((manifest: unknown, index) => {
    const result = checkManifest(manifest);
    if (!result.ok) {
      for (const issue of result.issues) problems.push(`manifest ${index}: ${formatIssue(issue)}`);
      return;
    }
    if (seen.has(result.value.name))
      problems.push(`manifest ${index}: module ${result.value.name} is registered twice`);
    seen.add(result.value.name);
  });
  if (problems.length > 0) {
    throw new ControllerKvError(
      "bad-options",
      `the catalogue has problems; fix them and raise again:\n  ${problems.join("\n  ")}`,
    );
  }
}

/** An options object with a connection: the first thing both edges check. */
function checkConnectionOption(options: { connection?: unknown } | null, verb: string): void {
  if (typeof options !== "object" || options === null)
    throw new ControllerKvError("bad-options", `${verb} takes an options object`);
  if (typeof (options.connection as { request?: unknown } | undefined)?.request !== "function") {
    throw new ControllerKvError("bad-options", "connection must be a NATS connection into the state account");
  }
}

function checkTimeout(value: number | undefined): number {
  const timeoutMs = value ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new ControllerKvError(
      "bad-options",
      `timeoutMs must be a positive whole number, got ${JSON.stringify(timeoutMs)}`,
    );
  }
  return timeoutMs;
}

export type CheckedCompactOptions = Pick<CheckedRaiseOptions, "connection" | "catalogue" | "plan" | "timeoutMs"> & {
  olderThanMs: number;
};

/** The edge of `compact`: the same checks of the connection and the catalogue as a raise, and a cut that is a duration. */
export function checkCompactOptions(options: CompactOptions): CheckedCompactOptions {
  checkConnectionOption(options, "compact");
  const { connection, catalogue, olderThanMs } = options;
  checkCatalogueOption(catalogue);
  if (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0) {
    throw new ControllerKvError(
      "bad-options",
      `olderThanMs must be a whole number of milliseconds, 0 or more (durationToMilliseconds("7d")), got ${JSON.stringify(olderThanMs)}`,
    );
  }
  return {
    connection,
    catalogue,
    olderThanMs,
    plan: options.plan === true,
    timeoutMs: checkTimeout(options.timeoutMs),
  };
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
