#!/usr/bin/env bash
# The demo: a small mesh on real nats-server processes, narrated. Pass --cluster for three servers.
set -euo pipefail
# Only the server the demo runs is built (the default, the last pinned version); scripts/test.sh builds them all.
bootstrap_servers=default
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
pnpm build >&2
node examples/demo/dist/demo.js "$@"
