import { expect, test } from "vitest";
import { serverVersion } from "./binary.js";

test("serverVersion reports the binary's version", async () => {
  expect(await serverVersion()).toMatch(/^\d+\.\d+\.\d+/);
});
