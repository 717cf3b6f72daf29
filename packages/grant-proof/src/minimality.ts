import { check, expect, type Recorder } from "./check.js";
import { FIXTURE, type MinimalityVariant } from "./fixture.js";
import { connectClient, getEntry, putValue, type StateClient } from "./operations.js";
import { deleteConsumer, keyHistory, listKeys, watchWithLiveUpdate } from "./reads.js";

/** The bucket a subject is about: the big bucket's subjects name it; everything else runs on the small one. */
function bucketOf(subject: string): string {
  return subject.includes(FIXTURE.big) ? FIXTURE.big : FIXTURE.small;
}

/**
 * The role's operations in order, stopping at the first failure; each one alone uses only what the
 * runtime uses. With the full grant all succeed (the matrix shows it); with one subject removed, one fails.
 */
async function firstFailure(
  role: "owner" | "reader",
  client: StateClient,
  writer: StateClient,
  bucket: string,
): Promise<string> {
  const steps: [string, () => Promise<unknown>][] = [
    ["get", () => getEntry(client, bucket, "seed.0").then((entry) => expect(entry !== null, "seed.0 missing"))],
    ...(role === "owner"
      ? [["put", () => putValue(client, bucket, "minimality.k", "v")] as [string, () => Promise<unknown>]]
      : []),
    ["keys", () => listKeys(client, bucket)],
    [
      "watch, then stop it and delete its consumer",
      async () => {
        const watch = await watchWithLiveUpdate(client, bucket, () => putValue(writer, bucket, "live.minimality", "v"));
        await deleteConsumer(client, watch.consumer.stream, watch.consumer.name);
      },
    ],
    ["history", () => keyHistory(client, bucket, "seed.0")],
  ];
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (error) {
      throw new Error(`${name} failed`, { cause: error });
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
          operation: "some operation fails",
          bucket: bucketOf(variant.removed),
          expected: "refused",
          isRefusal: () => true,
        },
        () => firstFailure(variant.role, client, writer, bucketOf(variant.removed)),
      );
    } finally {
      await client.nc.close();
    }
  }
}
