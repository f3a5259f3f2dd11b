#!/usr/bin/env python3
"""strsearch.py - strsearch in one process against the same config under mpirun.

    bench/mpi/strsearch.py        (after `make`; writes bench/results/<machine>/mpi_strsearch.json)

DESIGN
------
One config, run two ways, interleaved rep by rep: `hetfarm run` alone, and
`mpirun -np RANKS hetfarm run` (rank 0's CPU team plus node1..node{RANKS-1},
each rank reading its spans from the same text file). Per run: the median
makespan over rounds >= 2 (round 0 is HASS's profiling round, round 1 its
first split), the command's wall time (MPI start-up included), the nodes'
share of the work, and the counts file, which must be byte for byte the
one-process run's. On the 2-core dev VM 3 ranks oversubscribe the cores:
the numbers say what the hand-off costs there, not what nodes gain.

Environment: MIB (text, 128), NPAT (patterns, 100), CHUNK (2MiB), ROUNDS (8),
REPS (5), CPUS ("1 all": [devices] cpu per rank), SCHEDULERS ("hass static"),
RANKS (3), HF_BUILD (build), HF_MPIRUN (mpirun --oversubscribe
--allow-run-as-root), OUT (bench/results/<machine>/mpi_strsearch.json). Standard
library only.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine  # noqa: E402

ENV = os.environ
MIB = int(ENV.get("MIB", "128"))
NPAT = int(ENV.get("NPAT", "100"))
CHUNK = ENV.get("CHUNK", "2MiB")
ROUNDS = int(ENV.get("ROUNDS", "8"))
REPS = int(ENV.get("REPS", "5"))
CPUS = ENV.get("CPUS", "1 all").split()
SCHEDULERS = ENV.get("SCHEDULERS", "hass static").split()
RANKS = int(ENV.get("RANKS", "3"))
HETFARM = os.path.join(ROOT, ENV.get("HF_BUILD", "build"), "hetfarm")
MPIRUN = ENV.get("HF_MPIRUN", "mpirun --oversubscribe --allow-run-as-root").split()
OUT = ENV.get("OUT", os.path.join(ROOT, machine.result_path("mpi_strsearch")))


def config(work, cpu, sched, out):
    return ("[run]\napp = strsearch\nscheduler = %s\nrounds = %d\nprogress = no\n"
            "[load]\ntext = %s/text.txt\npatterns = %s/pat.txt\noutput = counts\nout = %s\n"
            "chunk = %s\npasses = %d\nverify = 0\n[devices]\ncpu = %s\ncuda = none\n"
            % (sched, ROUNDS, work, work, out, CHUNK, ROUNDS, cpu))


def one(work, cpu, sched, ranks, tag):
    """Runs the config once (ranks 0: without mpirun); returns its figures."""
    out = os.path.join(work, tag + ".out")
    cfg = os.path.join(work, tag + ".ini")
    res = os.path.join(work, tag + ".json")
    with open(cfg, "w") as f:
        f.write(config(work, cpu, sched, out))
    argv = [HETFARM, "run", cfg, "-o", res]
    if ranks > 1:
        argv = MPIRUN + ["-np", str(ranks)] + argv
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("strsearch.py: %s failed (exit %d):\n%s" % (" ".join(argv), p.returncode,
                                                             p.stderr[-3000:]))
    with open(res) as f:
        run = json.load(f)["runs"][0]
    rounds = run["rounds"][2:]
    work_all = sum(d["work"] for r in rounds for d in r["devices"])
    work_nodes = sum(d["work"] for r in rounds for d in r["devices"] if d["name"] != "cpu")
    with open(out, "rb") as f:
        counts = f.read()
    return {"makespan_s": statistics.median(r["makespan_s"] for r in rounds),
            "wall_s": wall, "node_share": work_nodes / work_all if work_all else 0.0,
            "devices": [d["name"] for d in run["devices"]]}, counts


def main():
    if not os.path.exists(HETFARM):
        sys.exit("strsearch.py: %s not built (make)" % HETFARM)
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "strsearch", "gen.py"),
                        os.path.join(work, "text.txt"), str(MIB),
                        os.path.join(work, "pat.txt"), str(NPAT)], check=True)
        cases = []
        for cpu in CPUS:
            for sched in SCHEDULERS:
                runs = {1: [], RANKS: []}
                for rep in range(REPS):
                    ref = None
                    for ranks in (1, RANKS):
                        tag = "r%d-%s-%s" % (ranks, cpu, sched)
                        fig, counts = one(work, cpu, sched, ranks, tag)
                        if ref is None:
                            ref = counts
                        elif counts != ref:
                            sys.exit("strsearch.py: the counts of %d ranks differ from one "
                                     "process's (cpu = %s, %s)" % (ranks, cpu, sched))
                        runs[ranks].append(fig)
                case = {"cpu": cpu, "scheduler": sched, "counts_identical": True}
                for ranks, figs in runs.items():
                    key = "one_process" if ranks == 1 else "ranks_%d" % ranks
                    case[key] = {
                        "devices": figs[0]["devices"],
                        "makespan_s_median": statistics.median(f["makespan_s"] for f in figs),
                        "makespan_s_all": [round(f["makespan_s"], 6) for f in figs],
                        "wall_s_median": statistics.median(f["wall_s"] for f in figs),
                        "node_share_median": statistics.median(f["node_share"] for f in figs),
                    }
                one_p, many = case["one_process"], case["ranks_%d" % RANKS]
                case["ratio_makespan_ranks_vs_one"] = round(
                    many["makespan_s_median"] / one_p["makespan_s_median"], 3)
                cases.append(case)
                print(json.dumps(case), flush=True)
    ver = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
    result = {
        "command": machine.command(("MIB", "NPAT", "CHUNK", "ROUNDS", "REPS", "CPUS", "SCHEDULERS",
                                    "RANKS", "HF_BUILD", "HF_MPIRUN", "OUT")),
        "bench": "mpi_strsearch",
        "machine": machine.describe(),
        "mpi": ver.splitlines()[0] if ver else "unknown",
        "launch": " ".join(MPIRUN + ["-np", str(RANKS)]),
        "method": "bench/mpi/strsearch.py: strsearch counts, %d MiB text (bench/strsearch/gen.py), "
                  "%d patterns, chunk %s, %d rounds (one pass each), verify off; the same config "
                  "alone and under mpirun, interleaved per rep; makespan = median over rounds >= 2 "
                  "of one run, then the median over %d reps; wall_s includes MPI start-up; "
                  "node_share = the nodes' share of the work in rounds >= 2; the counts files "
                  "compared byte for byte" % (MIB, NPAT, CHUNK, ROUNDS, REPS),
        "cases": cases,
    }
    machine.write_json_atomic(OUT, result)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
