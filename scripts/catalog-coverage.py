#!/usr/bin/env python3
"""How much of what people install the catalog covers.

    scripts/catalog-coverage.py [--lists catalog/harvest] [--records catalog/servers]
                                [--package-lists /usr/share/package-lists] [--missing]

For the packages of catalog/harvest/npm.txt (the 300 most-downloaded npm MCP servers) and
pypi.txt (the 100 best-ranked PyPI ones): the share with a record (a record whose packages
name it), and with a tool snapshot, by count and, for npm, weighted by the monthly downloads
in the package list npm.tsv. PyPI's list gives a download rank but no downloads, so PyPI is
counted by package (and weighted by 1/rank as a rough second figure, said as such). Facts come
from those files only; no registry is asked.
"""

import argparse
import csv
import glob
import os
import re
import sys


def pypi_norm(n):
    return re.sub(r"[-_.]+", "-", n).lower()


def read_list(path, registry):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] != registry:
            continue
        spec = words[1]
        if registry == "npm":
            i = spec.rfind("@")
            out.append(spec[:i] if i > 0 else spec)
        else:
            out.append(spec.split("==")[0])
    return out


def read_records(d):
    """Package -> has a snapshot, from each record's `packages` and `snapshot` (a light reader
    of the record YAML, so the script needs nothing but Python)."""
    have = {}
    for f in glob.glob(os.path.join(d, "*.yaml")):
        text = open(f).read()
        snap = re.search(r"^snapshot:", text, re.M) is not None
        pk = re.search(r"^packages:\n((?:[- ] .*\n)+)", text, re.M)
        if not pk:
            continue
        reg = None
        for line in pk.group(1).splitlines():
            m = re.match(r"^[- ] (registry|identifier): (.*)$", line)
            if not m:
                continue
            val = m.group(2).strip().strip('"').strip("'")
            if m.group(1) == "registry":
                reg = val
            elif reg:
                key = (reg, pypi_norm(val) if reg == "pypi" else val)
                have[key] = have.get(key, False) or snap
    return have


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lists", default="catalog/harvest")
    ap.add_argument("--records", default="catalog/servers")
    ap.add_argument("--package-lists", default="/usr/share/package-lists")
    ap.add_argument("--missing", action="store_true", help="list the packages without a record")
    a = ap.parse_args()
    have = read_records(a.records)
    print(f"records: {len(glob.glob(os.path.join(a.records, '*.yaml')))}")

    npm = read_list(os.path.join(a.lists, "npm.txt"), "npm")
    downloads = {}
    tsv = os.path.join(a.package_lists, "npm.tsv")
    if os.path.exists(tsv):
        with open(tsv, newline="") as f:
            r = csv.reader(f, delimiter="\t")
            next(r, None)
            wanted = set(npm)
            for row in r:
                if len(row) >= 3 and row[0] in wanted:
                    try:
                        downloads[row[0]] = int(row[2])
                    except ValueError:
                        pass
    total = sum(downloads.get(n, 0) for n in npm)
    rec = [n for n in npm if ("npm", n) in have]
    snap = [n for n in npm if have.get(("npm", n))]
    print(f"npm: {len(npm)} packages; with a record {len(rec)}, with a snapshot {len(snap)}")
    if total:
        dr = sum(downloads.get(n, 0) for n in rec)
        ds = sum(downloads.get(n, 0) for n in snap)
        print(f"npm by monthly downloads ({total:,} in all): with a record {100 * dr / total:.1f}%, "
              f"with a snapshot {100 * ds / total:.1f}%")
    else:
        print(f"npm downloads: {tsv} not found")

    pypi = read_list(os.path.join(a.lists, "pypi.txt"), "pypi")
    ranks = {}
    tsv = os.path.join(a.package_lists, "pypi.tsv")
    if os.path.exists(tsv):
        wanted = {pypi_norm(n) for n in pypi}
        with open(tsv, newline="") as f:
            r = csv.reader(f, delimiter="\t")
            next(r, None)
            for row in r:
                if len(row) >= 4 and pypi_norm(row[0]) in wanted and row[3].isdigit():
                    ranks[pypi_norm(row[0])] = int(row[3])
    prec = [n for n in pypi if ("pypi", pypi_norm(n)) in have]
    psnap = [n for n in pypi if have.get(("pypi", pypi_norm(n)))]
    print(f"pypi: {len(pypi)} packages; with a record {len(prec)}, with a snapshot {len(psnap)}")
    w = {pypi_norm(n): 1 / ranks[pypi_norm(n)] for n in pypi if pypi_norm(n) in ranks}
    if w:
        tw = sum(w.values())
        print(f"pypi weighted by 1/rank (the list has ranks, not downloads; {len(w)} ranked): "
              f"with a record {100 * sum(w.get(pypi_norm(n), 0) for n in prec) / tw:.1f}%, "
              f"with a snapshot {100 * sum(w.get(pypi_norm(n), 0) for n in psnap) / tw:.1f}%")
    if a.missing:
        for n in npm:
            if ("npm", n) not in have:
                print(f"  no record: npm {n} ({downloads.get(n, 0):,} a month)")
        for n in pypi:
            if ("pypi", pypi_norm(n)) not in have:
                print(f"  no record: pypi {n}")


if __name__ == "__main__":
    sys.exit(main())
