#!/usr/bin/env bash
# Installs the pinned real MCP servers that tests/wire_*.rs talk to:
#   npm packages from tests/servers/package-lock.json into tests/servers/node_modules
#   PyPI packages from tests/servers/requirements.txt into the venv tests/servers/.venv
#   the official MCP Inspector and the Node 22 it needs, from tests/servers/inspector/package-lock.json
#     into tests/servers/inspector/node_modules (the clients tests/serve_clients.rs drives)
# and keeps what tests/packages.rs installs again without network (`--npm`/`--pypi`):
#   npm's own cache holds @modelcontextprotocol/server-memory and its dependencies (npm
#     --offline resolves from it), and the wheels of requirements.txt are in tests/servers/wheels
#     (pip --no-index --find-links).
# Idempotent: re-running only reinstalls when the pins (or this script) changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../tests/servers"

stamp_ok() { # $1 = stamp file, $2.. = inputs; true when the stamp matches the inputs' hash
    local want
    want=$(cat "${@:2}" | sha256sum | cut -d' ' -f1)
    [[ -f "$1" && "$(cat "$1")" == "$want" ]]
}
write_stamp() { cat "${@:2}" | sha256sum | cut -d' ' -f1 >"$1"; }

if stamp_ok node_modules/.mcprisk-stamp package.json package-lock.json ../../scripts/install-test-servers.sh; then
    echo "npm test servers: up to date"
else
    echo "npm test servers: installing (npm ci)"
    npm ci --no-audit --no-fund
    # npm ci fetches tarballs only; an install by name also caches the package documents that
    # an offline install by name needs.
    warm="$(mktemp -d)"
    npm install --prefix "$warm" --no-audit --no-fund --ignore-scripts \
        "@modelcontextprotocol/server-memory@$(node -p 'require("./package.json").dependencies["@modelcontextprotocol/server-memory"]')" >/dev/null
    rm -rf "$warm"
    write_stamp node_modules/.mcprisk-stamp package.json package-lock.json ../../scripts/install-test-servers.sh
fi

# The Inspector has its own folder because `npm ci` refuses its lock: vite (a dependency of the
# Inspector's web UI) names an optional package the registry does not serve, which `npm install`
# skips and `npm ci` calls a lock out of sync. `npm install` with the lock present installs
# exactly the locked versions; --no-save keeps the lock as it is.
if stamp_ok inspector/node_modules/.mcprisk-stamp inspector/package.json inspector/package-lock.json ../../scripts/install-test-servers.sh; then
    echo "MCP Inspector: up to date"
else
    echo "MCP Inspector: installing (npm install from the lock)"
    (cd inspector && npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error)
    write_stamp inspector/node_modules/.mcprisk-stamp inspector/package.json inspector/package-lock.json ../../scripts/install-test-servers.sh
fi

if stamp_ok .venv/.mcprisk-stamp requirements.txt ../../scripts/install-test-servers.sh; then
    echo "python test servers: up to date"
else
    echo "python test servers: installing into .venv"
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    rm -rf wheels
    .venv/bin/pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps \
        -r requirements.txt -d wheels
    write_stamp .venv/.mcprisk-stamp requirements.txt ../../scripts/install-test-servers.sh
fi
