#!/usr/bin/env bash
# The whole test suite from a fresh machine: install what the tests need (pinned), then cargo test.
# The last line sums every test binary's results ("N passed, N failed"), since cargo's own last
# line is the doc-test run, which has no tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-dev-null.sh
scripts/install-test-deps.sh
scripts/ensure-dev-null.sh
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
cargo test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
passed=$(grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -oE '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
echo
echo "${passed} passed, ${failed} failed"
exit "$status"
