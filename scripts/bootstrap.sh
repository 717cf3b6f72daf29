#!/usr/bin/env bash
# Installs what a fresh machine lacks: pnpm (pinned by package.json's packageManager) and nats-server,
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

if [ -z "${NATS_SERVER_BIN:-}" ] && ! command -v nats-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing nats-server with apt-get" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >&2
    # Debian's package enables a system service on port 4222; the tests never use it, so stop it if it started.
    (command -v systemctl >/dev/null 2>&1 && systemctl disable --now nats-server >/dev/null 2>&1) || true
  else
    echo "bootstrap: nats-server is not on PATH. Install it (Debian: 'sudo apt-get install nats-server';" >&2
    echo "           elsewhere: https://docs.nats.io/running-a-nats-service/introduction/installation)" >&2
    echo "           or set NATS_SERVER_BIN to its path. A machine with a Docker engine can skip this." >&2
  fi
fi

pnpm install --frozen-lockfile --reporter=append-only >&2
