#!/usr/bin/env python3
"""compare.py - hetfarm's schedulers next to StarPU's own policies on the same app, loads and chunks
(`[compare] schedulers = hass, greedy, starpu:eager, starpu:ws, starpu:dmda, starpu:modular-heft`
(StarPU 1.3's HEFT: it has no policy named heft), core/engine_starpu.c).

Usage: bench/starpu/compare.py [--build DIR] [--out FILE] [--rounds N] [--reps N] [--n N]
                               [--teams N] [--no-build]

For matmul (n = --n, default 1024, float32, n/32-row chunks) and strsearch (a generated 32 MiB
text, 1 MiB chunks, 8 patterns), runs `hetfarm compare` --reps times with every scheduler on
[devices] cpu = all, cpu_teams = --teams (default: this machine's cores; hetfarm: one
single-thread CPU team per core; StarPU: one CPU worker per core: the same shape), each run in
a fresh
temporary folder (profiles and StarPU's performance models start empty, so dmda calibrates in
its first rounds as a new StarPU user's would). Every round is verified by the app. Writes per
app and scheduler the makespan of every round of every repetition, their median from round 2,
and the last round's per-device work share and busy seconds, with the machine
(bench/machine.py), to FILE (default bench/results/<machine>/starpu_compare.json).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import machine  # noqa: E402

os.environ.setdefault("HF_BENCH", "1")  # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)

SCHEDULERS = "hass, greedy, starpu:eager, starpu:ws, starpu:dmda, starpu:modular-heft"


def configs(tmp, rounds, n, teams):
    """The two apps' INI texts (strsearch's text and patterns are written into tmp)."""
    rng = random.Random(1)
    text = os.path.join(tmp, "text.txt")
    with open(text, "wb") as f:
        words = [b"hetfarm", b"starpu", b"gattaca", b"sched", b"round", b"steal", b"rate", b"gpu"]
        buf = bytearray()
        while len(buf) < 32 << 20:
            buf += rng.choice(words) if rng.random() < 0.05 else bytes(
                rng.choice(b"abcdefghijklmnopqrstuvwxyz ") for _ in range(16))
        f.write(buf[:32 << 20])
    pats = os.path.join(tmp, "patterns.txt")
    with open(pats, "w") as f:
        f.write("hetfarm\nstarpu\ngattaca\nsched\nround\nsteal\nrate\ngpu\n")
    head = f"[run]\nrounds = {rounds}\nengine = real\nseed = 1\n"
    # Single-thread CPU teams, one per core: the same shape as StarPU's CPU workers.
    dev = f"[devices]\ncpu = all\ncpu_teams = {teams}\ncuda = none\n"
    cmp_ = f"[compare]\nschedulers = {SCHEDULERS}\n"
    return {
        "matmul": head + f"app = matmul\ngrain = {max(1, n // 32)}\n[load]\nn = {n}\n"
                         "dtype = float32\nseed = 1\nverify = 16\n" + dev + cmp_,
        "strsearch": head + f"app = strsearch\n[load]\ntext = {text}\npatterns = {pats}\n"
                            f"out = {tmp}/strsearch.out\nchunk = 1MiB\npasses = {rounds}\n"
                            "verify = 1MiB\n" + dev + cmp_,
    }


def commit():
    """This checkout's commit, or "unknown" where there is no git (the GPU node)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=os.path.join(ROOT, machine.result_path("starpu_compare")))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=1024, help="matmul size (32 chunks per round)")
    ap.add_argument("--teams", type=int, default=os.cpu_count(),
                    help="single-thread CPU teams (StarPU: its CPU workers, one per core)")
    ap.add_argument("--no-build", action="store_true",
                    help="use --build's hetfarm as it is (a machine without the build tools)")
    a = ap.parse_args()
    exe = os.path.join(ROOT, a.build, "hetfarm")
    if not a.no_build:
        if subprocess.run(["pkg-config", "--exists", "starpu-1.3"]).returncode != 0:
            sys.exit("compare.py: pkg-config does not find starpu-1.3: nothing to compare")
        subprocess.run(["make", "--no-print-directory", "NVCC=", f"BUILD={a.build}",
                        os.path.join(a.build, "hetfarm")], cwd=ROOT, check=True)
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    starpu_lib = next((l.split("=>")[1].split()[0] for l in ldd.splitlines()
                       if "libstarpu" in l and "=>" in l), "none")

    out = {"bench": "starpu_compare", "machine": machine.describe(),
           "starpu_version": subprocess.run(["pkg-config", "--modversion", "starpu-1.3"],
                                            capture_output=True, text=True).stdout.strip()
           or "unknown (no pkg-config here)",
           "starpu_library": starpu_lib,
           "commit": commit(),
           "params": {"rounds": a.rounds, "reps": a.reps, "schedulers": SCHEDULERS,
                      "devices": f"cpu = all, cpu_teams = {a.teams} (StarPU: one worker per "
                                 "core)",
                      "grain": f"matmul n = {a.n}, {max(1, a.n // 32)} rows per chunk (32 chunks "
                               "per round); strsearch 1 MiB per chunk (32 per round); one StarPU "
                               "task per chunk"},
           "apps": {}}
    for rep in range(a.reps):
        with tempfile.TemporaryDirectory(prefix="hf-starpu-compare.") as tmp:
            env = dict(os.environ, STARPU_HOME=tmp)
            for app, ini in configs(tmp, a.rounds, a.n, a.teams).items():
                cfg = os.path.join(tmp, f"{app}.ini")
                with open(cfg, "w") as f:
                    f.write(ini)
                res = os.path.join(tmp, f"{app}.json")
                subprocess.run([exe, "compare", cfg, "-o", res, "--profiles",
                                os.path.join(tmp, "profiles")], cwd=tmp, env=env, check=True,
                               stdout=subprocess.DEVNULL)
                with open(res) as f:
                    runs = json.load(f)["runs"]
                for r in runs:
                    row = out["apps"].setdefault(app, {}).setdefault(
                        r["scheduler"], {"engine": r["engine"], "makespan_s": []})
                    row["makespan_s"].append([x["makespan_s"] for x in r["rounds"]])
                    row.setdefault("efficiency", []).append(
                        [x.get("efficiency") for x in r["rounds"]])
                    last = r["rounds"][-1]
                    row["devices"] = [d.get("name") for d in r["devices"]] \
                        if "devices" in r else None
                    row["last_round"] = [{"share": round(d.get("share", 0), 4),
                                          "busy_s": d.get("busy_s"), "chunks": d.get("chunks")}
                                         for d in last["devices"]]
            print(f"repetition {rep + 1}/{a.reps} done", file=sys.stderr)
    print(f"{'app':<10} {'scheduler':<20} {'median ms r>=2':>19} {'mean eff':>10}")
    for app, rows in out["apps"].items():
        for s, row in rows.items():
            tail = [m for rep in row["makespan_s"] for m in rep[2:]]
            row["median_makespan_from_round2_s"] = statistics.median(tail)
            effs = [e for rep in row["efficiency"] for e in rep[2:] if e is not None]
            row["mean_efficiency_from_round2"] = statistics.mean(effs) if effs else None
            print(f"{app:<10} {s:<20} {row['median_makespan_from_round2_s'] * 1e3:>19.2f}"
                  f" {row['mean_efficiency_from_round2'] or 0:>10.3f}")
    machine.write_json_atomic(a.out, out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
