import { WATCH_END_REASONS, type WatchEventsParams, type WireWatchEvent } from "./events.js";

/**
 * `WatchEventsParamsSchema` for the receiving side's hot path: the same verdict on the envelope and on every
 * event's fields (unknown fields dropped, as the schema drops them), without walking each value. For params
 * that came out of `JSON.parse` of a line only: such a value is JSON by construction, so walking it again
 * for every event of every batch is pure cost (it was a tenth of a watching bundle's CPU). The value rules
 * that JSON.parse does not hold — depth, finite numbers — are enforced where values are written.
 *
 * @example
 * const checked = checkWatchEventsParams(JSON.parse(line).params);
 * if (!checked.ok) refuse(checked.issues.join("; "));
 */
export function checkWatchEventsParams(
  params: unknown,
): { ok: true; value: WatchEventsParams } | { ok: false; issues: string[] } {
  if (!isRecord(params)) return fail("params: expected an object");
  const { watch, events } = params;
  if (typeof watch !== "string" || watch.length < 1 || watch.length > 64) {
    return fail("watch: expected a string of 1 to 64 characters");
  }
  if (!Array.isArray(events) || events.length === 0) return fail("events: expected a non-empty array");
  const checked = new Array<WireWatchEvent>(events.length);
  for (let index = 0; index < events.length; index++) {
    const event = checkEvent(events[index]);
    if (typeof event === "string") return fail(`events.${index}${event}`);
    checked[index] = event;
  }
  return { ok: true, value: { watch, events: checked } };
}

const END_REASONS: ReadonlySet<string> = new Set(WATCH_END_REASONS);

/** The event with only its own fields, or where it breaks the contract (`.field: message`). */
function checkEvent(event: unknown): WireWatchEvent | string {
  if (!isRecord(event)) return ": expected an object";
  switch (event.type) {
    case "put": {
      const { key, value, revision, updated } = event;
      if (value === undefined) return ".value: expected a JSON value";
      return entryProblem(key, revision, updated) ?? ({ type: "put", key, value, revision, updated } as WireWatchEvent);
    }
    case "delete": {
      const { key, revision, updated } = event;
      return entryProblem(key, revision, updated) ?? ({ type: "delete", key, revision, updated } as WireWatchEvent);
    }
    case "current":
      return { type: "current" };
    case "ended": {
      const { reason, message } = event;
      if (typeof reason !== "string" || !END_REASONS.has(reason))
        return `.reason: expected one of ${WATCH_END_REASONS.join(", ")}`;
      if (typeof message !== "string") return ".message: expected a string";
      return { type: "ended", reason, message } as WireWatchEvent;
    }
    default:
      return ".type: expected put, delete, current or ended";
  }
}

function entryProblem(key: unknown, revision: unknown, updated: unknown): string | undefined {
  if (typeof key !== "string") return ".key: expected a string";
  if (!Number.isSafeInteger(revision) || (revision as number) < 0) return ".revision: expected a revision";
  if (typeof updated !== "string") return ".updated: expected a string";
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(issue: string): { ok: false; issues: string[] } {
  return { ok: false, issues: [issue] };
}
