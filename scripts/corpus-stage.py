#!/usr/bin/env python3
"""Check a fresh set's blind labels and lay the set out as catalog/corpus/ is.

    scripts/corpus-stage.py ROOT [--all]

Reads ROOT/tools/*.json (from scripts/corpus-batches.py), ROOT/labels/<labeller>/*.yaml (first
labels) and ROOT/second/<labeller>/*.yaml (second labels). Checks that every server has exactly
one first labelling that names each of its tools once with a category, a severity and a
reason. Writes ROOT/stage40/ (labels, tools, second, seen.txt), each server cut to the 40
tools first in the order of sha256(server id NUL tool name) as the corpus keeps them, or with
--all ROOT/stage/ with every tool. `cargo run --release --example model -- score ROOT/stage`
then measures the engine on the set before it joins; joining is copying stage40's three folders
into catalog/corpus/. Exits 1 when a check fails.
"""
import glob
import hashlib
import json
import os
import shutil
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = {"Read", "Write", "Execute", "Destructive", "Financial"}
SEVERITIES = {"Low", "Medium", "High", "Critical"}
KEEP = 40


def problems(labels, tools):
    names = [t["name"] for t in labels["tools"]]
    want = [t["name"] for t in tools["tools"]]
    out = []
    if labels["server"] != tools["server"]:
        out.append(f"server {labels['server']!r}, tools of {tools['server']!r}")
    if sorted(names) != sorted(want):
        out.append(f"missing {sorted(set(want) - set(names))}, unknown {sorted(set(names) - set(want))}, "
                   f"repeated {len(names) - len(set(names))}")
    for t in labels["tools"]:
        if t.get("category") not in CATEGORIES or t.get("severity") not in SEVERITIES or not t.get("why"):
            out.append(f"incomplete label {t}")
    return out


def kept(server, names, everything):
    if everything or len(names) <= KEEP:
        return set(names)
    order = sorted(names, key=lambda n: hashlib.sha256(f"{server}\0{n}".encode()).hexdigest())
    return set(order[:KEEP])


def write_labels(labels, keep, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"server: {json.dumps(labels['server'])}\nlabeller: {json.dumps(labels['labeller'])}\ntools:\n")
        for t in labels["tools"]:
            if t["name"] in keep:
                f.write(f"  - {{name: {json.dumps(t['name'])}, category: {t['category']}, "
                        f"severity: {t['severity']}, why: {json.dumps(t['why'], ensure_ascii=False)}}}\n")
    with open(path, encoding="utf-8") as f:
        yaml.safe_load(f)


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def main():
    args = sys.argv[1:]
    everything = "--all" in args
    args = [a for a in args if a != "--all"]
    if len(args) != 1:
        sys.exit(__doc__)
    root = args[0]
    out = f"{root}/stage" if everything else f"{root}/stage40"
    shutil.rmtree(out, ignore_errors=True)
    for d in ("labels", "tools", "second"):
        os.makedirs(f"{out}/{d}")
    shutil.copy(os.path.join(REPO, "catalog/corpus/seen.txt"), f"{out}/seen.txt")
    ok, servers, count = True, 0, 0
    for path in sorted(glob.glob(f"{root}/tools/*.json")):
        stem = os.path.basename(path)[: -len(".json")]
        with open(path, encoding="utf-8") as f:
            tools = json.load(f)
        firsts = glob.glob(f"{root}/labels/*/{stem}.yaml")
        if len(firsts) != 1:
            print(f"{stem}: {len(firsts)} first labellings")
            ok = False
            continue
        labels = load_yaml(firsts[0])
        for p in problems(labels, tools):
            print(f"{firsts[0]}: {p}")
            ok = False
        keep = kept(tools["server"], [t["name"] for t in tools["tools"]], everything)
        write_labels(labels, keep, f"{out}/labels/{stem}.yaml")
        cut = dict(tools, tools=[t for t in tools["tools"] if t["name"] in keep])
        with open(f"{out}/tools/{stem}.json", "w", encoding="utf-8") as f:
            json.dump(cut, f, indent=1, ensure_ascii=False)
        for second in glob.glob(f"{root}/second/*/{stem}.yaml"):
            labels2 = load_yaml(second)
            for p in problems(labels2, tools):
                print(f"{second}: {p}")
                ok = False
            write_labels(labels2, keep, f"{out}/second/{stem}.yaml")
        servers += 1
        count += len(keep)
    print(f"{out}: {servers} servers, {count} tools; {'all checks passed' if ok else 'CHECKS FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
