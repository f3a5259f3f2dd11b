#!/usr/bin/env python3
"""test_matrix_lofo.py - bench/matrix_lofo.py's figures checked against hand computation.

DESIGN
------
Two small sched_matrix-shaped files written here: four cells at seeds 1-2 whose HASS ratios to
the best are 1, 1.03, 1.01 and 1 (HASS the best: its own makespan below the others'), and one
cell at seeds 9-10. The one-state report must give, per family, the cells, the ok count (ratio
<= 1.02), the geometric mean and the worst cell computed by hand below, keep the two seed halves
apart, merge two files of one half, and refuse a cell that appears twice in one half. Then an
"after" in which the gpu cell that missed is fixed (1.03 -> 1) and a clean cell breaks (1.01 ->
1.04): holding out `trouble gpu`, the rest loses an ok cell, so the change is dropped while gpu
itself got better - a disagreement the report must flag; holding out `trouble clean`, the rest
gains one, taken, and clean got worse - another. Holding out `mix g2` (only the gpu cell) the
rest gets worse too: dropped, and g2 better, disagreeing. Every family's verdict is checked.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOFO = os.path.join(HERE, "..", "bench", "matrix_lofo.py")
failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def cell(name, n, mix, noise, trouble, shape, seeds, hass, best_other):
    """A sched_matrix.json cell: HASS's and minmin's mean makespans (and a slow greedy)."""
    return {"cell": name, "n": n, "mix": mix, "noise": noise, "trouble": trouble,
            "shape": shape, "seeds": seeds,
            "schedulers": {"hass": {"mean_makespan_s": hass},
                           "minmin": {"mean_makespan_s": best_other},
                           "greedy": {"mean_makespan_s": 5.0}}}


def write(d, name, cells):
    p = os.path.join(d, name)
    with open(p, "w", encoding="utf-8") as f:
        json.dump({"bench": "sched_matrix", "cells": cells}, f)
    return p


def run(*args):
    p = subprocess.run([sys.executable, LOFO, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def close(a, b):
    return a is not None and abs(a - b) < 1e-9


def main():
    lo = [1, 2]
    before = [
        cell("n1024-g1-j0-clean", 1024, "g1", 0.0, "clean", None, lo, 1.0, 1.0),
        cell("n1024-g2-j0-gpu", 1024, "g2", 0.0, "gpu", None, lo, 1.03, 1.0),
        cell("n4096-g1-j0.02-clean", 4096, "g1", 0.02, "clean", None, lo, 1.01, 1.0),
    ]
    extra = [cell("hump-g1-j0-gpu", 0, "g1", 0.0, "gpu", "hump", lo, 0.9, 1.0)]
    high = [cell("n1024-g1-j0-clean", 1024, "g1", 0.0, "clean", None, [9, 10], 1.1, 1.0)]
    after = [dict(before[0]), cell("n1024-g2-j0-gpu", 1024, "g2", 0.0, "gpu", None, lo, 1.0, 1.0),
             cell("n4096-g1-j0.02-clean", 4096, "g1", 0.02, "clean", None, lo, 1.04, 1.0)]
    with tempfile.TemporaryDirectory() as d:
        fb = write(d, "before.json", before)
        fx = write(d, "extra.json", extra)
        fh = write(d, "high.json", high)
        fa = write(d, "after.json", after)
        out = os.path.join(d, "state.json")

        rc, text = run(fb, fx, fh, "--json", out)
        expect("state runs", rc == 0, text)
        doc = json.load(open(out, encoding="utf-8")) if rc == 0 else {}
        expect("halves", sorted(doc) == ["seeds 1-2", "seeds 9-10"], sorted(doc))
        a = doc.get("seeds 1-2", {})
        al = a.get("all", {})
        expect("all cells", al.get("cells") == 4 and al.get("ok") == 3, al)
        expect("all geomean", close(al.get("geomean"), (1.03 * 1.01) ** 0.25), al)
        expect("all worst", al.get("worst") == "n1024-g2-j0-gpu"
               and close(al.get("worst_ratio"), 1.03), al)
        fam = a.get("by_dimension", {})
        clean = fam.get("trouble", {}).get("clean", {})
        expect("clean", clean.get("cells") == 2 and clean.get("ok") == 2
               and close(clean.get("geomean"), math.sqrt(1.01))
               and clean.get("worst") == "n4096-g1-j0.02-clean", clean)
        gpu = fam.get("trouble", {}).get("gpu", {})
        expect("gpu", gpu.get("cells") == 2 and gpu.get("ok") == 1
               and close(gpu.get("geomean"), math.sqrt(1.03)), gpu)
        expect("load families", sorted(fam.get("load", {})) == ["hump", "matmul"],
               fam.get("load"))
        expect("size noop", fam.get("size", {}).get("noop", {}).get("cells") == 1,
               fam.get("size"))
        expect("size order", list(fam.get("size", {})) == ["1024", "4096", "noop"],
               list(fam.get("size", {})))
        hump = fam.get("load", {}).get("hump", {})
        expect("hass best is 1", close(hump.get("geomean"), 1.0), hump)
        hi = doc.get("seeds 9-10", {}).get("all", {})
        expect("high half apart", hi.get("cells") == 1 and hi.get("ok") == 0
               and close(hi.get("geomean"), 1.1), hi)

        rc, text = run(fb, fb)
        expect("a cell twice in one half is refused", rc != 0 and "twice" in text, text)

        out = os.path.join(d, "change.json")
        rc, text = run("--before", fb, "--after", fa, "--json", out)
        expect("change runs", rc == 0, text)
        ch = json.load(open(out, encoding="utf-8")) if rc == 0 else {}
        r = ch.get("seeds 1-2", {})
        expect("paired", r.get("paired") == 3, r.get("paired"))
        t = r.get("by_dimension", {}).get("trouble", {})
        g = t.get("gpu", {})
        expect("gpu held out: dropped, better on gpu, disagrees",
               g.get("decision") == "drop" and g.get("on_family") == "better"
               and g.get("agrees") is False, g)
        c = t.get("clean", {})
        expect("clean held out: taken, worse on clean, disagrees",
               c.get("decision") == "take" and c.get("on_family") == "worse"
               and c.get("agrees") is False, c)
        expect("clean rest figures", c.get("rest_before", {}).get("ok") == 0
               and c.get("rest_after", {}).get("ok") == 1, c)
        m = r.get("by_dimension", {}).get("mix", {})
        expect("g2 held out disagrees", m.get("g2", {}).get("decision") == "drop"
               and m.get("g2", {}).get("agrees") is False, m.get("g2"))
        # g1 held out: the rest is the gpu cell alone (1.03 -> 1: taken); on g1 the clean
        # cells go 1, 1.01 -> 1, 1.04, one ok lost: worse, disagrees.
        expect("g1 held out", m.get("g1", {}).get("decision") == "take"
               and m.get("g1", {}).get("on_family") == "worse", m.get("g1"))
        n = r.get("by_dimension", {}).get("noise", {})
        # noise 0 held out: the rest is the 0.02 clean cell, 1.01 -> 1.04, ok lost: dropped;
        # on noise 0 the gpu cell is fixed: better, disagrees.
        expect("noise 0 held out", n.get("0", {}).get("decision") == "drop"
               and n.get("0", {}).get("on_family") == "better", n.get("0"))
        expect("disagreements printed", "families that disagree with the decision: " in text
               and "NO" in text, text)

        rc, text = run("--before", fb)
        expect("--before alone is refused", rc != 0, text)

    if failures:
        print("\n".join(failures))
        print(f"test_matrix_lofo.py: {len(failures)} failed")
        return 1
    print("test_matrix_lofo.py: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
