#!/usr/bin/env python3
"""The rounds of a real run's results.json as bench/devset_replay.c reads them.

Line 1: the device count, then per device its name, 1 for a GPU, its standalone rate.
Then one line per round: round, work, units, makespan (s), seconds outside the bundles
(the makespan less the longest device's busy seconds: the merge, syncs and turnaround),
the set that ran (a bit per device), and per device its work and busy seconds.

    python3 bench/devset_replay.py results.json [RUN_INDEX] > rounds.txt
"""
import json
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        run = json.load(f)["runs"][int(sys.argv[2]) if len(sys.argv) == 3 else 0]
    devs = run["devices"]
    names = [d["name"] for d in devs]
    print(len(devs), " ".join("%s %d %.17g" % (d["name"], 1 if d.get("is_gpu") else 0,
                                               d.get("standalone_rate") or 1.0) for d in devs))
    for r in run["rounds"]:
        per = {d["name"]: d for d in r["devices"]}
        used = (r.get("device_set") or {}).get("used") or [n for n in names if per.get(n, {}).get("bundles")]
        mask = sum(1 << i for i, n in enumerate(names) if n in used)
        busy = max(per.get(n, {}).get("busy_s", 0.0) for n in names)
        cols = " ".join("%.17g %.17g" % (per.get(n, {}).get("work", 0.0), per.get(n, {}).get("busy_s", 0.0))
                        for n in names)
        print("%d %.17g %d %.17g %.17g %d %s" % (r["round"], r["load_work"], r["load_units"], r["makespan_s"],
                                                max(0.0, r["makespan_s"] - busy), mask, cols))


if __name__ == "__main__":
    main()
