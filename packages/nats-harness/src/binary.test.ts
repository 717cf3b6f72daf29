import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalNatsError } from "@mesh/local-nats";
import { afterAll, describe, expect, test } from "vitest";
import { findTestNatsServer, NATS_SERVER_IMAGE } from "./binary.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tools cache with no build, and a versions file pinning one: no binary anywhere. */
function noBinary(): { env: NodeJS.ProcessEnv; versionsFile: string } {
  const tools = mkdtempSync(join(tmpdir(), "harness-tools-"));
  made.push(tools);
  const versionsFile = join(tools, "versions.txt");
  writeFileSync(versionsFile, "v2.15.3\n");
  return { env: { MESH_TOOLS_DIR: tools, PATH: "/nonexistent" }, versionsFile };
}

describe("findTestNatsServer (the harness's: local-nats's binary, else Docker)", () => {
  test("without a binary or a Docker engine, fails with nats-server-missing and says how to get one", async () => {
    const error = await findTestNatsServer({ ...noBinary(), dockerAvailable: async () => false }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LocalNatsError);
    expect((error as LocalNatsError).code).toBe("nats-server-missing");
    expect((error as LocalNatsError).message).toContain("NATS_SERVER_BIN");
    expect((error as LocalNatsError).message).toContain("Docker");
  });

  test("without a binary, uses the image where a Docker engine answers", async () => {
    const source = await findTestNatsServer({ ...noBinary(), dockerAvailable: async () => true });
    expect(source).toEqual({ kind: "container", image: NATS_SERVER_IMAGE });
  });

  test("a NATS_SERVER_BIN that points nowhere is refused, not replaced by the image", async () => {
    const error = await findTestNatsServer({
      env: { NATS_SERVER_BIN: "/nonexistent/nats-server" },
      dockerAvailable: async () => true,
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as LocalNatsError).code).toBe("nats-server-missing");
  });

  test("the real Docker probe answers either way without throwing anything else", async () => {
    const outcome = await findTestNatsServer(noBinary()).then(
      (source) => source.kind,
      (error: unknown) => (error instanceof LocalNatsError ? error.code : error),
    );
    expect(["container", "nats-server-missing"]).toContain(outcome);
  });
});
