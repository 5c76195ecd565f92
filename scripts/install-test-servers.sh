#!/usr/bin/env bash
# Installs the pinned real MCP servers that tests/wire_*.rs talk to:
#   npm packages from tests/servers/package-lock.json into tests/servers/node_modules
#   PyPI packages from tests/servers/requirements.txt into the venv tests/servers/.venv
# Idempotent: re-running only reinstalls when the pins changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../tests/servers"

stamp_ok() { # $1 = stamp file, $2.. = inputs; true when the stamp matches the inputs' hash
    local want
    want=$(cat "${@:2}" | sha256sum | cut -d' ' -f1)
    [[ -f "$1" && "$(cat "$1")" == "$want" ]]
}
write_stamp() { cat "${@:2}" | sha256sum | cut -d' ' -f1 >"$1"; }

if stamp_ok node_modules/.mcprisk-stamp package.json package-lock.json; then
    echo "npm test servers: up to date"
else
    echo "npm test servers: installing (npm ci)"
    npm ci --no-audit --no-fund
    write_stamp node_modules/.mcprisk-stamp package.json package-lock.json
fi

if stamp_ok .venv/.mcprisk-stamp requirements.txt; then
    echo "python test servers: up to date"
else
    echo "python test servers: installing into .venv"
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    write_stamp .venv/.mcprisk-stamp requirements.txt
fi
