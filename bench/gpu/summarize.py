#!/usr/bin/env python3
"""bench/gpu/summarize.py - issue 3's numbers from the GPU runs' results files.

Reads DIR/{gpu-machine,gpu-probe,matmul-*}.json (written by bench/gpu/run.sh and
bench/gpu/matmul.sh on the GPU machine into their scratch folder) and writes
OUT (default bench/results/<machine>/gpu_matmul.json, bench/machine.py): per configuration the devices' standalone rates,
the ideal makespan, every scheduler's makespan and efficiency per round, HASS's
shares per round, and the targets with PASS/FAIL. Standard library only.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import machine  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: summarize.py DIR [OUT]")
DIR = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else machine.result_path("gpu_matmul")


def load(name):
    with open(os.path.join(DIR, name)) as f:
        return json.load(f)


def run_summary(run):
    rounds = run["rounds"]
    effs = [r["efficiency"] for r in rounds]
    late = effs[2:] if len(effs) > 2 else effs
    return {
        "final_makespan_s": rounds[-1]["makespan_s"],
        "ideal_s": rounds[-1]["ideal_s"],
        "efficiency_per_round": [round(e, 4) for e in effs],
        "min_efficiency_from_round_2": round(min(late), 4),
        "mean_efficiency_from_round_2": round(sum(late) / len(late), 4),
        "makespan_per_round_s": [round(r["makespan_s"], 5) for r in rounds],
        "shares_per_round": [{d["name"]: round(d["share"], 4) for d in r["devices"]} for r in rounds],
        "stolen_chunks": sum(d["stolen"] for r in rounds for d in r["devices"]),
    }


def h2d_gbps(run, n):
    """Host->device GB/s of the GPU bundles: A's rows in (4 bytes x n per 2n^2 flops)."""
    nbytes = secs = 0.0
    for e in run["events"]:
        if e["copy_in_s"] > 0:
            nbytes += e["work"] * 2.0 / n
            secs += e["copy_in_s"]
    return nbytes / secs / 1e9 if secs else None


machine = load("gpu-machine.json")
probe = load("gpu-probe.json")
first = load(sorted(glob.glob(os.path.join(DIR, "matmul-n*-g*.json")))[0].split("/")[-1])
machine["cpu_blas"] = first["machine"].get("blas")
raw = {}
for extra in sorted(glob.glob(os.path.join(DIR, "gpu-probe*.json"))):
    for s in json.load(open(extra))["gpus"][0]["sgemm"]:
        raw[s["n"]] = s["tflops_best"]
pinned_h2d = max(c["h2d_gbs_best"] for c in probe["gpus"][0]["copy"])
out = {"machine": machine, "probe_gpu0": probe["gpus"][0], "configs": {}, "gpu_alone": {}}

for path in sorted(glob.glob(os.path.join(DIR, "matmul-alone-n*.json"))):
    d = json.load(open(path))
    run = d["runs"][0]
    n = int(run["signature"].split()[0].split("=")[1])
    late = run["rounds"][2:]
    mk = sorted(r["makespan_s"] for r in late)[len(late) // 2]
    tflops = 2.0 * n ** 3 / mk / 1e12
    entry = {"median_makespan_s": mk, "tflops": round(tflops, 2),
             "h2d_gbps": round(h2d_gbps(run, n) or 0, 2), "pinned_h2d_gbps": pinned_h2d}
    entry["h2d_vs_pinned"] = round(entry["h2d_gbps"] / pinned_h2d, 3)
    if n in raw:
        entry["raw_cublas_tflops"] = raw[n]
        entry["vs_raw_cublas"] = round(tflops / raw[n], 3)
    out["gpu_alone"][f"n={n}"] = entry

for path in sorted(glob.glob(os.path.join(DIR, "matmul-n*-g*.json"))):
    d = json.load(open(path))
    key = os.path.basename(path)[len("matmul-"):-len(".json")]
    runs = d["runs"]
    cfg = {"devices": {dv["name"]: dv["standalone_rate"] for dv in runs[0]["devices"]},
           "schedulers": {r["scheduler"]: run_summary(r) for r in runs}}
    hass = cfg["schedulers"].get("hass")
    if hass:
        cfg["hass_target_eff_ge_0.95_from_round_2"] = (
            "PASS" if hass["min_efficiency_from_round_2"] >= 0.95 else "FAIL")
    out["configs"][key] = cfg

c = out["configs"]
for n in (16384, 32768):
    g1, g2 = c.get(f"n{n}-g1"), c.get(f"n{n}-g2")
    if g1 and g2:
        s = g1["schedulers"]["hass"]["final_makespan_s"] / g2["schedulers"]["hass"]["final_makespan_s"]
        out[f"hass_speedup_2gpu_vs_1gpu_n{n}"] = round(s, 3)

machine.write_json_atomic(OUT, out)
print(json.dumps({k: v for k, v in out.items() if k not in ("configs", "probe_gpu0")}, indent=1))
for k, v in c.items():
    print(k, {s: (r["final_makespan_s"], r["min_efficiency_from_round_2"],
                  r["mean_efficiency_from_round_2"]) for s, r in v["schedulers"].items()},
          v.get("hass_target_eff_ge_0.95_from_round_2"))
