#!/usr/bin/env python3
"""never_slower.py WORK OUT.json - condenses bench/gpu/never_slower.sh's results.

DESIGN
------
Per graph run: the sum of round makespans, the host's merge time, the GPU bundles' time
bringing shared data home after their kernels, the rounds run and those
run on a subset of the devices (a device `left_out`), whether the app finished, and the
wall clock; per app, each CPU + GPU run over the GPU alone (the issue's rule: within 1.03).
Per compare (fractal on one CPU, fractal and `make run`'s config and matmul on CPU + GPU):
each run's mean makespan from round 2, its efficiency per round, and whether bound_s is one
number per round across the rows (the measured split's promise). Per shipped graph config:
CPU + GPU over the best of the CPU alone and the GPU alone, as makespans and wall clock, for
the first run of the load and for the second (cpugpu2: the load's record decides whether the
GPU starts; gpus_unstarted says what it decided). Prints a table; writes the
JSON through bench/machine.py (machine and command recorded)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import machine  # noqa: E402

APPS = ["bfs", "pagerank", "sssp", "cc", "mst"]
RUNS = ["gpu-hass", "cpu-hass", "cpugpu-hass", "cpugpu-minmin", "cpugpu-qilin", "fixed-hass", "fixed-minmin"]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def walls(path):
    wall = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            name, rc, ms = line.split()
            wall[name] = (int(rc.split("=")[1]), int(ms.split("=")[1]))
    return wall


def run_row(folder, name, wall):
    """One `hetfarm run`'s figures (folder/name.json, its wall clock in `wall`), or None when it
    left no results."""
    d = load(f"{folder}/{name}.json")
    if not d:
        return None
    r = d["runs"][0]
    rs = r["rounds"]
    return {
        "makespan_ms": 1e3 * sum(x["makespan_s"] for x in rs),
        "merge_ms": 1e3 * sum(x.get("host", {}).get("merge_s", 0) for x in rs),
        "rounds": len(rs),
        "subset_rounds": sum(1 for x in rs if any(v.get("left_out") for v in x["devices"])),
        "stopped": r.get("stopped", "-"),
        "wall_ms": wall.get(name, (None, None))[1],
        "startup_s": r.get("startup", {}),
        # GPU bundles' time after their kernels bringing shared data home (results' shared_s)
        "shared_home_ms": 1e3 * sum(e.get("shared_s", 0) for e in r.get("events", [])),
        "gpus_unstarted": bool(r.get("unstarted")),
    }


def over_best(rows, refs, name, singles):
    """Every row but the single-device ones (keys `singles`) over the best of the rows `refs`, as
    sums of makespans (makespan_over_NAME) and as wall clock (wall_over_NAME)."""
    ones = [rows[k] for k in refs if k in rows]
    best_ms = min((x["makespan_ms"] for x in ones), default=None)
    best_wall = min((x["wall_ms"] for x in ones if x["wall_ms"]), default=None)
    for run, row in rows.items():
        if run in singles or not best_ms:
            continue
        row[f"makespan_over_{name}"] = row["makespan_ms"] / best_ms
        if row["wall_ms"] and best_wall:
            row[f"wall_over_{name}"] = row["wall_ms"] / best_wall


def shipped_configs(work):
    wall = walls(f"{work}/c/wall.txt")
    out = {}
    for name in sorted({k.rsplit("-", 1)[0] for k in wall}):
        rows = {}
        for dev in ("cpugpu", "cpu", "gpu", "cpugpu2"):
            row = run_row(f"{work}/c", f"{name}-{dev}", wall)
            if row:
                rows[dev] = row
        over_best(rows, ("cpu", "gpu"), "best_single", ("cpu", "gpu"))
        out[name] = rows
    return out


def graph(work):
    wall = walls(f"{work}/g/wall.txt")
    out = {}
    for app in APPS:
        rows = {}
        for run in RUNS:
            row = run_row(f"{work}/g", f"{app}-{run}", wall)
            if row:
                rows[run] = row
        singles = ("gpu-hass", "cpu-hass")
        over_best(rows, ("gpu-hass",), "gpu", singles)
        over_best(rows, singles, "best_single", singles)
        out[app] = rows
    return out


def compares(work):
    out = {}
    for name in ["f/cpu", "f/gpu", "m/default", "m/mm"]:
        d = load(f"{work}/{name}.json")
        if not d:
            continue
        runs, bounds = [], {}
        for r in d["runs"]:
            rs = r["rounds"]
            late = [x for x in rs if x["round"] >= 2] or rs
            for x in rs:
                bounds.setdefault(x["round"], set()).add(round(x["bound_s"], 12))
            runs.append({
                "scheduler": r["scheduler"], "pass": r.get("pass"), "bound": r.get("bound"),
                "mean_makespan_ms_r2": 1e3 * sum(x["makespan_s"] for x in late) / len(late),
                "efficiency": [round(x["efficiency"], 4) for x in rs],
                "last_shares": {v["name"]: round(v["share"], 4) for v in rs[-1]["devices"]},
            })
        out[name.replace("/", "_")] = {"runs": runs,
                                       "one_bound_per_round": all(len(b) == 1 for b in bounds.values())}
    return out


def main():
    work, path = sys.argv[1], sys.argv[2]
    res = {"bench": "never_slower", "machine": machine.describe(), "graph": graph(work),
           "compares": compares(work), "shipped_configs": shipped_configs(work)}
    for app, rows in res["graph"].items():
        for run, row in rows.items():
            print(f"{app:9s} {run:14s} makespan {row['makespan_ms']:8.2f} ms  x{row.get('makespan_over_gpu', 1):.2f}"
                  f"  merge {row['merge_ms']:7.2f} ms  subset {row['subset_rounds']}/{row['rounds']}  wall {row['wall_ms']} ms"
                  f"{'  (GPU unstarted)' if row['gpus_unstarted'] else ''}")
    for name, c in res["compares"].items():
        print(f"{name}: one bound per round: {c['one_bound_per_round']}")
        for r in c["runs"]:
            print(f"  {r['scheduler']:7s} p{r['pass']} {r['mean_makespan_ms_r2']:9.3f} ms eff {r['efficiency']}")
    for name, rows in res["shipped_configs"].items():
        for dev, row in rows.items():
            print(f"{name:20s} {dev:7s} makespan {row['makespan_ms']:8.2f} ms  rounds {row['rounds']:4d}"
                  f"  wall {row['wall_ms']} ms  x{row.get('wall_over_best_single', 1):.2f} wall"
                  f"  x{row.get('makespan_over_best_single', 1):.2f} makespan")
    machine.write_json_atomic(path, res)


if __name__ == "__main__":
    main()
