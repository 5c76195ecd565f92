#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo: Debian's chromium (the HTML report is opened
# in it), and the pinned real MCP servers. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium for the HTML report test" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if [ -x scripts/install-test-servers.sh ]; then
    scripts/install-test-servers.sh
fi
