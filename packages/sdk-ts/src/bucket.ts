import { STATE_ERROR_CODES, type StateParams } from "@mesh/state-protocol";
import { findCredential } from "@mesh/state-protocol/secrets";
import { StateError } from "./errors.js";
import { startMirror } from "./mirror.js";
import type {
  Entry,
  HistoryEntry,
  KeysOptions,
  Mirror,
  ReadOnlyStateHandle,
  ReadOptions,
  StateHandle,
  Updated,
  UpdateOptions,
  ValueSchema,
  Watch,
  WatchOptions,
} from "./types.js";
import { ValueCodec } from "./values.js";
import type { VerbCaller } from "./verb-caller.js";

/** How many read-modify-write rounds `update` tries by default before it gives up. */
export const DEFAULT_UPDATE_ATTEMPTS = 30;
const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 250;

/**
 * A bucket the module reads. The writing handle extends it; a `reads()` handle is this class, so its
 * object has no write method either — not just its type.
 */
export class ReadOnlyStateBucket<V> implements ReadOnlyStateHandle<V> {
  protected readonly codec: ValueCodec<V>;

  constructor(
    protected readonly verbs: VerbCaller,
    readonly name: string,
    schema: ValueSchema<V> | undefined,
  ) {
    this.codec = new ValueCodec(name, schema);
  }

  get(key: string, options?: ReadOptions): Promise<Entry<V> | null> {
    const consistency = options?.consistency;
    // Only the fields given: a read without options sends what it always sent (the runtime's default applies).
    const params = consistency === undefined ? { bucket: this.name, key } : { bucket: this.name, key, consistency };
    return this.verbs
      .call("mesh/state.get", params, { bucket: this.name, key })
      .then((entry) => (entry === null ? null : { ...entry, value: this.codec.decodeOrThrow(entry.key, entry.value) }));
  }

  async keys(options?: string | KeysOptions): Promise<string[]> {
    const params = this.filtered(typeof options === "string" ? { filter: options } : (options ?? {}));
    const { keys } = await this.verbs.call("mesh/state.keys", params, { bucket: this.name });
    return keys;
  }

  async history(key: string, options?: ReadOptions): Promise<HistoryEntry<V>[]> {
    const consistency = options?.consistency;
    const params = consistency === undefined ? { bucket: this.name, key } : { bucket: this.name, key, consistency };
    const { entries } = await this.verbs.call("mesh/state.history", params, { bucket: this.name, key });
    return entries.map((entry) => this.codec.decodeEntry(entry));
  }

  watch(options: WatchOptions = {}): Watch<V> {
    return this.verbs.openWatch(this.codec, this.filtered(options));
  }

  mirror(options: WatchOptions = {}): Mirror<V> {
    return startMirror(this.watch(options));
  }

  /** keys' and watch's params: the bucket, and only the options given. */
  private filtered({ filter, consistency }: WatchOptions): StateParams<"mesh/state.watch"> {
    const params: StateParams<"mesh/state.watch"> = { bucket: this.name };
    if (filter !== undefined) params.filter = filter;
    if (consistency !== undefined) params.consistency = consistency;
    return params;
  }
}

/** A bucket the module owns. */
export class StateBucket<V> extends ReadOnlyStateBucket<V> implements StateHandle<V> {
  put(key: string, value: V, options: { revision?: number } = {}): Promise<number> {
    let params: StateParams<"mesh/state.put">;
    try {
      // The schema checked the value; whether it is JSON at all the runtime decides (`bad-request`).
      const encoded = this.codec.encode(key, value) as StateParams<"mesh/state.put">["value"];
      refuseCredential(this.name, key, encoded);
      params =
        options.revision === undefined
          ? { bucket: this.name, key, value: encoded }
          : { bucket: this.name, key, value: encoded, revision: options.revision };
    } catch (error) {
      return Promise.reject(error);
    }
    return this.verbs.call("mesh/state.put", params, { bucket: this.name, key }).then(({ revision }) => revision);
  }

  async create(key: string, value: V): Promise<number> {
    return this.put(key, value, { revision: 0 });
  }

  async update(
    key: string,
    change: (current: V | undefined) => V | Promise<V>,
    options: UpdateOptions = {},
  ): Promise<Updated<V>> {
    const attempts = Math.max(1, options.attempts ?? DEFAULT_UPDATE_ATTEMPTS);
    let lastConflict: StateError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const current = await this.get(key);
      const value = await change(current?.value);
      try {
        const revision = await this.put(key, value, { revision: current?.revision ?? 0 });
        return { key, value, revision };
      } catch (error) {
        if (!StateError.is(error, "conflict")) throw error;
        lastConflict = error;
        // Writers that collided would collide again in lockstep: a random pause in a window that doubles
        // each round (5 ms, 10 ms, … up to 250 ms) spreads them out ("full jitter").
        if (attempt < attempts)
          await pause(Math.random() * Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1)));
      }
    }
    throw new StateError(
      "conflict",
      `update of key ${key} in bucket ${this.name} gave up after ${attempts} attempts: another writer changed it each time`,
      {
        code: STATE_ERROR_CODES.conflict,
        bucket: this.name,
        key,
        ...(lastConflict?.revision === undefined ? {} : { revision: lastConflict.revision }),
        cause: lastConflict,
      },
    );
  }

  async delete(key: string, options: { revision?: number } = {}): Promise<void> {
    const params =
      options.revision === undefined
        ? { bucket: this.name, key }
        : { bucket: this.name, key, revision: options.revision };
    await this.verbs.call("mesh/state.delete", params, { bucket: this.name, key });
  }
}

/** The runtime's secret rule, run before the value leaves the process; the error never repeats the value. */
function refuseCredential(bucket: string, key: string, value: unknown): void {
  const found = findCredential(value);
  if (found === undefined) return;
  const what =
    found.kind === "field-name"
      ? `a field named like a credential (${found.path})`
      : `a string shaped like a credential (${found.kind}, at ${found.path === "" ? "the value itself" : found.path})`;
  throw new StateError(
    "secret-field",
    `the value for ${key} in bucket ${bucket} has ${what}: credentials are never stored on the bus; keep a reference to where the secret lives instead (nothing was sent)`,
    { code: STATE_ERROR_CODES["secret-field"], bucket, key, path: found.path, kind: found.kind },
  );
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
