import { type CatalogueIssue, type Catalogue, catalogueIssues } from "./catalogue.js";
import { ManifestError } from "./errors.js";
import { type CheckResult, fromZodIssues, type Issue } from "./issues.js";
import { type Manifest, ManifestSchema } from "./manifest.js";
import { type Membership, MembershipSchema } from "./membership.js";

/** Checks one manifest: the parsed manifest (unknown fields kept), or every problem with its path. */
export function checkManifest(input: unknown): CheckResult<Manifest> {
  const result = ManifestSchema.safeParse(input, { reportInput: true });
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: fromZodIssues(result.error.issues) };
}

/** Parses one manifest or throws a `ManifestError` listing every problem ("state.applied.history: at most 64, got 100"). */
export function parseManifest(input: unknown): Manifest {
  const result = checkManifest(input);
  if (!result.ok) throw new ManifestError("invalid-manifest", describeManifest(input), result.issues);
  return result.value;
}

/** Checks every manifest, then the catalogue as a whole. Issues carry the manifest's index. */
export function checkCatalogue(inputs: readonly unknown[]): { ok: true; value: Catalogue } | { ok: false; issues: CatalogueIssue[] } {
  const issues: CatalogueIssue[] = [];
  const manifests: Manifest[] = [];
  inputs.forEach((input, index) => {
    const result = checkManifest(input);
    if (result.ok) manifests.push(result.value);
    else {
      const module = typeof (input as { name?: unknown })?.name === "string" ? (input as { name: string }).name : undefined;
      for (const issue of result.issues) issues.push({ manifest: index, ...(module ? { module } : {}), ...issue });
    }
  });
  if (issues.length === 0) {
    for (const issue of catalogueIssues(manifests)) issues.push(issue);
  }
  return issues.length === 0 ? { ok: true, value: manifests } : { ok: false, issues };
}

/** Parses a catalogue or throws a `ManifestError` listing every problem. */
export function parseCatalogue(inputs: readonly unknown[]): Catalogue {
  const result = checkCatalogue(inputs);
  if (!result.ok) {
    const issues: Issue[] = result.issues.map((issue) => ({
      path: `${issue.module ?? `manifest ${issue.manifest}`}${issue.path === "" ? "" : `: ${issue.path}`}`,
      message: issue.message,
    }));
    throw new ManifestError("invalid-catalogue", "the catalogue", issues);
  }
  return result.value;
}

export function checkMembership(input: unknown): CheckResult<Membership> {
  const result = MembershipSchema.safeParse(input, { reportInput: true });
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: fromZodIssues(result.error.issues) };
}

export function parseMembership(input: unknown): Membership {
  const result = checkMembership(input);
  if (!result.ok) throw new ManifestError("invalid-membership", "the membership", result.issues);
  return result.value;
}

function describeManifest(input: unknown): string {
  const name = (input as { name?: unknown } | null)?.name;
  return typeof name === "string" ? `manifest ${JSON.stringify(name)}` : "the manifest";
}
