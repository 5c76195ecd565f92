#!/usr/bin/env bash
# Whole-process timing of `mcprisk lookup` (issue targets: 10 ms median and 30 MB peak memory
# with the shipped catalog; 50 ms with a generated catalog of 10,000 records).
#
#   scripts/bench-catalog.sh [RUNS]
#
# The shipped catalog is measured with the release binary. The 10,000-record catalog is
# generated into a temporary directory and embedded into a second release build
# (MCPRISK_EMBED_CATALOG, its own target directory), the way shipped records are; the same
# records read at run time with --catalog DIR are measured too. Uses hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install -y hyperfine)" >&2; exit 2; }

cargo build --release --quiet
bin="$PWD/target/release/mcprisk"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gen="$work/catalog"
mkdir -p "$gen"
cp catalog/servers/*.yaml "$gen/"
python3 - "$gen" <<'PY'
import sys
d = sys.argv[1]
for i in range(10000 - 55):
    with open(f"{d}/gen{i:05d}.yaml", "w") as f:
        f.write(f"""id: io.github.gen{i}/server-{i}
name: Generated server {i}
aliases: [gen-{i}]
summary: A generated record number {i} for the catalog benchmark.
publisher: gen{i}
packages: [{{registry: npm, identifier: "@gen{i}/mcp", version: 1.0.{i}}}]
transports: [stdio]
identity: {{level: unverified, evidence: [generated]}}
auth: {{kinds: [none]}}
""")
PY
echo "records: $(ls "$gen" | wc -l)"

MCPRISK_EMBED_CATALOG="$gen" CARGO_TARGET_DIR="$PWD/target/bench-catalog" cargo build --release --quiet
big="$PWD/target/bench-catalog/release/mcprisk"

hyperfine -N --warmup 5 --runs "$runs" \
    "$bin lookup proxmox" \
    "$bin lookup proxmox-mcp pve_api_request" \
    "$bin lookup proxmx" \
    "$big lookup proxmox" \
    "$big lookup gen-5000" \
    "$big lookup proxmx"
for cmd in "$bin lookup proxmox" "$big lookup proxmox"; do
    /usr/bin/time -f "peak memory of '$cmd': %M KB" $cmd >/dev/null
done
echo "run-time directory of 10,000 records, first run (every record parsed from YAML):"
export MCPRISK_CACHE_DIR="$work/cache"
hyperfine -N --runs 1 "$bin lookup gen-5000 --catalog $gen"
echo "the same directory again, its index now cached (the files are older than the 2 s window):"
sleep 3
hyperfine -N --warmup 2 --runs 20 "$bin lookup gen-5000 --catalog $gen"
