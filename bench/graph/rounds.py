#!/usr/bin/env python3
"""bench/graph/rounds.py - where a round's time goes, from a results JSON.

For every run of a full results JSON (hetfarm run/compare -o FILE), per round:
the round's makespan, how many bundles ran, the GPU's copy-in, kernel and
copy-out times summed over its bundles, the rest of the bundles' time (launch,
drain and the driver's bookkeeping), and the host gap before the round's first
bundle (the previous round's merge and push, next_load, the scheduler). With
--summary only the totals per run: levels, summed makespans, summed gaps and
the per-round medians, which is what a road-like BFS of 10^4 levels needs.
Each round also shows the host phases results.json records (next_load,
partition, merge, adapt, verify), which is where the gap goes, and the
process CPU time of the round (cpu: every thread's, merge included; 0 in
files older than that field).

  bench/graph/rounds.py results.json [--summary] [--max-rounds N]
"""
import json
import statistics
import sys


# The host phases of a round (results.json's per-round "host", core/engine.h).
HOST = ("next_load_s", "partition_s", "merge_s", "adapt_s", "verify_s", "cpu_s")


def per_round(run):
    ev = {}
    for e in run.get("events", []):
        ev.setdefault(e["round"], []).append(e)
    rows = []
    prev_end = None
    for r in run.get("rounds", []):
        es = ev.get(r["round"], [])
        start = min((e["start_s"] for e in es), default=None)
        end = max((e["end_s"] for e in es), default=None)
        busy = sum(e["end_s"] - e["start_s"] for e in es)
        cin = sum(e["copy_in_s"] for e in es)
        kern = sum(e["kernel_s"] for e in es)
        cout = sum(e["copy_out_s"] for e in es)
        gap = start - prev_end if start is not None and prev_end is not None else 0.0
        rows.append({
            "round": r["round"], "units": r["load_units"], "work": r["load_work"],
            "makespan_s": r["makespan_s"], "bundles": len(es), "busy_s": busy,
            "copy_in_s": cin, "kernel_s": kern, "copy_out_s": cout,
            "other_s": max(0.0, busy - cin - kern - cout), "gap_s": gap,
            "host": r.get("host") or {},
        })
        if end is not None:
            prev_end = end
    return rows


def main():
    args = sys.argv[1:]
    summary = "--summary" in args
    maxr = 60
    if "--max-rounds" in args:
        maxr = int(args[args.index("--max-rounds") + 1])
    paths = [a for a in args if a.endswith(".json")]
    if not paths:
        sys.exit(__doc__)
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for run in d["runs"]:
            rows = per_round(run)
            devs = ",".join(x["name"] for x in run["devices"])
            tot = lambda k: sum(x[k] for x in rows)
            print(f"{p}: {run['app']} {run['scheduler']} on {devs}: {len(rows)} rounds, "
                  f"makespans {tot('makespan_s') * 1e3:.2f} ms, gaps {tot('gap_s') * 1e3:.2f} ms, "
                  f"kernels {tot('kernel_s') * 1e3:.2f} ms, copies "
                  f"{(tot('copy_in_s') + tot('copy_out_s')) * 1e3:.2f} ms, wall {run['wall_s']:.3f} s")
            if rows:
                med = lambda k: statistics.median(x[k] for x in rows) * 1e6
                print(f"  median per round (us): makespan {med('makespan_s'):.1f}  gap "
                      f"{med('gap_s'):.1f}  kernel {med('kernel_s'):.1f}  copy-in "
                      f"{med('copy_in_s'):.1f}  copy-out {med('copy_out_s'):.1f}  other "
                      f"{med('other_s'):.1f}  bundles {statistics.median(x['bundles'] for x in rows):.0f}")
            if summary:
                continue
            print("  round      units  bundles  makespan_us  kernel_us  copyin_us  copyout_us"
                  "  other_us  gap_us | host_us: next_load partition merge adapt verify cpu")
            for x in rows[:maxr]:
                h = [x["host"].get(k, 0.0) * 1e6 for k in HOST]
                print(f"  {x['round']:5d} {x['units']:10.0f} {x['bundles']:8d} "
                      f"{x['makespan_s'] * 1e6:12.1f} {x['kernel_s'] * 1e6:10.1f} "
                      f"{x['copy_in_s'] * 1e6:10.1f} {x['copy_out_s'] * 1e6:11.1f} "
                      f"{x['other_s'] * 1e6:9.1f} {x['gap_s'] * 1e6:7.1f} | "
                      + " ".join(f"{v:.1f}" for v in h))


if __name__ == "__main__":
    main()
