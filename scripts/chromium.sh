#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (packages/cli/src/ui) when it is missing; prints its path.
# Called by the browser tests' setup and by scripts/bootstrap.sh; CHROMIUM_BIN overrides the binary.
set -euo pipefail
bin="${CHROMIUM_BIN:-/usr/bin/chromium}"
if [ ! -x "$bin" ]; then
  echo "chromium: installing Debian's chromium (apt-get)" >&2
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium >&2
fi
echo "$bin"
