// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
// The published packages as their users get them: packed by pnpm, installed by npm into a project outside the
// workspace, imported as ESM, type-checked by a strict consumer, linted by publint and are-the-types-wrong,
// their imports held to their dependencies, the CLI's bin run from the tarball, and a smoke against a real
// nats-server. The workspace must be built first (`pnpm test` builds before vitest runs).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsumerProject, createConsumerProject, meshProvenanceProblems } from "./packaging/consumer-project.js";
import {
  DEV_ONLY_PACKAGES,
  DEV_ONLY_PATH,
  dependencyMismatch,
  importedPackages,
  testCodeIn,
} from "./packaging/dist-imports.js";
import { describeRun, inBatches, run } from "./packaging/run.js";
import { typesWrongProblems } from "./packaging/types-wrong.js";
import {
  exportEntries,
  type PackageManifest,
  privatePackageNames,
  publishedPackages,
  REPO_ROOT,
} from "./packaging/workspace.js";

const packages = publishedPackages();
const TSC = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");

let project: ConsumerProject;

beforeAll(async () => {
  const unbuilt = packages.filter((pkg) => !existsSync(join(pkg.path, "dist")));
  if (unbuilt.length > 0) {
    throw new Error(`build first (pnpm build): no dist in ${unbuilt.map((pkg) => pkg.dir).join(", ")}`);
  }
  project = await createConsumerProject(packages);
}, 300_000);

afterAll(async () => {
  await project?.[Symbol.asyncDispose]();
  if (project) console.info(`packaging: pack ${project.timings.pack} ms, npm install ${project.timings.install} ms`);
});

const tarballOf = (dir: string) => project.tarballs.find((tarball) => tarball.package.dir === dir)!;
/** The package.json as published: pnpm rewrote its ranges and applied its publishConfig. */
const publishedManifest = (name: string) =>
  JSON.parse(readFileSync(join(project.installed(name), "package.json"), "utf8")) as PackageManifest;

it("finds the published packages under packages/", () => {
  expect(packages.map((pkg) => pkg.manifest.name)).toContain("@mesh/sdk-ts");
  expect(packages.length).toBeGreaterThanOrEqual(7);
});

it("installs every @mesh package from its own tarball, none from the registry, one copy each", () => {
  expect(meshProvenanceProblems(project)).toEqual([]);
});

describe.each(packages.map((pkg) => ({ dir: pkg.dir, name: pkg.manifest.name })))("$name", ({ dir, name }) => {
  it("has the house package.json shape (STYLE.md, Layout)", () => {
    const manifest = publishedManifest(name) as PackageManifest & {
      engines?: { node?: string };
      sideEffects?: unknown;
      publishConfig?: { access?: string };
    };
    expect({
      type: manifest.type,
      sideEffects: manifest.sideEffects,
      engines: typeof manifest.engines?.node,
      files: manifest.files?.includes("dist"),
      description: typeof manifest.description === "string" && manifest.description.length > 0,
      access: manifest.publishConfig?.access,
    }).toEqual({
      type: "module",
      sideEffects: false,
      engines: "string",
      files: true,
      description: true,
      access: "public",
    });
  });

  it("is clean under publint --strict", async () => {
    const tarball = tarballOf(dir);
    const bytes = readFileSync(tarball.file);
    const { messages, pkg } = await publint({
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
      strict: true,
      level: "suggestion",
    });
    expect(messages.map((message) => `${message.type}: ${formatMessage(message, pkg, { color: false })}`)).toEqual([]);
  });

  it("is clean under are-the-types-wrong (ESM-only profile)", async () => {
    const tarball = tarballOf(dir);
    const hasCodeExports = exportEntries(publishedManifest(name)).some((entry) => !entry.json);
    expect(await typesWrongProblems(tarball.file, { hasCodeExports })).toEqual([]);
  });

  it("declares exactly the packages its published code imports", () => {
    const mismatch = dependencyMismatch(publishedManifest(name), importedPackages(project.installed(name)));
    expect({
      undeclared: mismatch.undeclared.map((entry) => `${entry.name} (imported by ${entry.files.join(", ")})`),
      unused: mismatch.unused,
    }).toEqual({ undeclared: [], unused: [] });
  });

  it("ships no development-only files and imports no development-only package", () => {
    const tarball = tarballOf(dir);
    const privateNames = privatePackageNames();
    const devImports = importedPackages(project.installed(name))
      .filter(
        (entry) =>
          privateNames.includes(entry.name) ||
          DEV_ONLY_PACKAGES.some((dev) => (dev.endsWith("/") ? entry.name.startsWith(dev) : entry.name === dev)),
      )
      .map((entry) => `${entry.name} (imported by ${entry.files.join(", ")})`);
    expect({ files: tarball.files.filter((file) => DEV_ONLY_PATH.test(file)), imports: devImports }).toEqual({
      files: [],
      imports: [],
    });
  });

  it("carries no test harness and no test kit, bundled or not (issue #13)", () => {
    // The CLI bundles dev-mesh, local-nats and the grant proof: product code that must not pull the harness
    // (its Docker path, its signal reaper) or a package's test/ kit in. Its source map lists what was bundled.
    expect(testCodeIn(project.installed(name))).toEqual({ bundled: [], markers: [] });
  });

  it("ships its README", () => {
    expect(tarballOf(dir).files, `write packages/${dir}/README.md`).toContain("README.md");
  });

  it("imports every export subpath as ESM in node", async () => {
    const entries = exportEntries(publishedManifest(name));
    const script = [
      "const results = [];",
      "for (const { specifier, json } of JSON.parse(process.argv[1])) {",
      "  try {",
      '    const namespace = await import(specifier, json ? { with: { type: "json" } } : undefined);',
      "    results.push({ specifier, names: Object.keys(namespace).length });",
      "  } catch (error) {",
      "    results.push({ specifier, error: String(error?.stack ?? error) });",
      "  }",
      "}",
      "process.stdout.write(JSON.stringify(results));",
    ].join("\n");
    const result = await run(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(entries)], {
      cwd: project.dir,
      env: project.env,
    });
    expect(result.code, describeRun(result)).toBe(0);
    const imported = JSON.parse(result.stdout) as { specifier: string; names?: number; error?: string }[];
    expect(imported.filter((entry) => entry.error !== undefined)).toEqual([]);
    // The package's main entry must export something: an empty module means the build lost the API.
    const main = imported.find((entry) => entry.specifier === name);
    if (main) expect(main.names, `${name} exports no names`).toBeGreaterThan(0);
  });

  it("has a consumer file that type-checks (below) when it has an API", () => {
    const hasApi = exportEntries(publishedManifest(name)).some((entry) => entry.specifier === name);
    const consumer = join(project.dir, "consumers", `${dir}.ts`);
    if (hasApi) expect(existsSync(consumer), `add integration/src/packaging/fixtures/consumers/${dir}.ts`).toBe(true);
  });
});

describe("consumer files type-check strictly against the installed packages", () => {
  it.each(["node16", "bundler"])("with moduleResolution %s", async (mode) => {
    const result = await run(process.execPath, [TSC, "-p", `tsconfig.${mode}.json`, "--pretty", "false"], {
      cwd: project.dir,
      env: project.env,
    });
    expect(result.code, describeRun(result)).toBe(0);
  });
});

describe("the mesh-state bin from the @mesh/cli tarball", () => {
  const bin = () => join(project.dir, "node_modules", ".bin", "mesh-state");
  const cli = (args: string[]) => run(bin(), args, { cwd: project.dir, env: project.env });

  /** The commands of `mesh-state --help`: the indented `name  summary` lines under "Commands:". */
  function commandsOf(help: string): { name: string; summary: string }[] {
    const lines = help.split("\n");
    const start = lines.findIndex((line) => /^commands:\s*$/i.test(line.trim()));
    if (start < 0) return [];
    const commands: { name: string; summary: string }[] = [];
    for (const line of lines.slice(start + 1)) {
      const match = /^\s+([a-z][a-z0-9-]*)(?:\s{2,}(.*))?$/.exec(line);
      if (!match) break;
      commands.push({ name: match[1]!, summary: (match[2] ?? "").trim() });
    }
    return commands;
  }

  it("lists every command with a one-line summary", async () => {
    expect(existsSync(bin()), "npm linked no mesh-state bin").toBe(true);
    const result = await cli(["--help"]);
    expect(result.code, describeRun(result)).toBe(0);
    const commands = commandsOf(result.stdout);
    expect(commands.length, `no commands in mesh-state --help:\n${result.stdout}`).toBeGreaterThan(0);
    expect(commands.filter((command) => command.summary === "").map((command) => command.name)).toEqual([]);
  });

  it("has --help with an example for every command", async () => {
    const commands = commandsOf((await cli(["--help"])).stdout);
    const problems = (
      await inBatches(commands, 2, async ({ name }) => {
        const result = await cli([name, "--help"]);
        if (result.code !== 0) return `${name}: ${describeRun(result)}`;
        const help = result.stdout;
        if (!/example/i.test(help)) return `${name}: --help has no example:\n${help}`;
        if (!help.includes(`mesh-state ${name}`)) return `${name}: --help shows no "mesh-state ${name}" line:\n${help}`;
        return undefined;
      })
    ).filter((problem) => problem !== undefined);
    expect(problems).toEqual([]);
  });

  it("refuses an unknown command with exit code 2 and the command list", async () => {
    const result = await cli(["no-such-command"]);
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(/unknown command/);
  });
});

describe("smoke: the installed packages together against a real nats-server", () => {
  it("serves a bundle using sdk-ts from runtime-state, under composed grants, after a controller-kv raise", async () => {
    const result = await run(process.execPath, ["smoke/run.mjs"], {
      cwd: project.dir,
      env: project.env,
      timeoutMs: 90_000,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      raise: { created: ["mod_licence-manager_bindings", "mod_operators-agent_mcp-servers"], conflicts: 0 },
      watchesLeft: 0,
      bundle: {
        revision: expect.any(Number),
        value: { url: "https://mcp.example.invalid/github" },
        keys: ["all.github"],
        mirrored: { url: "https://mcp.example.invalid/github" },
        binding: null,
        secret: "secret-field",
        notIssued: "not-issued",
      },
    });
  });
});
