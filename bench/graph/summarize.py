#!/usr/bin/env python3
"""summarize.py - one compact JSON from bench/graph/run.sh's folder of results.

Per run (app, graph, device set, scheduler): the search's seconds (sum of the
rounds' makespans), the app's figures (GTEPS, levels, iterations...), the mean
efficiency from round 2 as hetfarm computes it, and per round the load's size
(frontier vertices, its edges) beside the round's makespan, the efficiency and
the devices' shares. GAP's logs give "Average Time" per kernel.
"""
import glob
import json
import os
import re
import sys


def run_summary(r, keep_rounds):
    rounds = r["rounds"]
    eff2 = [x["efficiency"] for x in rounds if x["round"] >= 2]
    out = {
        "scheduler": r["scheduler"],
        "devices": [d["name"] for d in r["devices"]],
        "rounds": len(rounds),
        "seconds": sum(x["makespan_s"] for x in rounds),
        "wall_s": r["wall_s"],
        "app_figures": {k: v["value"] for k, v in r.get("app_figures", {}).items()},
        "mean_efficiency_from_round2": sum(eff2) / len(eff2) if eff2 else None,
    }
    for key in ("bound_s",):
        if rounds and key in rounds[0]:
            out["sum_" + key] = sum(x[key] for x in rounds)
    if keep_rounds:
        out["per_round"] = [
            {"round": x["round"], "load_units": x.get("load_units"), "load_work": x.get("load_work"),
             "makespan_s": x["makespan_s"], "efficiency": x["efficiency"],
             "shares": [d["share"] for d in x["devices"]]}
            for x in rounds[:200]]
    return out


def main(folder):
    doc = {"runs": [], "gap": {}}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        name = os.path.basename(path)[:-5]
        try:
            with open(path) as f:
                res = json.load(f)
        except (OSError, ValueError) as e:
            doc["runs"].append({"name": name, "error": str(e)})
            continue
        doc.setdefault("machine", res.get("machine"))
        app, graph, devset = name.split("-", 2) if name.count("-") >= 2 else (name, "", "")
        for r in res["runs"]:
            s = run_summary(r, keep_rounds=r["scheduler"] == "hass")
            s.update({"app": app, "graph": graph, "devset": devset})
            doc["runs"].append(s)
    for path in sorted(glob.glob(os.path.join(folder, "gap-*.log"))):
        text = open(path).read()
        m = re.search(r"Average Time:\s+([0-9.]+)", text)
        doc["gap"][os.path.basename(path)[4:-4]] = float(m.group(1)) if m else None
    json.dump(doc, sys.stdout, indent=1)
    print()
    # A short table on stderr for the call's output.
    for r in doc["runs"]:
        if "error" in r:
            print(r["name"], "ERROR", r["error"], file=sys.stderr)
            continue
        f = r["app_figures"]
        print("%-9s %-7s %-9s %-7s %9.4f s  rounds %5d  eff2 %s  %s" % (
            r["app"], r["graph"], r["devset"], r["scheduler"], r["seconds"], r["rounds"],
            "%.3f" % r["mean_efficiency_from_round2"] if r["mean_efficiency_from_round2"] else "-",
            " ".join("%s=%.4g" % (k, v) for k, v in f.items() if k in ("gteps", "iterations", "levels"))),
            file=sys.stderr)
    for k, v in doc["gap"].items():
        print("gap %-16s %s s" % (k, v), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
