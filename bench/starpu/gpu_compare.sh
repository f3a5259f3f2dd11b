#!/usr/bin/env bash
# bench/starpu/gpu_compare.sh - HASS next to StarPU's own policies on CPU + GPUs (issue 15).
#
# For each app of APPS: matmul float32 (gpu_matmul.ini: N, default 16384, the app's 64-row
# chunks) and strsearch (gpu_strsearch.ini: a generated MIB MiB text, 100 patterns, 4 MiB
# chunks), runs ONE `hetfarm compare` with hass and starpu:dmda, ws, eager, modular-heft side by side on [devices] cpu =
# all, cuda = $CUDA (default 0: CPU + 1 GPU; every row gets the same cores: hetfarm's CPU
# team of cores - GPUs threads, StarPU's cores - GPUs CPU workers), ROUNDS rounds, every
# round verified. The StarPU rows use the GPU only when hetfarm was built against a StarPU
# with CUDA (`make starpu-cuda`, then `make`): the script stops if that is not so, rather
# than compare against CPU-only StarPU rows. Then bench/starpu/gpu_summary.py prints, per
# row, the median makespan and the mean efficiency (bound_s / makespan) from round 2, the
# GPU's share, tasks per round and the per-task overhead (gpu_summary.py says how it is
# measured) for every app whose results are in $OUT, and writes them to $RESULT.
# Each app's compare takes a few minutes on a 16-core H100 node: APPS=matmul and
# APPS=strsearch in two calls keep each under 10 minutes.
#
# Builds nothing: build here, carry the binary and .gpulibs/ (see framework/starpu/README.md),
# then from the repository root:
#
#   bench/starpu/gpu_compare.sh
#
# Environment: BUILD (build), OUT (the scratch folder: ${TMPDIR:-/tmp}/hetfarm-starpu-cuda),
# RESULT (bench/results/<machine>/starpu_gpu_compare.json), APPS ("matmul strsearch"),
# N (16384), ROUNDS (10), CUDA (0), MIB (2048), SCHEDULERS (hass, starpu:dmda, starpu:ws,
# starpu:eager, starpu:modular-heft: StarPU 1.3's HEFT; it has no policy named heft).
# StarPU's models and bus calibration go to $OUT/starpu-home (fresh: a one-round warm-up
# measures the bus; dmda and modular-heft calibrate their task models in the measured run's
# first rounds, as a new user's would, and the summary starts at round 2).
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT N ROUNDS CUDA APPS MIB SCHEDULERS" bench_record bench/starpu/gpu_compare.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-starpu-cuda}
RESULT=${RESULT:-$(bench_out starpu_gpu_compare)}
N=${N:-16384}
ROUNDS=${ROUNDS:-10}
CUDA=${CUDA:-0}
APPS=${APPS:-matmul strsearch}
MIB=${MIB:-2048}
SCHEDULERS=${SCHEDULERS:-hass, starpu:dmda, starpu:ws, starpu:eager, starpu:modular-heft}
for app in $APPS; do
    case $app in
    matmul | strsearch) ;;
    *) echo "gpu_compare.sh: unknown app '$app' in APPS (matmul, strsearch)" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ -d .gpulibs ]; then
    export LD_LIBRARY_PATH="$PWD/.gpulibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
exe=$BUILD/hetfarm
[ -x "$exe" ] || { echo "gpu_compare.sh: $exe is not built" >&2; exit 1; }
nvidia-smi -L >/dev/null 2>&1 ||
    { echo "gpu_compare.sh: no GPU (nvidia-smi -L failed)" >&2; exit 1; }
starpu=$(ldd "$exe" | awk '/libstarpu/{print $3}')
echo "hetfarm: $exe; libstarpu: ${starpu:-none}"
if [ -z "$starpu" ] || ! ldd "$starpu" | grep -q libcudart; then
    echo "gpu_compare.sh: $exe does not use a StarPU with CUDA (${starpu:-no libstarpu}):" \
         "the starpu:* rows would be CPU-only; build with make starpu-cuda, then make" >&2
    exit 1
fi
export STARPU_HOME=$OUT/starpu-home
mkdir -p "$STARPU_HOME"
log=$OUT/gpu-compare.log
: >"$log"
status=0

# Derives $OUT/NAME.ini from bench/starpu/gpu_NAME.ini with this run's settings.
derive() { # name section.key=value...
    local name=$1; shift
    python3 bench/ini_set.py "bench/starpu/gpu_$name.ini" "$OUT/$name.ini" \
        run.rounds="$ROUNDS" devices.cuda="$CUDA" compare.schedulers="$SCHEDULERS" "$@"
}

# Runs one compare; its table goes to the log.
compare() { # name
    echo "== $1: $SCHEDULERS on cpu = all, cuda = $CUDA, $ROUNDS rounds" | tee -a "$log"
    timeout 1800 "$exe" compare "$OUT/$1.ini" -o "$OUT/$1.json" --profiles "$OUT/profiles" \
        --trace "$OUT/$1.trace.json" 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
}

# StarPU measures the bus once per STARPU_HOME, in starpu_init, ending with a
# cudaDeviceReset: done here by a small StarPU-only run, not inside the measured
# compare (where it would also reset the GPU between two rows of one process).
derive matmul load.n=1024
python3 bench/ini_set.py "$OUT/matmul.ini" "$OUT/warmup.ini" run.rounds=1 \
    compare.schedulers=starpu:eager
timeout 600 "$exe" compare "$OUT/warmup.ini" -o "$OUT/warmup.json" >>"$log" 2>&1 ||
    { echo "gpu_compare.sh: the StarPU warm-up run failed (see $log)" >&2; exit 1; }

for app in $APPS; do
    case $app in
    matmul)
        derive matmul load.n="$N"
        ;;
    strsearch)
        text=$OUT/text.txt pats=$OUT/patterns.txt
        [ -s "$text" ] || python3 bench/strsearch/gen.py "$text" "$MIB" "$pats" 100 1
        derive strsearch load.text="$text" load.patterns="$pats" \
            load.out="$OUT/strsearch.out" load.passes="$ROUNDS"
        ;;
    esac
    compare "$app"
done

results=()
for app in matmul strsearch; do
    [ -f "$OUT/$app.json" ] && results+=("$OUT/$app.json")
done
python3 bench/starpu/gpu_summary.py "${results[@]}" -o "$RESULT" | tee -a "$log" ||
    status=1
exit $status
