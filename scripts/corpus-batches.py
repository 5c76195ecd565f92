#!/usr/bin/env python3
"""Lay out a fresh set of harvested servers for blind labelling.

    scripts/corpus-batches.py ROOT SEED [BATCHES]

ROOT/scratch holds catalog records made by `scripts/harvest.py --dir ROOT/scratch`. For every
record with a tool snapshot whose server the corpus does not hold yet, writes
ROOT/tools/<server>.json ({"server", "source", "tools"}, as catalog/corpus/tools/ keeps them),
then ROOT/batches/batch-N.json (BATCHES batches, default 4, balanced by tool count) for the
first labellers and ROOT/batches/second.json for a second labeller: servers of at most 60
tools in the order of sha256("mcprisk-second-SEED" NUL server id), until 250 tools.
Labellers get the batch, catalog/corpus/instructions.md and docs/classification.md only.
"""
import glob
import hashlib
import json
import os
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus_servers():
    have = set()
    for f in glob.glob(os.path.join(REPO, "catalog/corpus/labels/*.yaml")):
        with open(f, encoding="utf-8") as fh:
            have.add(yaml.safe_load(fh)["server"])
    return have


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    root, seed = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) == 4 else 4
    have = corpus_servers()
    os.makedirs(f"{root}/tools", exist_ok=True)
    os.makedirs(f"{root}/batches", exist_ok=True)
    servers = []
    for f in sorted(glob.glob(f"{root}/scratch/*.yaml")):
        with open(f, encoding="utf-8") as fh:
            r = yaml.safe_load(fh)
        snap = r.get("snapshot")
        if not snap or not snap.get("tools"):
            continue
        if r["id"] in have:
            print("already in the corpus:", r["id"])
            continue
        names = [t["name"] for t in snap["tools"]]
        if len(set(names)) != len(names):
            print("duplicate tool names, left out:", r["id"])
            continue
        doc = {"server": r["id"], "source": snap["source"], "tools": snap["tools"]}
        stem = r["id"].replace("/", "--")
        with open(f"{root}/tools/{stem}.json", "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1, ensure_ascii=False)
        servers.append(doc)
    print(len(servers), "servers,", sum(len(s["tools"]) for s in servers), "tools")
    bins = [[] for _ in range(n)]
    for s in sorted(servers, key=lambda s: -len(s["tools"])):
        min(bins, key=lambda b: sum(len(x["tools"]) for x in b)).append(s)
    for i, b in enumerate(bins, 1):
        b.sort(key=lambda s: s["server"])
        with open(f"{root}/batches/batch-{i}.json", "w", encoding="utf-8") as out:
            json.dump({"servers": b}, out, indent=1, ensure_ascii=False)
        print(f"batch-{i}: {len(b)} servers, {sum(len(s['tools']) for s in b)} tools")
    order = sorted(
        (s for s in servers if len(s["tools"]) <= 60),
        key=lambda s: hashlib.sha256(f"mcprisk-second-{seed}\0{s['server']}".encode()).hexdigest(),
    )
    second, total = [], 0
    for s in order:
        if total >= 250:
            break
        second.append(s)
        total += len(s["tools"])
    second.sort(key=lambda s: s["server"])
    with open(f"{root}/batches/second.json", "w", encoding="utf-8") as out:
        json.dump({"servers": second}, out, indent=1, ensure_ascii=False)
    print(f"second: {len(second)} servers, {total} tools")


if __name__ == "__main__":
    main()
