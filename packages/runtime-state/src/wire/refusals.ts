import type { IssuedBucket, Membership } from "@mesh/manifest-schema";
import { checkFilter, checkKey, findCredential, MAX_VALUE_BYTES, type StateErrorReason } from "@mesh/state-protocol";
import type { Logger } from "pino";
import { type RefusalData, StateRefusal } from "./errors.js";

/** A value to write, encoded once: its size is checked, its fields scanned, and its bytes published. */
export interface EncodedValue {
  value: unknown;
  bytes: Uint8Array;
}

export function encodeValue(value: unknown): EncodedValue {
  // Buffer.from, not TextEncoder#encode: 0.29 against 2.6 µs for a 256-byte value on node 20 (a pooled slice
  // against a buffer of its own per call); 49 against 177 µs for 207 KiB.
  return { value, bytes: Buffer.from(JSON.stringify(value)) };
}

/**
 * Everything the membership and the wire rules decide, before NATS is touched: each check throws a
 * `StateRefusal` with its reason and a message a person can act on, and logs the refusal (never a value).
 */
export class Refusals {
  private readonly module: string;
  private readonly membership: Membership;
  private readonly logger: Logger;

  constructor(membership: Membership, logger: Logger) {
    this.module = membership.module;
    this.membership = membership;
    this.logger = logger;
  }

  /** The issued bucket behind the name the module uses; refuses one it was not issued or may not write. */
  issued(name: string, access: "read" | "write"): IssuedBucket {
    const issued = this.membership.buckets[name];
    if (issued === undefined) {
      const known = Object.keys(this.membership.buckets).join(", ") || "none";
      throw this.refuse(
        "not-issued",
        name,
        `bucket ${name} is not issued to ${this.module} (its membership has: ${known}): declare it in the manifest's state or reads and raise again`,
      );
    }
    if (access === "write" && issued.access === "read") {
      throw this.refuse("read-only", name, `bucket ${name} is read-only for ${this.module}: it is in reads, not state`);
    }
    return issued;
  }

  checkKey(bucket: string, key: string): void {
    const problem = checkKey(key);
    if (problem !== undefined) throw this.refuse("bad-key", bucket, problem);
  }

  checkFilter(bucket: string, filter: string | undefined): void {
    const problem = filter === undefined ? undefined : checkFilter(filter);
    if (problem !== undefined) throw this.refuse("bad-key", bucket, problem);
  }

  /** A value to write: within the bucket's max value size, with no field named like a credential and no string shaped like one. */
  checkValue(bucket: string, issued: IssuedBucket, key: string, value: EncodedValue): void {
    const size = value.bytes.byteLength;
    const max = issued.maxValueSize ?? MAX_VALUE_BYTES;
    if (size > max) {
      throw this.refuse(
        "too-large",
        bucket,
        `the value for ${key} is ${size} bytes encoded; bucket ${bucket} takes at most ${max}: store less, or split it over keys`,
      );
    }
    const secret = findCredential(value.value);
    if (secret !== undefined) {
      // Names the place and the kind, never the value or any part of it.
      const what =
        secret.kind === "field-name"
          ? `a field named like a credential (${secret.path})`
          : `a string shaped like a credential (${secret.kind}, at ${secret.path === "" ? "the value itself" : secret.path})`;
      throw this.refuse(
        "secret-field",
        bucket,
        `the value for ${key} has ${what}: credentials are never stored on the bus; keep a reference to where the secret lives instead`,
        { path: secret.path, kind: secret.kind },
      );
    }
  }

  checkWatchCount(bucket: string, open: number, most: number): void {
    if (open >= most) {
      throw this.refuse(
        "limit",
        bucket,
        `${this.module} has ${open} watches open, the most a bundle may have (limit watches): unwatch one first`,
        { limit: "watches", max: most },
      );
    }
  }

  refuse(reason: StateErrorReason, bucket: string | undefined, message: string, extra: RefusalData = {}): StateRefusal {
    this.logger.info({ bucket, reason }, "state verb refused");
    return new StateRefusal(reason, message, extra);
  }
}
