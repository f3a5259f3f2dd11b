#!/usr/bin/env bash
# sim_efficiency.sh - how close each scheduler gets to the ideal makespan on modelled nodes.
#
# Runs `hetfarm compare` (every scheduler of the config's [compare] list, same loads, same seed)
# on two modelled nodes of 16 CPU cores + 2 H200-class GPUs, in the sim engine:
#   matmul - float32 GEMM n = 16384, where the GPUs do nearly everything;
#   search - a search-like synthetic load where PCIe-bound GPUs leave ~30% to the CPU;
# plus Qilin alone trained on other fractions of the first load below 30% (QILIN_FRACTIONS;
# the configs' own [qilin] train_fraction is in the compare run), the shape of the thesis's
# Fig. 3.9; and HASS alone at other seeds (SEEDS), so that a PASS does not hang on one draw
# of the 2% jitter. Configs: configs/sim-<load>.ini. bench/sim_report.py writes
# bench/results/<machine>/sim_efficiency.json: per load, scheduler and round the makespan, ideal,
# efficiency and shares, the round where shares stop moving, and PASS/FAIL on HASS's targets
# (efficiency >= 0.95 from round 2, shares stable by round 3). Every run uses a fresh, empty
# profile directory (--profiles), so no earlier run warm-starts HASS or Qilin.
#
# Environment knobs: LOADS ("matmul search"), QILIN_FRACTIONS ("0.05 0.2 0.29"), QILIN_KEY
# (the [qilin] key of the training fraction, default train_fraction), SEEDS ("2 3 4 5 6"),
# HF_BUILD (default build), HF_NO_BUILD (1: do not run make), OUT
# (bench/results/<machine>/sim_efficiency.json).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
BENCH_KNOBS="LOADS QILIN_FRACTIONS QILIN_KEY SEEDS HF_BUILD OUT HF_NO_BUILD" bench_record bench/sim_efficiency.sh "$@"

LOADS=${LOADS:-"matmul search"}
QILIN_FRACTIONS=${QILIN_FRACTIONS:-"0.05 0.2 0.29"}
QILIN_KEY=${QILIN_KEY:-train_fraction}
SEEDS=${SEEDS:-"2 3 4 5 6"}
HF_BUILD=${HF_BUILD:-build}
OUT=${OUT:-$(bench_out sim_efficiency)}
HETFARM=$HF_BUILD/hetfarm

[ "${HF_NO_BUILD:-0}" = 1 ] || make --no-print-directory BUILD="$HF_BUILD" "$HETFARM" >/dev/null
[ -x "$HETFARM" ] || { echo "sim_efficiency.sh: $HETFARM was not built" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs one hetfarm command with a fresh profile dir; shows the log and fails if it fails.
hf() { # log-file hetfarm-args...
    local log=$1
    shift
    if ! "$HETFARM" "$@" >"$log" 2>&1; then
        echo "sim_efficiency.sh: hetfarm $* failed:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
}

args=()
for load in $LOADS; do
    cfg=configs/sim-$load.ini
    [ -f "$cfg" ] || { echo "sim_efficiency.sh: $cfg is missing" >&2; exit 1; }
    echo "== $load: hetfarm compare $cfg"
    hf "$tmp/$load-compare.log" compare "$cfg" -o "$tmp/$load-compare.json" \
        --profiles "$tmp/profiles-$load"
    arg="$load=$cfg:$tmp/$load-compare.json"
    for f in $QILIN_FRACTIONS; do
        echo "== $load: qilin trained on $f of the first load"
        python3 bench/ini_set.py "$cfg" "$tmp/$load-qilin-$f.ini" run.scheduler=qilin \
            qilin."$QILIN_KEY"="$f"
        hf "$tmp/$load-qilin-$f.log" run "$tmp/$load-qilin-$f.ini" -o "$tmp/$load-qilin-$f.json" \
            --profiles "$tmp/profiles-$load-qilin-$f"
        arg="$arg,qilin:$f=$tmp/$load-qilin-$f.json"
    done
    for seed in $SEEDS; do
        echo "== $load: hass at seed $seed"
        hf "$tmp/$load-seed-$seed.log" run "$cfg" --scheduler hass --seed "$seed" \
            -o "$tmp/$load-seed-$seed.json" --profiles "$tmp/profiles-$load-seed-$seed"
        arg="$arg,seed:$seed=$tmp/$load-seed-$seed.json"
    done
    args+=(--load "$arg")
done

mkdir -p "$(dirname "$OUT")"
python3 bench/sim_report.py --out "$OUT" "${args[@]}"
