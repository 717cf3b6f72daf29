/// <reference lib="dom" />
import type { WireWatchEvent as WatchEvent } from "@mesh/state-protocol";
import { age, append, el, keyMatcher, replace } from "./dom.js";

/**
 * A bucket's keys, live: a Map of the current entries, shown a page at a time (so 10,000 keys stay
 * responsive), sorted by key, filtered by a pattern; what changed in the last seconds is marked, deletes go to
 * the list of recent changes. Values are text (JSON), cut at PREVIEW characters with a button for the whole.
 */

const PAGE_SIZE = 100;
const PREVIEW = 160;
const FRESH_MS = 5_000;
const RECENT_CHANGES = 50;

interface Row {
  key: string;
  text: string;
  revision: number;
  updated: number;
  changedAt?: number;
}

export class KeyTable {
  readonly element: HTMLElement;
  private readonly entries = new Map<string, Row>();
  private sorted: string[] | undefined;
  private readonly expanded = new Set<string>();
  private matches: (key: string) => boolean = () => true;
  private page = 0;
  private current = false;
  private scheduled = false;
  private readonly body = el("tbody");
  private readonly summary = el("p", { class: "pager-summary", "aria-live": "polite" });
  private readonly previous = el("button", { type: "button" }, "Previous page");
  private readonly next = el("button", { type: "button" }, "Next page");
  private readonly notice = el("div");
  private readonly changes = el("ol", { class: "changes" });
  private readonly ages: { cell: HTMLElement; row: Row; tr: HTMLElement }[] = [];

  constructor(
    private readonly reference: string,
    label: string,
  ) {
    const filter = el("input", {
      type: "search",
      placeholder: "all.* or any text",
      "aria-label": `Filter keys of ${label}`,
    });
    filter.addEventListener("input", () => {
      this.matches = keyMatcher(filter.value);
      this.page = 0;
      this.render();
    });
    this.previous.addEventListener("click", () => this.turn(-1));
    this.next.addEventListener("click", () => this.turn(1));
    this.element = el(
      "section",
      { "aria-label": label },
      this.notice,
      el("label", {}, "Filter keys ", filter),
      el(
        "table",
        { "aria-label": `Keys of ${label}` },
        el(
          "thead",
          {},
          el("tr", {}, el("th", {}, "Key"), el("th", {}, "Value"), el("th", {}, "Revision"), el("th", {}, "Updated")),
        ),
        this.body,
      ),
      el("div", { class: "pager" }, this.previous, this.next, this.summary),
      el("h3", {}, "Recent changes"),
      this.changes,
    );
    this.render();
  }

  reset(): void {
    this.entries.clear();
    this.sorted = undefined;
    this.current = false;
    replace(this.notice);
    this.schedule();
  }

  refuse(reason: string, message: string): void {
    const text = reason === "denied" ? "not readable with these credentials" : `cannot be read: ${reason}`;
    replace(this.notice, el("p", { class: "refused", role: "alert" }, text), el("p", { class: "muted" }, message));
  }

  apply(events: readonly WatchEvent[]): void {
    const now = Date.now();
    for (const event of events) {
      if (event.type === "put") {
        if (!this.entries.has(event.key)) this.sorted = undefined;
        this.entries.set(event.key, {
          key: event.key,
          text: JSON.stringify(event.value),
          revision: event.revision,
          updated: Date.parse(event.updated),
          ...(this.current ? { changedAt: now } : {}),
        });
        if (this.current) this.change("put", event.key, event.revision);
      } else if (event.type === "delete") {
        if (this.entries.delete(event.key)) this.sorted = undefined;
        this.change("deleted", event.key, event.revision);
      } else if (event.type === "current") this.current = true;
      else if (event.type === "ended") this.refuse(event.reason, event.message);
    }
    this.schedule();
  }

  /** Ages and marks move on every second without rebuilding the rows (focus stays where it is). */
  tick(): void {
    const now = Date.now();
    for (const { cell, row, tr } of this.ages) {
      const text = age(row.updated, now);
      if (cell.textContent !== text) cell.textContent = text;
      const fresh = row.changedAt !== undefined && now - row.changedAt < FRESH_MS;
      if (tr.classList.contains("fresh") !== fresh) {
        tr.classList.toggle("fresh", fresh);
        if (!fresh) tr.querySelector(".badge")?.remove();
      }
    }
  }

  private change(kind: "put" | "deleted", key: string, revision: number): void {
    const time = new Date().toLocaleTimeString();
    const item = el(
      "li",
      {},
      `${time} `,
      el("span", { class: kind === "deleted" ? "badge deleted" : "badge" }, kind),
      ` ${key} (revision ${revision})`,
    );
    this.changes.prepend(item);
    while (this.changes.childElementCount > RECENT_CHANGES) this.changes.lastElementChild?.remove();
  }

  private turn(step: number): void {
    this.page += step;
    this.render();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      if (!this.scheduled) return;
      this.scheduled = false;
      this.render();
    };
    requestAnimationFrame(run);
    // A tab in the background gets no animation frames: render anyway, a little later.
    setTimeout(run, 100);
  }

  private render(): void {
    this.sorted ??= [...this.entries.keys()].sort();
    const keys = this.sorted.filter(this.matches);
    const pages = Math.max(1, Math.ceil(keys.length / PAGE_SIZE));
    this.page = Math.min(Math.max(0, this.page), pages - 1);
    const shown = keys.slice(this.page * PAGE_SIZE, (this.page + 1) * PAGE_SIZE);
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.focus;
    const now = Date.now();
    this.ages.length = 0;
    const rows = shown.map((key) => this.row(this.entries.get(key)!, now));
    this.body.replaceChildren(...rows);
    if (rows.length === 0)
      append(
        this.body,
        el("tr", {}, el("td", { colspan: "4", class: "muted" }, this.current ? "no keys" : "reading…")),
      );
    if (focused) (this.body.querySelector(`[data-focus="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
    this.previous.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
    const first = keys.length === 0 ? 0 : this.page * PAGE_SIZE + 1;
    this.summary.textContent = `keys ${first}–${this.page * PAGE_SIZE + shown.length} of ${keys.length}${
      keys.length === this.entries.size ? "" : ` (${this.entries.size} in all)`
    }`;
  }

  private row(row: Row, now: number): HTMLElement {
    const whole = this.expanded.has(row.key) || row.text.length <= PREVIEW;
    const value = el("td", { class: "value" }, whole ? row.text : `${row.text.slice(0, PREVIEW)}…`);
    if (row.text.length > PREVIEW) {
      const toggle = el(
        "button",
        { type: "button", class: "link", "data-focus": `expand:${row.key}` },
        whole ? "show less" : `show whole value (${row.text.length} characters)`,
      );
      toggle.addEventListener("click", () => {
        if (this.expanded.has(row.key)) this.expanded.delete(row.key);
        else this.expanded.add(row.key);
        this.render();
      });
      append(value, " ", toggle);
    }
    const updated = el("td", {}, age(row.updated, now));
    updated.title = new Date(row.updated).toISOString();
    const fresh = row.changedAt !== undefined && now - row.changedAt < FRESH_MS;
    const link = el(
      "a",
      {
        href: `#/history/${encodeURIComponent(this.reference)}/${encodeURIComponent(row.key)}`,
        "data-focus": `key:${row.key}`,
      },
      row.key,
    );
    const tr = el(
      "tr",
      fresh ? { class: "fresh" } : {},
      el("td", {}, link, fresh && el("span", { class: "badge" }, "changed")),
      value,
      el("td", { class: "num" }, row.revision),
      updated,
    );
    this.ages.push({ cell: updated, row, tr });
    return tr;
  }
}
