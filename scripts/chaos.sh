#!/usr/bin/env bash
# The fault suite (issue 44): `pnpm chaos --seed S --classes kill,pause,partition --duration 2m --server-version v2.15.3`.
# Builds the workload host (integration/dist/chaos-workload.js, the shipped runtime-state and sdk-ts) and the Go
# driver (chaos/cmd/chaos), then runs the driver with the arguments given. Root, /dev/fuse (for lostfsync),
# ip and nft are needed (scripts/fault-packages.sh installs them when root). docs/faults/README.md says more.
#   bash scripts/chaos.sh [--no-build] <driver flags>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=true
[ "${1:-}" = "--no-build" ] && { build=false; shift; }
if [ "$build" = true ]; then
  pnpm --filter "@mesh/integration..." build >/dev/null
fi
mkdir -p "$root/chaos/bin"
(cd "$root/chaos" && go build -o bin/chaos ./cmd/chaos)
# Go's flag package takes -flag and --flag alike.
exec "$root/chaos/bin/chaos" -workload "$root/integration/dist/chaos-workload.js" "$@"
