import { renderStateAccountConfig } from "@mesh/grant-composer";
import { startTestServer } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { ADMIN_USER, CONTROLLER_USER, connectAdmin, connectController, manifest } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// Issue #18: 3 buckets at the 64 MiB default on a state account whose file store holds 100 MiB (nats-server
// reads 100M as 10^8 bytes, so the limit is given in bytes). Without the
// check the raise created the first and failed on the others with 10047, leaving a half-raised mesh.
const MIB = 1024 * 1024;

it("refuses up front, creates nothing and names the shortfall when the buckets do not fit", async () => {
  await using server = await startTestServer({
    config: renderStateAccountConfig({
      users: [CONTROLLER_USER, ADMIN_USER],
      jetstream: { maxFile: String(100 * MIB) },
    }),
  });
  await using admin = await connectAdmin(server.url);
  const controller = await connectController(server.url);
  try {
    const catalogue = [manifest("big", { one: {}, two: {}, three: {} })];
    const plan = await raise({ connection: controller, catalogue, replicas: 1, plan: true });
    expect(plan.storeShortfall).toEqual({
      buckets: ["mod_big_one", "mod_big_three", "mod_big_two"].sort(),
      needed: 3 * 64 * MIB,
      available: 100 * MIB,
      limit: 100 * MIB,
      reserved: 0,
    });

    const refused = await raise({ connection: controller, catalogue, replicas: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ControllerKvError);
    expect((refused as ControllerKvError).code).toBe("no-storage");
    expect((refused as ControllerKvError).message).toMatch(
      /3 buckets need 201326592 B \(192 MiB\) of file store, the account has 104857600 B \(100 MiB\) free.*nothing was created/,
    );
    expect((refused as ControllerKvError).report?.created).toEqual([]);
    expect(await admin.jsm.streams.names().next()).toEqual([]);

    // One bucket fits: created; then the next two do not fit beside the 64 MiB it reserves.
    const first = await raise({ connection: controller, catalogue: [manifest("big", { one: {} })], replicas: 1 });
    expect(first.created.map((bucket) => bucket.bucket)).toEqual(["mod_big_one"]);
    const rest = await raise({ connection: controller, catalogue, replicas: 1, plan: true });
    expect(rest.storeShortfall).toMatchObject({ needed: 2 * 64 * MIB, available: 36 * MIB, reserved: 64 * MIB });
  } finally {
    await controller.close();
  }
});

// Issue 40: the server's own max_file_store (100 MiB here) is not in the account's JetStream info, so an
// account without a limit passed the check above and the raise created one bucket, then met 10047. With the
// servers' monitoring endpoints the raise sees it, and creates nothing.
it("refuses up front, with the servers' monitoring endpoints, buckets that do not fit a server's own file store", async () => {
  await using server = await startTestServer({
    config: renderStateAccountConfig({ users: [CONTROLLER_USER, ADMIN_USER] }),
    maxFileStore: 100 * MIB,
  });
  await using admin = await connectAdmin(server.url);
  const controller = await connectController(server.url);
  try {
    const catalogue = [manifest("big", { one: {}, two: {} })];
    const monitorUrls = [server.monitorUrl!];
    const plan = await raise({ connection: controller, catalogue, replicas: 1, plan: true, monitorUrls });
    expect(plan.storeShortfall).toBeUndefined();
    expect(plan.serverShortfall).toEqual({
      buckets: [
        { bucket: "mod_big_one", bytes: 64 * MIB },
        { bucket: "mod_big_two", bytes: 64 * MIB },
      ],
      neededPerServer: 128 * MIB,
      replicas: 1,
      servers: [
        { url: server.monitorUrl, serverId: expect.any(String), limit: 100 * MIB, reserved: 0, free: 100 * MIB },
      ],
    });

    const refused = await raise({ connection: controller, catalogue, replicas: 1, monitorUrls }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ControllerKvError);
    expect((refused as ControllerKvError).code).toBe("no-storage");
    expect((refused as ControllerKvError).message).toMatch(
      /need 134217728 B \(128 MiB\) of file store on a server \(mod_big_one 64 MiB, mod_big_two 64 MiB\); the servers have http:\/\/127\.0\.0\.1:\d+ 100 MiB free \(max_file_store 100 MiB, reserved 0 MiB\): nothing was created/,
    );
    expect(await admin.jsm.streams.names().next()).toEqual([]);

    // One bucket fits; the server then reserves its 64 MiB, and the next does not fit beside it.
    const first = await raise({
      connection: controller,
      catalogue: [manifest("big", { one: {} })],
      replicas: 1,
      monitorUrls,
    });
    expect(first.created.map((bucket) => bucket.bucket)).toEqual(["mod_big_one"]);
    const rest = await raise({ connection: controller, catalogue, replicas: 1, plan: true, monitorUrls });
    expect(rest.serverShortfall).toMatchObject({
      neededPerServer: 64 * MIB,
      servers: [{ reserved: 64 * MIB, free: 36 * MIB }],
    });
  } finally {
    await controller.close();
  }
});

it("refuses, naming the endpoint, when a server's monitoring endpoint does not answer", async () => {
  await using server = await startTestServer({
    config: renderStateAccountConfig({ users: [CONTROLLER_USER, ADMIN_USER] }),
  });
  const controller = await connectController(server.url);
  try {
    const refused = await raise({
      connection: controller,
      catalogue: [manifest("small", { one: {} })],
      replicas: 1,
      monitorUrls: [`http://127.0.0.1:${server.port}`],
      timeoutMs: 1_000,
    }).catch((error: unknown) => error);
    expect((refused as ControllerKvError).code).toBe("unavailable");
    expect((refused as ControllerKvError).message).toMatch(
      /cannot read the server's store limits from its monitoring endpoint http:\/\/127\.0\.0\.1:\d+\/jsz, so nothing was changed/,
    );
  } finally {
    await controller.close();
  }
});
