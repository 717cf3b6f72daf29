import { startMesh } from "@mesh/dev-mesh";
import { composeInspectorGrant } from "@mesh/grant-composer";
import { type Manifest, parseCatalogue } from "@mesh/manifest-schema";
import { chromiumPath, keySeen, startUi, type UiOptions, type UiProcess, watchForKey } from "@mesh/nats-harness";
import { createStateService } from "@mesh/runtime-state";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MAIN } from "../../test/mesh-state.js";
import { catalogueFolder } from "../../test/ui-process.js";

// The web view in a real browser (Debian's Chromium through playwright-core) against a real mesh from the
// fixture: the built CLI serves it as the inspector, the fixture's machine m1 writes through runtime-state.
// The inspector's grant is composed without the `vault` bucket, so that one bucket is unreadable to it.
const manifests: Manifest[] = [
  { name: "agent", state: { "mcp-servers": { history: 5 } } },
  { name: "dashboard", reads: ["agent.mcp-servers"] },
  { name: "other", state: { notes: {} } },
  { name: "keeper", state: { vault: {} } },
];
const catalogue = parseCatalogue(manifests);
const inspectorCatalogue = parseCatalogue(manifests.filter((manifest) => manifest.name !== "keeper"));
const machines = { m1: ["agent"], m2: ["dashboard"], m3: ["other"] };

let mesh: Awaited<ReturnType<typeof startMesh>>;
let ui: UiProcess;
let browser: Browser;
let uiOptions: UiOptions;
let put: (key: string, value: unknown) => Promise<unknown>;
let remove: (key: string) => Promise<unknown>;
let closeOwner: () => Promise<void>;

beforeAll(async () => {
  const executablePath = await chromiumPath();
  mesh = await startMesh({
    catalogue,
    machines,
    users: { inspector: composeInspectorGrant({ catalogue: inspectorCatalogue }) },
  });
  const owner = createStateService({ connection: await mesh.connect("m1"), membership: mesh.membership("agent") });
  put = (key, value) => owner.handle("mesh/state.put", { bucket: "mcp-servers", key, value });
  remove = (key) => owner.handle("mesh/state.delete", { bucket: "mcp-servers", key });
  closeOwner = () => owner.close();
  await put("all.github", { url: "https://github.example" });
  await put("m1.filesystem", { command: "fs" });
  await put("m2.docs", { command: "docs" });
  const { user, password } = mesh.credentials("inspector");
  uiOptions = {
    main: MAIN,
    catalogue: await catalogueFolder(manifests),
    machines,
    server: mesh.urls[0]!,
    user,
    password,
  };
  ui = await startUi(uiOptions);
  browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  await closeOwner?.();
  await mesh?.[Symbol.asyncDispose]();
});

/** A page that records every console error and uncaught exception. */
async function openPage(hash = ""): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${ui.url}#${hash}`);
  return { page, errors };
}

it("renders the catalogue: modules, the buckets each owns and reads, who reads each", async () => {
  const { page, errors } = await openPage("/");
  await page.getByRole("heading", { name: "Catalogue" }).waitFor();
  const modules = page.getByRole("table", { name: "Modules" });
  await modules
    .getByRole("row", { name: /dashboard/ })
    .getByRole("link", { name: "agent.mcp-servers" })
    .waitFor();
  const buckets = page.getByRole("table", { name: "Buckets" });
  expect(await buckets.getByRole("row", { name: /agent\.mcp-servers/ }).textContent()).toContain("dashboard");
  await page.getByRole("link", { name: "Machine m1" }).first().waitFor();
  expect(errors).toEqual([]);
  await page.close();
});

it("shows a bucket live: a put appears within 500 ms, a delete disappears, HTML stays text, console stays clean", async () => {
  const { page, errors } = await openPage("/bucket/agent.mcp-servers");
  const keys = page.getByRole("table", { name: "Keys of agent.mcp-servers" });
  await keys.getByRole("link", { name: "all.github" }).waitFor();
  expect(await page.getByRole("status").textContent()).toBe("live");

  // The page stamps when the key's row appears, so the figure holds no polling of the test's own.
  await page.evaluate(watchForKey, "all.search");
  const started = Date.now();
  await put("all.search", { url: "https://search.example" });
  expect((await page.evaluate(keySeen)) - started).toBeLessThan(500);
  expect(await keys.getByRole("row", { name: /all\.search/ }).textContent()).toMatch(
    /changed.*https:\/\/search\.example.*s ago/,
  );

  await remove("all.search");
  await keys.getByRole("link", { name: "all.search" }).waitFor({ state: "detached" });
  await page
    .getByRole("listitem")
    .filter({ hasText: /deleted all\.search/ })
    .waitFor();

  const html = '<script>window.injected = 1</script><img src=x onerror="window.injected = 2">';
  await put("all.html", { note: html });
  const row = keys.getByRole("row", { name: /all\.html/ });
  await row.waitFor();
  expect(await row.textContent()).toContain("<script>window.injected = 1</script>");
  expect(await page.evaluate(() => (window as unknown as { injected?: number }).injected)).toBeUndefined();
  expect(await page.locator("main img, main script").count()).toBe(0);

  // Filter by a NATS pattern; the key's history is one link away.
  await page.getByRole("searchbox", { name: "Filter keys of agent.mcp-servers" }).fill("m1.*");
  await keys.getByRole("link", { name: "all.github" }).waitFor({ state: "detached" });
  await keys.getByRole("link", { name: "m1.filesystem" }).click();
  await page.getByRole("heading", { name: "History of m1.filesystem" }).waitFor();
  await page.getByRole("table", { name: "History of m1.filesystem" }).getByRole("row", { name: /put/ }).waitFor();
  expect(errors).toEqual([]);
  await page.close();
});

it("keeps a key's history live, and shows the bucket's health as the inspector sees it", async () => {
  const { page, errors } = await openPage("/history/agent.mcp-servers/m1.filesystem");
  const history = page.getByRole("table", { name: "History of m1.filesystem" });
  await history.getByRole("row", { name: /put/ }).first().waitFor();
  const before = await history.getByRole("row").count();
  await put("m1.filesystem", { command: "fs", version: 2 });
  const added = history.getByRole("row").filter({ hasText: '"version": 2' });
  await added.waitFor();
  expect(await added.textContent()).toMatch(/new.*put/);
  expect(await history.getByRole("row").count()).toBe(before + 1);
  await remove("m2.docs"); // another key's change is not this history's
  await put("m1.filesystem", { command: "fs", version: 3 });
  await history.getByRole("row").filter({ hasText: '"version": 3' }).waitFor();
  expect(await history.getByRole("row").count()).toBe(before + 2);
  await put("m2.docs", { command: "docs" });

  await page.goto(`${ui.url}#/bucket/agent.mcp-servers`);
  const health = page.getByRole("region", { name: "Health" });
  await health.getByText(/no cap on the stream|\d+ of \d+/).waitFor();
  expect(await health.textContent()).toMatch(/replicas\s*1/);
  expect(await health.textContent()).toContain("stored");
  expect(errors).toEqual([]);
  await page.close();
});

it("shows a machine exactly what its grant allows, and its keys in its scope", async () => {
  const { page, errors } = await openPage("/machine/m2");
  const grant = page.getByRole("table", { name: "Grant of m2" });
  await grant.getByRole("row", { name: /agent\.mcp-servers\s*read\s*dashboard/ }).waitFor();
  expect(await grant.getByRole("row").count()).toBe(2); // the header and the one bucket
  const seen = page.getByRole("table", { name: "Keys of agent.mcp-servers as m2 sees it" });
  await seen.getByRole("link", { name: "m2.docs" }).waitFor();
  await seen.getByRole("link", { name: "all.github" }).waitFor();
  expect(await seen.getByRole("link", { name: "m1.filesystem" }).count()).toBe(0);

  await page.goto(`${ui.url}#/machine/m1`);
  await page
    .getByRole("table", { name: "Grant of m1" })
    .getByRole("row", { name: /agent\.mcp-servers\s*write\s*agent/ })
    .waitFor();
  expect(await page.getByRole("table", { name: "Grant of m1" }).getByRole("row").count()).toBe(2);
  expect(errors).toEqual([]);
  await page.close();
});

it("says a bucket its credentials cannot read is not readable, while the rest works", async () => {
  const { page, errors } = await openPage("/bucket/keeper.vault");
  await page.getByRole("alert").filter({ hasText: "not readable with these credentials" }).waitFor();
  await page
    .getByRole("region", { name: "Health" })
    .getByText(/not visible with these credentials/)
    .waitFor();
  await page.getByRole("link", { name: "Catalogue" }).click();
  await page.getByRole("table", { name: "Buckets" }).getByRole("link", { name: "agent.mcp-servers" }).click();
  await page
    .getByRole("table", { name: "Keys of agent.mcp-servers" })
    .getByRole("link", { name: "all.github" })
    .waitFor();
  // The refused consumer is the server's answer, not a page error.
  expect(errors).toEqual([]);
  await page.close();
});

it("says when its server went away, and reconnects by itself when it is back", async () => {
  const { page } = await openPage("/bucket/agent.mcp-servers");
  const status = page.getByRole("status");
  await page.getByText("live", { exact: true }).waitFor();
  const port = new URL(ui.url).port;
  expect(await ui.stop()).toBe(0);
  await status.filter({ hasText: "went away" }).waitFor();
  ui = await startUi({ ...uiOptions, args: ["--port", port] });
  await status.filter({ hasText: /^live$/ }).waitFor();
  await put("all.back", { again: true });
  await page
    .getByRole("table", { name: "Keys of agent.mcp-servers" })
    .getByRole("link", { name: "all.back" })
    .waitFor();
  await page.close();
});
