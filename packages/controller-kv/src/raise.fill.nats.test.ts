// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { startTestServer } from "@mesh/nats-harness";
import { pino } from "pino";
import { expect, it } from "vitest";
import { connectAdmin, connectController, disposable, manifest, STATE_ACCOUNT_CONFIG } from "../test/support.js";
import { evictsAtTheEdge, FILL_WARNING_PERCENT } from "./fill.js";
import { raise } from "./raise.js";

it("reports and warns of every bucket at or above 90 % of its max bytes, as it will be once the raise is done", async () => {
  await using server = await startTestServer({ config: STATE_ACCOUNT_CONFIG });
  await using admin = await connectAdmin(server.url);
  await using controller = disposable(await connectController(server.url));
  const small = { maxBytes: 4096 };
  await raise({
    connection: controller,
    catalogue: [manifest("fill", { box: small, half: small, grown: small })],
    replicas: 1,
  });

  // Fill up to a share of max bytes, by what the server says the stream holds (a stored record is more than its value).
  async function fillTo(bucket: string, share: number): Promise<number> {
    const kv = await admin.kvm.open(bucket);
    for (let i = 0; ; i += 1) {
      const { bytes } = (await admin.jsm.streams.info(`KV_${bucket}`)).state;
      if (bytes >= share * small.maxBytes) return bytes;
      await kv.put(`k${i}`, "v".repeat(100));
    }
  }
  const boxBytes = await fillTo("mod_fill_box", FILL_WARNING_PERCENT / 100);
  await fillTo("mod_fill_half", 0.5);
  await fillTo("mod_fill_grown", FILL_WARNING_PERCENT / 100);

  const lines: { level: number; msg: string; bucket?: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  // grown gets a larger max in the same raise, so it is no longer nearly full once the raise is done.
  const catalogue = [manifest("fill", { box: small, half: small, grown: { maxBytes: 65_536 } })];
  const plan = await raise({ connection: controller, catalogue, replicas: 1, plan: true });
  const report = await raise({ connection: controller, catalogue, replicas: 1, logger });

  const box = {
    bucket: "mod_fill_box",
    module: "fill",
    name: "box",
    bytes: boxBytes,
    maxBytes: 4096,
    percent: Math.floor((boxBytes * 1000) / 4096) / 10,
  };
  expect(box.percent).toBeGreaterThanOrEqual(90);
  expect(report.nearlyFull).toEqual([box]);
  expect(plan.nearlyFull).toEqual([box]);
  expect(report.updated.map((bucket) => bucket.bucket)).toEqual(["mod_fill_grown"]);
  const warnings = lines.filter((line) => line.level === pino.levels.values.warn);
  expect(warnings).toEqual([
    expect.objectContaining({
      ...box,
      msg: expect.stringMatching(
        evictsAtTheEdge(controller.info?.version)
          ? /^bucket mod_fill_box is [\d.]+ % full \(\d+ of 4096 bytes\); on nats-server [\d.]+ \(< 2\.10\.5\) a write near the limit can evict the oldest key/
          : /^bucket mod_fill_box is [\d.]+ % full \(\d+ of 4096 bytes\); writes that do not fit are refused/,
      ),
    }),
  ]);
});
