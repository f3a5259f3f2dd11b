#!/usr/bin/env python3
"""partition_summary.py - bench/graph/partition.sh's runs as one results JSON.

DESIGN
------
Reads OUT/runs.jsonl (one line per tool run, already checked by
tests/partition_check.py: edge cut, max imbalance, seconds, or an error) and
OUT/graphs/NAME.json (what graph_export wrote), and writes RESULT with the
machine (bench/machine.py), the settings, one entry per graph with every
tool's figures, and per graph the cut and time of each tool relative to
gpmetis (cut_vs_metis > 1 = worse cut; speedup_vs_metis > 1 = faster). Prints
one line per run. Written atomically; a run that failed is kept with its
error, never dropped.

    bench/graph/partition_summary.py OUT RESULT --parts 64 --imbalance 0.03
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import machine  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("result")
    ap.add_argument("--parts", type=int, required=True)
    ap.add_argument("--imbalance", type=float, required=True)
    a = ap.parse_args()
    runs = []
    with open(os.path.join(a.out, "runs.jsonl")) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    graphs = {}
    for r in runs:
        g = graphs.setdefault(r["graph"], {"runs": []})
        if "source" not in g:
            try:
                with open(os.path.join(a.out, "graphs", r["graph"] + ".json")) as f:
                    info = json.loads(f.read().strip().splitlines()[-1])
                g.update(source=info["source"], vertices=info["nv"], edges=info["edges"])
            except (OSError, ValueError, KeyError, IndexError):
                pass
        g["runs"].append({k: v for k, v in r.items() if k != "graph"})
    for name, g in graphs.items():
        metis = next((r for r in g["runs"] if r["tool"] == "metis" and "error" not in r), None)
        for r in g["runs"]:
            if metis and "error" not in r and r is not metis:
                if metis["edge_cut"]:
                    r["cut_vs_metis"] = round(r["edge_cut"] / metis["edge_cut"], 4)
                if r["seconds"] > 0:
                    r["speedup_vs_metis"] = round(metis["seconds"] / r["seconds"], 3)
            line = (f"{name:6s} {r['tool']:8s} {r['devices']:9s} " +
                    (f"error: {r['error']}" if "error" in r else
                     f"cut {r['edge_cut']:>10} imbalance {r['max_imbalance']:.4f} "
                     f"{r['seconds']:8.3f} s"
                     + ("" if r.get("within_bound", True) else "  OVER THE BOUND")
                     + (f"  cut x{r['cut_vs_metis']}" if "cut_vs_metis" in r else "")
                     + (f"  speed x{r['speedup_vs_metis']}" if "speedup_vs_metis" in r else "")))
            print(line)
    doc = {
        "bench": "bench/graph/partition.sh",
        "machine": machine.describe(),
        "parts": a.parts,
        "imbalance": a.imbalance,
        "tools": {
            "metis": "gpmetis GRAPH K -ufactor=1000*imbalance (METIS 5.1.0, Debian metis)",
            "scotch": "scotch_gpart K GRAPH.grf -b<imbalance> -Cd (Scotch 7.0.3, Debian scotch; "
                      "graph converted by gcv -ic, untimed)",
            "hetfarm": "build/hetfarm run, [run] app = partition",
        },
        "seconds": "wall clock of the whole command, graph read included",
        "graphs": graphs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.result)), exist_ok=True)
    machine.write_json_atomic(a.result, doc)
    print(f"results: {a.result}")
    return 1 if any("error" in r for g in graphs.values() for r in g["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
