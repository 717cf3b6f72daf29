#!/usr/bin/env bash
# Installs what a fresh machine lacks: pnpm (pinned by package.json's packageManager), the pinned
# nats-server builds and natscli, then the workspace's dependencies from the lockfile. Sourced by
# scripts/test.sh (every pinned server) and scripts/demo.sh, which sets bootstrap_servers=default first: the
# demo runs only the default server, so only that one is built.
# Each long step says what it does and how long it took when stdout is a terminal, and is quiet otherwise;
# what a failed step printed is shown either way.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bootstrap_progress=false
[ -t 1 ] && bootstrap_progress=true

# bootstrap_step <what> <command...>: runs the command, its output kept back unless it fails.
bootstrap_step() {
  local what=$1 started=$SECONDS output
  shift
  [ "$bootstrap_progress" = true ] && echo "bootstrap: $what..." >&2
  output=$(mktemp)
  if ! "$@" >"$output" 2>&1; then
    echo "bootstrap: $what failed:" >&2
    cat "$output" >&2
    rm -f "$output"
    return 1
  fi
  rm -f "$output"
  [ "$bootstrap_progress" = true ] && echo "bootstrap: $what: done in $((SECONDS - started)) s" >&2
  return 0
}

# The pinned nats-server versions (scripts/nats-server-versions.txt), built once into the tools cache, beside the
# installs of pnpm and of the dependencies: a cold `go build` of nats-server is the longest step (88-183 s
# measured on 2 cores) and needs neither. It runs in a process group of its own, so a failed step stops it too. bootstrap_wait_servers waits for it and sets
# NATS_SERVER_PATHS ("<version> <path>" lines for scripts/test.sh) and NATS_SERVER_BIN (the newest, unless the
# caller chose one); a caller that sets bootstrap_defer_servers=true calls it itself, after work of its own
# (the demo's build).
nats_servers_options=()
[ "${bootstrap_servers:-all}" = default ] && nats_servers_options+=(--default-only)
[ "$bootstrap_progress" = true ] && nats_servers_options+=(--progress)
bootstrap_servers_out=$(mktemp)
bootstrap_group=()
command -v setsid >/dev/null 2>&1 && bootstrap_group=(setsid)
${bootstrap_group[@]+"${bootstrap_group[@]}"} bash "$root/scripts/nats-servers.sh" \
  ${nats_servers_options[@]+"${nats_servers_options[@]}"} >"$bootstrap_servers_out" &
bootstrap_servers_pid=$!

bootstrap_wait_servers() {
  if ! wait "$bootstrap_servers_pid"; then
    rm -f "$bootstrap_servers_out"
    return 1
  fi
  NATS_SERVER_PATHS=$(cat "$bootstrap_servers_out")
  rm -f "$bootstrap_servers_out"
  export NATS_SERVER_PATHS
  if [ -z "${NATS_SERVER_BIN:-}" ]; then
    NATS_SERVER_BIN=$(printf '%s\n' "$NATS_SERVER_PATHS" | tail -n 1 | cut -d' ' -f2-)
    export NATS_SERVER_BIN
  fi
  echo "bootstrap: nats-server for this run: $NATS_SERVER_BIN" >&2
}

# bootstrap_stop_servers: stops the server builds (their whole process group) after a failed step.
bootstrap_stop_servers() {
  kill -- -"$bootstrap_servers_pid" 2>/dev/null || kill "$bootstrap_servers_pid" 2>/dev/null || true
  wait "$bootstrap_servers_pid" 2>/dev/null || true
  rm -f "$bootstrap_servers_out"
}

pnpm_version=$(node -p 'require("./package.json").packageManager.split("@")[1]')
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  # Node 20's corepack cannot verify current pnpm signatures, so pnpm comes from the npm registry
  # into a private prefix, not the machine's global one.
  prefix="${MESH_TOOLS_DIR:-$HOME/.cache/mesh-state-tools}/pnpm-$pnpm_version"
  if [ ! -x "$prefix/bin/pnpm" ]; then
    if ! bootstrap_step "installing pnpm $pnpm_version into $prefix" \
      npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version"; then
      bootstrap_stop_servers
      exit 1
    fi
  fi
  export PATH="$prefix/bin:$PATH"
fi

if ! bootstrap_step "installing the dependencies (pnpm install)" pnpm install --frozen-lockfile --reporter=append-only; then
  bootstrap_stop_servers
  exit 1
fi
[ "${bootstrap_defer_servers:-false}" = true ] || bootstrap_wait_servers
