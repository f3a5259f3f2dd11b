#!/usr/bin/env bash
# bench/gpu/irregular.sh - issue 18 on real devices: an irregular noop load (units whose
# cost follows [load] shape, unknown to the framework with cost_known = no) on CPU + 1 and
# CPU + 2 GPUs, every scheduler, 10 rounds of the same load. The noop kernels spin
# spin_ns per unit of cost on the device's host thread (the CPU team's bundle on one of
# its threads), so every device runs at the same rate per unit of cost: the test is
# whether a scheduler finds the even split by cost when the units' costs are unknown.
#
#   bench/gpu/irregular.sh
#
# Full results in the scratch folder $OUT: noop-<shape>-g<G>.json (+ .ini), irregular.log
# (tables and the mean efficiency from round 2); bench/condense.py keeps the figures, configs
# and log in $RESULT. Environment: BUILD (build), OUT (${TMPDIR:-/tmp}/hetfarm-irregular),
# RESULT (bench/results/<machine>/irregular.json), ROUNDS (10), SHAPES ("hump tail"),
# GPUS ("1 2"), SPIN_NS (100000: a load is about 0.1 s of spinning in all).
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT ROUNDS SHAPES GPUS SPIN_NS" bench_record bench/gpu/irregular.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-irregular}
RESULT=${RESULT:-$(bench_out irregular)}
ROUNDS=${ROUNDS:-10}
SHAPES=${SHAPES:-hump tail}
GPUS=${GPUS:-1 2}
SPIN_NS=${SPIN_NS:-100000}
mkdir -p "$OUT"
[ -x "$BUILD/hetfarm" ] || { echo "irregular.sh: $BUILD/hetfarm is not built" >&2; exit 1; }
have=$(nvidia-smi -L 2>/dev/null | wc -l)
log=$OUT/irregular.log
: >"$log"
status=0
for shape in $SHAPES; do
    for g in $GPUS; do
        [ "$g" -le "$have" ] || { echo "skip $g GPUs: this machine has $have" | tee -a "$log"; continue; }
        name=noop-$shape-g$g
        cat >"$OUT/$name.ini" <<INI
[run]
app = noop
rounds = $ROUNDS
engine = real
scheduler = hass
[load]
chunks = 1024
spin_ns = $SPIN_NS
shape = $shape
cost_known = no
[devices]
cpu = 4
cuda = $(seq -s, 0 $((g - 1)))
[compare]
schedulers = hass, greedy, minmin, qilin, static
engines = real
INI
        echo "== $name" | tee -a "$log"
        timeout 240 "$BUILD/hetfarm" compare "$OUT/$name.ini" -o "$OUT/$name.json" \
            --profiles "$OUT/profiles" 2>&1 | tee -a "$log" || status=1
    done
done
python3 - "$OUT" <<'PY' | tee -a "$log"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "noop-*.json"))):
    runs = json.load(open(f))["runs"]
    print(os.path.basename(f))
    for r in runs:
        rs = [x for x in r["rounds"] if x["round"] >= 2]
        eff = sum(x["efficiency"] for x in rs) / max(1, len(rs))
        print("  %-8s mean efficiency from round 2 %.3f" % (r["scheduler"], eff))
PY
python3 bench/condense.py --bench irregular --out "$RESULT" --log "$log" "$OUT"/noop-*.json ||
    status=1
exit $status
