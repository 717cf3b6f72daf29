import { expect, test } from "vitest";
import { findTestNatsServer } from "./binary.js";

test("takes local-nats's binary when there is one", async () => {
  const real = process.env.NATS_SERVER_BIN;
  const source = await findTestNatsServer({ dockerAvailable: async () => true });
  expect(source.kind).toBe("binary");
  if (real) expect(source).toEqual({ kind: "binary", path: real });
});
