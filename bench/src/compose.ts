/**
 * Grant composition for one machine with many modules, measured by the grants engineer's
 * `benchComposeMachineGrant` (grants.ts). There is no raw client for this, so the baseline is the same
 * subjects built with plain string concatenation, without validation or catalogue lookup — the least any
 * composer must do. Both must produce the identical allow list (checked), so the ratio is the cost of
 * composeMachineGrant's checks and lookups.
 */
import { composeMachineGrant } from "@mesh/grant-composer";
import type { Catalogue } from "@mesh/manifest-schema";
import { benchCatalogue, benchComposeMachineGrant } from "./grants.js";
import { count, emit, note } from "./report.js";
import type { Sizes } from "./sizes.js";
import { median } from "./workload.js";

const BUCKETS_PER_MODULE = 3;

function plainComposition(catalogue: Catalogue): string[] {
  const subjects = new Set<string>();
  const read = (bucket: string) => {
    subjects.add(`$JS.API.CONSUMER.CREATE.KV_${bucket}`);
    subjects.add(`$JS.API.CONSUMER.DELETE.KV_${bucket}.>`);
    subjects.add(`$JS.API.CONSUMER.MSG.NEXT.KV_${bucket}.>`);
    subjects.add(`$JS.API.DIRECT.GET.KV_${bucket}.>`);
    subjects.add(`$JS.API.STREAM.MSG.GET.KV_${bucket}`);
  };
  for (const manifest of catalogue) {
    for (const name of Object.keys(manifest.state ?? {})) {
      const bucket = `mod_${manifest.name}_${name}`;
      read(bucket);
      subjects.add(`$KV.${bucket}.>`);
    }
    for (const reference of manifest.reads ?? []) {
      const [module, name] = reference.split(".");
      read(`mod_${module}_${name}`);
    }
  }
  return [...subjects].sort();
}

export interface CompositionFigures {
  composeMs: number;
  plainMs: number;
  subjects: number;
  bucketsPerModule: number;
}

export function benchComposition(modules: number, runs: number): CompositionFigures {
  const catalogue = benchCatalogue(modules, BUCKETS_PER_MODULE);
  const assignments = catalogue.map((manifest) => manifest.name);
  const composed = composeMachineGrant({ machine: "bench-machine", assignments, catalogue });
  const plain = plainComposition(catalogue);
  if (JSON.stringify(composed.permissions.publish.allow) !== JSON.stringify(plain)) {
    throw new Error("the plain baseline does not compose the same subjects as composeMachineGrant");
  }
  const plainMs = () =>
    median(
      Array.from({ length: runs }, () => {
        const started = performance.now();
        plainComposition(catalogue);
        return performance.now() - started;
      }),
    );
  // Alternate rounds so both see the same machine load; the first round of each only warms up.
  const composeTimes: number[] = [];
  const plainTimes: number[] = [];
  for (let round = 0; round < 4; round++) {
    composeTimes.push(benchComposeMachineGrant({ modules, bucketsPerModule: BUCKETS_PER_MODULE, runs }).medianMs);
    plainTimes.push(plainMs());
  }
  return {
    composeMs: median(composeTimes.slice(1)),
    plainMs: median(plainTimes.slice(1)),
    subjects: plain.length,
    bucketsPerModule: BUCKETS_PER_MODULE,
  };
}

/** The grants section's row. */
export function grants(sizes: Sizes): void {
  const figures = benchComposition(sizes.grantModules, sizes.grantIterations);
  emit({
    metric: `grant: compose one machine with ${count(sizes.grantModules)} modules × ${figures.bucketsPerModule} buckets, vs plain strings`,
    unit: "ms",
    mesh: figures.composeMs,
    raw: figures.plainMs,
  });
  note(`${count(figures.subjects)} publish subjects; the baseline builds the same list with no validation or lookup`);
}
