#!/usr/bin/env python3
"""gap_compare.py - the summary of bench/graph/gap_compare.sh: per app, every trial of
hetfarm (sum of the rounds' makespans, from its results JSON) and of GAP ("Trial Time" of
its log), their medians and the ratio hetfarm / GAP of the medians, with the machine
(bench/machine.py). With --baseline, the older hetfarm build's trials (hfbase-*) too, as
"before", with their own ratio to GAP. A trial whose run failed or whose log lacks a time is left out and
counted in "failed"; the script exits 1 when any trial failed.
"""
import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import machine  # noqa: E402


def hetfarm_seconds(path):
    """The sum of the rounds' makespans and the app's figures of one results JSON."""
    with open(path, encoding="utf-8") as f:
        run = json.load(f)["runs"][0]
    figs = {k: v["value"] for k, v in run.get("app_figures", {}).items()}
    return sum(r["makespan_s"] for r in run["rounds"]), len(run["rounds"]), figs


def gap_seconds(path):
    """GAP's "Trial Time" lines of one log (one per trial)."""
    with open(path, encoding="utf-8") as f:
        return [float(m.group(1)) for m in re.finditer(r"Trial Time:\s+([0-9.eE+-]+)", f.read())]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    for a in ("logs", "apps", "graph", "gap-commit", "hetfarm-commit", "out"):
        ap.add_argument("--" + a, required=True)
    for a in ("trials", "scale", "edge-factor", "threads", "source", "pr-iters", "gap-delta"):
        ap.add_argument("--" + a, type=int, required=True)
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--grain", default="", help="[run] grain (empty: the apps' own)")
    ap.add_argument("--baseline-grain", default="", help="the baseline's [run] grain")
    o = ap.parse_args()
    result = {
        "bench": "bench/graph/gap_compare.sh",
        "machine": machine.describe(),
        "graph": {"generator": "hetfarm kron (Graph500 R-MAT a=.57 b=.19 c=.19), seed 1, "
                               "weights 1..255, exported as METIS; GAP reads it via its "
                               "converter (-s)",
                  "scale": o.scale, "edge_factor": o.edge_factor, "file": o.graph},
        "threads": o.threads,
        "grain": o.grain or "app default",
        "bfs_sssp_source": o.source,
        "pagerank_sweeps": o.pr_iters,
        "gap": {"commit": o.gap_commit, "sssp_delta": o.gap_delta,
                "build": "g++ -std=c++11 -O3 -fopenmp (gapbs Makefile)"},
        "hetfarm": {"commit": o.hetfarm_commit,
                    "time": "sum of the rounds' makespans, CPU device only, scheduler hass"},
        "apps": {},
    }
    if o.baseline:
        result["baseline"] = {"build": o.baseline, "grain": o.baseline_grain or "app default",
                              "note": "an older hetfarm build run in the same trials (before)"}
    failed = 0
    for app in o.apps.split():
        hf, gap, base, rounds, figs = [], [], [], None, {}
        for t in range(1, o.trials + 1):
            if o.baseline:
                try:
                    base.append(hetfarm_seconds(os.path.join(o.logs, f"hfbase-{app}-{t}.json"))[0])
                except (OSError, ValueError, KeyError, IndexError):
                    failed += 1
            try:
                s, rounds, figs = hetfarm_seconds(os.path.join(o.logs, f"hf-{app}-{t}.json"))
                hf.append(s)
            except (OSError, ValueError, KeyError, IndexError):
                failed += 1
            try:
                g = gap_seconds(os.path.join(o.logs, f"gap-{app}-{t}.log"))
                if not g:
                    raise ValueError("no Trial Time")
                gap.extend(g)
            except (OSError, ValueError):
                failed += 1
        entry = {"hetfarm_s": hf, "gap_s": gap, "hetfarm_rounds": rounds,
                 "hetfarm_figures": figs}
        if hf and gap:
            mh, mg = statistics.median(hf), statistics.median(gap)
            entry.update(hetfarm_median_s=mh, gap_median_s=mg, ratio=mh / mg)
        if base and gap:
            mb = statistics.median(base)
            entry.update(before_s=base, before_median_s=mb,
                         before_ratio=mb / statistics.median(gap))
        result["apps"][app] = entry
        print(f"{app:9s} hetfarm {entry.get('hetfarm_median_s', float('nan')):.4f} s  "
              f"gap {entry.get('gap_median_s', float('nan')):.4f} s  "
              f"ratio {entry.get('ratio', float('nan')):.2f}  ({len(hf)}/{len(gap)} trials)"
              + (f"  before {entry['before_median_s']:.4f} s ratio {entry['before_ratio']:.2f}"
                 if "before_median_s" in entry else ""))
    result["failed_trials"] = failed
    machine.write_json_atomic(o.out, result)
    print(f"wrote {o.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
