#!/usr/bin/env bash
# Whole-process timing of mcprisk on a 300-tool list (issue target: scan at most 25 ms).
#
#   scripts/bench.sh [RUNS]      # default 50 runs per command after 5 warm-ups
#
# Builds the release binary, makes a 300-tool list from the labelled tool lists in
# tests/data/labels/tools (repeated under new names), and prints the median wall time of
# `scan` (table), `scan --format json` and `policy`. Uses hyperfine when installed
# (apt-get install -y hyperfine), otherwise a plain loop timed with date +%s%N.
# The classifier's own throughput is a criterion benchmark: cargo bench --bench classify.
set -euo pipefail

cd "$(dirname "$0")/.."
runs="${1:-50}"
warmup=5

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/mcprisk"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
list="$work/bench300.tools.json"

python3 - "$list" tests/data/labels/tools/*.json <<'PY'
import json, sys
out, paths = sys.argv[1], sorted(sys.argv[2:])
base = []
for p in paths:
    with open(p, encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        doc = doc.get("tools") or doc.get("result", {}).get("tools", [])
    base.extend(doc)
tools = []
for i in range(300):
    t = dict(base[i % len(base)])
    rnd = i // len(base)
    if rnd:
        t["name"] = f"{t['name']}_{rnd}"
    tools.append(t)
with open(out, "w", encoding="utf-8") as f:
    json.dump({"tools": tools}, f)
PY

echo "tool list: $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tools"]))' "$list") tools, $(wc -c <"$list") bytes"
echo "binary:    $bin"

names=("scan" "scan --format json" "policy")
cmds=("$bin scan --tools $list" "$bin scan --tools $list --format json" "$bin policy --tools $list")

# Fail loudly if a command does not work at all, rather than timing an error.
for c in "${cmds[@]}"; do
    $c >/dev/null
done

median_loop() {
    local cmd="$1" i t0 t1
    local -a ms=()
    for ((i = 0; i < warmup; i++)); do $cmd >/dev/null; done
    for ((i = 0; i < runs; i++)); do
        t0=$(date +%s%N)
        $cmd >/dev/null
        t1=$(date +%s%N)
        ms+=("$(( (t1 - t0) / 1000 ))")
    done
    printf '%s\n' "${ms[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.2f", m / 1000}'
}

printf '%-22s %10s\n' "command" "median ms"
for i in "${!cmds[@]}"; do
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N --warmup "$warmup" --runs "$runs" --export-json "$work/h.json" "${cmds[$i]}" >/dev/null 2>&1
        median=$(python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$work/h.json")
    else
        median=$(median_loop "${cmds[$i]}")
    fi
    printf '%-22s %10s\n' "${names[$i]}" "$median"
done
echo "(target: scan of 300 tools at most 25 ms as a whole process)"
