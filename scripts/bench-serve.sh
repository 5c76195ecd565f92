#!/usr/bin/env bash
# Speed of `mcprisk serve` as a client sees it (issue 16's goals: spawn to tools/list answered
# at most 20 ms, lookup_server in a running server at most 5 ms, memory at most 30 MB):
#
#   scripts/bench-serve.sh [RUNS]     # default 30 fresh processes, and 4x RUNS calls per name
#
# Builds the release binary and runs examples/serve_timing.rs against it, which prints best /
# median / p95 of spawn-to-tools/list, median and p95 of lookup_server round trips for several
# kinds of name, and the server's peak resident set. When hyperfine is installed it also times
# a whole session (initialize, tools/list, end of input) as a second opinion. Nothing asserts a
# time: the numbers are for a person to read.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"

cargo build --release --quiet --bin mcprisk --example serve_timing
target="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target/release/mcprisk"

"$target/release/examples/serve_timing" "$bin" "$runs"

if command -v hyperfine >/dev/null 2>&1; then
    session="$(mktemp)"
    trap 'rm -f "$session"' EXIT
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' >"$session"
    hyperfine --warmup 5 --runs "$runs" "$bin serve < $session"
fi
