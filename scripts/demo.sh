#!/usr/bin/env bash
# The demo: a small mesh on real nats-server processes, narrated. Pass --cluster for three servers.
set -euo pipefail
# Only the server the demo runs is built (the default, the last pinned version), while the dependencies install
# and the demo's own packages build; scripts/test.sh builds every server and package.
bootstrap_servers=default
bootstrap_defer_servers=true
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
# The demo and what it runs (its workspace dependencies, and operators-agent, whose bundles it starts), as
# JavaScript only: the .d.ts are half a build and the demo never reads them. `pnpm build` (which scripts/test.sh
# runs) makes them again, before a typecheck.
if ! MESH_BUILD_JS_ONLY=1 pnpm --filter @mesh/example-demo... --filter @mesh/example-operators-agent... build >&2; then
  bootstrap_stop_servers
  exit 1
fi
bootstrap_wait_servers
node examples/demo/dist/demo.js "$@"
