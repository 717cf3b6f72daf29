#!/usr/bin/env bash
# Builds every pinned nats-server (scripts/nats-server-versions.txt) that the tools cache lacks, and natscli,
# then prints one line per pinned server version: "<version> <absolute path of the binary>", oldest first.
# Each build lands in its own folder, <tools>/nats-server-<version>/, and is reused by later runs.
#   --default-only  only the default server (the last line of the versions file), no natscli: what the demo runs
#   --progress      a line before and after each build (on by default when stdout is a terminal)
set -euo pipefail
default_only=false
progress=false
[ -t 1 ] && progress=true
for option in "$@"; do
  case $option in
    --default-only) default_only=true ;;
    --progress) progress=true ;;
    *) echo "nats-servers: unknown option $option (--default-only, --progress)" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=go-install.sh
source "$here/go-install.sh"
versions_file="$here/nats-server-versions.txt"
# natscli v0.5.1 must never be used: v0.5.0 is pinned here, not in the versions file, because it is a client.
natscli_version=v0.5.0

pinned_versions() {
  if [ "$default_only" = true ]; then
    sed -e 's/#.*//' "$versions_file" | awk 'NF { print $1 }' | tail -n 1
  else
    sed -e 's/#.*//' "$versions_file" | awk 'NF { print $1 }'
  fi
}

failed=()
while read -r version; do
  if ! go_install "nats-server $version" "github.com/nats-io/nats-server/v2@$version" "$tools/nats-server-$version" nats-server; then
    failed+=("$version")
  fi
done < <(pinned_versions)

if [ "$default_only" = false ] &&
  ! go_install "natscli $natscli_version" "github.com/nats-io/natscli/nats@$natscli_version" "$tools/natscli-$natscli_version" nats; then
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
