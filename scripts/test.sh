#!/usr/bin/env bash
# The whole test suite from a fresh machine: install what the tests need (pinned), then cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
cargo test "$@"
