import type { Catalogue } from "@mesh/manifest-schema";
import type { Logger } from "pino";

/** What a check expects the server to do. */
export type Outcome = "allowed" | "refused";

/**
 * One line of the proof's table: who tried what on which bucket, what the grants say should happen, what
 * the server did, and why (the error, a count, a state compared).
 */
export interface ProofRow {
  /** `owner`, `reader`, `stranger`, `controller`, or a minimality variant such as `owner minus $KV.B.>`. */
  role: string;
  operation: string;
  /** The bucket (or subject) the operation was aimed at; `-` when none. */
  bucket: string;
  expected: Outcome;
  actual: Outcome;
  pass: boolean;
  detail: string;
}

export interface RunGrantProofOptions {
  /**
   * A catalogue to check besides the proof's own fixture modules: every module's grant is composed and
   * loaded into the server, and every bucket it declares is created as the controller would.
   */
  catalogue?: Catalogue;
  /** Bytes written into the big bucket before the checks; at least 8 MiB by default (flow-control sized). */
  bigBucketBytes?: number;
  /** `max_consumers` of the small bucket, small so the proof can reach the cap. Default 8. */
  smallBucketMaxConsumers?: number;
  /** Per-operation deadline in ms (a refused request is answered in ms; a missing reply waits this long). Default 2000. */
  operationTimeoutMs?: number;
  /** Silent by default. */
  logger?: Logger;
  /**
   * natscli v0.5.0, whose commands the inspector's grant must serve; default: the tools cache's
   * (`$MESH_TOOLS_DIR`, else ~/.cache/mesh-state-tools, `natscli-v0.5.0/nats`). Missing, its row fails.
   */
  natscli?: string;
}

/**
 * A fact of the design's grants section, as this server showed it: a stable `name`, a short `value` for a
 * table of versions, and a `detail` saying what was measured. The names:
 * - `escape.deliver-subject`: `relayed` when a consumer delivers a bucket's data to a subject of the state
 *   account its creator may not publish to (nats-server #8274), else `refused`;
 * - `escape.cross-account`: `contained` when nothing delivered reaches another account, else `leaked`;
 * - `escape.into-other-bucket`: `not stored` when a delivery into another bucket's `$KV` subjects leaves
 *   that bucket unchanged, else `stored`;
 * - `flow-control`: `push stalls without $JS.FC` or `push completes without $JS.FC`, for a push consumer
 *   whose flow-control replies the grant refuses (the runtime's pull consumers need none);
 * - `inbox-eavesdrop`: `refused` when another machine's inbox, `_INBOX.>` and `>` are all refused and
 *   nothing was heard, else `heard`;
 * - `max-consumers-update`: `refused` or `updated`: whether an existing stream's `max_consumers` can change;
 * - `lingering-consumer`: `gone in <ms> ms` (asked for 2 s of inactivity) or `stayed`, for an abandoned
 *   consumer of the runtime;
 * - `consumer-limits`: `refuses above` (a consumer asking more idleness than the stream allows is refused),
 *   `clamps`, or `absent` (the server ignores the stream's `consumer_limits`);
 * - `ttl-expiry`: `delete reaches watchers` (a server delete marker, nats-server 2.11+) or `silent`, for a key
 *   expiring by its bucket's ttl, watched through the runtime's reader;
 * - `lasting.<form>` for each form of lasting consumer (`legacy-durable`, `named-durable`,
 *   `filtered-durable`, `durable-on-exact-create`, `ephemeral-day`, `named-day`): `refused (<why>)`,
 *   `bounded (<n> s)` or `lasts`;
 * - `compaction`: `removed <n> of <n> markers in <ms> ms`, controller-kv's `compact` of the big bucket under
 *   the controller's grant (decision 0009), with the bucket's bytes before and after.
 */
export interface ProofFact {
  name: string;
  value: string;
  detail: string;
}

export interface GrantProofResult {
  rows: ProofRow[];
  /** The design's facts as this server version showed them, one per name (see `ProofFact`). */
  facts: ProofFact[];
  /** True when every row passes. */
  pass: boolean;
  /** The nats-server version the proof ran against (from the server's INFO). */
  serverVersion: string;
  durationMs: number;
}
