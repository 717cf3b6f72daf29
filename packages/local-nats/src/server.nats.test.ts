import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, test } from "vitest";
import { DEFAULT_SYNC_INTERVAL } from "./config.js";
import { LocalNatsError } from "./errors.js";
import { trackedPids } from "./processes.js";
import { startServer } from "./server.js";
import { dirOf, processExists } from "./testing.js";

describe("startServer", () => {
  test("starts a JetStream server on loopback that a client connects to", async () => {
    const started = Date.now();
    await using server = await startServer();
    const startMs = Date.now() - started;
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    expect(server.port).not.toBe(4222);
    const config = readFileSync(server.configPath, "utf8");
    expect(config).toContain('host: "127.0.0.1"');
    expect(config).toContain(`port: ${server.port}`);
    expect(config).toContain(server.storeDir);

    const nc = await connect({ servers: server.url });
    try {
      const info = await (await jetstreamManager(nc)).getAccountInfo();
      expect(info.streams).toBe(0);
    } finally {
      await nc.close();
    }
    console.info(`nats-server started and greeting in ${startMs} ms`);
  });

  test("states JetStream's sync_interval on purpose: the default, or what the caller asks, and the server takes it", async () => {
    await using byDefault = await startServer();
    expect(readFileSync(byDefault.configPath, "utf8")).toContain(`sync_interval: "${DEFAULT_SYNC_INTERVAL}"`);
    await using always = await startServer({ syncInterval: "always" });
    expect(readFileSync(always.configPath, "utf8")).toContain('sync_interval: "always"');
    const nc = await connect({ servers: always.url });
    try {
      await (await jetstreamManager(nc)).streams.add({ name: "SYNCED", subjects: ["synced.>"], storage: "file" });
      expect((await jetstream(nc).publish("synced.1", "one")).seq).toBe(1);
    } finally {
      await nc.close();
    }
  });

  test("takes the caller's accounts verbatim, and a user of a JetStream account can use it", async () => {
    await using server = await startServer({
      name: "accounts-test",
      config: `accounts {
  STATE: { jetstream: enabled, users: [{ user: state, password: s3cret }] }
  OTHER: { users: [{ user: other, password: other }] }
}`,
    });
    const nc = await connect({ servers: server.url, user: "state", pass: "s3cret" });
    try {
      await (await jetstreamManager(nc)).streams.add({ name: "S", subjects: ["s.>"] });
      await jetstream(nc).publish("s.1", "one");
    } finally {
      await nc.close();
    }
    await expect(connect({ servers: server.url, user: "nobody", pass: "x" })).rejects.toThrow();
  });

  test("restart keeps the port and a file-stored stream's messages, after stop and after kill", async () => {
    await using server = await startServer();
    const port = server.port;
    const firstPid = server.pid;
    const publishAndCount = async (message: string) => {
      const nc = await connect({ servers: server.url });
      try {
        const jsm = await jetstreamManager(nc);
        if (!(await jsm.streams.names().next()).includes("KEEP")) {
          await jsm.streams.add({ name: "KEEP", subjects: ["keep.>"], storage: "file" });
        }
        await jetstream(nc).publish("keep.x", message);
        return (await jsm.streams.info("KEEP")).state.messages;
      } finally {
        await nc.close();
      }
    };
    expect(await publishAndCount("one")).toBe(1);

    await server.restart();
    expect(server.port).toBe(port);
    expect(server.pid).not.toBe(firstPid);
    expect(processExists(firstPid!)).toBe(false);
    expect(await publishAndCount("two")).toBe(2);

    const secondPid = server.pid!;
    await server.kill();
    expect(processExists(secondPid)).toBe(false);
    expect(server.pid).toBeUndefined();
    await server.restart();
    expect(server.port).toBe(port);
    expect(await publishAndCount("three")).toBe(3);
  });

  test("dispose ends the process and removes the temp dir", async () => {
    let pid: number | undefined;
    let dir = "";
    {
      await using server = await startServer({ jetstream: false });
      pid = server.pid;
      dir = dirOf(server.configPath);
      expect(pid).toBeDefined();
      expect(processExists(pid!)).toBe(true);
    }
    expect(processExists(pid!)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(trackedPids()).not.toContain(pid);
  });

  test("dispose ends the process and removes the temp dir when the body throws", async () => {
    let pid: number | undefined;
    let dir = "";
    const body = async () => {
      await using server = await startServer({ jetstream: false });
      pid = server.pid;
      dir = dirOf(server.configPath);
      throw new Error("the test body failed");
    };
    await expect(body()).rejects.toThrow("the test body failed");
    expect(pid).toBeDefined();
    expect(processExists(pid!)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  test("a config nats-server refuses fails with server-exited, the log tail, and nothing left behind", async () => {
    const before = trackedPids();
    const name = `refused-config-${process.pid}`;
    const error = await startServer({ name, config: "this is { not valid" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LocalNatsError);
    expect((error as LocalNatsError).code).toBe("server-exited");
    expect((error as LocalNatsError).message).toMatch(/nats-server\.conf/);
    expect((error as LocalNatsError).logTail).toMatch(/Parse error/);
    expect(trackedPids()).toEqual(before);
    expect(readdirSync(tmpdir()).filter((entry) => entry.startsWith(`mesh-nats-${name}-`))).toEqual([]);
  });
});
