#!/usr/bin/env bash
# The Go side: packages/sdk-go vetted, tested with the race detector, and its line reader fuzzed for a
# bounded number of runs. The Go bundles' real-server tests run in the vitest suite
# (integration/src/sdk-go.test.ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../packages/sdk-go"
test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
go vet ./...
go test -race ./...
# A count, not a duration: with a duration Go before 1.27 can fail a clean run with "context deadline exceeded"
# as the time runs out (golang/go#75804; it failed a fresh-clone CI here on go1.26). 300,000 runs: about 10 s.
go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime "${GO_FUZZTIME:-300000x}" .
cd ../../examples/licence-binding-go
test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
go vet ./...
