// This package's test kit (outside src/, never built): a catalogue folder for `mesh-state ui --catalogue DIR`.
// Starting the web view and Chromium is the harness's (`startUi`, `chromiumPath`), shared with the bench.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Manifest } from "@mesh/manifest-schema";

/** Writes the manifests into a fresh folder, as `--catalogue DIR` reads them. */
export async function catalogueFolder(manifests: readonly Manifest[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mesh-ui-catalogue-"));
  for (const manifest of manifests) await writeFile(join(dir, `${manifest.name}.json`), JSON.stringify(manifest));
  return dir;
}
