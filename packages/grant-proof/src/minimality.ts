import { check, expect, type Recorder } from "./check.js";
import { FIXTURE, type MinimalityVariant } from "./fixture.js";
import { connectClient, describeError, type StateClient, subjectMatches, type Violation } from "./operations.js";
import { keyHistory, listKeys, stopWatch, watchWithLiveUpdate } from "./reads.js";

/** The bucket a subject is about: the big bucket's subjects name it; everything else runs on the small one. */
function bucketOf(subject: string): string {
  return subject.includes(FIXTURE.big) ? FIXTURE.big : FIXTURE.small;
}

/** The removed subject was necessary: the server refused exactly it. */
class RefusedTheRemovedSubject extends Error {
  constructor(step: string, violation: Violation) {
    super(`${step} failed: the server refused ${violation.operation} ${violation.subject}`);
    this.name = "RefusedTheRemovedSubject";
  }
}

/**
 * The role's operations in order, through runtime-state's code, stopping at the first failure. With the full
 * grant all succeed (the matrix shows it). With one subject removed, a row passes only when an operation
 * failed and the server reported a permission violation on a subject the removed one matches — a timeout
 * or any other failure is not proof that the subject was needed.
 */
async function firstFailure(variant: MinimalityVariant, client: StateClient, writer: StateClient): Promise<string> {
  const bucket = bucketOf(variant.removed);
  const steps: [string, () => Promise<unknown>][] = [
    ["get", async () => expect((await client.bucket(bucket).read("seed.0")) !== null, "seed.0 missing")],
    [
      "strong get (from the stream's leader)",
      async () => expect((await client.bucket(bucket).readFromLeader("seed.0")) !== null, "seed.0 missing"),
    ],
    ...(variant.role === "owner"
      ? [["put", () => client.bucket(bucket).put("minimality.k", "v")] as [string, () => Promise<unknown>]]
      : []),
    ["keys", () => listKeys(client, bucket)],
    [
      "watch, then stop it and delete its consumer",
      async () => {
        const watch = await watchWithLiveUpdate(client, bucket, () =>
          writer.bucket(bucket).put("live.minimality", "v"),
        );
        await stopWatch(client, bucket, watch.reader);
      },
    ],
    ["history", () => keyHistory(client, bucket, "seed.0")],
  ];
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (error) {
      // The server's -ERR for a refused pull or subscription reaches the connection's status, not the call.
      await client.nc.flush().catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      const operation = variant.kind === "publish" ? "publish" : "subscription";
      // The variant's own inbox stands for the role's (same grant subject, the variant's machine name).
      const removed = variant.kind === "publish" ? variant.removed : `${variant.user.grant.inboxPrefix}.>`;
      const violation = client.violations.find(
        (seen) => seen.operation === operation && subjectMatches(removed, seen.subject),
      );
      if (violation) throw new RefusedTheRemovedSubject(name, violation);
      const seen = client.violations.map((v) => `${v.operation} ${v.subject}`).join(", ") || "none";
      throw new Error(
        `${name} failed without a refusal of ${variant.removed} (violations: ${seen}): ${describeError(error)}`,
      );
    }
  }
  return `all of ${steps.map(([name]) => name).join(", ")} succeeded`;
}

/** Minimality: every subject of the owner's and the reader's grant is necessary. */
export async function minimalityChecks(
  recorder: Recorder,
  url: string,
  variants: readonly MinimalityVariant[],
  writer: StateClient,
  timeoutMs: number,
): Promise<void> {
  for (const variant of variants) {
    const { grant, password } = variant.user;
    const client = await connectClient(url, { user: grant.user, password, inboxPrefix: grant.inboxPrefix }, timeoutMs);
    try {
      await check(
        recorder,
        {
          role: `${variant.role} minus ${variant.kind} ${variant.removed}`,
          operation: "an operation is refused on that subject",
          bucket: bucketOf(variant.removed),
          expected: "refused",
          isRefusal: (error) => error instanceof RefusedTheRemovedSubject,
        },
        () => firstFailure(variant, client, writer),
      );
    } finally {
      await client.nc.close();
    }
  }
}
