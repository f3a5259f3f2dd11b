#!/usr/bin/env python3
"""overhead.py - per-task overhead of hetfarm's HASS StarPU policy (hf-hass) next to StarPU's
eager, ws and dmda on empty tasks, in one interleaved run (bench/starpu/policy_overhead.c).

Usage: bench/starpu/overhead.py [--build DIR] [--out FILE] [--tasks N] [--batches N] [--reps N]
       [--workers N] [--policies eager,ws,dmda,hf-hass]

Builds DIR/bench/starpu/policy_overhead with make (NVCC= BUILD=DIR), runs it once, and writes
the JSON (default bench/results/<machine>/starpu_policy_overhead.json) with the machine (bench/machine.py),
the StarPU version, the commit, and per policy the median us/task, its ratio to eager, and every
timed batch. Exits non-zero when StarPU is missing or the run fails.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import machine  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=os.path.join(ROOT, machine.result_path("starpu_policy_overhead")))
    ap.add_argument("--tasks", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--policies", default="eager,ws,dmda,hf-hass")
    a = ap.parse_args()

    if subprocess.run(["pkg-config", "--exists", "starpu-1.3"]).returncode != 0:
        sys.exit("overhead.py: pkg-config does not find starpu-1.3: nothing to measure")
    exe = os.path.join(a.build, "bench/starpu/policy_overhead")
    subprocess.run(["make", "--no-print-directory", "NVCC=", f"BUILD={a.build}", exe],
                   cwd=ROOT, check=True)
    cmd = [os.path.join(ROOT, exe), "--policies", a.policies, "--workers", str(a.workers),
           "--tasks", str(a.tasks), "--batches", str(a.batches), "--reps", str(a.reps)]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    pol = res["policies"]
    eager = pol.get("eager", {}).get("us_per_task")
    out = {
        "bench": "starpu_policy_overhead",
        "machine": machine.describe(),
        "starpu_version": subprocess.run(["pkg-config", "--modversion", "starpu-1.3"],
                                         capture_output=True, text=True).stdout.strip(),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.strip(),
        "params": {k: res[k] for k in ("workers", "tasks", "batches", "reps")},
        "method": "bench/starpu/policy_overhead.c: empty CPU codelet, no data, no perfmodel; "
                  "per repetition every policy in turn: starpu_init, one untimed warm-up batch, "
                  "`batches` timed batches of submit + wait_for_all, starpu_shutdown; "
                  "us_per_task = median timed batch / tasks. hf-hass via conf.sched_policy.",
        "policies": {p: {"us_per_task": d["us_per_task"],
                         "ratio_vs_eager": round(d["us_per_task"] / eager, 3) if eager else None,
                         "samples_s": d["samples_s"]} for p, d in pol.items()},
    }
    machine.write_json_atomic(a.out, out)
    print(f"{'policy':<10}{'us/task':>10}{'vs eager':>10}")
    for p, d in out["policies"].items():
        r = d["ratio_vs_eager"]
        print(f"{p:<10}{d['us_per_task']:>10.3f}{(r if r is not None else float('nan')):>10.3f}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
