#!/usr/bin/env python3
"""bench/graph/partition_phases.py - where an `app = partition` run's time goes.

Reads a results JSON of `hetfarm run` with app = partition (each round carries
its level and phase in "app_figures") and sums, per phase (match, resolve,
twohop, contract, project, refine, measure): the rounds, their makespans, and
the host time of the next_load that ENDED that round (the glue that consumes
the round's results: packing a coarse level after a contraction, the balance
pass and FM after a level's last refinement pass), plus the GPUs' share of
the phase's work where the run had a GPU. The initial partition runs in the
next_load that ends the last coarsening round, so it is in that row's glue.
With --levels, the same per (phase, level).

  bench/graph/partition_phases.py results.json [--levels]
"""
import json
import sys

PHASES = ("match", "resolve", "twohop", "contract", "project", "refine", "measure")


def figure(r, name):
    return r.get("app_figures", {}).get(name, {}).get("value")


def summarize(run, by_level):
    rounds = run.get("rounds", [])
    rows = {}
    for i, r in enumerate(rounds):
        ph = figure(r, "phase")
        if ph is None:
            continue
        key = (PHASES[int(ph)], int(figure(r, "level") or 0)) if by_level else (PHASES[int(ph)],)
        row = rows.setdefault(key, {"rounds": 0, "makespan_s": 0.0, "glue_s": 0.0,
                                    "gpu_work": 0.0, "work": 0.0})
        row["rounds"] += 1
        row["makespan_s"] += r.get("makespan_s", 0.0)
        if i + 1 < len(rounds):
            row["glue_s"] += rounds[i + 1].get("host", {}).get("next_load_s", 0.0)
        share = figure(r, "gpu_share")
        if share is not None:
            row["gpu_work"] += share * r.get("load_work", 0.0)
        row["work"] += r.get("load_work", 0.0)
    return rows


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    by_level = "--levels" in sys.argv[2:]
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    runs = doc["runs"] if "runs" in doc else [doc]
    for run in runs:
        rows = summarize(run, by_level)
        if not rows:
            print(f"{run.get('scheduler')}: no partition phases in this file", file=sys.stderr)
            continue
        print(f"# {run.get('scheduler')} on {', '.join(d['name'] for d in run.get('devices', []))}")
        print(f"{'phase':<14}{'rounds':>7}{'makespan_s':>12}{'glue_s':>10}{'gpu_share':>10}")
        tot = [0, 0.0, 0.0]
        order = sorted(rows, key=lambda k: (PHASES.index(k[0]), k[1:]))
        for k in order:
            row = rows[k]
            name = k[0] if len(k) == 1 else f"{k[0]}@{k[1]}"
            share = row["gpu_work"] / row["work"] if row["work"] else 0.0
            print(f"{name:<14}{row['rounds']:>7}{row['makespan_s']:>12.4f}{row['glue_s']:>10.4f}"
                  f"{share:>10.2f}")
            tot[0] += row["rounds"]
            tot[1] += row["makespan_s"]
            tot[2] += row["glue_s"]
        print(f"{'total':<14}{tot[0]:>7}{tot[1]:>12.4f}{tot[2]:>10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
