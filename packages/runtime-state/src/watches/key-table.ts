/**
 * An exact map from key to a flag, stored compactly: the one structure of a watch that grows with the
 * bucket (the keys met during the initial phase). A `Map<string, boolean>` costs ~64 bytes a short key in
 * V8; this keeps the keys' bytes in one growing array (keys are ASCII by the key rule; any other key goes to
 * a small side map) and an open-addressing index of 32-bit slots at most 3/4 full — measured in
 * docs/decisions/0003-where-current-falls.md. Nothing is ever removed; `clear()` frees it all.
 */
export class KeyTable {
  private bytes: Uint8Array;
  private bytesUsed = 0;
  /** Per entry: where its key starts in `bytes` (entry i ends where i + 1 starts), and its flag. */
  private starts: Int32Array;
  private flags: Uint8Array;
  private count = 0;
  /** Open addressing: entry index + 1, 0 for empty; at most 3/4 full. */
  private slots: Int32Array;
  /** Keys with a character above U+00FF (not valid keys, but another client may have written one). */
  private readonly wide = new Map<string, boolean>();

  /**
   * `expectedKeys` sizes the table for that many keys up front (at most `PRESIZED_KEYS_MAX`), so the keys of
   * an initial pass go in without rebuilding the index as it fills: at the start of a process, before V8
   * has optimised this code, each rebuild is a slow loop over every key so far.
   */
  constructor(expectedKeys = 0) {
    const expected = Number.isFinite(expectedKeys) ? Math.floor(expectedKeys) : 0;
    const keys = Math.max(256, Math.min(expected, PRESIZED_KEYS_MAX));
    this.flags = new Uint8Array(keys + 1);
    this.starts = new Int32Array(keys + 2);
    this.bytes = new Uint8Array(keys * 16); // keys of up to 16 characters fit without growing
    let slots = 512;
    while (keys * 4 > slots * 3) slots *= 2;
    this.slots = new Int32Array(slots);
  }

  get size(): number {
    return this.count + this.wide.size;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** The key's flag, or `undefined` when the key is not in the table. */
  get(key: string): boolean | undefined {
    const hash = narrowHashOf(key);
    if (hash === WIDE) return this.wide.get(key);
    const entry = this.find(key, hash);
    return entry < 0 ? undefined : this.flags[entry] === 1;
  }

  /** Adds the key with its flag when it is not in the table; `false` (and the flag unchanged) when it is. */
  add(key: string, flag: boolean): boolean {
    const hash = narrowHashOf(key);
    if (hash === WIDE) {
      if (this.wide.has(key)) return false;
      this.wide.set(key, flag);
      return true;
    }
    if (this.find(key, hash) >= 0) return false;
    this.insert(key, flag, hash);
    return true;
  }

  set(key: string, flag: boolean): void {
    const hash = narrowHashOf(key);
    if (hash === WIDE) {
      this.wide.set(key, flag);
      return;
    }
    const found = this.find(key, hash);
    if (found >= 0) {
      this.flags[found] = flag ? 1 : 0;
      return;
    }
    this.insert(key, flag, hash);
  }

  private insert(key: string, flag: boolean, hash: number): void {
    if ((this.count + 1) * 4 > this.slots.length * 3) this.reindex(this.slots.length * 2);
    const entry = this.append(key, flag);
    this.slots[this.emptySlot(hash)] = entry + 1;
  }

  *entries(): Generator<[string, boolean]> {
    for (let entry = 0; entry < this.count; entry++) yield [this.keyAt(entry), this.flags[entry] === 1];
    yield* this.wide;
  }

  clear(): void {
    Object.assign(this, new KeyTable());
  }

  private find(key: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) return -1;
      if (this.keyEquals(entry, key)) return entry;
    }
  }

  private emptySlot(hash: number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    return slot;
  }

  private append(key: string, flag: boolean): number {
    if (this.count + 1 >= this.flags.length) {
      // Growth by half, not double: the slack is what a compact table is for saving.
      const capacity = Math.ceil(this.flags.length * 1.5);
      this.starts = grow(this.starts, capacity + 1);
      this.flags = grow(this.flags, capacity);
    }
    if (this.bytesUsed + key.length > this.bytes.length) {
      this.bytes = grow(this.bytes, Math.max(Math.ceil(this.bytes.length * 1.5), this.bytesUsed + key.length));
    }
    for (let index = 0; index < key.length; index++) this.bytes[this.bytesUsed + index] = key.charCodeAt(index);
    const entry = this.count++;
    this.bytesUsed += key.length;
    this.starts[entry + 1] = this.bytesUsed;
    this.flags[entry] = flag ? 1 : 0;
    return entry;
  }

  /** Hashes are not kept (4 bytes a key): a rebuild reads them off the stored keys. */
  private reindex(capacity: number): void {
    this.slots = new Int32Array(capacity);
    for (let entry = 0; entry < this.count; entry++) {
      this.slots[this.emptySlot(hashOfBytes(this.bytes, this.starts[entry]!, this.starts[entry + 1]!))] = entry + 1;
    }
  }

  private keyEquals(entry: number, key: string): boolean {
    const start = this.starts[entry]!;
    if (this.starts[entry + 1]! - start !== key.length) return false;
    for (let index = 0; index < key.length; index++) {
      if (this.bytes[start + index] !== key.charCodeAt(index)) return false;
    }
    return true;
  }

  private keyAt(entry: number): string {
    return String.fromCharCode(...this.bytes.subarray(this.starts[entry]!, this.starts[entry + 1]!));
  }
}

/**
 * The most keys a table is sized for up front (about 450 KiB): the pending count comes from the bucket, which
 * may hold millions, and a bundle may open many watches at once. A larger pass grows as before.
 */
export const PRESIZED_KEYS_MAX = 16_384;

/** `narrowHashOf` of a key with a character above U+00FF: such a key goes to the side map. */
const WIDE = -1;

/**
 * FNV-1a over the key's bytes (one per character), as an unsigned 32-bit number, or `WIDE`: one loop for
 * both, since each costs a pass over the key. Cheap; an exact comparison follows every probe.
 */
function narrowHashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    const code = key.charCodeAt(index);
    if (code > 0xff) return WIDE;
    hash = Math.imul(hash ^ code, 0x01000193);
  }
  return hash >>> 0;
}

function hashOfBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ bytes[index]!, 0x01000193);
  return hash >>> 0;
}

function grow<T extends Uint8Array | Int32Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  return bigger;
}
