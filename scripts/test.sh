#!/usr/bin/env bash
# Every test: build, lint, typecheck, unit and real-server tests, the packaging check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
pnpm test
