#!/usr/bin/env bash
# bench/gpu/run.sh - what runs on the GPU machine: the machine's description, the
# raw cuBLAS / pinned-copy probe, and the CUDA tests. Builds nothing: build here
# with `make` (nvcc present), carry build/ (and .gpulibs/ when the GPU machine
# lacks the host libraries), then run from the repository root:
#
#   bench/gpu/run.sh       # raw files in $OUT (${TMPDIR:-/tmp}/hetfarm-gpu), the probe with
#                          # the machine in bench/results/<machine>/gpu_probe.json ($RESULT)
#
# Environment: BUILD (default build), PROBE_ARGS (extra gpu-probe arguments,
# e.g. "--gpus 0 --sizes 16384"), SKIP_TESTS=1. Exit status: non-zero when the
# probe or the CUDA tests fail (a skipped test, exit 77, means no GPU was seen).
# Takes about 30 s per GPU for the probe plus ~20 s of tests.
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT SKIP_TESTS PROBE_ARGS" bench_record bench/gpu/run.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-gpu}
RESULT=${RESULT:-$(bench_out gpu_probe)}
mkdir -p "$OUT"
if [ -d .gpulibs ]; then
    export LD_LIBRARY_PATH="$PWD/.gpulibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
status=0

echo "== machine"
nvidia-smi -L || echo "nvidia-smi: not available"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd';' -)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
cores=$(nproc)
echo "driver: ${driver:-unknown}"
echo "cpu: $cpu ($cores cores visible)"
nvidia-smi topo -m 2>/dev/null || true
# JSON strings: escape backslashes and quotes.
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
tmp="$OUT/gpu-machine.json.tmp"
printf '{"gpus": "%s", "driver": "%s", "cpu_model": "%s", "cores": %s, "date": "%s", "host": "%s"}\n' \
    "$(esc "$gpus")" "$(esc "$driver")" "$(esc "$cpu")" "$cores" "$(date -u +%FT%TZ)" \
    "$(esc "$(hostname)")" > "$tmp" && mv "$tmp" "$OUT/gpu-machine.json"

if [ -x "$BUILD/hetfarm" ]; then
    echo "== hetfarm devices"
    "$BUILD/hetfarm" devices || status=1
fi

echo "== raw cuBLAS and pinned copy probe"
if [ -x "$BUILD/bench/gpu-probe" ]; then
    # shellcheck disable=SC2086
    timeout 240 "$BUILD/bench/gpu-probe" "$OUT/gpu-probe.json" ${PROBE_ARGS:-} || status=1
    [ -f "$OUT/gpu-probe.json" ] && cat "$OUT/gpu-probe.json"
    python3 - "$OUT" "$RESULT" <<'PY' || status=1
import json, os, sys
sys.path.insert(0, "bench")
import machine
d = sys.argv[1]
with open(os.path.join(d, "gpu-machine.json")) as f:
    host = json.load(f)
with open(os.path.join(d, "gpu-probe.json")) as f:
    probe = json.load(f)
machine.write_json_atomic(sys.argv[2], {"bench": "gpu_probe", "machine": host, "probe": probe})
PY
else
    echo "missing $BUILD/bench/gpu-probe: build with nvcc present (make)"; status=1
fi

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    echo "== CUDA tests"
    if [ -x "$BUILD/tests/test_cuda" ]; then
        timeout 300 "$BUILD/tests/test_cuda"; rc=$?
        if [ $rc = 77 ]; then echo "test_cuda: SKIPPED (no CUDA device seen)"; status=1
        elif [ $rc != 0 ]; then echo "test_cuda: FAILED (exit $rc)"; status=1
        else echo "test_cuda: ok"; fi
    else
        echo "missing $BUILD/tests/test_cuda: build with: make tests"; status=1
    fi
fi
exit $status
