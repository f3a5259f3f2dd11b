#!/usr/bin/env bash
# bench/gpu/hass_real.sh - issue 12's real runs on the 2x H200 node: does HASS beat the
# baselines on real GPUs against the new bound (bound_s), and what do outliers look like.
#
#   1. `make run`'s own config (configs/default.ini: matmul n = 2048, CPU + every GPU), the
#      real engine only, every scheduler, 10 rounds, PASSES times in one compare
#      ([compare] passes: the issue saw the result change from pass to pass, and pass p
#      starts from the p-th scheduler, since on one H200 host the first of a `compare` ran
#      its identical GPU bundle 3-5% faster in three of four compares: 9edd91b:bench/NOTES.md,
#      twelfth session);
#   2. matmul n = 16384 float32 on CPU + 1 GPU and CPU + 2 GPUs, every scheduler, 10 rounds.
# Builds nothing: build here with `make` (nvcc present), carry build/ (and .gpulibs/ when the
# GPU machine lacks the host libraries), then from the repository root:
#
#   bench/gpu/hass_real.sh
#
# Full results in the scratch folder $OUT: default-ini.json, matmul-n16384-g<G>.json (each
# with its .ini and a Chrome trace), hass-real.log (the tables). Profiles go to $OUT/profiles,
# fresh the first time (standalone rates measured once, then reused by every later run of
# this script). bench/condense.py keeps the figures, configs and log in $RESULT.
# Environment: BUILD (build), OUT (${TMPDIR:-/tmp}/hetfarm-hass-real), RESULT
# (bench/results/<machine>/hass_real.json, bench/machine.py), ROUNDS (10), PASSES (2),
# GPUS ("1 2"), N (16384).
# Expected runtime on the 2x H200 node: about 3 minutes (the n = 16384 inputs dominate).
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT ROUNDS PASSES GPUS N" bench_record bench/gpu/hass_real.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-hass-real}
RESULT=${RESULT:-$(bench_out hass_real)}
ROUNDS=${ROUNDS:-10}
PASSES=${PASSES:-2}
GPUS=${GPUS:-1 2}
N=${N:-16384}
PROFILES=$OUT/profiles
SCHEDULERS="hass, greedy, minmin, qilin, static"
mkdir -p "$OUT"
if [ -d .gpulibs ]; then
    export LD_LIBRARY_PATH="$PWD/.gpulibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -x "$BUILD/hetfarm" ] || { echo "hass_real.sh: $BUILD/hetfarm is not built" >&2; exit 1; }
have=$(nvidia-smi -L 2>/dev/null | wc -l)
log=$OUT/hass-real.log
: >"$log"
status=0

# Runs one `hetfarm compare`; its table goes to the log too.
compare() { # name ini timeout
    echo "== $1" | tee -a "$log"
    timeout "$3" "$BUILD/hetfarm" compare "$2" -o "$OUT/$1.json" --profiles "$PROFILES" \
        --trace "$OUT/$1.trace.json" 2>&1 | tee -a "$log" || status=1
}

echo "== machine" | tee -a "$log"
nvidia-smi -L 2>&1 | tee -a "$log"
grep -m1 'model name' /proc/cpuinfo | tee -a "$log"

# 1. configs/default.ini, real engine only.
ini=$OUT/default-ini.ini
python3 bench/ini_set.py configs/default.ini "$ini" run.rounds="$ROUNDS" \
    compare.engines=real compare.schedulers="$SCHEDULERS" compare.passes="$PASSES"
compare default-ini "$ini" $((60 * PASSES))

# 2. matmul n = N on CPU + 1 and + 2 GPUs.
for g in $GPUS; do
    [ "$g" -le "$have" ] || { echo "skip $g GPUs: this machine has $have" | tee -a "$log"; continue; }
    list=$(seq -s, 0 $((g - 1)))
    ratios="0.03$(printf ', %s' $(for _ in $(seq "$g"); do echo 1; done))"
    ini=$OUT/matmul-n$N-g$g.ini
    cat >"$ini" <<INI
[run]
app = matmul
rounds = $ROUNDS
engine = real
scheduler = hass
[load]
n = $N
dtype = float32
verify = 4
[devices]
cpu = all
cuda = $list
[compare]
schedulers = $SCHEDULERS
engines = real
[static]
ratios = $ratios
INI
    compare "matmul-n$N-g$g" "$ini" 240
done

# The figures the issue asks for: mean efficiency (bound_s / makespan_s) from round 2.
python3 - "$OUT" <<'PY' | tee -a "$log"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if f.endswith(".trace.json"):
        continue
    try:
        runs = json.load(open(f))["runs"]
    except (OSError, ValueError, KeyError):
        continue
    print(os.path.basename(f))
    for r in runs:
        rs = [x for x in r["rounds"] if x["round"] >= 2]
        eff = sum(x["efficiency"] for x in rs) / max(1, len(rs))
        ms = sum(x["makespan_s"] for x in rs) / max(1, len(rs))
        out = sum(d.get("outliers", 0) for x in r["rounds"] for d in x["devices"])
        name = r["scheduler"] + (f" p{r['pass']}" if "pass" in r else "")
        print(f"  {name:10s} eff(r>=2) {eff:.3f}  makespan(r>=2) {ms * 1e3:9.3f} ms"
              f"  outliers {out}")
PY
python3 bench/condense.py --bench hass_real --out "$RESULT" --log "$log" "$OUT"/*.json || status=1
exit $status
