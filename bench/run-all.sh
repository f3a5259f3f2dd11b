#!/usr/bin/env bash
# run-all.sh - every hetfarm benchmark, as `make bench` runs them: the dispatch overhead next to
# StarPU (bench/dispatch.sh) and the scheduling efficiency in simulation (bench/sim_efficiency.sh).
# Results: bench/results/<machine>/dispatch.json and sim_efficiency.json (bench/machine.py names
# the machine kind: dev-vm on the CPU-only VM, HF_MACHINE to choose). Each script's
# environment knobs pass through (see bench/README.md). Both run even if the first fails; the
# exit status is non-zero if either failed.
set -uo pipefail
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/.." || exit 1
rc=0
bench/dispatch.sh || { echo "run-all.sh: dispatch.sh failed" >&2; rc=1; }
bench/sim_efficiency.sh || { echo "run-all.sh: sim_efficiency.sh failed" >&2; rc=1; }
exit $rc
