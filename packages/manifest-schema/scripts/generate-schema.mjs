// Rewrites schema.json from the built package (run through `pnpm generate-schema`, which builds first).
import { writeFileSync } from "node:fs";
import { manifestJsonSchemaText } from "../dist/index.js";

const target = new URL("../schema.json", import.meta.url);
writeFileSync(target, manifestJsonSchemaText());
process.stdout.write(`wrote ${target.pathname}\n`);
