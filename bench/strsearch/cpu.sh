#!/usr/bin/env bash
# cpu.sh - strsearch CPU throughput, side by side in one run: hetfarm's CPU path
# (`hetfarm run`, real engine, CPU only), Hyperscan called directly on the same
# mapped text (bench/strsearch/hs_direct.c, 1 thread and all threads) and GNU
# `grep -F -c -f`. Writes bench/results/<machine>/strsearch_cpu.json with the machine.
#
# Environment knobs: MIB (text size, 256), NPATS ("1 100 1000"), REPS (5, interleaved),
# ROUNDS (hetfarm rounds per rep, 6; round 0 is HASS's profiling round and is not
# timed), HF_BUILD (build), HF_NO_BUILD (1: no make), OUT, TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
BENCH_KNOBS="HF_BUILD MIB NPATS REPS ROUNDS OUT HF_NO_BUILD" bench_record bench/strsearch/cpu.sh "$@"
HF_BUILD=${HF_BUILD:-build}
export MIB=${MIB:-256} NPATS=${NPATS:-"1 100 1000"} REPS=${REPS:-5} ROUNDS=${ROUNDS:-6}
export OUT=${OUT:-$(bench_out strsearch_cpu)}
export HETFARM=$HF_BUILD/hetfarm HS_DIRECT=$HF_BUILD/bench/ss_hs_direct
if [ "${HF_NO_BUILD:-0}" != 1 ]; then
    make --no-print-directory BUILD="$HF_BUILD" "$HETFARM" >/dev/null
    mkdir -p "$HF_BUILD/bench"
    cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp $(pkg-config --cflags libhs) \
        -o "$HS_DIRECT" bench/strsearch/hs_direct.c $(pkg-config --libs libhs)
fi
export WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$OUT")"
python3 bench/strsearch/cpu.py
