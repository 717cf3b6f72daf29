#!/usr/bin/env bash
# The demo: a small mesh on real nats-server processes, narrated. Pass --cluster for three servers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
pnpm build >&2
node integration/dist/demo.js "$@"
