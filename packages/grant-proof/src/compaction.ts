import { type CompactReport, ControllerKvError, compact, raise } from "@mesh/controller-kv";
import { type Catalogue, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { check, expect, fact, type Recorder } from "./check.js";
import { type CompactionVariant, FIXTURE } from "./fixture.js";
import { apiRequest, connectClient, describeError, type StateClient, subjectMatches } from "./operations.js";

/**
 * Compaction under the controller's grant (decision 0009), through controller-kv's own `compact`: it removes the
 * big bucket's old markers and nothing else; it is refused on a bucket outside the catalogue; and each of the
 * big bucket's compaction subjects is necessary — without it, compaction fails with a permission violation
 * on that subject.
 */
export async function compactionChecks(
  recorder: Recorder,
  clients: { controller: StateClient; owner: StateClient },
  catalogue: Catalogue,
  variants: readonly CompactionVariant[],
  url: string,
): Promise<void> {
  const { controller, owner } = clients;
  const big = owner.bucket(FIXTURE.big);
  await check(
    recorder,
    {
      role: "controller",
      operation: "compact (old markers go, values stay)",
      bucket: FIXTURE.big,
      expected: "allowed",
    },
    async () => {
      for (let index = 0; index < 10; index += 1) await big.delete(`seed.${index}`);
      const started = performance.now();
      const report = await compactAll(controller, catalogue);
      const ms = Math.round(performance.now() - started);
      const bucket = report.buckets.find((b) => b.bucket === FIXTURE.big);
      // The matrix deleted keys of its own before: every marker is old, and every one goes.
      const removed = bucket?.removedMarkers ?? 0;
      expect(removed >= 10 && removed === bucket?.markers, `removed ${removed} of ${bucket?.markers} markers`);
      expect((await big.read("seed.0")) === null, "seed.0 reads as a value after compaction");
      expect((await big.read("seed.10")) !== null, "seed.10, a value, is gone");
      const { before, after, keys } = bucket!;
      fact(
        recorder,
        "compaction",
        `removed ${removed} of ${removed} markers in ${bucket!.durationMs} ms`,
        `the big bucket: ${keys} keys scanned, ${before.bytes} -> ${after?.bytes} bytes; the whole catalogue in ${ms} ms`,
      );
      return `removed ${removed} markers of ${keys} keys in ${bucket!.durationMs} ms; seed.10 kept`;
    },
  );

  const outside = parseCatalogue([{ name: FIXTURE.outsideModule, state: { kept: {} } }]);
  // The controller may create any bucket (STREAM.CREATE.*), but compacts only the catalogue's.
  await raise({ connection: controller.nc, catalogue: outside, replicas: 1, timeoutMs: controller.timeoutMs });
  await check(
    recorder,
    {
      role: "controller",
      operation: "compact a bucket outside the catalogue",
      bucket: FIXTURE.outside,
      expected: "refused",
    },
    async () => {
      await compactAll(controller, outside);
      return "compacted";
    },
  );
  await check(
    recorder,
    {
      role: "controller",
      operation: "purge a bucket outside the catalogue",
      bucket: FIXTURE.outside,
      expected: "refused",
    },
    async () => {
      await apiRequest(controller, `$JS.API.STREAM.PURGE.${streamName(FIXTURE.outside)}`, {});
      return "purged";
    },
  );

  for (const [index, variant] of variants.entries()) {
    const { grant, password } = variant.user;
    const client = await connectClient(
      url,
      { user: grant.user, password, inboxPrefix: grant.inboxPrefix },
      controller.timeoutMs,
    );
    try {
      await check(
        recorder,
        {
          role: `controller minus publish ${variant.removed}`,
          operation: "compaction is refused on that subject",
          bucket: FIXTURE.big,
          expected: "refused",
          isRefusal: (error) => error instanceof RefusedTheRemovedSubject,
        },
        async () => {
          // A fresh old marker, so that compaction reaches the purge.
          await big.delete(`seed.${100 + index}`);
          try {
            await compactAll(client, catalogue);
          } catch (error) {
            await client.nc.flush().catch(() => undefined);
            const violation = client.violations.find((seen) => subjectMatches(variant.removed, seen.subject));
            if (error instanceof ControllerKvError && error.code === "denied" && violation) {
              throw new RefusedTheRemovedSubject(`${violation.operation} ${violation.subject}`);
            }
            const seen = client.violations.map((v) => `${v.operation} ${v.subject}`).join(", ") || "none";
            throw new Error(
              `compaction failed without a refusal of ${variant.removed} (violations: ${seen}): ${describeError(error)}`,
            );
          }
          return "compaction succeeded without it";
        },
      );
    } finally {
      await client.nc.close();
    }
  }
}

/** The removed subject was necessary: the server refused exactly it, and compaction said `denied`. */
class RefusedTheRemovedSubject extends Error {
  constructor(refused: string) {
    super(`compaction denied: the server refused ${refused}`);
    this.name = "RefusedTheRemovedSubject";
  }
}

/** Every marker stored so far is older than the cut: one millisecond from now, nothing older kept. */
function compactAll(client: StateClient, catalogue: Catalogue): Promise<CompactReport> {
  return compact({
    connection: client.nc,
    catalogue,
    olderThanMs: 0,
    now: () => Date.now() + 1,
    timeoutMs: client.timeoutMs,
  });
}
