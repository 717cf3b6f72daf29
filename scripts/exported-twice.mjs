#!/usr/bin/env node
// Prints each name that more than one @mesh package exports (from any of its `exports` entry files), with
// where each package exports it; exits 1 if there is one. A name has one home, private packages included: a
// package that wants to offer another's name tells its users to import it from there, and a variant of it
// (nats-harness's startTestServer over local-nats's startServer) gets a name of its own.
//   node scripts/exported-twice.mjs
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Each `exports` subpath of a package with the source file it is built from (dist/x.js <- src/x.ts). */
function entries(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const found = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const file = typeof target === "string" ? target : target.import;
    if (!file?.endsWith(".js") && !file?.endsWith(".ts")) continue;
    const source = join(dir, file.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts"));
    if (existsSync(source))
      found.push({ specifier: join(manifest.name, subpath), source, published: !manifest.private });
  }
  return found;
}

/** The names an entry file exports, read from its syntax: named re-exports and exported declarations. */
function exportedNames(source) {
  const file = ts.createSourceFile(source, readFileSync(source, "utf8"), ts.ScriptTarget.Latest);
  const names = [];
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) throw new Error(`${source}: export * is not allowed (name every export)`);
      if (ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) names.push(element.name.text);
      } else names.push(statement.exportClause.name.text);
      continue;
    }
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) names.push(declaration.name.getText(file));
    } else if (statement.name) names.push(statement.name.text);
  }
  return names;
}

const homes = new Map();
for (const dir of readdirSync(join(root, "packages"))) {
  const path = join(root, "packages", dir);
  if (!existsSync(join(path, "package.json"))) continue;
  for (const { specifier, source, published } of entries(path)) {
    for (const name of exportedNames(source)) {
      const list = homes.get(name) ?? [];
      list.push({ specifier, source: relative(root, source), published });
      homes.set(name, list);
    }
  }
}

const twice = [...homes].filter(
  ([, list]) => new Set(list.map(({ specifier }) => specifier.split("/").slice(0, 2).join("/"))).size > 1,
);
for (const [name, list] of twice.sort(([a], [b]) => a.localeCompare(b))) {
  const where = list
    .map(({ specifier, source, published }) => `${specifier} (${source}${published ? "" : ", private"})`)
    .join(", ");
  console.log(`${name}: ${where}`);
}
console.log(`${twice.length} names exported by more than one package`);
process.exitCode = twice.length === 0 ? 0 : 1;
