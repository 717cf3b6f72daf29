import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { findNatsServer, pinnedVersions } from "./binary.js";
import { LocalNatsError } from "./errors.js";

async function failure(promise: Promise<unknown>): Promise<LocalNatsError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LocalNatsError);
  return error as LocalNatsError;
}

/** Every temp dir the tests make, removed at the end: a fake tools cache or a fake binary. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A tools cache holding fake builds of the given versions, and a versions file pinning `pinned`. */
function toolsCache(built: string[], pinned: string[]): { env: NodeJS.ProcessEnv; versionsFile: string } {
  const tools = tempDir("local-nats-tools-");
  for (const version of built) {
    mkdirSync(join(tools, `nats-server-${version}`));
    writeFileSync(join(tools, `nats-server-${version}`, "nats-server"), "#!/bin/sh\n", { mode: 0o755 });
  }
  const versionsFile = join(tools, "versions.txt");
  writeFileSync(versionsFile, `# pinned\n${pinned.map((version) => `${version}  # why`).join("\n")}\n`);
  return { env: { MESH_TOOLS_DIR: tools, PATH: "/nonexistent" }, versionsFile };
}

function script(body: string): string {
  const path = join(tempDir("local-nats-bin-"), "fake-server");
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return path;
}

const realServer = process.env.NATS_SERVER_BIN;

describe("findNatsServer", () => {
  test("without NATS_SERVER_BIN, takes the newest pinned version built in the tools cache", async () => {
    const { env, versionsFile } = toolsCache(["v2.10.27", "v2.12.15", "v2.16.0"], ["v2.10.27", "v2.12.15", "v2.15.3"]);
    // v2.15.3 is pinned but not built, v2.16.0 is built but not pinned: the newest pinned build wins.
    const source = await findNatsServer({ env, versionsFile });
    expect(source).toBe(join(env.MESH_TOOLS_DIR!, "nats-server-v2.12.15", "nats-server"));
  });

  test("without a versions file, takes the newest build in the tools cache", async () => {
    const { env } = toolsCache(["v2.9.25", "v2.15.3", "v2.10.27"], []);
    const source = await findNatsServer({ env, versionsFile: "/nonexistent/versions.txt" });
    expect(source).toBe(join(env.MESH_TOOLS_DIR!, "nats-server-v2.15.3", "nats-server"));
  });

  test("with no pinned build, finds nats-server on PATH", async () => {
    const { env, versionsFile } = toolsCache([], ["v2.15.3"]);
    const dir = dirname(script("echo nats-server: v2.15.3"));
    const onPath = join(dir, "nats-server");
    writeFileSync(onPath, "#!/bin/sh\n", { mode: 0o755 });
    const source = await findNatsServer({ env: { ...env, PATH: dir }, versionsFile });
    expect(source).toBe(onPath);
  });

  test.runIf(realServer)("prefers NATS_SERVER_BIN over the pinned builds", async () => {
    const { env, versionsFile } = toolsCache(["v2.15.3"], ["v2.15.3"]);
    const source = await findNatsServer({ env: { ...env, NATS_SERVER_BIN: realServer }, versionsFile });
    expect(source).toBe(realServer);
  });

  test("refuses a NATS_SERVER_BIN that points nowhere", async () => {
    const error = await failure(findNatsServer({ env: { NATS_SERVER_BIN: "/nonexistent/nats-server" } }));
    expect(error.code).toBe("nats-server-missing");
    expect(error.message).toContain("/nonexistent/nats-server");
  });

  test("refuses a NATS_SERVER_BIN that runs but is not a nats-server", async () => {
    for (const path of ["/bin/true", script("echo 'hello, I am not a server 1.2.3'"), script("exit 3")]) {
      const error = await failure(findNatsServer({ env: { NATS_SERVER_BIN: path } }));
      expect(error.code, path).toBe("not-a-nats-server");
      expect(error.message).toContain(path);
      expect(error.message).toContain("not a nats-server version");
    }
  });

  test("accepts a NATS_SERVER_BIN that prints a nats-server version", async () => {
    const path = script("echo 'nats-server: v2.15.3'");
    expect(await findNatsServer({ env: { NATS_SERVER_BIN: path } })).toBe(path);
  });

  test("without a binary, fails with nats-server-missing and says how to get one", async () => {
    const { env, versionsFile } = toolsCache([], ["v2.15.3"]);
    const error = await failure(findNatsServer({ env, versionsFile }));
    expect(error.code).toBe("nats-server-missing");
    expect(error.message).toContain("scripts/nats-servers.sh");
    expect(error.message).toContain("NATS_SERVER_BIN");
    expect(error.message).not.toContain("Docker");
  });
});

test("the repository's versions file pins the default last", () => {
  const versions = pinnedVersions(
    readFileSync(new URL("../../../scripts/nats-server-versions.txt", import.meta.url), "utf8"),
  );
  expect(versions.length).toBeGreaterThanOrEqual(3);
  for (const version of versions) expect(version).toMatch(/^v\d+\.\d+\.\d+$/);
});
