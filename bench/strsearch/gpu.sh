#!/usr/bin/env bash
# gpu.sh - strsearch on a GPU node: PFAC kernel throughput on text already on the GPU,
# end-to-end GPU throughput from (pinned) host memory next to the raw pinned
# host->device copy rate (bench/gpu/probe.cu), and CPU + GPUs under HASS (efficiency
# per round, the CPU's share). Builds nothing: run `make` first (with nvcc), then
#
#   bench/strsearch/gpu.sh            -> bench/results/<machine>/strsearch_gpu.json
#
# Environment knobs: MIB (text size, 4096), NPATS ("1 100 1000"), ROUNDS (8),
# SCHEDULERS ("hass greedy"), HF_BUILD (build), OUT, TMPDIR. The text is generated
# (bench/strsearch/gen.py) into a temporary directory removed on exit.
set -euo pipefail
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.."
. bench/common.sh
BENCH_KNOBS="HF_BUILD MIB NPATS ROUNDS SCHEDULERS OUT" bench_record bench/strsearch/gpu.sh "$@"
HF_BUILD=${HF_BUILD:-build}
export MIB=${MIB:-4096} NPATS=${NPATS:-"1 100 1000"} ROUNDS=${ROUNDS:-8}
export SCHEDULERS=${SCHEDULERS:-"hass greedy"}
export OUT=${OUT:-$(bench_out strsearch_gpu)}
export HETFARM=$HF_BUILD/hetfarm PROBE=$HF_BUILD/bench/gpu-probe
[ -x "$HETFARM" ] || { echo "gpu.sh: $HETFARM is not built (run make first)" >&2; exit 1; }
export WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$OUT")"
if [ -x "$PROBE" ]; then
    "$PROBE" "$WORK/probe.json" --quick >"$WORK/probe.log" 2>&1 ||
        echo "gpu.sh: gpu-probe failed (see below); continuing without the copy limit" >&2
fi
python3 bench/strsearch/gpu.py
