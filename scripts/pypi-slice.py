#!/usr/bin/env python3
"""The seeded PyPI long-tail draw behind catalog/harvest/pypi-sample.txt, and its finishing step.

    scripts/pypi-slice.py --packages FILE rank LO HI   # places LO..HI of the draw, one TSV line each
    scripts/pypi-slice.py finalize LIST LOG   # LIST's lines with the options the harvest added

rank: of a local list of PyPI packages (--packages FILE, required: a TSV with a header line and
the columns name, version, month of the latest release, popularity rank, summary), the packages with "mcp" in the name, a summary that says "MCP server" or "Model
Context Protocol server", and a release since 2025-06, ordered by
sha256("mcprisk-pypi-sample-v1" NUL name). Each line is: place, name, version, flag, summary.
The flag is `-` for a candidate, `a` for a package the catalog already has (a record in
catalog/servers or a line in a harvest list), `b` for a summary with a word that marks what is
not a server of its own (SDKs, frameworks, clients, libraries, wrappers, proxies, gateways,
bridges, templates, demos, tests). Candidates still go past a person before they are harvested:
scanners, guards, registries and generators of other MCP servers are left out by hand.

finalize: the harvest retries a known drift on its own and logs `[tried again with OPTIONS]`;
this prints LIST with those options added to each package's line, so the list says how each
record was made.
"""

import argparse
import glob
import hashlib
import os
import re
import shlex
import sys

SEED = b"mcprisk-pypi-sample-v1\0"
NOT_A_SERVER = re.compile(
    r"\b(sdk|frameworks?|clients?|librar(y|ies)|wrappers?|wrapping|prox(y|ies|ying)|gateways?|"
    r"bridges?|templates?|boilerplate|demo|tests?|testing|toolkit|middleware|scanner)\b"
)


def catalog_names(root):
    names = set()
    for path in glob.glob(os.path.join(root, "catalog/servers/pypi--*.yaml")):
        names.add(os.path.basename(path)[len("pypi--") : -len(".yaml")].lower())
    for path in glob.glob(os.path.join(root, "catalog/harvest/pypi*.txt")):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "pypi":
                    names.add(parts[1].split("==")[0].lower())
    return names


def rank(args):
    rows = []
    with open(args.packages, encoding="utf-8") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            name, version, month, _, summary = parts[:5]
            low = summary.lower()
            if "mcp" not in name.lower() or month < "2025-06":
                continue
            if "mcp server" not in low and "model context protocol server" not in low:
                continue
            key = hashlib.sha256(SEED + name.encode()).hexdigest()
            rows.append((key, name, version, summary))
    rows.sort()
    known = catalog_names(args.root)
    for place, (_, name, version, summary) in enumerate(rows, 1):
        if args.lo <= place <= args.hi:
            flag = "a" if name.lower() in known else "b" if NOT_A_SERVER.search(summary.lower()) else "-"
            print(f"{place}\t{name}\t{version}\t{flag}\t{summary}")


def finalize(args):
    added = {}
    with open(args.log, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 5:
                m = re.match(r"\[tried again with (.*?)\]", parts[4])
                added[parts[1]] = shlex.split(m.group(1)) if m else []
    with open(args.list, encoding="utf-8") as f:
        for line in f:
            words = shlex.split(line, comments=True)
            if len(words) < 2 or words[0] != "pypi":
                sys.stdout.write(line)
                continue
            extra = [o for o in added.get(words[1], []) if o not in words]
            print(" ".join(shlex.quote(w) for w in words + extra))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", help="the local package list (TSV), required by rank")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rank")
    r.add_argument("lo", type=int)
    r.add_argument("hi", type=int)
    fin = sub.add_parser("finalize")
    fin.add_argument("list")
    fin.add_argument("log")
    args = ap.parse_args()
    if args.cmd == "rank" and not args.packages:
        ap.error("rank needs --packages FILE, the local package list")
    rank(args) if args.cmd == "rank" else finalize(args)


if __name__ == "__main__":
    main()
