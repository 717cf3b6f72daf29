#!/usr/bin/env bash
# Installs what a fresh machine lacks: pnpm (pinned by package.json's packageManager), the pinned
# nats-server builds and natscli,
# then the workspace's dependencies from the lockfile. Sourced by scripts/test.sh and scripts/demo.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

pnpm_version=$(node -p 'require("./package.json").packageManager.split("@")[1]')
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  # Node 20's corepack cannot verify current pnpm signatures, so pnpm comes from the npm registry
  # into a private prefix, not the machine's global one.
  prefix="${MESH_TOOLS_DIR:-$HOME/.cache/mesh-state-tools}/pnpm-$pnpm_version"
  if [ ! -x "$prefix/bin/pnpm" ]; then
    echo "bootstrap: installing pnpm $pnpm_version into $prefix" >&2
    npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version" >&2
  fi
  export PATH="$prefix/bin:$PATH"
fi

# The pinned nats-server versions (scripts/nats-server-versions.txt), built once into the tools cache.
# NATS_SERVER_PATHS holds "<version> <path>" lines for scripts/test.sh; the newest is the default server
# unless the caller chose one with NATS_SERVER_BIN.
NATS_SERVER_PATHS=$(bash "$root/scripts/nats-servers.sh")
export NATS_SERVER_PATHS
if [ -z "${NATS_SERVER_BIN:-}" ]; then
  NATS_SERVER_BIN=$(printf '%s\n' "$NATS_SERVER_PATHS" | tail -n 1 | cut -d' ' -f2-)
  export NATS_SERVER_BIN
fi
echo "bootstrap: nats-server for this run: $NATS_SERVER_BIN" >&2

pnpm install --frozen-lockfile --reporter=append-only >&2

# Debian's Chromium, for the web view's browser tests (packages/cli/src/ui).
CHROMIUM_BIN=$(bash "$root/scripts/chromium.sh")
export CHROMIUM_BIN
