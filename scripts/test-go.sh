#!/usr/bin/env bash
# The Go side: packages/sdk-go and examples/licence-binding-go formatted, vetted and staticchecked, the SDK
# tested with the race detector (its Examples included) and its line reader fuzzed for a bounded number of
# runs. The Go bundles' real-server tests run in the vitest suite (integration/src/sdk-go.nats.test.ts).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=go-install.sh
source "$here/go-install.sh"
# staticcheck 2026.2.2: the newest release, the first line to support Go 1.26 (2026.1); built once into the tools cache.
staticcheck_version=v0.8.2
go_install "staticcheck $staticcheck_version" "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" "$tools/staticcheck-$staticcheck_version" staticcheck
staticcheck="$tools/staticcheck-$staticcheck_version/staticcheck"

# check <dir>: gofmt, go vet and staticcheck over the Go module in <dir>.
check() {
  cd "$here/../$1"
  test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
  go vet ./...
  "$staticcheck" ./...
}

check packages/sdk-go
go test -race ./...
# A count, not a duration: with a duration Go before 1.27 can fail a clean run with "context deadline exceeded"
# as the time runs out (golang/go#75804; it failed a fresh-clone CI here on go1.26). 300,000 runs: about 10 s.
go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime "${GO_FUZZTIME:-300000x}" .
check examples/licence-binding-go
