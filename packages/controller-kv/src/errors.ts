import type { CompactReport } from "./compact-types.js";
import type { RaiseReport } from "./types.js";

export type ControllerKvErrorCode =
  /** The options or the catalogue cannot be used: a bad replica count, an invalid manifest, a module twice. */
  | "bad-options"
  /**
   * The server refused or did not answer a request that the whole raise depends on (listing the buckets, the
   * store limits), or the cluster was not ready within `waitMs`: nothing was changed by that try.
   */
  | "unavailable"
  /** The controller's state user may not do what the raise (or the compaction) needs. */
  | "denied"
  /** The credentials are of a user whose account has no JetStream: not the state account (err_code 10039). Nothing was changed. */
  | "wrong-account"
  /**
   * Some creates or updates failed; `report` holds what was done and `report.failed` what was not. Of a
   * compaction: some buckets were not finished; `compaction.failed` names them.
   */
  | "incomplete"
  /**
   * The buckets to create do not fit the account's file store (`report.storeShortfall`) or the servers' own
   * (`report.serverShortfall`, with `monitorUrls`): nothing was created; the report says by how much, and where.
   */
  | "no-storage"
  /** The server is below the supported floor (SUPPORTED_SERVER_FLOOR) and the caller did not opt in. */
  | "server-below-floor"
  /** `issueBuckets` of a module the catalogue does not hold. */
  | "unknown-module";

/** Every error controller-kv throws; `code` is stable, the message says what to do. */
export class ControllerKvError extends Error {
  readonly code: ControllerKvErrorCode;
  /** With `incomplete`: the report of the raise so far. */
  readonly report?: RaiseReport;
  /** With `incomplete` or `denied` from `compact`: what was compacted, and `failed` what was not. */
  readonly compaction?: CompactReport;
  constructor(
    code: ControllerKvErrorCode,
    message: string,
    options: { cause?: unknown; report?: RaiseReport; compaction?: CompactReport } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ControllerKvError";
    this.code = code;
    if (options.report) this.report = options.report;
    if (options.compaction) this.compaction = options.compaction;
  }
}
