import { type Catalogue, type CatalogueIssue, catalogueIssues } from "./catalogue.js";
import { ManifestError } from "./errors.js";
import { type CheckResult, fromZodIssues, type Issue } from "./issues.js";
import { type Manifest, ManifestSchema, STATE_OPTION_NAMES } from "./manifest.js";
import { type Membership, MembershipSchema, UseNameSchema } from "./membership.js";
import { StateNameSchema } from "./names.js";
import { protoKeyIssues, withUnknownFieldsKept } from "./own-keys.js";

const STATE_DECLARATION_PATH = /^state\.[a-z][a-z0-9-]*$/;
const STATE_OPTIONS_HINT = `a state declaration takes only ${STATE_OPTION_NAMES.join(", ")}`;

/** Checks one manifest: the parsed manifest (unknown fields kept as they are), or every problem with its path. */
export function checkManifest(input: unknown): CheckResult<Manifest> {
  const result = ManifestSchema.safeParse(input, { reportInput: true });
  const issues = [
    ...(result.success ? [] : fromZodIssues(result.error.issues)).map(withStateOptionsHint),
    ...protoKeyIssues(input, "state", StateNameSchema),
  ];
  if (issues.length > 0 || !result.success) return { ok: false, issues };
  return { ok: true, value: withUnknownFieldsKept(input, result.data) };
}

function withStateOptionsHint(issue: Issue): Issue {
  if (!issue.message.startsWith("unknown field") || !STATE_DECLARATION_PATH.test(issue.path)) return issue;
  return { path: issue.path, message: `${issue.message}: ${STATE_OPTIONS_HINT}` };
}

/** Parses one manifest or throws a `ManifestError` listing every problem ("state.applied.history: at most 64, got 100"). */
export function parseManifest(input: unknown): Manifest {
  const result = checkManifest(input);
  if (!result.ok) throw new ManifestError("invalid-manifest", describeManifest(input), result.issues);
  return result.value;
}

/**
 * Checks every manifest, then the catalogue as a whole. Issues carry the manifest's index. The
 * cross-manifest checks run only once every manifest is valid: with one missing, "no module x" would
 * be noise.
 */
export function checkCatalogue(
  inputs: readonly unknown[],
): { ok: true; value: Catalogue } | { ok: false; issues: CatalogueIssue[] } {
  const issues: CatalogueIssue[] = [];
  const manifests: Manifest[] = [];
  // The catalogue checks run over every manifest, a failing one read as far as it can be (its name, its
  // state names, its reads), so a dangling read is reported with the manifest's other problems, not after.
  const views: Manifest[] = inputs.map((input, index) => {
    const result = checkManifest(input);
    if (result.ok) {
      manifests.push(result.value);
      return result.value;
    }
    const module = nameOf(input);
    for (const issue of result.issues) issues.push({ manifest: index, ...(module ? { module } : {}), ...issue });
    return lenientView(input, index);
  });
  for (const issue of catalogueIssues(views)) issues.push(issue);
  return issues.length === 0 ? { ok: true, value: manifests } : { ok: false, issues };
}

/** What a manifest that fails the schema still says about the catalogue: its name, state names and reads. */
function lenientView(input: unknown, index: number): Manifest {
  const record = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const state = typeof record.state === "object" && record.state !== null ? record.state : {};
  const reads = Array.isArray(record.reads) ? record.reads.filter((read) => typeof read === "string") : [];
  return {
    // No name: one no module can have (it holds a space), so it is neither a duplicate nor an owner.
    name: nameOf(input) ?? `manifest ${index}`,
    state: Object.fromEntries(Object.keys(state).map((name) => [name, {}])),
    reads,
  } as Manifest;
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

/** Checks an issued membership: the membership (unknown top-level fields kept), or every problem with its path. */
export function checkMembership(input: unknown): CheckResult<Membership> {
  const result = MembershipSchema.safeParse(input, { reportInput: true });
  const issues = [
    ...(result.success ? [] : fromZodIssues(result.error.issues)),
    ...protoKeyIssues(input, "buckets", UseNameSchema),
  ];
  if (issues.length > 0 || !result.success) return { ok: false, issues };
  return { ok: true, value: withUnknownFieldsKept(input, result.data) };
}

/** Parses an issued membership or throws a `ManifestError` listing every problem. */
export function parseMembership(input: unknown): Membership {
  const result = checkMembership(input);
  if (!result.ok) throw new ManifestError("invalid-membership", "the membership", result.issues);
  return result.value;
}

function nameOf(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null || !Object.hasOwn(input, "name")) return undefined;
  const name = (input as { name: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

function describeManifest(input: unknown): string {
  const name = nameOf(input);
  return name === undefined ? "the manifest" : `manifest ${JSON.stringify(name)}`;
}
