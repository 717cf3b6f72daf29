/// <reference lib="dom" />
// The web view (`mesh-state ui`) against the demo's mesh, in Debian's Chromium through playwright-core:
//   node bench/dist/web-view.js            a screenshot of each view into docs/guides/web-view/
//   node bench/dist/web-view.js --measure  first render of a 10,000-key bucket, and put -> screen p50/p99
// A measurement, not a test: it prints figures (docs/guides/web-view.md keeps them with the machine's load).
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startMesh } from "@mesh/dev-mesh";
import { composeInspectorGrant } from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { chromiumPath, keySeen, startUi, watchForKey } from "@mesh/nats-harness";
import { createStateService } from "@mesh/runtime-state";
import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = `${ROOT}examples/operators-agent/`;
const CLI = `${ROOT}packages/cli/dist/main.js`;
const SHOTS = `${ROOT}docs/guides/web-view/`;
const measure = process.argv.includes("--measure");
const KEYS = 10_000;
const SAMPLES = 200;

const manifestDir = `${EXAMPLE}manifests/`;
const catalogue = parseCatalogue(
  readdirSync(manifestDir)
    .filter((file) => file.endsWith(".json"))
    .map((file) => JSON.parse(readFileSync(`${manifestDir}${file}`, "utf8"))),
);
const machines = { m1: ["operators-agent"], m2: ["operators-agent"], m3: ["operators-agent", "dashboard"] };

async function main(): Promise<void> {
  await using mesh = await startMesh({
    catalogue,
    machines,
    users: { inspector: composeInspectorGrant({ catalogue }) },
  });
  const owner = createStateService({
    connection: await mesh.connect("m1"),
    membership: mesh.membership("operators-agent"),
  });
  const put = (key: string, value: unknown) => owner.handle("mesh/state.put", { bucket: "mcp-servers", key, value });
  await put("all.github", { transport: "http", url: "https://mcp.github.example/", authSource: "licence-manager" });
  await put("all.docs", { transport: "stdio", command: "mcp-docs", args: ["--read-only"] });
  await put("m2.filesystem", { transport: "stdio", command: "mcp-filesystem", args: ["/srv/shared"] });
  await put("m3.postgres", { transport: "http", url: "http://127.0.0.1:5433/mcp" });
  await put("all.docs", { transport: "stdio", command: "mcp-docs", args: ["--read-only", "--cache"] });
  if (measure) {
    for (let start = 0; start < KEYS; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, offset) =>
          put(`load.k${String(start + offset).padStart(5, "0")}`, { n: start + offset }),
        ),
      );
    }
  }

  const { user, password } = mesh.credentials("inspector");
  const ui = await startUi({
    main: CLI,
    catalogue: manifestDir,
    machines,
    server: mesh.urls[0]!,
    user,
    password,
    echoStderr: true,
  });
  const { url } = ui;
  const executablePath = await chromiumPath();
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    if (measure) {
      const started = Date.now();
      await page.goto(`${url}#/bucket/operators-agent.mcp-servers`);
      await page.getByText(`of ${KEYS + 4}`).waitFor({ timeout: 120_000 });
      const firstRender = Date.now() - started;
      const delays: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample += 1) {
        const key = `all.sample${sample}`;
        await page.getByRole("searchbox").fill(key);
        await page.evaluate(watchForKey, key);
        const before = Date.now();
        await put(key, { sample });
        delays.push(Math.round((await page.evaluate(keySeen)) - before));
      }
      delays.sort((a, b) => a - b);
      const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!;
      process.stdout.write(
        `first render of a ${KEYS + 4}-key bucket: ${firstRender} ms\nput -> screen over ${SAMPLES} puts: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms\n` +
          `load average (1 min) at the end: ${loadavg()[0]!.toFixed(1)} on ${(await import("node:os")).cpus().length} cores\n`,
      );
    } else {
      mkdirSync(SHOTS, { recursive: true });
      const shoot = async (hash: string, ready: () => Promise<unknown>, file: string) => {
        await page.goto(`${url}#${hash}`);
        await ready();
        await page.screenshot({ path: `${SHOTS}${file}`, fullPage: true });
        process.stdout.write(`${SHOTS}${file}\n`);
      };
      await shoot("/", () => page.getByRole("table", { name: "Buckets" }).waitFor(), "catalogue.png");
      await shoot(
        "/bucket/operators-agent.mcp-servers",
        async () => {
          await page.getByRole("link", { name: "all.github" }).waitFor();
          await put("m2.search", { transport: "http", url: "https://search.example/mcp" });
          await owner.handle("mesh/state.delete", { bucket: "mcp-servers", key: "m3.postgres" });
          await page.getByRole("link", { name: "m2.search" }).waitFor();
          await page
            .getByText(/not visible with these credentials|consumers/)
            .first()
            .waitFor();
        },
        "bucket.png",
      );
      await shoot(
        "/history/operators-agent.mcp-servers/all.docs",
        async () => {
          await page.getByRole("table", { name: "History of all.docs" }).waitFor();
          // The page is live: a change made while it is open arrives marked `new`.
          await put("all.docs", { transport: "http", url: "https://docs.example/mcp/v2" });
          await page.getByText("new", { exact: true }).waitFor();
        },
        "history.png",
      );
      await shoot("/machine/m3", () => page.getByRole("link", { name: "all.github" }).first().waitFor(), "machine.png");
    }
  } finally {
    await browser.close();
    await ui.stop();
    await owner.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`web-view: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
