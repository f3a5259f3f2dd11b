#!/usr/bin/env python3
"""test_no_machine_paths.py - no tracked file names a path that exists only on
this project's own machines.

DESIGN
------
A clone in any folder, with nothing beside it, must build, test and run: so
no tracked file may read data from, or point a reader at, a folder outside
the repository. Every file `git ls-files` lists (from the repository root)
is searched for the prefixes below; each hit is printed as file:line: text,
and any hit fails the test. The data the tests need lives under tests/data/
and is named relative to the root.

EXCLUDED is the explicit list of paths (a trailing "/" excludes a folder)
not searched, each with its reason; it is meant to shrink, never to grow
quietly. Outside a git checkout (an exported tarball) there is no list of
tracked files: the test skips (exit 77).
"""
import os
import subprocess
import sys

# The prefixes of paths that exist only on this project's machines.
PATTERNS = ("/work/", "/root/", "../shared")

# Paths not searched, and why.
EXCLUDED = {
    # This file names the patterns it looks for.
    "tests/test_no_machine_paths.py": "names the patterns",
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def excluded(path):
    return any(path == e or (e.endswith("/") and path.startswith(e)) for e in EXCLUDED)


def main():
    p = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if p.returncode != 0:
        print("not a git checkout: no list of tracked files")
        return 77
    files = [f for f in p.stdout.decode().split("\0") if f]
    if not files:
        print("git ls-files listed nothing")
        return 1
    hits = []
    for f in files:
        if excluded(f):
            continue
        path = os.path.join(ROOT, f)
        if not os.path.isfile(path):  # deleted in the work tree, a submodule
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        if not any(pat.encode() in data for pat in PATTERNS):
            continue
        for n, line in enumerate(data.split(b"\n"), 1):
            if any(pat.encode() in line for pat in PATTERNS):
                hits.append("%s:%d: %s" % (f, n, line.decode(errors="replace").strip()[:160]))
    for h in hits:
        print(h)
    if hits:
        print("%d line(s) name a path outside the repository (%s); data the tests need "
              "belongs under tests/data/" % (len(hits), ", ".join(PATTERNS)))
        return 1
    print("%d tracked files, none names %s" % (len(files), ", ".join(PATTERNS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
