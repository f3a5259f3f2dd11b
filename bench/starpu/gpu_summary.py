#!/usr/bin/env python3
"""gpu_summary.py - the side-by-side numbers of bench/starpu/gpu_compare.sh, per compare row.

Usage: bench/starpu/gpu_summary.py RESULTS.json... [-o SUMMARY.json] [--from-round R]

For each run (row) of each `hetfarm compare` results file, over rounds R.. (default 2: round
0 profiles or calibrates, round 1 settles):
  makespan_ms     median round makespan
  efficiency      mean of bound_s / makespan_s (the engines' own per-round figure)
  gpu_share       mean share of the round's work done by GPU devices
  tasks           mean tasks per round: StarPU rows run one task per chunk; hetfarm rows
                  one bundle (of one or more chunks) per task
  overhead_us     per-task overhead: on each device, the gaps between the end of one of its
                  tasks and the start of its next task in the same round (time the device
                  waited for its next task while it still had tasks to come: dispatch,
                  scheduling decisions, queue hand-off), summed over devices and rounds,
                  divided by the tasks; idle time after a device's last task (imbalance) is
                  not in it
  idle_ms         mean per round of sum over devices (makespan - busy): everything a device
                  did not spend in tasks, imbalance included
Prints a table and, with -o, writes the numbers as JSON. Standard library only.
"""
import argparse
import json
import os
import statistics
import sys


def summarize(run, first):
    """The row's figures over rounds >= first, or None when it has no such round."""
    rounds = [r for r in run["rounds"] if r["round"] >= first]
    if not rounds:
        return None
    devs = run["devices"]
    gpu = [i for i, d in enumerate(devs) if d.get("is_gpu")]
    kept = {r["round"] for r in rounds}
    by_dev = {}
    for e in run.get("events", []):
        if e["round"] in kept:
            by_dev.setdefault((e["round"], e["device"]), []).append((e["start_s"], e["end_s"]))
    gaps, tasks = 0.0, 0
    for spans in by_dev.values():
        spans.sort()
        tasks += len(spans)
        gaps += sum(max(0.0, b[0] - a[1]) for a, b in zip(spans, spans[1:]))
    idle = [sum(r["makespan_s"] - d["busy_s"] for d in r["devices"]) for r in rounds]
    return {
        "scheduler": run["scheduler"],
        "engine": run.get("engine"),
        "devices": [d["name"] for d in devs],
        "rounds": len(rounds),
        "makespan_ms": round(1e3 * statistics.median(r["makespan_s"] for r in rounds), 3),
        "efficiency": round(statistics.mean(r["efficiency"] for r in rounds), 4),
        "gpu_share": round(statistics.mean(sum(r["devices"][g]["share"] for g in gpu)
                                           for r in rounds), 4),
        "tasks": round(tasks / len(rounds), 1),
        "overhead_us": round(1e6 * gaps / tasks, 2) if tasks else None,
        "idle_ms": round(1e3 * statistics.mean(idle), 3),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("-o", "--out")
    ap.add_argument("--from-round", type=int, default=2)
    a = ap.parse_args()
    out = {"from_round": a.from_round, "apps": {}}
    for path in a.results:
        with open(path) as f:
            res = json.load(f)
        rows = [s for s in (summarize(r, a.from_round) for r in res["runs"]) if s]
        if not rows:
            sys.exit(f"gpu_summary.py: {path}: no run has rounds from {a.from_round}")
        app = res["runs"][0]["app"]
        out["apps"][app] = {"results": path, "machine": res.get("machine"), "rows": rows}
        print(f"{app} ({path}), rounds >= {a.from_round}")
        print(f"  {'scheduler':<20} {'makespan_ms':>12} {'eff':>7} {'gpu_share':>9} "
              f"{'tasks':>8} {'overhead_us':>11} {'idle_ms':>9}")
        for s in rows:
            ov = "-" if s["overhead_us"] is None else f"{s['overhead_us']:.2f}"
            print(f"  {s['scheduler']:<20} {s['makespan_ms']:>12.3f} {s['efficiency']:>7.4f} "
                  f"{s['gpu_share']:>9.4f} {s['tasks']:>8.1f} {ov:>11} {s['idle_ms']:>9.3f}")
    if a.out:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import machine  # noqa: E402
        machine.write_json_atomic(a.out, {"bench": "starpu_gpu_compare", **out})


if __name__ == "__main__":
    main()
