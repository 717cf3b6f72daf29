// The type tests must compile as they are, and each `@ts-expect-error` in them must mark a real error:
// with the directives removed, the compiler reports an error on exactly the lines they stood above.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const file = fileURLToPath(new URL("./types.test-d.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
const DIRECTIVE = "// @ts-expect-error";

/** The 1-based lines the compiler reports errors on, compiling `text` in place of the type test file. */
function errorLines(text: string): number[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error(`cannot read ${tsconfig}`);
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === file ? text : readFile(name));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest);
  const program = ts.createProgram({ rootNames: [file], options: { ...config.options, noEmit: true }, host });
  const source = program.getSourceFile(file)!;
  return ts
    .getPreEmitDiagnostics(program, source)
    .filter((diagnostic) => diagnostic.file?.fileName === file)
    .map((diagnostic) => source.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1);
}

describe("type tests", () => {
  const original = readFileSync(file, "utf8");
  const lines = original.split("\n");
  const expectedErrorLines = lines.flatMap((line, index) => (line.trim().startsWith(DIRECTIVE) ? [index + 2] : []));

  it("compile as they are", () => {
    expect(expectedErrorLines.length).toBeGreaterThanOrEqual(10);
    expect(errorLines(original)).toEqual([]);
  });

  it("fail to compile exactly where a @ts-expect-error says they should", () => {
    // Blank the directive lines rather than delete them, so line numbers stay put.
    const stripped = lines.map((line) => (line.trim().startsWith(DIRECTIVE) ? "" : line)).join("\n");
    expect([...new Set(errorLines(stripped))]).toEqual(expectedErrorLines);
  });
});
