import { MESH_CAPS } from "@mesh/manifest-schema";
import { ControllerKvError } from "./errors.js";
import type { FieldChange, RaiseOptions } from "./types.js";

/**
 * A bucket's consumer ceiling (`max_consumers`), sized from the fleet. With shared watches (runtime-state's
 * WatchHub, decision 0008) a machine holds one consumer per bucket and filter it watches; the ceiling allows
 * two per machine — a shared watch, and a `keys`/`history` call or a slow bundle cut over to its own
 * consumer — plus headroom for the consumers of machines that died and wait out their inactivity threshold.
 * Without a fleet size or a ceiling of its own, a bucket keeps the mesh's cap (1,024).
 *
 * JetStream updates `max_consumers` of an existing stream from 2.12 (measured: 2.10.27 and 2.11.17 refuse
 * with "stream configuration update can not change MaxConsumers", 2.12.15 and 2.15.3 accept, also below the
 * consumers the stream holds: those stay, new ones are refused). Where the server refuses, the bucket would
 * have to be recreated to take the new ceiling, which loses its values: the raise reports that, never does it.
 */

export const CONSUMERS_PER_MACHINE = 2;
export const CONSUMER_HEADROOM = 64;
/** The largest ceiling a raise sets: 100,000 machines' worth. */
export const MAX_CONSUMER_CEILING = 200_064;

/** The ceiling of `bucket`: its own if the caller gave one, else from the fleet size, else the mesh's cap. */
export function consumerCeiling(bucket: string, options: Pick<RaiseOptions, "fleetSize" | "maxConsumers">): number {
  const own = options.maxConsumers?.[bucket];
  if (own !== undefined) return own;
  if (options.fleetSize !== undefined) return options.fleetSize * CONSUMERS_PER_MACHINE + CONSUMER_HEADROOM;
  return MESH_CAPS.maxConsumersPerBucket;
}

/** Refuses a fleet size or a ceiling that is not a whole number in range. */
export function checkConsumerSizing(options: Pick<RaiseOptions, "fleetSize" | "maxConsumers">): void {
  const { fleetSize, maxConsumers } = options;
  const wholeUpTo = (value: unknown, most: number) =>
    typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= most;
  if (fleetSize !== undefined && !wholeUpTo(fleetSize, (MAX_CONSUMER_CEILING - CONSUMER_HEADROOM) / 2)) {
    throw new ControllerKvError(
      "bad-options",
      `fleetSize must be the number of machines, a whole number from 1 to 100,000, got ${JSON.stringify(fleetSize)}`,
    );
  }
  if (maxConsumers === undefined) return;
  if (typeof maxConsumers !== "object" || maxConsumers === null) {
    throw new ControllerKvError("bad-options", "maxConsumers must map bucket names (mod_<module>_<name>) to ceilings");
  }
  for (const [bucket, ceiling] of Object.entries(maxConsumers)) {
    if (!wholeUpTo(ceiling, MAX_CONSUMER_CEILING)) {
      throw new ControllerKvError(
        "bad-options",
        `maxConsumers of ${bucket} must be a whole number from 1 to ${MAX_CONSUMER_CEILING}, got ${JSON.stringify(ceiling)}`,
      );
    }
  }
}

/** Whether a server of `version` changes `max_consumers` of an existing stream (from 2.12; unknown: no). */
export function maxConsumersUpdatable(version: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(version ?? "");
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 2 || (major === 2 && minor >= 12);
}

/**
 * Splits the immutable changes of a diff: a `max_consumers` change is applied in place where the server
 * takes it; everything else (and it, where the server refuses) stays a conflict.
 */
export function updatableCeiling(
  immutable: FieldChange[],
  version: string | undefined,
): { apply: FieldChange[]; immutable: FieldChange[] } {
  if (!maxConsumersUpdatable(version)) return { apply: [], immutable };
  return {
    apply: immutable.filter((change) => change.field === "maxConsumers"),
    immutable: immutable.filter((change) => change.field !== "maxConsumers"),
  };
}

export function ceilingAdvice(change: FieldChange, version: string | undefined): string {
  return `nats-server ${version ?? "(version unknown)"} changes max_consumers only when a stream is created (2.12 and later update it in place): to take ${JSON.stringify(change.to)} the bucket must be recreated, which loses its values, so the raise leaves it at ${JSON.stringify(change.from)}. Move its values to a new bucket (an operator's decision, never a raise's) or upgrade the server and raise again`;
}
