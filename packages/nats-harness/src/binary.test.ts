import { describe, expect, test } from "vitest";
import { findNatsServer, NATS_SERVER_IMAGE, serverVersion } from "./binary.js";
import { NatsHarnessError } from "./errors.js";

const noDocker = async () => false;

async function failure(promise: Promise<unknown>): Promise<NatsHarnessError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(NatsHarnessError);
  return error as NatsHarnessError;
}

describe("findNatsServer", () => {
  test("finds nats-server on PATH", async () => {
    const source = await findNatsServer({ env: { PATH: process.env.PATH }, dockerAvailable: noDocker });
    expect(source).toMatchObject({ kind: "binary", path: expect.stringMatching(/nats-server$/) });
  });

  test("prefers NATS_SERVER_BIN, and refuses one that points nowhere", async () => {
    const onPath = await findNatsServer({ env: { PATH: process.env.PATH }, dockerAvailable: noDocker });
    if (onPath.kind !== "binary") throw new Error("expected a binary");
    expect(await findNatsServer({ env: { NATS_SERVER_BIN: onPath.path, PATH: "" } })).toEqual(onPath);

    const error = await failure(
      findNatsServer({ env: { NATS_SERVER_BIN: "/nonexistent/nats-server", PATH: process.env.PATH } }),
    );
    expect(error.code).toBe("nats-server-missing");
    expect(error.message).toContain("/nonexistent/nats-server");
  });

  test("without a binary or a Docker engine, fails with nats-server-missing and says how to install it", async () => {
    const error = await failure(findNatsServer({ env: { PATH: "/nonexistent" }, dockerAvailable: noDocker }));
    expect(error.code).toBe("nats-server-missing");
    expect(error.message).toContain("apt-get install nats-server");
    expect(error.message).toContain("NATS_SERVER_BIN");
    expect(error.message).toContain("Docker");
  });

  test("without a binary, uses the image where a Docker engine answers", async () => {
    const source = await findNatsServer({ env: { PATH: "/nonexistent" }, dockerAvailable: async () => true });
    expect(source).toEqual({ kind: "container", image: NATS_SERVER_IMAGE });
  });

  test("the real Docker probe answers either way without throwing anything else", async () => {
    const outcome = await findNatsServer({ env: { PATH: "/nonexistent" } }).then(
      (source) => source.kind,
      (error: unknown) => (error instanceof NatsHarnessError ? error.code : error),
    );
    expect(["container", "nats-server-missing"]).toContain(outcome);
  });
});

test("serverVersion reports the binary's version", async () => {
  expect(await serverVersion()).toMatch(/^\d+\.\d+\.\d+/);
});
