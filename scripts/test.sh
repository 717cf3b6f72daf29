#!/usr/bin/env bash
# Every test: build, lint, typecheck, unit and real-server tests, the packaging check, on the default
# (newest pinned) nats-server; then the server tests marked `@server-versions` (version_dependent_tests) on every
# other pinned version (scripts/nats-server-versions.txt); then the table of what each version proved
# (docs/server-versions.md).
#   bash scripts/test.sh                  everything
#   bash scripts/test.sh --versions-only  the other versions only (builds first; for development)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
# Debian's Chromium, for the web view's browser tests (packages/cli/src/ui); the demo does without it.
CHROMIUM_BIN=$(bash "$root/scripts/chromium.sh")
export CHROMIUM_BIN

versions_only=false
[ "${1:-}" = "--versions-only" ] && versions_only=true

# Each run appends what it proved to docs/proven/<version>.jsonl; scripts/proven-table.mjs renders the
# table in docs/server-versions.md.
export MESH_PROVEN_DIR="$root/docs/proven"
mkdir -p "$MESH_PROVEN_DIR"
node scripts/proven-table.mjs --check

default_bin=$NATS_SERVER_BIN
summary=()
failed=0
timed() { # timed <label> <command...>: runs it, records its time and outcome in the summary.
  local label=$1 started=$SECONDS
  outcome=passed
  shift
  "$@" 2>&1 | tee "$log" || { outcome=FAILED; failed=1; }
  summary+=("$(printf '%-44s %-6s %4d s' "$label" "$outcome" $((SECONDS - started)))")
}
version_of() { "$1" --version | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+' | head -n 1; }
fresh_results() { rm -f "$MESH_PROVEN_DIR/$1.jsonl"; }
report=$(mktemp)
log=$(mktemp) # the part's output, for the unhandled errors vitest reports outside its JSON report
trap 'rm -f "$report" "$log"' EXIT
# vitest's JSON report next to its usual output, for the pass counts in the table.
reporters=(--reporter=default --reporter=json "--outputFile.json=$report")
failures=()
# record_counts <version> <fact> <outcome>: the pass count for the table; for a failed part, what failed.
record_counts() {
  [ -s "$report" ] && node scripts/proven-table.mjs --record-vitest "$1" "$report" "$2"
  [ "$3" = passed ] || failures+=("$(node scripts/failed-tests.mjs "$2 on nats-server $1" "$report" "$log")")
  rm -f "$report"
}

default_version=$(version_of "$default_bin")
if [ "$versions_only" = false ]; then
  fresh_results "$default_version"
  timed "whole suite on nats-server $default_version" pnpm test "${reporters[@]}"
  record_counts "$default_version" "whole suite" "$outcome"
else
  timed "build" pnpm build
fi

# The Go SDK: gofmt, go vet, go test -race and a bounded fuzz of its line reader (its real-server tests with
# Go bundles run in the vitest suite above).
timed "Go SDK: vet, test -race, fuzz" bash scripts/test-go.sh
# The fault tools (chaos/): real FUSE, network namespaces and a nats-server on lazyfs; they install their Debian
# packages when root (scripts/fault-packages.sh).
timed "fault tools: vet, test -race, fuzz" bash scripts/test-chaos.sh
# The fault suite (docs/faults/README.md): a short seeded run of the shipped runtime and SDK against a three-node
# cluster in network namespaces, on the default server and on the oldest supported one. CI runs kill, pause and
# partition; lostfsync, corrupt, crash and five nodes run in the long runs the README lists. Every checker must pass.
chaos_seed=2
chaos_classes=kill,pause,partition
oldest_bin=$(awk '$1 == "v2.10.27" { print $2 }' <<<"$NATS_SERVER_PATHS")
for chaos_bin in "$default_bin" "$oldest_bin"; do
  timed "fault suite: seed $chaos_seed on nats-server $(version_of "$chaos_bin")" \
    bash scripts/chaos.sh --no-build -seed "$chaos_seed" -classes "$chaos_classes" -duration 90s \
    -server-bin "$chaos_bin"
done

# The server tests whose outcome depends on the server's version say so in their first line
# (`// @server-versions supported`, and `supported below-floor` for those that also run below the floor):
# version_dependent_tests <below-floor: true|false> lists them, derived from the files, never kept by hand.
version_dependent_tests() {
  local marker='^// @server-versions supported'
  [ "$1" = true ] && marker="$marker below-floor"
  grep -rlE --include='*.nats.test.ts' --exclude-dir=node_modules "$marker" packages integration bench examples | sort
}

while read -r version path; do
  [ "$path" = "$default_bin" ] && continue
  below_floor=false
  grep -qE "^$version[[:space:]]+below-floor" scripts/nats-server-versions.txt && below_floor=true
  mapfile -t files < <(version_dependent_tests "$below_floor")
  [ "${#files[@]}" -gt 0 ] || { echo "test: no *.nats.test.ts file says @server-versions" >&2; exit 1; }
  label="server-dependent tests on nats-server $version"
  [ "$below_floor" = true ] && label="below-floor tests on nats-server $version"
  fresh_results "$version"
  NATS_SERVER_BIN=$path timed "$label" pnpm vitest run "${reporters[@]}" "${files[@]}"
  record_counts "$version" "${label%% on nats-server*}" "$outcome"
done <<<"$NATS_SERVER_PATHS"

node scripts/proven-table.mjs --write

echo
echo "test: per part (docs/server-versions.md shows what each version proved):"
printf '  %s\n' "${summary[@]}"
# What failed comes last, so the tail of a long log names it.
[ "${#failures[@]}" -eq 0 ] || { echo; echo "test: what failed"; printf '%s\n' "${failures[@]}"; }
exit "$failed"
