// The unit project runs with no nats-server to be found: none named by NATS_SERVER_BIN, an empty tools cache, and
// no folder on PATH that holds one. A unit test that starts a server fails with local-nats's "nats-server-missing"
// instead of passing on a machine that happens to have one; it belongs in a `*.nats.test.ts` file.
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

delete process.env.NATS_SERVER_BIN;
process.env.MESH_TOOLS_DIR = join("/nonexistent", "the-unit-project-starts-no-nats-server");
process.env.PATH = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => dir !== "" && !existsSync(join(dir, "nats-server")))
  .join(delimiter);
