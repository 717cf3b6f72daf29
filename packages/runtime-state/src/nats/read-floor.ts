/**
 * What one bucket client (one bundle, one bucket) has seen of each key: the revision a read of that key must
 * reach so that it never goes back before a write the runtime acknowledged or an answer the bundle was given
 * (docs/decisions/0011-read-consistency.md). A missing key counts as revision 0; a delete marker has its own.
 *
 * Bounded whatever the number of keys: the most recent keys exactly (a `Map` in least-recently-used order), and
 * every key evicted from it in a max-sketch — slots indexed by a hash of the key, each the highest revision of
 * the keys that hashed there. A sketch value can only be too high, never too low: a collision costs one read
 * from the stream leader, never a stale answer.
 */

/** Keys remembered exactly, per bucket client. */
export const FLOOR_EXACT_KEYS = 1_024;
/** Slots of the max-sketch (8 bytes each), allocated at the first eviction. */
export const FLOOR_SKETCH_SLOTS = 4_096;

export class ReadFloor {
  private readonly exact = new Map<string, number>();
  private sketch: Float64Array | undefined;
  private highest = 0;

  constructor(
    private readonly exactKeys = FLOOR_EXACT_KEYS,
    private readonly sketchSlots = FLOOR_SKETCH_SLOTS,
  ) {}

  /** The revision a read of `key` must reach: 0 when nothing of it is remembered. */
  of(key: string): number {
    return this.exact.get(key) ?? this.sketch?.[this.slot(key)] ?? 0;
  }

  /**
   * The key's floor when it is remembered exactly, else 0: a revision below it is certainly stale (a sketch value
   * may be too high, and only sends a read to the leader).
   */
  exactOf(key: string): number {
    return this.exact.get(key) ?? 0;
  }

  /** The highest revision written or seen in the bucket: 0 when this client has neither written nor read it. */
  get highestRevision(): number {
    return this.highest;
  }

  /** Keys remembered exactly (at most `exactKeys`). */
  get exactSize(): number {
    return this.exact.size;
  }

  /**
   * `revision` of `key` is known to be at or above its floor: a write's acknowledgement, the leader's answer, or
   * an answer checked against `of(key)`. The key becomes the most recent one remembered exactly.
   */
  settle(key: string, revision: number): void {
    if (revision > this.highest) this.highest = revision;
    const known = this.exact.get(key);
    if (known !== undefined) this.exact.delete(key);
    else if (this.exact.size >= this.exactKeys) this.evictOldest();
    this.exact.set(key, known === undefined || revision > known ? revision : known);
  }

  /**
   * `revision` of `key` was shown to the bundle by a read not checked against the floor (a watch's or a keys
   * scan's consumer): it raises the floor, and never lowers what the sketch remembers of an evicted key.
   */
  notice(key: string, revision: number): void {
    if (revision > this.highest) this.highest = revision;
    const known = this.exact.get(key);
    if (known !== undefined) {
      if (revision > known) this.exact.set(key, revision);
      return;
    }
    // At or above the sketch's slot, it is at or above anything evicted for this key: exact from now on.
    // Below it, the slot already covers it.
    if (this.sketch === undefined || revision >= this.sketch[this.slot(key)]!) this.settle(key, revision);
  }

  private evictOldest(): void {
    const oldest = this.exact.keys().next();
    if (oldest.done === true) return;
    const key = oldest.value;
    const revision = this.exact.get(key)!;
    this.exact.delete(key);
    this.sketch ??= new Float64Array(this.sketchSlots);
    const slot = this.slot(key);
    if (revision > this.sketch[slot]!) this.sketch[slot] = revision;
  }

  /** FNV-1a over the key's UTF-16 code units (keys are ASCII), reduced to a slot. */
  private slot(key: string): number {
    let hash = 0x811c9dc5;
    for (let index = 0; index < key.length; index++) {
      hash ^= key.charCodeAt(index);
      hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0) % this.sketchSlots;
  }
}
