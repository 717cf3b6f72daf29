#!/usr/bin/env bash
# Builds every pinned nats-server (scripts/nats-server-versions.txt) that the tools cache lacks, and natscli,
# then prints one line per pinned server version: "<version> <absolute path of the binary>", oldest first.
# Each build lands in its own folder, <tools>/nats-server-<version>/, and is reused by later runs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tools="${MESH_TOOLS_DIR:-$HOME/.cache/mesh-state-tools}"
versions_file="$here/nats-server-versions.txt"
# natscli v0.5.1 must never be used: v0.5.0 is pinned here, not in the versions file, because it is a client.
natscli_version=v0.5.0

pinned_versions() {
  sed -e 's/#.*//' "$versions_file" | awk 'NF { print $1 }'
}

# go_install <module@version> <folder> <binary>: builds into <folder>, unless <folder>/<binary> is already there.
go_install() {
  local module=$1 folder=$2 binary=$3
  [ -x "$folder/$binary" ] && return 0
  if ! command -v go >/dev/null 2>&1; then
    echo "nats-servers: building $module needs Go (https://go.dev/dl/), which is not on PATH." >&2
    return 1
  fi
  echo "nats-servers: building $module into $folder" >&2
  local started=$SECONDS
  # A failed build leaves no folder behind, so the next run tries again instead of trusting half a build.
  if ! GOBIN="$folder" go install "$module" >&2; then
    rm -rf "$folder"
    return 1
  fi
  echo "nats-servers: built $module in $((SECONDS - started)) s" >&2
}

failed=()
while read -r version; do
  if ! go_install "github.com/nats-io/nats-server/v2@$version" "$tools/nats-server-$version" nats-server; then
    failed+=("$version")
  fi
done < <(pinned_versions)

if ! go_install "github.com/nats-io/natscli/nats@$natscli_version" "$tools/natscli-$natscli_version" nats; then
  echo "nats-servers: natscli $natscli_version could not be built (see above); the natscli test will fail." >&2
  failed+=("natscli-$natscli_version")
fi

if [ "${#failed[@]}" -gt 0 ]; then
  echo "nats-servers: could not build ${failed[*]} (the Go module proxy may not serve it, or the build failed above)." >&2
  echo "nats-servers: pin another version by editing $versions_file (one version per line, with why), then re-run." >&2
  echo "nats-servers: nothing falls back to another version on its own." >&2
  exit 1
fi

while read -r version; do
  echo "$version $tools/nats-server-$version/nats-server"
done < <(pinned_versions)
