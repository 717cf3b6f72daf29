/// <reference lib="dom" />
import type { WireHistoryEntry as HistoryEntry } from "@mesh/state-protocol";
import type { BucketHealth } from "../health.js";
import type { CatalogueView, MachineView } from "../model.js";
import { age, bytes, dataTable, el, replace } from "./dom.js";
import { KeyTable } from "./key-table.js";
import { LiveStream } from "./live.js";

/** The page: a hash route per view (catalogue, bucket, a key's history, machine, sites), each rendered by DOM calls. */

type Catalogue = CatalogueView & { connection: { user: string | null; serverVersion: string } };

const main = document.getElementById("main")!;
let catalogue: Catalogue | undefined;
/** What the open view holds open: its event stream and its clock. */
let closeView: () => void = () => undefined;

class ApiError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = (await response.json()) as T & { error?: { reason: string; message: string } };
  if (!response.ok)
    throw new ApiError(body.error?.reason ?? String(response.status), body.error?.message ?? response.statusText);
  return body;
}

const link = (hash: string, text: string) => el("a", { href: hash }, text);
const bucketLink = (reference: string) => link(`#/bucket/${encodeURIComponent(reference)}`, reference);
const machineLink = (machine: string) => link(`#/machine/${encodeURIComponent(machine)}`, machine);
const list = (items: Node[]) => (items.length === 0 ? el("span", { class: "muted" }, "none") : joined(items));
function joined(items: Node[]): HTMLElement {
  const span = el("span");
  items.forEach((item, index) => {
    if (index > 0) span.append(", ");
    span.append(item);
  });
  return span;
}

function show(title: string, ...content: Node[]): void {
  document.title = `${title} — mesh-state`;
  replace(main, el("h1", {}, title), ...content);
}

function renderNav(view: Catalogue): void {
  const nav = document.getElementById("nav")!;
  replace(
    nav,
    link("#/", "Catalogue"),
    ...view.machines.map((machine) => link(`#/machine/${encodeURIComponent(machine)}`, `Machine ${machine}`)),
    link("#/sites", "Sites"),
  );
}

function catalogueView(view: Catalogue): void {
  const { user, serverVersion } = view.connection;
  show(
    "Catalogue",
    el("p", { class: "muted" }, `Connected as ${user ?? "(no user)"} to nats-server ${serverVersion}. Read-only.`),
    el("h2", {}, "Modules"),
    dataTable(
      "Modules",
      ["Module", "Owns", "Reads", "Machines"],
      view.modules.map((module) => [
        module.name,
        list(module.owns.map(bucketLink)),
        list(module.reads.map(bucketLink)),
        list(module.machines.map(machineLink)),
      ]),
    ),
    el("h2", {}, "Buckets"),
    dataTable(
      "Buckets",
      ["Bucket", "NATS bucket", "Owner", "Read by", "History", "TTL", "Cap"],
      view.buckets.map((bucket) => [
        bucketLink(bucket.reference),
        bucket.bucket,
        bucket.owner,
        list(bucket.readers.map((reader) => document.createTextNode(reader))),
        el("td", { class: "num" }, bucket.history),
        bucket.ttl ?? "none",
        el("td", { class: "num" }, bytes(bucket.maxBytes)),
      ]),
    ),
    el("h2", {}, "Machines"),
    view.machines.length === 0
      ? el(
          "p",
          { class: "muted" },
          "None given: start mesh-state ui with --machine NAME=MODULES to see what a machine sees.",
        )
      : el("ul", {}, ...view.machines.map((machine) => el("li", {}, machineLink(machine)))),
  );
}

function healthSection(reference: string): HTMLElement {
  const body = el("div", {}, el("p", { class: "muted" }, "reading…"));
  const refresh = el("button", { type: "button" }, "Refresh health");
  const load = async () => {
    try {
      const health = await getJson<BucketHealth>(`/api/health?bucket=${encodeURIComponent(reference)}`);
      const rows: [string, string][] = [
        ["nats-server", health.serverVersion],
        ["declared cap", bytes(health.maxBytes)],
      ];
      if (health.stream.visible) {
        const stream = health.stream;
        rows.push(
          [
            "stored",
            `${bytes(stream.bytes)} of ${bytes(health.maxBytes)} (${((stream.bytes / health.maxBytes) * 100).toFixed(1)} %)`,
          ],
          ["messages", String(stream.messages)],
          ["replicas", String(stream.replicas)],
          ["leader", stream.leader ?? "—"],
          [
            "consumers",
            stream.maxConsumers === undefined
              ? `${stream.consumers} (no cap on the stream; the server's default_max_consumers applies)`
              : `${stream.consumers} of ${stream.maxConsumers}`,
          ],
        );
      }
      const followers = health.stream.visible ? health.stream.followers : [];
      replace(
        body,
        el("dl", {}, ...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)])),
        followers.length > 0 &&
          dataTable(
            "Followers",
            ["Follower", "State", "Behind the leader", "Last heard"],
            followers.map((follower) => [
              follower.name,
              follower.current ? "current" : el("span", { class: "badge deleted" }, "behind"),
              el("td", { class: "num" }, `${follower.lag} operations`),
              follower.lastSeenMs === undefined ? "—" : `${follower.lastSeenMs} ms ago`,
            ]),
          ),
        !health.stream.visible &&
          el(
            "p",
            { class: "muted" },
            `Stored bytes, replicas, leader and consumers are not visible with these credentials: they need ${health.stream.needs}.`,
          ),
      );
    } catch (error) {
      replace(body, el("p", { class: "refused" }, (error as Error).message));
    }
  };
  refresh.addEventListener("click", () => void load());
  void load();
  return el("section", { class: "health", "aria-label": "Health" }, el("h2", {}, "Health"), body, refresh);
}

function bucketView(reference: string): void {
  const bucket = catalogue?.buckets.find((candidate) => candidate.reference === reference);
  if (!bucket) {
    show("No such bucket", el("p", {}, `${reference} is not in the catalogue.`));
    return;
  }
  const table = new KeyTable(reference, reference);
  show(
    `Bucket ${reference}`,
    el(
      "p",
      { class: "muted" },
      `${bucket.bucket}, owned by ${bucket.owner}, read by ${bucket.readers.join(", ") || "no other module"}. Deletes and expiries (a key's ttl, from nats-server 2.11) both arrive as deletes.`,
    ),
    el("h2", {}, "Keys"),
    table.element,
    healthSection(reference),
  );
  const stream = new LiveStream([reference], {
    reset: () => table.reset(),
    batch: (_index, events) => table.apply(events),
    refused: (_index, reason, message) => table.refuse(reason, message),
  });
  const clock = window.setInterval(() => table.tick(), 1000);
  closeView = () => {
    stream.close();
    window.clearInterval(clock);
  };
}

/** A key's history, oldest first; a watch of the key appends each later change as it happens. */
async function historyView(reference: string, key: string): Promise<void> {
  show(`History of ${key}`, el("p", {}, "in ", bucketLink(reference)), el("p", { class: "muted" }, "reading…"));
  let entries: HistoryEntry[];
  try {
    ({ entries } = await getJson<{ entries: HistoryEntry[] }>(
      `/api/history?bucket=${encodeURIComponent(reference)}&key=${encodeURIComponent(key)}`,
    ));
  } catch (error) {
    const text =
      error instanceof ApiError && error.reason === "denied"
        ? "not readable with these credentials"
        : (error as Error).message;
    show(
      `History of ${key}`,
      el("p", {}, "in ", bucketLink(reference)),
      el("p", { class: "refused", role: "alert" }, text),
    );
    return;
  }
  // dataTable with no rows yet: the history and the watch append to its body.
  const table = dataTable(`History of ${key}`, ["Revision", "Operation", "Updated", "Value"], []);
  const rows = table.tBodies[0]!;
  let newest = 0;
  const addRow = (entry: HistoryEntry, fresh: boolean) => {
    if (entry.revision <= newest) return;
    newest = entry.revision;
    const row = el(
      "tr",
      {},
      el("td", { class: "num" }, entry.revision, fresh && el("span", { class: "badge" }, "new")),
      el("td", {}, entry.type === "delete" ? el("span", { class: "badge deleted" }, "deleted") : "put"),
      el("td", { title: entry.updated, "data-updated": entry.updated }, age(Date.parse(entry.updated), Date.now())),
      el("td", { class: "value" }, entry.type === "put" ? JSON.stringify(entry.value, null, 2) : ""),
    );
    rows.append(row);
  };
  for (const entry of entries) addRow(entry, false);
  show(
    `History of ${key}`,
    el("p", {}, "in ", bucketLink(reference), ", oldest first; changes appear as they happen"),
    table,
  );
  // The key's own watch: its current value (already shown, skipped by revision), then every change.
  const stream = new LiveStream([`${reference} ${key}`], {
    reset: () => undefined,
    batch: (_index, events) => {
      for (const event of events) if (event.type === "put" || event.type === "delete") addRow(event, true);
    },
    refused: () => undefined,
  });
  const clock = window.setInterval(() => {
    const now = Date.now();
    for (const cell of Array.from(rows.querySelectorAll<HTMLElement>("td[data-updated]")))
      cell.textContent = age(Date.parse(cell.dataset.updated!), now);
  }, 1000);
  closeView = () => {
    stream.close();
    window.clearInterval(clock);
  };
}

async function machineView(name: string): Promise<void> {
  let view: MachineView;
  try {
    view = await getJson<MachineView>(`/api/machine?name=${encodeURIComponent(name)}`);
  } catch (error) {
    return show(`Machine ${name}`, el("p", { class: "refused" }, (error as Error).message));
  }
  const tables = view.buckets.map((bucket) => new KeyTable(bucket.reference, `${bucket.reference} as ${name} sees it`));
  show(
    `Machine ${name}`,
    el("p", {}, "Runs ", list(view.modules.map((module) => document.createTextNode(module)))),
    el("h2", {}, "What its grant allows"),
    dataTable(
      `Grant of ${name}`,
      ["Bucket", "Access", "Through"],
      view.buckets.map((bucket) => [bucketLink(bucket.reference), bucket.access, bucket.via.join(", ")]),
    ),
    el(
      "p",
      { class: "muted" },
      `Every other bucket is refused to it. Its grant reads whole buckets; its modules keep to their machine's scope by convention: the keys ${view.scope.join(" and ")}, shown below as it would see them now.`,
    ),
    ...view.buckets.flatMap((bucket, index) => [
      el("h2", {}, `${bucket.reference} (${bucket.access})`),
      tables[index]!.element,
    ]),
    el("h2", {}, "Sites"),
    el("p", { class: "muted" }, "Sites come later."),
  );
  if (view.buckets.length === 0) return;
  // Each bucket gets one watch per scope filter; the stream numbers them in this order.
  const watches = view.buckets.flatMap((bucket) => view.scope.map((filter) => `${bucket.reference} ${filter}`));
  const tableOf = (index: number) => tables[Math.floor(index / view.scope.length)]!;
  const stream = new LiveStream(watches, {
    reset: () => {
      for (const table of tables) table.reset();
    },
    batch: (index, events) => tableOf(index).apply(events),
    refused: (index, reason, message) => tableOf(index).refuse(reason, message),
  });
  const clock = window.setInterval(() => {
    for (const table of tables) table.tick();
  }, 1000);
  closeView = () => {
    stream.close();
    window.clearInterval(clock);
  };
}

async function route(): Promise<void> {
  closeView();
  closeView = () => undefined;
  const [, view, first, second] = location.hash.split("/").map(decodeURIComponent);
  if (!catalogue) {
    catalogue = await getJson<Catalogue>("/api/catalogue");
    renderNav(catalogue);
  }
  if (view === "bucket" && first) bucketView(first);
  else if (view === "history" && first && second !== undefined) await historyView(first, second);
  else if (view === "machine" && first) await machineView(first);
  else if (view === "sites")
    show("Sites", el("p", {}, "Sites come later: this is where the mesh's sites will be listed."));
  else catalogueView(catalogue);
  main.focus({ preventScroll: true });
}

async function start(): Promise<void> {
  window.addEventListener("hashchange", () => void route().catch(failed));
  await route();
}

function failed(error: unknown): void {
  replace(main, el("p", { class: "refused", role: "alert" }, `The view could not load: ${(error as Error).message}`));
}

void start().catch(failed);
