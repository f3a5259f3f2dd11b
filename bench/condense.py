"""condense.py - one curated result from a folder of `hetfarm compare` / `run` results.

The GPU benches (bench/gpu/hass_real.sh, irregular.sh, matmul.sh, bench/starpu/gpu_compare.sh,
cpu_shape.sh) leave full results.json files (50-200 KB each, every round's plan and devices)
and a log in a scratch folder. This keeps what their write-ups read - per file and run the
scheduler, engine and pass, the mean makespan and efficiency (bound_s / makespan_s) from round
2, rounds 0 and 1 apart, the app's figures - plus each file's config, the logs and the machine (hetfarm's own
description from the results, which names the GPUs and the BLAS),
and writes it to OUT with the command (bench/machine.py).

    python3 bench/condense.py --bench NAME --out FILE [--log LOG]... RESULT.json...
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def run_summary(r):
    """One run of a results.json, reduced to the figures the write-ups quote."""
    rounds = r.get("rounds", [])
    late = [x for x in rounds if x.get("round", 0) >= 2]
    ms = [x["makespan_s"] for x in rounds]
    out = {
        "scheduler": r.get("scheduler"),
        "engine": r.get("engine"),
        "rounds": len(rounds),
        "makespan_ms_r2": None if not late else round(1e3 * mean([x["makespan_s"] for x in late]), 4),
        "efficiency_r2": None if not late else round(mean([x["efficiency"] for x in late]), 4),
        "round0_ms": round(1e3 * ms[0], 4) if ms else None,
        "round1_ms": round(1e3 * ms[1], 4) if len(ms) > 1 else None,
        "wall_s": r.get("wall_s"),
    }
    if "pass" in r:
        out["pass"] = r["pass"]
    if r.get("fault"):
        out["fault"] = r["fault"]
    if r.get("app_figures"):
        out["app_figures"] = r["app_figures"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--log", action="append", default=[])
    ap.add_argument("results", nargs="+")
    a = ap.parse_args()
    files, hf_machine = {}, None
    for path in sorted(a.results):
        if path.endswith(".trace.json"):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            runs = doc["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"condense.py: {path}: not a hetfarm results file ({e})")
        hf_machine = hf_machine or doc.get("machine")
        entry = {"runs": [run_summary(r) for r in runs]}
        ini = os.path.splitext(path)[0] + ".ini"
        if os.path.isfile(ini):
            with open(ini, encoding="utf-8") as f:
                entry["config"] = f.read()
        files[os.path.splitext(os.path.basename(path))[0]] = entry
    logs = {}
    for path in a.log:
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                logs[os.path.basename(path)] = f.read()
    machine.write_json_atomic(a.out, {
        "bench": a.bench,
        "machine": hf_machine or machine.describe(),
        "figures": "per run: mean makespan_s and efficiency (bound_s / makespan_s) from round 2",
        "results": files,
        "logs": logs,
    })


if __name__ == "__main__":
    main()
