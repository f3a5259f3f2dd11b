#!/usr/bin/env python3
"""placement_record.py - one run of bench/graph/placement.sh as one JSON line.

DESIGN
------
Reads the run's results JSON (hetfarm run -o) and prints what the placement
bench compares: the app's run figures (halo and broadcast totals, the
placement's parts, cut and seconds), the sum of the rounds' makespans, the
run's wall seconds, and per round the halo and changed figures (the
per-round app_figures of results.json), or the error when the run failed.

    placement_record.py RESULTS.json GRAPH APP DEVICES PLACEMENT PROCESS_SECONDS [ERROR]
"""
import json
import sys


def main():
    path, graph, app, devices, placement, proc_s = sys.argv[1:7]
    err = sys.argv[7] if len(sys.argv) > 7 else ""
    rec = {"graph": graph, "app": app, "devices": devices, "placement": placement,
           "process_s": round(float(proc_s), 4)}
    if err:
        rec["error"] = err
        print(json.dumps(rec))
        return 0
    run = json.load(open(path))["runs"][0]
    figs = {k: v["value"] for k, v in run.get("app_figures", {}).items()}
    rounds = run["rounds"]
    rec.update({
        "signature": run["signature"],
        "engine": run["engine"],
        "simulated": run.get("simulated", False),
        "devices_run": [d["name"] for d in run["devices"]],
        "rounds": len(rounds),
        "makespan_sum_s": sum(r["makespan_s"] for r in rounds),
        "run_wall_s": run["wall_s"],
        "halo": figs.get("halo"),
        "broadcast": figs.get("broadcast"),
        "placement_parts": figs.get("placement_parts"),
        "placement_cut": figs.get("placement_cut"),
        "placement_s": figs.get("placement_s"),
        "traffic_s": figs.get("traffic_s"),
        "round_halo": [r.get("app_figures", {}).get("halo", {}).get("value") for r in rounds],
        "round_changed": [r.get("app_figures", {}).get("changed", {}).get("value") for r in rounds],
    })
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
