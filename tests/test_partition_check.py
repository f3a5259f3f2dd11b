#!/usr/bin/env python3
"""test_partition_check.py - the partition validator checked against hand
computation, malformed inputs and gpmetis.

DESIGN
------
A 5-vertex weighted graph written here (a 4-cycle 1-2-3-4 with a chord 1-3
and a pendant 5 on 4, edge and vertex weights) whose cut and imbalance for a
2-way partition are computed by hand in the comments; the same graph
unweighted; then one file per way a partition or graph can be wrong (too few
lines, too many, a part id out of range, a non-integer, a neighbour out of
range, an edge count that disagrees with the header, an imbalance over the
bound), each of which must exit 1 naming the file. Last, when gpmetis is
installed, gpmetis partitions a copy of 4elt into
8 parts (in a temporary directory: gpmetis writes next to its input) and the
validator's cut must equal the "Edgecut" gpmetis prints; skipped otherwise.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "partition_check.py")
# The repository's copy of METIS's 4elt mesh (tests/data/README.md).
FOURELT = os.path.join(HERE, "data", "4elt.graph")

failures = []


def run(*args):
    p = subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# Vertices (weight): 1(2) 2(1) 3(1) 4(3) 5(1); edges (weight): 1-2(4) 2-3(5)
# 3-4(1) 4-1(2) 1-3(7) 4-5(3). fmt 011 = vertex and edge weights.
WEIGHTED = """% a comment
5 6 011
2 2 4 4 2 3 7
1 1 4 3 5
1 2 5 4 1 1 7
3 3 1 1 2 5 3
1 4 3
"""
UNWEIGHTED = """5 6
2 4 3
1 3
2 4 1
3 1 5
4
"""

with tempfile.TemporaryDirectory() as d:
    g = write(d, "w.graph", WEIGHTED)
    gu = write(d, "u.graph", UNWEIGHTED)
    # Parts {1,2} -> 0, {3,4,5} -> 1. Cut edges: 2-3 (5), 4-1 (2), 1-3 (7) = 14.
    # Part weights: 0: 2+1 = 3, 1: 1+3+1 = 5; total 8, k = 2, avg 4 -> 5/4 = 1.25.
    p = write(d, "p2", "0\n0\n1\n1\n1\n")
    rc, out, err = run(g, p, "--parts", "2")
    expect("weighted rc", rc == 0, err)
    if rc == 0:
        r = json.loads(out)
        expect("weighted cut", r["edge_cut"] == 14, out)
        expect("weighted imbalance", abs(r["max_imbalance"] - 1.25) < 1e-9, out)
    # Unweighted: cut edges 2-3, 4-1, 1-3 = 3; parts 2 and 3 of 5: 3 / 2.5 = 1.2.
    rc, out, err = run(gu, p, "-k", "2")
    expect("unweighted rc", rc == 0, err)
    if rc == 0:
        r = json.loads(out)
        expect("unweighted cut", r["edge_cut"] == 3, out)
        expect("unweighted imbalance", abs(r["max_imbalance"] - 1.2) < 1e-9, out)
    # k = 3 with part 2 empty: average 8/3, heaviest 5 -> 1.875; one empty part.
    rc, out, err = run(g, p, "-k", "3")
    expect("k3 rc", rc == 0, err)
    if rc == 0:
        r = json.loads(out)
        expect("k3 empty", r["empty_parts"] == 1 and abs(r["max_imbalance"] - 1.875) < 1e-6, out)
    # Within the bound (0.25 allowed) passes; 0.2 allowed fails.
    rc, _, err = run(g, p, "-k", "2", "--imbalance", "0.25")
    expect("bound met", rc == 0, err)
    rc, _, err = run(g, p, "-k", "2", "--imbalance", "0.2")
    expect("bound exceeded", rc == 1 and "exceeds" in err, f"rc={rc} {err}")

    bad = {
        "short": (g, "0\n0\n1\n1\n", "4 lines"),
        "long": (g, "0\n0\n1\n1\n1\n0\n", "6 lines"),
        "range": (g, "0\n0\n2\n1\n1\n", "out of range"),
        "negative": (g, "0\n-1\n1\n1\n1\n", "out of range"),
        "text": (g, "0\n0\nx\n1\n1\n", "not a part id"),
    }
    for name, (graph, text, msg) in bad.items():
        pf = write(d, name, text)
        rc, _, err = run(graph, pf, "-k", "2")
        expect(f"bad {name}", rc == 1 and msg in err and name in err, f"rc={rc} {err!r}")
    bad_graphs = {
        "nbr": ("3 1\n2\n1 4\n\n", "out of range"),
        "count": ("3 2\n2\n1\n\n", "expected 2m"),
        "ew": ("2 1 1\n2\n1 1\n", "without an edge weight"),
        "hdr": ("2 1 7\n2\n1\n", "bad header"),
    }
    pf = write(d, "p3", "0\n1\n0\n")
    for name, (text, msg) in bad_graphs.items():
        gf = write(d, f"{name}.graph", text)
        rc, _, err = run(gf, pf if name != "ew" and name != "hdr" else write(d, "p2b", "0\n1\n"))
        expect(f"bad graph {name}", rc == 1 and msg in err, f"rc={rc} {err!r}")

    gpmetis = shutil.which("gpmetis")
    expect("4elt.graph in tests/data", os.path.exists(FOURELT), FOURELT)
    if gpmetis and os.path.exists(FOURELT):
        local = os.path.join(d, "4elt.graph")
        shutil.copy(FOURELT, local)
        p = subprocess.run([gpmetis, local, "8"], capture_output=True, text=True)
        m = re.search(r"Edgecut:\s*(\d+)", p.stdout)
        expect("gpmetis ran", p.returncode == 0 and m, p.stdout + p.stderr)
        if m:
            rc, out, err = run(local, local + ".part.8", "-k", "8", "--imbalance", "0.03")
            expect("4elt rc", rc == 0, err)
            if rc == 0:
                r = json.loads(out)
                expect("4elt cut = gpmetis", r["edge_cut"] == int(m.group(1)),
                       f"validator {r['edge_cut']} gpmetis {m.group(1)}")
    else:
        print("gpmetis missing: gpmetis cross-check skipped")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("partition_check: all cases pass")
