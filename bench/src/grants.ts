import { composeMachineGrant } from "@mesh/grant-composer";
import { type Catalogue, parseCatalogue } from "@mesh/manifest-schema";

/** What one composition benchmark measured. */
export interface GrantBenchResult {
  modules: number;
  bucketsPerModule: number;
  publishSubjects: number;
  /** The first composition, cold. */
  firstMs: number;
  medianMs: number;
  maxMs: number;
  runs: number;
}

/**
 * A catalogue of `modules` modules with `bucketsPerModule` buckets each, where every module also reads one
 * bucket of the next: the shape a busy machine's assignments could take.
 */
export function benchCatalogue(modules: number, bucketsPerModule: number): Catalogue {
  const name = (index: number) => `module-${index}`;
  return parseCatalogue(
    Array.from({ length: modules }, (_, index) => ({
      name: name(index),
      state: Object.fromEntries(Array.from({ length: bucketsPerModule }, (_, b) => [`bucket-${b}`, {}])),
      ...(modules > 1 ? { reads: [`${name((index + 1) % modules)}.bucket-0`] } : {}),
    })),
  );
}

/**
 * Composes one machine's grant for all `modules` modules assigned to it, `runs` times (issue 3's target:
 * under 50 ms for 1,000 modules of 3 buckets). Not a timed test: a figure to report and to watch.
 */
export function benchComposeMachineGrant(
  options: { modules?: number; bucketsPerModule?: number; runs?: number } = {},
): GrantBenchResult {
  const modules = options.modules ?? 1000;
  const bucketsPerModule = options.bucketsPerModule ?? 3;
  const runs = options.runs ?? 20;
  const catalogue = benchCatalogue(modules, bucketsPerModule);
  const assignments = catalogue.map((manifest) => manifest.name);
  const timings: number[] = [];
  let publishSubjects = 0;
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const grant = composeMachineGrant({ machine: "bench-machine", assignments, catalogue });
    timings.push(performance.now() - started);
    publishSubjects = grant.permissions.publish.allow.length;
  }
  const sorted = [...timings].sort((a, b) => a - b);
  return {
    modules,
    bucketsPerModule,
    publishSubjects,
    firstMs: timings[0]!,
    medianMs: sorted[Math.floor(sorted.length / 2)]!,
    maxMs: sorted[sorted.length - 1]!,
    runs,
  };
}
