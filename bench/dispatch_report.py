"""dispatch_report.py - turns dispatch.sh's raw runs into bench/results/dispatch.json.

Inputs in --dir: hf-<scheduler>-<rep>.json (hetfarm results.json files) and
sp-<policy>-<rep>.json (bench/starpu_noop's JSON line). Per repetition it computes
  hetfarm: steady-state us/chunk = sum(makespan_s of rounds 1..) / chunks run in those rounds,
           plus round 0 alone, all rounds, and the process's wall_s over all chunks;
  starpu:  us/task = mean of the timed batches / tasks;
then takes the median over repetitions. Standard library only.
"""
import argparse
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402


def die(msg):
    print(f"dispatch_report: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


def round_chunks(rnd, default):
    """Chunks run in one round: the sum over its devices, else the configured count."""
    devs = rnd.get("devices") or rnd.get("dev") or []
    n = sum(d.get("chunks", 0) for d in devs if isinstance(d, dict))
    return n or default


def hetfarm_sample(path, scheduler, tasks):
    """One hetfarm run's figures (microseconds per chunk)."""
    doc = load(path)
    runs = doc.get("runs", []) if isinstance(doc, dict) else doc
    run = next((r for r in runs if r.get("scheduler") == scheduler), runs[0] if runs else None)
    if not run or not run.get("rounds"):
        die(f"{path}: no run with rounds for scheduler {scheduler}")
    rounds = run["rounds"]
    mk = [r["makespan_s"] for r in rounds]
    ch = [round_chunks(r, tasks) for r in rounds]
    if len(rounds) < 2:
        die(f"{path}: need at least 2 rounds, found {len(rounds)}")
    out = {
        "steady": sum(mk[1:]) / sum(ch[1:]) * 1e6,
        "round0": mk[0] / ch[0] * 1e6,
        "all_rounds": sum(mk) / sum(ch) * 1e6,
        "chunks_per_round": ch[0],
        "rounds": len(rounds),
    }
    if isinstance(run.get("wall_s"), (int, float)):
        out["wall"] = run["wall_s"] / sum(ch) * 1e6
    return out


def main():
    ap = argparse.ArgumentParser()
    for k in ("dir", "out", "schedulers", "starpu-version"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--hf-set", default="")
    for k in ("reps", "tasks", "workers", "rounds"):
        ap.add_argument("--" + k, type=int, required=True)
    a = ap.parse_args()
    reps = range(1, a.reps + 1)
    med = lambda xs: round(statistics.median(xs), 4)  # noqa: E731

    starpu = {}
    for p in ("eager", "ws"):
        samples = []
        for r in reps:
            d = load(os.path.join(a.dir, f"sp-{p}-{r}.json"))
            samples.append(statistics.mean(d["samples_s"]) / d["tasks"] * 1e6)
        starpu[p] = {"us_per_task": med(samples), "samples_us": [round(x, 4) for x in samples],
                     "timed_batches_per_rep": a.rounds - 1}

    hetfarm, ratio, ratio_wall, passed = {}, {}, {}, {}
    for s in a.schedulers.split():
        ss = [hetfarm_sample(os.path.join(a.dir, f"hf-{s}-{r}.json"), s, a.tasks) for r in reps]
        h = {"us_per_chunk": med([x["steady"] for x in ss]),
             "us_per_chunk_round0": med([x["round0"] for x in ss]),
             "us_per_chunk_all_rounds": med([x["all_rounds"] for x in ss]),
             "samples_us": [round(x["steady"], 4) for x in ss],
             "chunks_per_round": ss[0]["chunks_per_round"], "rounds": ss[0]["rounds"]}
        if all("wall" in x for x in ss):
            h["us_per_chunk_wall"] = med([x["wall"] for x in ss])
        hetfarm[s] = h
        ratio[s] = round(h["us_per_chunk"] / starpu["eager"]["us_per_task"], 4)
        if "us_per_chunk_wall" in h:
            ratio_wall[s] = round(h["us_per_chunk_wall"] / starpu["eager"]["us_per_task"], 4)
        passed[s] = ratio[s] <= 1.0 / 3.0

    result = {
        "bench": "dispatch",
        "machine": machine.describe(),
        "params": {"tasks": a.tasks, "workers": a.workers, "rounds": a.rounds, "reps": a.reps,
                   "hetfarm_overrides": a.hf_set.split()},
        "method": ("hetfarm: noop app, real engine, [devices] cpu = cpu_teams = workers; "
                   "us_per_chunk = "
                   "sum of makespan_s over rounds 1.. / chunks in them (round 0 apart); "
                   "starpu: bench/starpu_noop.c, empty CPU codelet without data, one untimed "
                   "warm-up batch then rounds-1 timed batches of submit + wait_for_all; "
                   "medians over reps, contenders interleaved per rep. hetfarm's makespan_s "
                   "starts after the load is partitioned and the scheduler's round_begin ran; "
                   "us_per_chunk_wall (the process's wall_s / all chunks: start-up, partitioning, "
                   "verify and results included) is the conservative bound, and "
                   "ratio_vs_eager_wall uses it"),
        "hetfarm": hetfarm,
        "starpu": starpu,
        "starpu_version": a.starpu_version,
        "ratio_vs_eager": ratio,
        "ratio_vs_eager_wall": ratio_wall,
        "target": "<= 1/3 of StarPU eager",
        "pass": passed,
    }
    machine.write_json_atomic(a.out, result)
    print(f"{'contender':<16}{'us/chunk':>10}{'vs eager':>10}{'wall/chunk':>12}{'vs eager':>10}")
    for s, h in hetfarm.items():
        w = (f"{h['us_per_chunk_wall']:>12.3f}{ratio_wall[s]:>10.3f}" if s in ratio_wall
             else f"{'-':>12}{'-':>10}")
        print(f"hetfarm {s:<8}{h['us_per_chunk']:>10.3f}{ratio[s]:>10.3f}{w}"
              f"  {'PASS' if passed[s] else 'FAIL'} (target <= 0.333)")
    for p, d in starpu.items():
        print(f"starpu {p:<9}{d['us_per_task']:>10.3f}"
              f"{d['us_per_task'] / starpu['eager']['us_per_task']:>10.3f}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
