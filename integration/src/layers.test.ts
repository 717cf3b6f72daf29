// The README's picture of the package layers, checked against every package.json: a package's
// `dependencies` sit on lower layers; its `devDependencies` too, or are the private fixtures of layer 4.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE_LAYER = 4;
/** Test code: used by tests only, so only ever a devDependency of what ships. */
const TEST_ONLY = ["@mesh/nats-harness"];
/**
 * Private workspaces that run only from a checkout and reach no package or bundle: the tests, the bench and the
 * demo, which use the harness's signal reaping and consumer count at run time, so they may depend on it.
 */
const NEVER_SHIPPED = ["@mesh/integration", "@mesh/bench", "@mesh/example-demo"];

/** Layer of each package, by its name without `@mesh/`, from the README's ```text block under "### Layers". */
function readLayers(): Map<string, number> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Layers"));
  const start = section.indexOf("```text") + "```text".length;
  const block = section.slice(start, section.indexOf("```", start));
  const layers = new Map<string, number>();
  for (const line of block.split("\n")) {
    const match = /^\s*(\d+)\s*\|\s*([^(]*)/.exec(line);
    if (!match) continue;
    for (const name of match[2]!.trim().split(/\s+/)) layers.set(name, Number(match[1]));
  }
  return layers;
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function manifests(): Manifest[] {
  const dirs = [
    ...readdirSync(join(ROOT, "packages")).map((dir) => join(ROOT, "packages", dir)),
    ...readdirSync(join(ROOT, "examples")).map((dir) => join(ROOT, "examples", dir)),
    join(ROOT, "integration"),
    join(ROOT, "bench"),
  ];
  // Go modules (packages/sdk-go, examples/licence-binding-go) have no package.json: they speak the wire only.
  return dirs
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest);
}

const short = (name: string) => name.replace(/^@mesh\//, "");
const workspace = (deps: Record<string, string> = {}) => Object.keys(deps).filter((name) => name.startsWith("@mesh/"));

it("the README's layers name every workspace package once", () => {
  const layers = readLayers();
  expect([...layers.keys()].sort()).toEqual(
    manifests()
      .map((manifest) => short(manifest.name))
      .sort(),
  );
});

/** Whether `name` reaches `target` through `dependencies`, directly or not. */
function reaches(byName: Map<string, Manifest>, name: string, target: string, seen = new Set<string>()): boolean {
  if (seen.has(name)) return false;
  seen.add(name);
  const deps = workspace(byName.get(name)?.dependencies);
  return deps.includes(target) || deps.some((dep) => reaches(byName, dep, target, seen));
}

it("every package uses only lower layers; tests may also use the fixtures, and the harness where it makes no cycle", () => {
  const layers = readLayers();
  const byName = new Map(manifests().map((manifest) => [manifest.name, manifest]));
  const breaches: string[] = [];
  for (const manifest of byName.values()) {
    const own = layers.get(short(manifest.name))!;
    for (const dep of workspace(manifest.dependencies)) {
      const layer = layers.get(short(dep))!;
      if (!(layer < own)) breaches.push(`${manifest.name} (layer ${own}) depends on ${dep} (layer ${layer})`);
    }
    for (const dep of workspace(manifest.devDependencies)) {
      const layer = layers.get(short(dep))!;
      // The harness is test code on layer 1 only because it builds on local-nats: a layer-0 package's tests may
      // use it too, so long as the harness does not itself depend on that package.
      const harness = TEST_ONLY.includes(dep) && !reaches(byName, dep, manifest.name);
      if (!(layer < own || layer === FIXTURE_LAYER || harness)) {
        breaches.push(`${manifest.name} (layer ${own}) has the dev dependency ${dep} (layer ${layer})`);
      }
    }
  }
  expect(breaches).toEqual([]);
});

it("test code is only ever a dev dependency: nothing that ships depends on it", () => {
  const breaches = manifests()
    .filter((manifest) => !NEVER_SHIPPED.includes(manifest.name))
    .flatMap((manifest) =>
      workspace(manifest.dependencies)
        .filter((dep) => TEST_ONLY.includes(dep))
        .map(
          (dep) => `${manifest.name} depends on ${dep}: make it a devDependency, or move what it uses to product code`,
        ),
    );
  expect(breaches).toEqual([]);
});

it("one JetStream call policy: every product package that uses the JetStream client takes it from jetstream-calls, on layer 0", () => {
  expect(readLayers().get("jetstream-calls")).toBe(0);
  const breaches = manifests()
    .filter(
      (manifest) =>
        !NEVER_SHIPPED.includes(manifest.name) &&
        !TEST_ONLY.includes(manifest.name) &&
        manifest.name !== "@mesh/jetstream-calls",
    )
    .filter((manifest) => Object.hasOwn(manifest.dependencies ?? {}, "@nats-io/jetstream"))
    .filter((manifest) => !Object.hasOwn(manifest.dependencies ?? {}, "@mesh/jetstream-calls"))
    .map((manifest) => manifest.name);
  expect(breaches).toEqual([]);
});
