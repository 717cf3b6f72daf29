import type { WireHistoryEntry } from "@mesh/state-protocol";
import { ClientError } from "./errors.js";
import type { HistoryEntry, ValueSchema } from "./types.js";

/**
 * Checks values against a handle's schema at the two edges of the process: before a write leaves it and
 * after a read arrives. Without a schema every JSON value passes as is.
 */
export class ValueCodec<V> {
  constructor(
    private readonly bucket: string,
    private readonly schema: ValueSchema<V> | undefined,
  ) {}

  /** The value to send, as the schema parsed it; throws `ClientError("invalid-value")` before anything is sent. */
  encode(key: string, value: V): unknown {
    if (this.schema === undefined) return value;
    const parsed = this.schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = formatIssues(parsed.error.issues);
    throw new ClientError(
      "invalid-value",
      `value for key ${key} in bucket ${this.bucket} does not fit the schema, nothing was written: ${issues.join("; ")}`,
      { bucket: this.bucket, key, issues },
    );
  }

  /** The typed value, or the error naming the key when the stored value does not fit. */
  decode(key: string, value: unknown): { ok: true; value: V } | { ok: false; error: ClientError } {
    if (this.schema === undefined) return { ok: true, value: value as V };
    const parsed = this.schema.safeParse(value);
    if (parsed.success) return { ok: true, value: parsed.data };
    const issues = formatIssues(parsed.error.issues);
    const error = new ClientError(
      "invalid-stored-value",
      `stored value of key ${key} in bucket ${this.bucket} does not fit the schema: ${issues.join("; ")}`,
      { bucket: this.bucket, key, issues },
    );
    return { ok: false, error };
  }

  /** Like `decode`, throwing the error: for `get` and `update`, where a value is needed. */
  decodeOrThrow(key: string, value: unknown): V {
    const decoded = this.decode(key, value);
    if (!decoded.ok) throw decoded.error;
    return decoded.value;
  }

  /** A put as the SDK hands it out: typed, or an `invalid` event carrying the error. */
  decodeEntry(entry: WireHistoryEntry): HistoryEntry<V> {
    // Without a schema a checked entry (its own fields only) is already the SDK's: no copy per event.
    if (entry.type === "delete" || this.schema === undefined) return entry as HistoryEntry<V>;
    const decoded = this.decode(entry.key, entry.value);
    const { key, revision, updated } = entry;
    if (decoded.ok) return { type: "put", key, value: decoded.value, revision, updated };
    return { type: "invalid", key, revision, updated, value: entry.value, error: decoded.error };
  }
}

function formatIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string[] {
  return issues.map((issue) => {
    const path = issue.path.map((part) => String(part)).join(".");
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
}
