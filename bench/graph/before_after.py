#!/usr/bin/env python3
"""bench/graph/before_after.py - per-round medians of two hetfarm builds run in
the same interleaved trials (gap_compare.sh with BASELINE=DIR), side by side.

gap_compare.sh leaves, per app and trial t, logs/hf-APP-t.json (this build)
and logs/hfbase-APP-t.json (the baseline). For each app this prints the
medians over trials of the summed makespans and of the summed per-round
process CPU time (host.cpu_s; absent in files older than that field), the
same paired by trial (after / before of the two runs of one trial), then
one line per round: makespan, the merge inside it, the host phases before it
(next_load, partition) and its CPU time, before -> after. Wall times swing on
a shared machine; CPU time says what a round cost, spinning threads included.

    bench/graph/before_after.py LOGS_DIR --apps "bfs cc" [--markdown]
"""
import argparse
import json
import os
import statistics


def rounds(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    run = doc["runs"][0]
    return [{"makespan": r["makespan_s"], **(r.get("host") or {})} for r in run["rounds"]]


def load(logs, prefix, app):
    out = []
    t = 1
    while os.path.exists(os.path.join(logs, f"{prefix}-{app}-{t}.json")):
        out.append(rounds(os.path.join(logs, f"{prefix}-{app}-{t}.json")))
        t += 1
    return out


def med(trials, rnd, key):
    vals = [tr[rnd].get(key, 0.0) for tr in trials if rnd < len(tr)]
    return statistics.median(vals) * 1e3 if vals else float("nan")


def total(trials, key):
    return statistics.median(sum(r.get(key, 0.0) for r in tr) for tr in trials) * 1e3


def paired(before, after, key):
    """The median over trials of after / before, each trial's two runs taken
    side by side (they ran back to back: a machine whose load comes and goes
    moves both), and in how many trials after was lower."""
    pairs = [(sum(r.get(key, 0.0) for r in b), sum(r.get(key, 0.0) for r in a))
             for b, a in zip(before, after)]
    pairs = [(b, a) for b, a in pairs if b > 0]
    if not pairs:
        return float("nan"), 0, 0
    return statistics.median(a / b for b, a in pairs), sum(a < b for b, a in pairs), len(pairs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("logs")
    ap.add_argument("--apps", default="bfs cc")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    o = ap.parse_args()
    keys = (("makespan", "makespan"), ("merge_s", "merge"), ("next_load_s", "next_load"),
            ("partition_s", "partition"), ("cpu_s", "cpu"))
    for app in o.apps.split():
        after, before = load(o.logs, "hf", app), load(o.logs, "hfbase", app)
        if not after or not before:
            print(f"{app}: no hf-/hfbase- results in {o.logs}")
            continue
        print(f"\n{app}: {len(before)} / {len(after)} trials; medians, ms, before -> after: "
              f"makespans {total(before, 'makespan'):.1f} -> {total(after, 'makespan'):.1f}, "
              f"cpu {total(before, 'cpu_s'):.1f} -> {total(after, 'cpu_s'):.1f}")
        for key, name in (("makespan", "makespans"), ("cpu_s", "cpu")):
            ratio, lower, n_pairs = paired(before, after, key)
            print(f"  paired by trial: {name} after/before median {ratio:.3f}, "
                  f"lower in {lower} of {n_pairs}")
        n = max(len(t) for t in after + before)
        if o.markdown:
            print("\n| round | " + " | ".join(k[1] for k in keys) + " |")
            print("|---" * (len(keys) + 1) + "|")
        for r in range(n):
            cells = [f"{med(before, r, k):.2f} -> {med(after, r, k):.2f}" for k, _ in keys]
            if o.markdown:
                print(f"| {r} | " + " | ".join(cells) + " |")
            else:
                print(f"  round {r:3d}: " + "  ".join(f"{name} {c}" for (_, name), c in
                                                      zip(keys, cells)))


if __name__ == "__main__":
    main()
