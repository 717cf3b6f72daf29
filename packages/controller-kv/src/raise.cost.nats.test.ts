// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { startTestServer } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { connectAdmin, connectController, disposable, STATE_ACCOUNT_CONFIG, wideCatalogue } from "../test/support.js";
import { raise } from "./raise.js";

it("re-raising 300 unchanged buckets takes at most 3 list requests and no write", async () => {
  await using server = await startTestServer({ config: STATE_ACCOUNT_CONFIG });
  await using admin = await connectAdmin(server.url);
  await using controller = disposable(await connectController(server.url));
  const catalogue = wideCatalogue(30, 10);

  const first = await raise({ connection: controller, catalogue, replicas: 1 });
  expect(first.created).toHaveLength(300);
  const creating = await admin.takeControllerRequests();
  expect(creating.filter((subject) => subject.startsWith("$JS.API.STREAM.CREATE."))).toHaveLength(300);
  expect(creating.filter((subject) => subject === "$JS.API.STREAM.LIST")).toHaveLength(1);

  const started = performance.now();
  const again = await raise({ connection: controller, catalogue, replicas: 1 });
  const elapsed = performance.now() - started;
  expect(again.unchanged).toHaveLength(300);
  expect(again).toMatchObject({ created: [], updated: [], conflicts: [], orphans: [], failed: [] });
  const requests = await admin.takeControllerRequests();
  // 300 streams are two pages of STREAM.LIST (256 + 44), and nothing else.
  expect(requests).toEqual(["$JS.API.STREAM.LIST", "$JS.API.STREAM.LIST"]);
  console.log(`re-raise of 300 unchanged buckets: ${requests.length} requests, ${elapsed.toFixed(0)} ms`);
});
