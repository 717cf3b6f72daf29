import { bucketGrantSubjects, composeMachineGrant } from "@mesh/grant-composer";
import { type Catalogue, declaredBuckets, MachineNameSchema, parseReadReference } from "@mesh/manifest-schema";
import { UsageError } from "../types.js";

/**
 * What the web view shows that comes from the catalogue and the machines' assignments, not from NATS: the
 * modules, the buckets each owns and reads, who reads each bucket, and what each machine's composed grant
 * lets it reach. Pure: the server sends these as JSON, the page renders them.
 */

export interface BucketSummary {
  /** `<module>.<name>`: the name the page and the verbs use. */
  reference: string;
  /** `mod_<module>_<name>` */
  bucket: string;
  stream: string;
  owner: string;
  readers: string[];
  history: number;
  ttl?: string;
  maxValueSize: number;
  maxBytes: number;
}

export interface ModuleSummary {
  name: string;
  owns: string[];
  reads: string[];
  /** The machines it is assigned to (those given with --machine). */
  machines: string[];
}

export interface CatalogueView {
  modules: ModuleSummary[];
  buckets: BucketSummary[];
  machines: string[];
}

export type Access = "write" | "read";

export interface MachineBucket {
  reference: string;
  bucket: string;
  access: Access;
  /** The machine's modules that own (write) or read it. */
  via: string[];
}

export interface MachineView {
  machine: string;
  modules: string[];
  /** Only the buckets its grant allows, each with what it allows. */
  buckets: MachineBucket[];
  /** The key filters of the machine-scope convention (`all.>`, `<machine>.>`): what its modules look at. */
  scope: string[];
}

/** Machine → its modules, from `--machine NAME=MOD[,MOD...]` options. */
export function parseMachines(options: readonly string[], catalogue: Catalogue): Map<string, string[]> {
  const machines = new Map<string, string[]>();
  const known = new Set(catalogue.map((manifest) => manifest.name));
  for (const option of options) {
    const [machine, list] = option.split("=", 2);
    if (machine === undefined || list === undefined || !MachineNameSchema.safeParse(machine).success)
      throw new UsageError(
        `--machine takes NAME=MOD[,MOD...] (e.g. node-1=operators-agent), got ${JSON.stringify(option)}`,
      );
    const modules = list
      .split(",")
      .map((module) => module.trim())
      .filter((module) => module !== "");
    for (const module of modules)
      if (!known.has(module)) throw new UsageError(`--machine ${machine}: module ${module} is not in the catalogue`);
    machines.set(machine, modules);
  }
  return machines;
}

export function catalogueView(catalogue: Catalogue, machines: ReadonlyMap<string, readonly string[]>): CatalogueView {
  const readers = new Map<string, string[]>();
  for (const manifest of catalogue) {
    for (const reference of manifest.reads ?? [])
      readers.set(reference, [...(readers.get(reference) ?? []), manifest.name]);
  }
  const buckets = declaredBuckets(catalogue).map((declared) => {
    const reference = `${declared.module}.${declared.name}`;
    return {
      reference,
      bucket: declared.bucket,
      stream: declared.stream,
      owner: declared.module,
      readers: readers.get(reference) ?? [],
      history: declared.history,
      ...(declared.ttl === undefined ? {} : { ttl: declared.ttl }),
      maxValueSize: declared.maxValueSize,
      maxBytes: declared.maxBytes,
    };
  });
  const modules = catalogue.map((manifest) => ({
    name: manifest.name,
    owns: Object.keys(manifest.state ?? {}).map((name) => `${manifest.name}.${name}`),
    reads: [...(manifest.reads ?? [])],
    machines: [...machines].filter(([, modules]) => modules.includes(manifest.name)).map(([machine]) => machine),
  }));
  return { modules, buckets, machines: [...machines.keys()] };
}

/**
 * What one machine's state user may reach: grant-composer's own grant for it, read back per bucket — every
 * owner subject present is write, every reader subject present is read — so the page shows the grant, not a
 * second idea of it.
 */
export function machineView(catalogue: Catalogue, machine: string, modules: readonly string[]): MachineView {
  const allowed = new Set(composeMachineGrant({ machine, assignments: modules, catalogue }).permissions.publish.allow);
  const holds = (subjects: readonly string[]) => subjects.every((subject) => allowed.has(subject));
  const buckets: MachineBucket[] = [];
  for (const declared of declaredBuckets(catalogue)) {
    const access: Access | undefined = holds(bucketGrantSubjects(declared.bucket, "owner"))
      ? "write"
      : holds(bucketGrantSubjects(declared.bucket, "reader"))
        ? "read"
        : undefined;
    if (access === undefined) continue;
    const reference = `${declared.module}.${declared.name}`;
    const via = modules.filter((module) => {
      if (module === declared.module) return true;
      const manifest = catalogue.find((candidate) => candidate.name === module);
      return (manifest?.reads ?? []).some((read) => {
        const parts = parseReadReference(read);
        return parts?.module === declared.module && parts.name === declared.name;
      });
    });
    buckets.push({ reference, bucket: declared.bucket, access, via });
  }
  return { machine, modules: [...modules], buckets, scope: ["all.>", `${machine}.>`] };
}
