#!/usr/bin/env node
// Renders what each nats-server version proved (docs/proven/<version>.jsonl, written by the test runs through
// integration/src/proven.ts) into the marked section of docs/server-versions.md, one column a version, one row
// a fact.
//   --write  normalise the result files (one line a fact, sorted) and rewrite that section
//   --check  fail if that section differs from what the committed result files render to
//   --record-vitest VERSION REPORT.json FACT  record a vitest JSON report's pass count as FACT of VERSION
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = `${root}docs/proven`;
const page = `${root}docs/server-versions.md`;
const start = "<!-- proven-table:start (rendered by scripts/proven-table.mjs; do not edit) -->";
const end = "<!-- proven-table:end -->";

const versionKey = (version) => version.replace(/^v/, "").split(".").map(Number);
const byVersion = (a, b) => {
  const [left, right] = [versionKey(a), versionKey(b)];
  for (let index = 0; index < 3; index++) if (left[index] !== right[index]) return left[index] - right[index];
  return 0;
};

/** version -> Map(fact -> value); the last line of a fact wins. */
function readResults() {
  let names = [];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
  } catch {}
  const results = new Map();
  for (const name of names) {
    const facts = new Map();
    for (const line of readFileSync(`${dir}/${name}`, "utf8").split("\n").filter(Boolean)) {
      const { fact, value } = JSON.parse(line);
      facts.set(fact, String(value));
    }
    results.set(name.replace(/\.jsonl$/, ""), facts);
  }
  return results;
}

function render(results) {
  const versions = [...results.keys()].sort(byVersion);
  const facts = [...new Set(versions.flatMap((version) => [...results.get(version).keys()]))].sort();
  const cell = (text) => text.replaceAll("|", "\\|");
  const lines = [
    `| what was proven | ${versions.map((version) => `nats-server ${version}`).join(" | ")} |`,
    `|---|${versions.map(() => "---").join("|")}|`,
    ...facts.map(
      (fact) =>
        `| ${cell(fact)} | ${versions.map((version) => cell(results.get(version).get(fact) ?? "not run")).join(" | ")} |`,
    ),
  ];
  return `${start}\n${lines.join("\n")}\n${end}`;
}

function section(text) {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/server-versions.md has no section between "${start}" and "${end}"`);
  return [from, to + end.length];
}

const mode = process.argv[2];
const results = readResults();
const text = readFileSync(page, "utf8");
const [from, to] = section(text);
if (mode === "--write") {
  for (const [version, facts] of results) {
    const lines = [...facts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([fact, value]) => JSON.stringify({ fact, value }));
    writeFileSync(`${dir}/${version}.jsonl`, `${lines.join("\n")}\n`);
  }
  writeFileSync(page, text.slice(0, from) + render(results) + text.slice(to));
} else if (mode === "--record-vitest") {
  const [version, report, fact] = process.argv.slice(3);
  const { numPassedTests, numTotalTests, testResults } = JSON.parse(readFileSync(report, "utf8"));
  const passedFiles = testResults.filter((file) => file.status === "passed").length;
  const value = `${numPassedTests}/${numTotalTests} tests in ${passedFiles}/${testResults.length} files`;
  appendFileSync(`${dir}/${version}.jsonl`, `${JSON.stringify({ fact, value })}\n`);
} else if (mode === "--check") {
  if (text.slice(from, to) !== render(results)) {
    console.error("proven-table: docs/server-versions.md's table differs from what docs/proven/*.jsonl render to.");
    console.error("proven-table: run `node scripts/proven-table.mjs --write` (or the test command) and commit both.");
    process.exit(1);
  }
} else {
  console.error("usage: node scripts/proven-table.mjs --write | --check");
  process.exit(2);
}
