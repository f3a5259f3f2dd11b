#!/usr/bin/env bash
# bench/gpu/matmul.sh - issue 3's matmul measurements on a GPU machine.
#
# For matmul float32 at each size in SIZES and each GPU count in GPUS, runs
# `hetfarm compare` (hass, greedy, minmin, qilin, static; 10 rounds) on CPU + the
# GPUs, plus one GPU working alone (what the framework costs against raw cuBLAS).
# Builds nothing: build here, carry build/ (and .gpulibs/). Full results land in the
# scratch folder $OUT (${TMPDIR:-/tmp}/hetfarm-gpu; bench/gpu/run.sh writes the machine and
# probe there first): matmul-n<N>-g<G>.json per configuration and matmul-alone-n<N>.json;
# bench/gpu/summarize.py then writes $RESULT (bench/results/<machine>/gpu_matmul.json).
#
#   bench/gpu/run.sh && SIZES="16384 32768" GPUS="1 2" bench/gpu/matmul.sh
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT SIZES GPUS ROUNDS SCHEDULERS PROFILES ALONE" bench_record bench/gpu/matmul.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-gpu}
RESULT=${RESULT:-$(bench_out gpu_matmul)}
SIZES=${SIZES:-16384 32768}
GPUS=${GPUS:-1 2}
ROUNDS=${ROUNDS:-10}
SCHEDULERS=${SCHEDULERS:-hass, greedy, minmin, qilin, static}
PROFILES=${PROFILES:-$OUT/profiles}
ALONE=${ALONE:-1}   # 0 skips the one-GPU-alone runs
mkdir -p "$OUT"
have=$(nvidia-smi -L 2>/dev/null | wc -l)
status=0

# Writes the config of one configuration to stdout.
config() { # n cuda-list static-ratios
    cat <<INI
[run]
app = matmul
rounds = $ROUNDS
engine = real
scheduler = hass
[load]
n = $1
dtype = float32
verify = 4
[devices]
cpu = all
cuda = $2
[compare]
schedulers = $SCHEDULERS
[static]
# spec-sheet ratios a user would write: the CPU ~3% of one GPU
ratios = $3
[qilin]
train_fraction = 0.1
INI
}

for n in $SIZES; do
    # One GPU alone: the framework's cost against raw cuBLAS.
    cfg="$OUT/matmul-alone-n$n.ini"
    config "$n" 0 1 | sed 's/^cpu = all/cpu = 0/; s/^schedulers = .*/schedulers = static/' > "$cfg"
    if [ "$ALONE" = 1 ]; then
        echo "== matmul n=$n, GPU 0 alone"
        timeout 300 "$BUILD/hetfarm" compare "$cfg" -o "$OUT/matmul-alone-n$n.json" \
            --profiles "$PROFILES" || status=1
    fi
    for g in $GPUS; do
        [ "$g" -le "$have" ] || { echo "skip $g GPUs: this machine has $have"; continue; }
        list=$(seq -s, 0 $((g - 1)))
        ratios="0.03$(printf ', %s' $(for _ in $(seq "$g"); do echo 1; done))"
        cfg="$OUT/matmul-n$n-g$g.ini"
        config "$n" "$list" "$ratios" > "$cfg"
        echo "== matmul n=$n, CPU + $g GPU(s)"
        timeout 540 "$BUILD/hetfarm" compare "$cfg" -o "$OUT/matmul-n$n-g$g.json" \
            --profiles "$PROFILES" --trace "$OUT/matmul-n$n-g$g.trace.json" || status=1
    done
done
if [ -f "$OUT/gpu-machine.json" ] && [ -f "$OUT/gpu-probe.json" ]; then
    python3 bench/gpu/summarize.py "$OUT" "$RESULT" || status=1
else
    echo "matmul.sh: no $OUT/gpu-machine.json or gpu-probe.json (run bench/gpu/run.sh first): $RESULT not written"
    status=1
fi
exit $status
