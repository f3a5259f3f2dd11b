#!/usr/bin/env python3
"""matrix_lofo.py - the stress matrix by family and seed half, and leave-one-family-out.

    python3 bench/matrix_lofo.py FILE...                      # one state of the code
    python3 bench/matrix_lofo.py --before FILE... --after FILE...   # a change

FILEs are sched_matrix.sh results (bench/results/<machine>/sched_matrix*.json). Issue 41: a
change tuned on the matrix must also hold on families it was not tuned on.

DESIGN
------
A cell is one (load, mix, noise, trouble) point; HASS's ratio there is its mean makespan from
round 2 over the best scheduler's (1 = best), `ok` when the ratio is at most 1.02. A *family*
is one value of one dimension of the cell: `trouble` (clean, gpu, slow, rate, flaky), `load`
(matmul, or the irregular shape: hump, tail, hot), `mix` (g1 .. g8, fs, o4, m2, m3, m8),
`size` (matmul's n; `noop` for the shape cells) and `noise` (the jitter). Every cell is in one
family of each dimension. A *seed half* is the set of seeds a file ran (files with the same
seeds are merged, e.g. sched_matrix.json and sched_matrix_families.json at seeds 1-8; a cell
run in two files of one half is an error).

One state: per dimension, family and half, the cells, how many are ok, the geometric mean of
the ratio and the worst cell.

Before/after: cells are paired by name within a half (cells in only one side are counted and
left out). For each family F held out, the decision one would make not seeing F is taken on the
other cells of that half: the change is *taken* when it leaves more of them ok, or as many and a
lower geometric mean (by more than TIE, 0.0005), *dropped* when the reverse, else *even*. On F
itself the change is *better*, *worse* or *same* by the same rule. F agrees with the decision
when a taken change is not worse on F, a dropped one is not better on F, and an even one is
the same on F; the report counts the families that disagree, per dimension and half. The seed
halves are held out the same way: the change decided on every paired cell of one half, and
whether the other half agrees. Standard library only.
"""
import argparse
import json
import math
import sys

sys.dont_write_bytecode = True

WITHIN, TIE = 0.02, 0.0005
DIMENSIONS = ("trouble", "load", "mix", "size", "noise")


def family(cell, dim):
    """The family of one dimension that a cell (a sched_matrix.json cell) belongs to."""
    if dim == "trouble":
        return cell["trouble"]
    if dim == "load":
        return cell.get("shape") or "matmul"
    if dim == "mix":
        return cell["mix"]
    if dim == "size":
        return "noop" if cell.get("shape") else str(cell["n"])
    return f"{cell['noise']:g}"


def ratio(cell):
    """HASS's mean makespan over the best scheduler's in a cell."""
    spans = {k: v["mean_makespan_s"] for k, v in cell["schedulers"].items()}
    return spans["hass"] / min(spans.values())


def half_label(seeds):
    s = sorted(seeds)
    if s and s == list(range(s[0], s[-1] + 1)):
        return f"seeds {s[0]}-{s[-1]}"
    return "seeds " + ",".join(map(str, s))


def load(paths):
    """{half label: {cell name: cell}} over the files, halves keyed by each cell's seeds."""
    halves = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        for c in doc["cells"]:
            h = halves.setdefault(half_label(c["seeds"]), {})
            if c["cell"] in h:
                sys.exit(f"matrix_lofo.py: {c['cell']} twice at {half_label(c['seeds'])} ({p})")
            c = dict(c, ratio=ratio(c))
            h[c["cell"]] = c
    return halves


def stats(cells):
    """Cells, ok count, geometric mean ratio and worst cell of a list of cells."""
    if not cells:
        return {"cells": 0, "ok": 0, "geomean": None, "worst": None, "worst_ratio": None}
    worst = max(cells, key=lambda c: c["ratio"])
    return {
        "cells": len(cells),
        "ok": sum(1 for c in cells if c["ratio"] <= 1 + WITHIN),
        "geomean": math.exp(sum(math.log(c["ratio"]) for c in cells) / len(cells)),
        "worst": worst["cell"],
        "worst_ratio": worst["ratio"],
    }


def by_family(cells):
    """{dimension: {family: stats}} for one half's cells, families in a stable order."""
    out = {}
    for dim in DIMENSIONS:
        fams = {}
        for c in cells:
            fams.setdefault(family(c, dim), []).append(c)
        out[dim] = {f: stats(fams[f]) for f in sorted(fams, key=_order)}
    return out


def _order(f):
    try:
        return (0, float(f), "")
    except ValueError:
        return (1, 0.0, f)


def verdict(before, after):
    """+1 when after is better (more ok, or as many and a lower geomean by > TIE), -1 worse."""
    if after["ok"] != before["ok"]:
        return 1 if after["ok"] > before["ok"] else -1
    if before["geomean"] is None or abs(after["geomean"] - before["geomean"]) <= TIE:
        return 0
    return 1 if after["geomean"] < before["geomean"] else -1


def lofo(before, after):
    """Per dimension and family held out: the decision on the rest, the change on it, agreement."""
    names = sorted(set(before) & set(after))
    b = [before[n] for n in names]
    a = [after[n] for n in names]
    out = {}
    for dim in DIMENSIONS:
        rows = {}
        for f in sorted({family(c, dim) for c in b}, key=_order):
            inn = [i for i, c in enumerate(b) if family(c, dim) == f]
            rest = [i for i in range(len(b)) if family(b[i], dim) != f]
            sr_b, sr_a = stats([b[i] for i in rest]), stats([a[i] for i in rest])
            sf_b, sf_a = stats([b[i] for i in inn]), stats([a[i] for i in inn])
            d = verdict(sr_b, sr_a) if rest else 0
            v = verdict(sf_b, sf_a)
            rows[f] = {
                "rest_before": sr_b, "rest_after": sr_a,
                "decision": {1: "take", -1: "drop", 0: "even"}[d],
                "family_before": sf_b, "family_after": sf_a,
                "on_family": {1: "better", -1: "worse", 0: "same"}[v],
                "agrees": (d == 1 and v >= 0) or (d == -1 and v <= 0) or (d == 0 and v == 0),
            }
        out[dim] = rows
    return {"paired": len(names), "only_before": len(set(before) - set(after)),
            "only_after": len(set(after) - set(before)), "by_dimension": out}


def _first_seed(label):
    return int(label.split()[1].split("-")[0].split(",")[0])


def seed_split(hb, ha):
    """The change decided on all of one seed half's paired cells, checked on the other's."""
    halves = sorted(set(hb) & set(ha), key=_first_seed)
    out = []
    for d in halves:
        for h in halves:
            if h == d:
                continue
            def pair(x):
                n = sorted(set(hb[x]) & set(ha[x]))
                return stats([hb[x][c] for c in n]), stats([ha[x][c] for c in n])
            v_d, v_h = verdict(*pair(d)), verdict(*pair(h))
            out.append({"decided_on": d, "held_out": h,
                        "decision": {1: "take", -1: "drop", 0: "even"}[v_d],
                        "on_half": {1: "better", -1: "worse", 0: "same"}[v_h],
                        "agrees": (v_d == 1 and v_h >= 0) or (v_d == -1 and v_h <= 0)
                        or (v_d == 0 and v_h == 0)})
    return out


def fmt_stats(s):
    if not s["cells"]:
        return "-"
    return (f"{s['ok']:3d}/{s['cells']:<3d} geo {s['geomean']:.4f} worst {s['worst_ratio']:.4f} "
            f"{s['worst']}")


def print_state(halves):
    for h in sorted(halves, key=_first_seed):
        cells = list(halves[h].values())
        print(f"== {h}: {fmt_stats(stats(cells))}")
        for dim, fams in by_family(cells).items():
            for f, s in fams.items():
                print(f"  {dim:7s} {f:8s} {fmt_stats(s)}")


def print_change(report):
    for h, r in report.items():
        print(f"== {h}: {r['paired']} cells paired ({r['only_before']} only before, "
              f"{r['only_after']} only after)")
        print(f"  {'held out':16s} {'rest: ok, geomean before -> after':38s} decision  "
              f"{'family: ok, geomean before -> after':38s} on it   agrees")
        for dim, rows in r["by_dimension"].items():
            for f, x in rows.items():
                rb, ra, fb, fa = x["rest_before"], x["rest_after"], x["family_before"], \
                    x["family_after"]
                rest = (f"{rb['ok']}/{rb['cells']} {rb['geomean']:.4f} -> {ra['ok']} "
                        f"{ra['geomean']:.4f}" if rb["cells"] else "-")
                fam = (f"{fb['ok']}/{fb['cells']} {fb['geomean']:.4f} -> {fa['ok']} "
                       f"{fa['geomean']:.4f}")
                print(f"  {dim + ' ' + f:16s} {rest:38s} {x['decision']:9s} {fam:38s} "
                      f"{x['on_family']:7s} {'yes' if x['agrees'] else 'NO'}")
        dis = [f"{d} {f}" for d, rows in r["by_dimension"].items() for f, x in rows.items()
               if not x["agrees"]]
        print(f"  families that disagree with the decision: {len(dis)}"
              + (f" ({', '.join(dis)})" if dis else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="one state: sched_matrix*.json files")
    ap.add_argument("--before", nargs="+", default=[])
    ap.add_argument("--after", nargs="+", default=[])
    ap.add_argument("--json", help="also write the report here")
    a = ap.parse_args(argv)
    if bool(a.before) != bool(a.after) or (a.files and a.before) or not (a.files or a.before):
        ap.error("either FILE... or both --before and --after")
    if a.files:
        halves = load(a.files)
        doc = {h: {"all": stats(list(halves[h].values())),
                   "by_dimension": by_family(list(halves[h].values()))}
               for h in sorted(halves, key=_first_seed)}
        print_state(halves)
    else:
        hb, ha = load(a.before), load(a.after)
        doc = {h: lofo(hb[h], ha[h]) for h in sorted(set(hb) & set(ha), key=_first_seed)}
        print_change(doc)
        doc["seed_halves"] = seed_split(hb, ha)
        for r in doc["seed_halves"]:
            print(f"decided on {r['decided_on']} ({r['decision']}): on {r['held_out']} "
                  f"{r['on_half']}, {'agrees' if r['agrees'] else 'DISAGREES'}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
