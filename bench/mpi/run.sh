#!/usr/bin/env bash
# run.sh - the cost per span handed to another rank next to a local hand-off
# (bench/mpi/dispatch.c), written to bench/results/<machine>/mpi_dispatch.json with the machine.
#
# Usage: bench/mpi/run.sh [DISPATCH_BINARY]   (default build/bench/mpi/dispatch; `make
# bench-mpi` builds it and calls this). Environment: SPANS (20000), REPS (5), RANKS (3),
# HF_MPIRUN (mpirun --oversubscribe --allow-run-as-root), OUT (bench/results/<machine>/mpi_dispatch.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
BENCH_KNOBS="SPANS REPS RANKS HF_MPIRUN OUT SP_TASKS" bench_record bench/mpi/run.sh "$@"
BIN=${1:-build/bench/mpi/dispatch}
SPANS=${SPANS:-20000}
REPS=${REPS:-5}
RANKS=${RANKS:-3}
HF_MPIRUN=${HF_MPIRUN:-mpirun --oversubscribe --allow-run-as-root}
OUT=${OUT:-$(bench_out mpi_dispatch)}
[ -x "$BIN" ] || { echo "run.sh: $BIN not built (make bench-mpi)" >&2; exit 1; }

tmp=$(mktemp)
sp=$(mktemp)
trap 'rm -f "$tmp" "$sp"' EXIT
# shellcheck disable=SC2086  # HF_MPIRUN is a command line
timeout 300 $HF_MPIRUN -np "$RANKS" "$BIN" "$SPANS" "$REPS" > "$tmp"
# StarPU-MPI's cost for the same empty tasks, right after (bench/mpi/starpu_mpi.c), when built.
SPBIN=$(dirname "$BIN")/starpu_mpi
echo '{}' > "$sp"
if [ -x "$SPBIN" ]; then
    # shellcheck disable=SC2086
    timeout 600 $HF_MPIRUN -np 3 "$SPBIN" "${SP_TASKS:-500}" "$REPS" 2>/dev/null | tail -n 1 > "$sp" ||
        echo '{}' > "$sp"
fi

python3 - "$tmp" "$OUT" "$HF_MPIRUN -np $RANKS" "$sp" <<'PY'
import json, subprocess, sys
sys.path.insert(0, "bench")
import machine
res = json.load(open(sys.argv[1]))
ver = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()
out = {
    "bench": "mpi_dispatch",
    "machine": machine.describe(),
    "mpi": ver[0] if ver else "unknown",
    "launch": sys.argv[3],
    "method": "bench/mpi/dispatch.c: empty spans (the worker only receives and reports). "
              "remote_rt: one span in flight, alternating ranks 1 and 2, hf_mpi_hand + "
              "hf_mpi_collect round trip; remote_pipelined: 4 in flight per worker rank, cost "
              "per span at throughput; local_rt: the same record handed to a second thread of "
              "rank 0 and back through a mutex + condition variable; local_spin_rt: the same "
              "through atomic flags polled with sched_yield (as the transport polls MPI_Test). "
              "Interleaved per repetition; medians over reps.",
    **res,
}
out["ratio_remote_rt_vs_local_spin_rt"] = round(
    res["remote_rt"]["us_per_span"] / res["local_spin_rt"]["us_per_span"], 2)
sp = json.load(open(sys.argv[4]))
if sp:
    out["starpu_mpi"] = dict(sp, method=(
        "bench/mpi/starpu_mpi.c, right after: empty tasks inserted on every rank "
        "(starpu_mpi_task_insert), each STARPU_RW on a variable owned by rank 0 and "
        "STARPU_EXECUTE_ON_NODE rank 1 or 2 in turn: chain_rt one variable (one task in "
        "flight, like remote_rt), two_chains one variable per worker rank; one StarPU CPU "
        "worker per rank; us per task = batch wall time / tasks"))
    out["ratio_starpu_chain_vs_remote_rt"] = round(
        sp["chain_rt"]["median"] / res["remote_rt"]["us_per_span"], 1)
machine.write_json_atomic(sys.argv[2], out)
print(json.dumps(out, indent=2))
PY
