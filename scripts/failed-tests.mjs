#!/usr/bin/env node
// Prints what failed in a vitest JSON report: each failed test (or file that failed to run) with the first lines
// of its error, so the end of a long CI log names the failure even when only its tail is kept.
// vitest's JSON report leaves out unhandled errors (which fail a run whose tests all passed), so they are taken
// from the part's output.
//   failed-tests.mjs LABEL REPORT.json OUTPUT.log
import { readFileSync } from "node:fs";
import { relative } from "node:path";

const [label, path, logPath] = process.argv.slice(2);
// biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal colours vitest leaves in messages
const plain = (text) => text.replace(/\u001b\[[0-9;]*m/g, "");
const excerpt = (text, lines = 12) =>
  plain(text)
    .split("\n")
    // a stack's frames inside vitest or a dependency say nothing about the failure
    .filter((line) => line.trim() !== "" && !line.includes("node_modules/") && !line.includes("at new Promise"))
    .slice(0, lines)
    .map((line) => `      ${line}`)
    .join("\n");

let output = "";
try {
  output = plain(readFileSync(logPath, "utf8"));
} catch {}
const unhandled = output.indexOf("Unhandled Error");
if (unhandled >= 0) console.log(`${label}: unhandled errors\n${excerpt(output.slice(unhandled), 40)}`);

let report;
try {
  report = JSON.parse(readFileSync(path, "utf8"));
} catch {
  const tail = output.split("\n").slice(-25).join("\n");
  console.log(
    `${label}: no test report; it failed before the tests ran (build, lint or typecheck); its end:\n${excerpt(tail, 25)}`,
  );
  process.exit(0);
}
const failures = [];
for (const file of report.testResults ?? []) {
  const name = relative(process.cwd(), file.name);
  const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
  for (const test of failed) failures.push(`  ${name} > ${test.fullName}\n${excerpt(test.failureMessages.join("\n"))}`);
  if (failed.length === 0 && file.status === "failed") failures.push(`  ${name}\n${excerpt(file.message ?? "")}`);
}
if (failures.length === 0) {
  console.log(`${label}: the tests passed (${report.numPassedTests ?? 0}); what failed is in the output above`);
} else {
  console.log(`${label}: ${failures.length} failed\n${failures.join("\n")}`);
}
