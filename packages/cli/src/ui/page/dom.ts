/// <reference lib="dom" />

/**
 * The one way the page builds DOM: elements from a tag, attributes and children, where every string becomes a
 * Text node. Nothing here parses HTML, so a value holding `<script>` is shown as those characters.
 */
export type Child = Node | string | number | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child,
    );
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** "12 s ago", "5 min ago", "3 h ago", "2 d ago". */
export function age(updated: number, now: number): string {
  const seconds = Math.max(0, Math.floor((now - updated) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KiB`;
  return `${(count / 1024 / 1024).toFixed(1)} MiB`;
}

/** A key filter as NATS reads one (`*` a token, `>` the rest) when it has wildcards, else a substring. */
export function keyMatcher(pattern: string): (key: string) => boolean {
  const trimmed = pattern.trim();
  if (trimmed === "") return () => true;
  const tokens = trimmed.split(".");
  if (!tokens.some((token) => token === "*" || token === ">")) return (key) => key.includes(trimmed);
  return (key) => {
    const parts = key.split(".");
    for (const [index, token] of tokens.entries()) {
      if (token === ">") return parts.length > index;
      if (index >= parts.length) return false;
      if (token !== "*" && token !== parts[index]) return false;
    }
    return parts.length === tokens.length;
  };
}

/** A table named `label` (how a person, and a test, finds it), its header row, and one row per cell list. */
export function dataTable(
  label: string,
  headers: readonly string[],
  rows: readonly (readonly Child[])[],
): HTMLTableElement {
  return el(
    "table",
    { "aria-label": label },
    el("thead", {}, el("tr", {}, ...headers.map((header) => el("th", {}, header)))),
    el(
      "tbody",
      {},
      ...rows.map((cells) =>
        el("tr", {}, ...cells.map((cell) => (cell instanceof HTMLTableCellElement ? cell : el("td", {}, cell)))),
      ),
    ),
  );
}
