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
}

export interface GrantProofResult {
  rows: ProofRow[];
  /** True when every row passes. */
  pass: boolean;
  /** The nats-server version the proof ran against (from the server's INFO). */
  serverVersion: string;
  durationMs: number;
}
