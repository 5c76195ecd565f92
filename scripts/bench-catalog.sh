#!/usr/bin/env bash
# Whole-process timing of `mcprisk lookup` and `catalog search` with the shipped catalog
# (targets: `lookup NAME` at most 10 ms median, `catalog search WORD` at most 20 ms, 30 MB peak
# memory, a release binary of at most 30 MB).
#
#   scripts/bench-catalog.sh [RUNS]             the shipped catalog
#   BENCH_BIG=1 scripts/bench-catalog.sh [RUNS] also a generated catalog of 10,000 records
#
# The shipped catalog is measured with the release binary. With BENCH_BIG=1 the 10,000-record
# catalog is generated into a temporary directory and embedded into a second release build
# (MCPRISK_EMBED_CATALOG, its own target directory: a whole second build, several GB), the way
# shipped records are, and the same records read at run time with --catalog DIR are measured
# too (target 50 ms). Uses hyperfine and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install -y hyperfine)" >&2; exit 2; }

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/mcprisk"
echo "binary: $(stat -c %s "$bin" | awk '{printf "%.1f MB", $1/1e6}'), $(ls catalog/servers/*.yaml | wc -l) records embedded"

hyperfine -N --warmup 5 --runs "$runs" \
    "$bin lookup proxmox" \
    "$bin lookup chrome-devtools-mcp" \
    "$bin lookup proxmox-mcp pve_api_request" \
    "$bin lookup proxmx" \
    "$bin lookup stripe" \
    "$bin catalog search git" \
    "$bin catalog search payments"
for cmd in "$bin lookup proxmox" "$bin lookup chrome-devtools-mcp" "$bin catalog search git"; do
    /usr/bin/time -f "peak memory of '${cmd#"$PWD/"}': %M KB" $cmd >/dev/null
done

[[ "${BENCH_BIG:-0}" == 1 ]] || exit 0

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gen="$work/catalog"
mkdir -p "$gen"
cp catalog/servers/*.yaml "$gen/"
python3 - "$gen" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(10000 - len(os.listdir(d))):
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
    "$big lookup proxmox" \
    "$big lookup gen-5000" \
    "$big lookup proxmx"
/usr/bin/time -f "peak memory of 'lookup proxmox' with 10,000 records: %M KB" "$big" lookup proxmox >/dev/null
echo "run-time directory of 10,000 records, first run (every record parsed from YAML):"
export MCPRISK_CACHE_DIR="$work/cache"
hyperfine -N --runs 1 "$bin lookup gen-5000 --catalog $gen"
echo "the same directory again, its index now cached (the files are older than the 2 s window):"
sleep 3
hyperfine -N --warmup 2 --runs 20 "$bin lookup gen-5000 --catalog $gen"
