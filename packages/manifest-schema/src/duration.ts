/**
 * A ttl as a manifest writes it: a whole number and a unit, `s`, `m`, `h` or `d` (`90s`, `12h`, `30d`).
 * At most five digits, so every duration fits JetStream's nanosecond max_age (int64).
 */
export const DURATION_PATTERN = /^[1-9][0-9]{0,4}(s|m|h|d)$/;

const UNIT_MILLISECONDS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a valid duration; throws `RangeError` on anything else. */
export function durationToMilliseconds(duration: string): number {
  if (!DURATION_PATTERN.test(duration)) throw new RangeError(`not a duration: ${JSON.stringify(duration)}`);
  const unit = duration.slice(-1) as keyof typeof UNIT_MILLISECONDS;
  return Number(duration.slice(0, -1)) * UNIT_MILLISECONDS[unit];
}

/** Nanoseconds of a valid duration, as JetStream's max_age takes it. */
export function durationToNanoseconds(duration: string): number {
  return durationToMilliseconds(duration) * 1_000_000;
}
