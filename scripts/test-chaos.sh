#!/usr/bin/env bash
# The fault tools (chaos/, a Go module of its own): gofmt, go vet, staticcheck, the race tests (a real FUSE mount,
# real network namespaces, a real nats-server on lazyfs: NATS_SERVER_BIN) and a bounded fuzz of the history reader.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fault-packages.sh
source "$here/fault-packages.sh"
# shellcheck source=go-install.sh
source "$here/go-install.sh"
staticcheck_version=v0.8.2
go_install "staticcheck $staticcheck_version" "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" "$tools/staticcheck-$staticcheck_version" staticcheck
: "${NATS_SERVER_BIN:?test-chaos: NATS_SERVER_BIN must name the nats-server to put on lazyfs (scripts/bootstrap.sh sets it)}"
cd "$here/../chaos"
test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
go vet ./...
"$tools/staticcheck-$staticcheck_version/staticcheck" ./...
go test -race -count=1 ./...
go test -run '^$' -fuzz '^FuzzRead$' -fuzztime "${GO_FUZZTIME:-100000x}" ./history
