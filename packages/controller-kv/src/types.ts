import type { Catalogue } from "@mesh/manifest-schema";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";

/**
 * The contract of controller-kv: what a raise takes and what it reports. The controller calls `raise` on
 * every raise of the mesh and shows the report to its operator; `plan: true` shows it without writing.
 *
 * @example
 * const report = await raise({ connection, catalogue, replicas: 3, logger });
 * if (report.conflicts.length > 0) alertOperator(report.conflicts);
 */
export interface RaiseOptions {
  /** A connection into the state account, as the controller's state user (composeControllerGrant). */
  connection: NatsConnection;
  /** The registered modules' manifests. Each must be a valid manifest; cross-manifest problems are reported, not refused. */
  catalogue: Catalogue;
  /** Replicas of every bucket: 1 on one server, 3 on a cluster. */
  replicas: number;
  /** Receives one line per bucket created or updated and a warning per orphan and per conflict. Silent when absent. */
  logger?: Logger;
  /** Compute the same report and write nothing. */
  plan?: boolean;
  /**
   * Buckets (`mod_<module>_<name>`) whose reported loss the caller accepts: a history or ttl cut that the
   * report shows would discard stored values is applied for these buckets, and stays a conflict for any
   * other. A max-bytes cut below what a bucket holds is never applied (see README).
   */
  acceptLoss?: readonly string[];
  /** Milliseconds since the epoch, for the ttl check; `Date.now` by default. */
  now?: () => number;
  /** Timeout of each JetStream API request in milliseconds; 5000 by default. */
  timeoutMs?: number;
  /**
   * Creates and updates in flight at once; 8 by default. Once JetStream shows it cannot answer (a timeout,
   * no meta leader), no further request is sent and the buckets not yet reached are reported as `notAttempted`.
   */
  concurrency?: number;
  /**
   * Raise on a nats-server below the supported floor (2.10.5, decision 0005), accepting its defects: the
   * raise then logs a warning naming them instead of refusing with `server-below-floor`. False by default.
   */
  allowUnsupportedServer?: boolean;
  /**
   * Machines in the fleet: every bucket's consumer ceiling (`max_consumers`) becomes 2 per machine + 64
   * (consumer-ceiling.ts). Without it, and without a bucket's own ceiling, a bucket keeps the mesh's 1,024.
   */
  fleetSize?: number;
  /** A ceiling per bucket (`mod_<module>_<name>` → max_consumers), over the one from `fleetSize`. */
  maxConsumers?: Readonly<Record<string, number>>;
  /**
   * Every server's monitoring endpoint (`http://host:8222`), one per server of the cluster. Given, the raise
   * reads each server's `/jsz` (`config.max_storage`, `reserved_storage`) and creates nothing unless the new
   * buckets fit on as many servers as they have replicas (`report.serverShortfall` otherwise), and it reads the
   * meta group there while it waits for a young cluster. The servers' own store limit is visible to no
   * account but the system account's (decision 0012); without this, only the account's limit is checked.
   */
  monitorUrls?: readonly string[];
  /**
   * How long to wait, in milliseconds, for a cluster that cannot take the buckets yet (no meta leader, fewer
   * servers in the meta group than replicas): the raise tries again every second until then. 0 (the
   * default): fail at once.
   */
  waitMs?: number;
  /** Called once per try that found the cluster not ready, while the raise waits (`waitMs`). */
  onWait?: (progress: RaiseWaitProgress) => void;
  /** The clock of the wait: a monotonic time in ms and a sleep; `performance.now` and a timer by default. */
  clock?: RaiseClock;
}

/** The wait's clock, injected so tests can drive it. */
export interface RaiseClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** What a raise waiting for a young cluster saw on one try. */
export interface RaiseWaitProgress {
  /** Milliseconds since the raise began, and the bound. */
  elapsedMs: number;
  waitMs: number;
  /** Why this try could not go on, as the server said it. */
  reason: string;
  /** The meta group, when monitoring endpoints were given: its leader (null: none) and its size. */
  leader?: string | null;
  peers?: number;
}

/** A bucket setting, named as a manifest author or operator knows it, with its JetStream config field. */
export type BucketField =
  | "history"
  | "ttl"
  | "maxValueSize"
  | "maxBytes"
  | "replicas"
  | "maxConsumers"
  | "storage"
  | "retention"
  | "discard"
  | "allowDirect"
  | "subjects"
  | "duplicateWindow"
  | "allowRollup"
  | "denyDelete"
  | "denyPurge"
  | "maxMessages"
  | "sealed"
  | "mirror"
  | "sources"
  /** `consumer_limits.inactive_threshold` (nanoseconds): the longest a consumer may stay idle (2.10+). */
  | "consumerInactiveLimit"
  /** `allow_msg_ttl`: set with delete markers (2.11+). */
  | "allowMessageTtl"
  /** `subject_delete_marker_ttl` (nanoseconds): an expired key leaves a delete marker (2.11+). */
  | "deleteMarkerTtl";

export type FieldValue = number | string | boolean | readonly string[] | null;

/** One setting that differs: its values as JetStream holds them (ttl and duplicate window in nanoseconds). */
export interface FieldChange {
  field: BucketField;
  jetstreamField: string;
  from: FieldValue;
  to: FieldValue;
}

/** What a change would discard, measured before anything is written. */
export type Loss =
  | {
      kind: "history";
      /** Values that would go: for each key listed, its oldest `values`. */
      values: number;
      keys: { key: string; values: number }[];
    }
  | {
      kind: "ttl";
      /** Every value written before this instant (ISO 8601) would expire at once; the count is not measured. */
      writtenBefore: string;
      /** When the oldest stored value was written. */
      oldest: string;
    }
  | {
      kind: "maxBytes";
      /** What the bucket holds now, and the max asked for: the server would remove the oldest values to fit. */
      bytes: number;
      maxBytes: number;
    };

export interface BucketRef {
  /** `mod_<module>_<name>` */
  bucket: string;
  module: string;
  name: string;
}

/** A bucket the raise created (or, with `plan`, would create), with the settings it got. */
export interface CreatedBucket extends BucketRef {
  settings: BucketSettings;
}

/** A bucket updated in place (or, with `plan`, that would be); `loss` lists what the caller accepted to lose. */
export interface UpdatedBucket extends BucketRef {
  changes: FieldChange[];
  loss?: Loss[];
}

export type ConflictReason =
  /** JetStream does not change this setting on an existing stream (storage, max_consumers, retention…). */
  | "immutable"
  /** The change would discard stored values; `loss` says which. Listing the bucket in `acceptLoss` applies a history or ttl cut. */
  | "would-lose-data";

/** A difference the raise did not apply. The bucket keeps its current value for this field. */
export interface Conflict extends BucketRef {
  change: FieldChange;
  reason: ConflictReason;
  loss?: Loss;
  /** What an operator can do about it. */
  advice: string;
}

/** A `mod_*` bucket whose declaration is gone. Reported, never removed. */
export interface Orphan extends BucketRef {
  /** Subjects holding a message (stream state num_subjects): keys, including deleted keys whose marker is kept. */
  keys: number;
  messages: number;
  bytes: number;
}

/** A `reads` entry naming a bucket that no module of the catalogue declares. */
export interface DanglingRead {
  module: string;
  reference: string;
  bucket: string;
  /** Whether the bucket is still on the server (then it is also an orphan). */
  exists: boolean;
}

/**
 * How a JetStream API request failed: `timeout` (no answer in time, or the connection closed first — the
 * server may still apply it; the next raise sees what it did), `no-responders` (no JetStream listening), `denied` (the user may not send it),
 * `server` (JetStream answered with an error: the request was not applied).
 */
export type ApiFailure = "timeout" | "no-responders" | "denied" | "server";

/** A create or update that was sent and the server refused or did not answer; the next raise tries again. */
export interface FailedBucket extends BucketRef {
  action: "create" | "update";
  failure: ApiFailure;
  /** The JetStream API error code (`err_code`) when the server gave one. */
  serverCode?: number;
  message: string;
}

/**
 * What the raise left undone, and nothing of it was written; the next raise does it.
 * - `create`, `update`: not sent, because JetStream had already shown it cannot answer (see `concurrency`);
 * - `check`: the bucket exists, but its stream's leader did not answer the listing (a node down), so its
 *   configuration and size are unknown: it was neither compared nor changed, nor, if undeclared, measured.
 */
export interface NotAttemptedBucket extends BucketRef {
  action: "create" | "update" | "check";
}

/**
 * A bucket holding at least `FILL_WARNING_PERCENT` (90) % of its max bytes. On nats-server < 2.10.5 a write
 * near the limit can evict the oldest key although the bucket is `discard: new` (nats-server#4771, decision 0004).
 */
export interface NearlyFullBucket extends BucketRef {
  bytes: number;
  /** The bucket's max bytes once this raise is done (an applied maxBytes change counts). */
  maxBytes: number;
  /** bytes / maxBytes as a percentage, rounded down to one decimal. */
  percent: number;
}

export interface RaiseReport {
  /** True when nothing was written (`plan: true`). */
  plan: boolean;
  replicas: number;
  created: CreatedBucket[];
  updated: UpdatedBucket[];
  unchanged: string[];
  conflicts: Conflict[];
  orphans: Orphan[];
  danglingReads: DanglingRead[];
  failed: FailedBucket[];
  /** Creates and updates not sent once JetStream stopped answering: not done, and due on the next raise. */
  notAttempted: NotAttemptedBucket[];
  /** Buckets at or above 90 % of their max bytes, fullest first. */
  nearlyFull: NearlyFullBucket[];
  /**
   * Each declared bucket with `forgetDeletes` that this raise asserted (created, updated or found as declared),
   * and whether its markers can expire: the input `issueBuckets` issues the option from.
   */
  forgetDeletes: ForgetDeletesBucket[];
  /** Set when the buckets to create do not fit the account's file store: then nothing is created. */
  storeShortfall?: StoreShortfall;
  /** Set when the buckets to create do not fit the servers' own file store (`monitorUrls`): then nothing is created. */
  serverShortfall?: ServerShortfall;
}

/**
 * A bucket that declares `forgetDeletes`, after the raise:
 * - `on`: its stream allows per-message ttls (`allow_msg_ttl`, nats-server 2.11+), so its deletes' markers
 *   can carry one; with `plan`, it would;
 * - `unsupported`: the server is older than 2.11; the markers stay until `compact` removes them.
 * A bucket whose create or update failed is not listed (see `failed`): the option is not issued for it.
 */
export interface ForgetDeletesBucket extends BucketRef {
  /** As declared: `30d`. */
  after: string;
  state: "on" | "unsupported";
}

/** What a raise would reserve beyond the account's file store limit (`$JS.API.INFO`), in bytes. */
export interface StoreShortfall {
  /** The buckets to create or grow. */
  buckets: string[];
  /** Their max bytes times replicas, beyond what they reserve today. */
  needed: number;
  /** The account's limit less what its streams reserve. */
  available: number;
  limit: number;
  reserved: number;
}

/** The new buckets against each server's own file store (`max_file_store`), as its `/jsz` reports it. */
export interface ServerShortfall {
  /** Each bucket to create or grow, and the bytes it reserves on each server holding one of its replicas. */
  buckets: { bucket: string; bytes: number }[];
  /** Their sum: what a server needs free to hold a replica of each. */
  neededPerServer: number;
  /** Servers that must hold it: the replica count. */
  replicas: number;
  /** Every server read: its limit, what its streams (of every account) reserve, and what is free. */
  servers: { url: string; serverId: string; limit: number; reserved: number; free: number }[];
}

/** The settings of a bucket as the raise makes them. */
export interface BucketSettings {
  history: number;
  /** max_age in nanoseconds; 0 for no expiry. */
  ttl: number;
  maxValueSize: number;
  maxBytes: number;
  replicas: number;
  maxConsumers: number;
}

/** Input of `issueBuckets`. */
export interface IssueBucketsInput {
  module: string;
  catalogue: Catalogue;
  /**
   * The report of the raise that asserted the catalogue's buckets: `forgetDeletes` is issued only for a bucket
   * it lists as `on` (a delete with a ttl to a stream without `allow_msg_ttl` is refused). Without it, never.
   */
  raised?: Pick<RaiseReport, "forgetDeletes"> & Partial<Pick<RaiseReport, "plan">>;
}
