// Every relative link in the repository's Markdown files resolves: the file or folder exists, and an anchor
// (`#section`) names a heading of the target file as GitHub spells it. Moving a section breaks no link silently.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SKIPPED_DIRS = new Set(["node_modules", ".git", "dist", "coverage"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** The text outside fenced code blocks and code spans: a link in code is an example, not a link. */
function prose(text: string): string {
  let inFence = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line;
    })
    .join("\n")
    .replace(/(`+)[\s\S]*?\1/g, ""); // a code span may wrap onto the next line
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a Markdown file offers: its headings (a repeated one gets -1, -2, ...) and HTML ids. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
  }
  return found;
}

/** The targets of inline links and images, and of reference definitions. */
function targets(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
  const references = [...body.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1]!);
  return [...inline, ...references];
}

/** What is wrong with one link, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: and the like: not ours to check
  const hash = target.indexOf("#");
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = path === "" ? file : path.startsWith("/") ? join(ROOT, path) : join(dirname(file), path);
  if (!existsSync(resolved)) return "no such file or folder";
  if (anchor === undefined || anchor === "" || !resolved.endsWith(".md") || statSync(resolved).isDirectory()) {
    return undefined;
  }
  return anchors(readFileSync(resolved, "utf8")).has(anchor) ? undefined : `no heading #${anchor}`;
}

it("the anchor of a heading is GitHub's", () => {
  expect(slug("Server versions")).toBe("server-versions");
  expect(slug("A fleet on one bucket (`--only fleet --machines N`)")).toBe(
    "a-fleet-on-one-bucket---only-fleet---machines-n",
  );
  expect(slug("0004 — A full bucket, and nats-server < 2.10.5")).toBe("0004--a-full-bucket-and-nats-server--2105");
  expect(slug("See [the design](docs/DESIGN.md)")).toBe("see-the-design");
});

it("a broken link is found: a missing file, a missing heading", () => {
  const readme = join(ROOT, "README.md");
  expect(brokenLink(readme, "docs/no-such-file.md")).toBe("no such file or folder");
  expect(brokenLink(readme, "#no-such-section")).toBe("no heading #no-such-section");
  expect(brokenLink(readme, "docs/DESIGN.md#no-such-section")).toBe("no heading #no-such-section");
  expect(brokenLink(readme, "docs/DESIGN.md#the-sdk")).toBeUndefined();
  expect(brokenLink(readme, "https://example.com/#anything")).toBeUndefined();
});

it("every relative link and anchor in the repository's Markdown files resolves", () => {
  const files = markdownFiles(ROOT);
  expect(files.length).toBeGreaterThan(20);
  const broken = files.flatMap((file) =>
    targets(readFileSync(file, "utf8")).flatMap((target) => {
      const problem = brokenLink(file, target);
      return problem === undefined ? [] : [`${relative(ROOT, file)}: (${target}) ${problem}`];
    }),
  );
  expect(broken).toEqual([]);
});
