import { STATE_DEFAULTS } from "./caps.js";
import type { Issue } from "./issues.js";
import type { Manifest } from "./manifest.js";
import { bucketName, parseReadReference, streamName } from "./names.js";

/** The registered modules' manifests, as the controller holds them. */
export type Catalogue = readonly Manifest[];

/** A problem with one manifest of a catalogue: which one (its index, and its name when it has one). */
export interface CatalogueIssue extends Issue {
  manifest: number;
  module?: string;
}

/** A `state` declaration with its defaults filled in: what the bucket should be. */
export interface DeclaredBucket {
  module: string;
  name: string;
  /** `mod_<module>_<name>` */
  bucket: string;
  /** `KV_mod_<module>_<name>` */
  stream: string;
  history: number;
  /** The declared ttl, as written (`30d`); absent for no expiry. */
  ttl?: string;
  /** How long a delete marker stays, as written (`30d`); absent when markers stay until compacted. */
  forgetDeletes?: string;
  maxValueSize: number;
  maxBytes: number;
}

/** Every bucket the catalogue declares, sorted by bucket name. */
export function declaredBuckets(catalogue: Catalogue): DeclaredBucket[] {
  const out: DeclaredBucket[] = [];
  for (const manifest of catalogue) {
    for (const [name, options] of Object.entries(manifest.state ?? {})) {
      const bucket = bucketName(manifest.name, name);
      out.push({
        module: manifest.name,
        name,
        bucket,
        stream: streamName(bucket),
        history: options.history ?? STATE_DEFAULTS.history,
        ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
        ...(options.forgetDeletes === undefined ? {} : { forgetDeletes: options.forgetDeletes }),
        maxValueSize: options.maxValueSize ?? STATE_DEFAULTS.maxValueSize,
        maxBytes: options.maxBytes ?? STATE_DEFAULTS.maxBytes,
      });
    }
  }
  return out.sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
}

/** The manifest of `module`, or `undefined`. */
export function findModule(catalogue: Catalogue, module: string): Manifest | undefined {
  return catalogue.find((manifest) => manifest.name === module);
}

/**
 * The pure cross-manifest checks (each manifest already parsed): names are unique; a `reads` entry names
 * a module of the catalogue that declares that bucket; a module does not read its own bucket through
 * `reads`; a `reads` entry is not listed twice.
 */
export function catalogueIssues(catalogue: Catalogue): CatalogueIssue[] {
  const issues: CatalogueIssue[] = [];
  const firstIndex = new Map<string, number>();
  catalogue.forEach((manifest, index) => {
    const earlier = firstIndex.get(manifest.name);
    if (earlier === undefined) firstIndex.set(manifest.name, index);
    else {
      issues.push({
        manifest: index,
        module: manifest.name,
        path: "name",
        message: `module ${manifest.name} is already registered (manifest ${earlier})`,
      });
    }
  });
  catalogue.forEach((manifest, index) => {
    const seen = new Set<string>();
    (manifest.reads ?? []).forEach((reference, position) => {
      const path = `reads[${position}]`;
      const at = { manifest: index, module: manifest.name, path };
      if (seen.has(reference)) {
        issues.push({ ...at, message: `${reference} is listed twice` });
        return;
      }
      seen.add(reference);
      const parts = parseReadReference(reference);
      if (!parts) return; // the manifest schema already refused it
      if (parts.module === manifest.name) {
        issues.push({
          ...at,
          message: `${reference} is this module's own bucket: it reads and writes it through state, not reads`,
        });
        return;
      }
      const owner = catalogue[firstIndex.get(parts.module) ?? -1];
      if (!owner) {
        issues.push({ ...at, message: `${reference}: no module ${parts.module} in the catalogue` });
      } else if (!Object.hasOwn(owner.state ?? {}, parts.name)) {
        issues.push({ ...at, message: `${reference}: module ${parts.module} declares no state ${parts.name}` });
      }
    });
  });
  return issues;
}
