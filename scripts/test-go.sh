#!/usr/bin/env bash
# The Go side: packages/sdk-go vetted, tested with the race detector, and its line reader fuzzed for a
# bounded time. The Go bundles' real-server tests run in the vitest suite (integration/src/sdk-go.test.ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../packages/sdk-go"
test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
go vet ./...
go test -race ./...
go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime "${GO_FUZZTIME:-10s}" .
cd ../../examples/licence-binding-go
test -z "$(gofmt -l .)" || { echo "gofmt: these files need formatting:"; gofmt -l .; exit 1; }
go vet ./...
