import { readFileSync } from "node:fs";
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core";
import { problemKindInfo } from "@arethetypeswrong/core/problems";

/**
 * The resolutions the ESM-only profile of are-the-types-wrong ignores (`attw --profile esm-only`): our packages
 * are ESM only, so `require()` from CommonJS and node10's resolution (no `exports`) are not supported.
 */
const IGNORED_RESOLUTIONS = ["node10", "node16-cjs"];

/**
 * What are-the-types-wrong finds in a packed tarball under the ESM-only profile, one line per problem. Run
 * in-process with the engine of the `attw` CLI: the CLI loads TypeScript anew for each package, which costs
 * seconds per package on a busy machine. Reads only the tarball (no @types lookup on the registry).
 */
export async function typesWrongProblems(tarball: string, options: { hasCodeExports: boolean }): Promise<string[]> {
  const pkg = createPackageFromTarballData(new Uint8Array(readFileSync(tarball)));
  const analysis = await checkPackage(pkg);
  // A package without code exports (the CLI: a bin and its package.json) has nothing to type.
  if (!analysis.types) return options.hasCodeExports ? ["the package exports code but ships no types"] : [];
  return analysis.problems
    .filter((problem) => !("resolutionKind" in problem) || !IGNORED_RESOLUTIONS.includes(problem.resolutionKind))
    .map((problem) => {
      const where = [
        "entrypoint" in problem ? problem.entrypoint : undefined,
        "resolutionKind" in problem ? problem.resolutionKind : undefined,
      ]
        .filter((part) => part !== undefined)
        .join(", ");
      return `${problem.kind}${where ? ` (${where})` : ""}: ${problemKindInfo[problem.kind].shortDescription}`;
    });
}
