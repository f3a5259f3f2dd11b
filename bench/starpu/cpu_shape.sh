#!/usr/bin/env bash
# bench/starpu/cpu_shape.sh - does the shape of hetfarm's CPU device explain a matmul loss
# to StarPU on many cores? (issue 15; 9edd91b:bench/NOTES.md, "StarPU's policies as rows of
# compare on 16 CPU cores").
#
# One `hetfarm compare` per shape of the CPU device, matmul float32 n = $N in $ROWS-row
# chunks, CPU only, every round verified, `hass, greedy, starpu:dmda, starpu:ws` side by
# side: `cpu_teams = $(nproc)` (single-thread teams, StarPU's own shape) and `cpu_teams = 1`
# (one team of every core: one OpenBLAS call per chunk over all threads). StarPU's rows
# always use one worker per core. Builds nothing; from the repository root:
#
#   bench/starpu/cpu_shape.sh
#
# Environment: BUILD (build), OUT (the scratch folder for the full results:
# ${TMPDIR:-/tmp}/hetfarm-starpu-cpu-shape), RESULT (bench/results/<machine>/starpu_cpu_shape.json,
# written by bench/condense.py), N (4096), ROWS (128), ROUNDS (6).
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT RESULT N ROWS ROUNDS" bench_record bench/starpu/cpu_shape.sh "$@"
BUILD=${BUILD:-build}
OUT=${OUT:-${TMPDIR:-/tmp}/hetfarm-starpu-cpu-shape}
RESULT=${RESULT:-$(bench_out starpu_cpu_shape)}
N=${N:-4096}
ROWS=${ROWS:-128}
ROUNDS=${ROUNDS:-6}
mkdir -p "$OUT"
export STARPU_HOME=$OUT/starpu-home
[ -x "$BUILD/hetfarm" ] || { echo "cpu_shape.sh: $BUILD/hetfarm is not built" >&2; exit 1; }
status=0
for teams in "$(nproc)" 1; do
    name=matmul-n$N-teams$teams
    cat >"$OUT/$name.ini" <<INI
[run]
app = matmul
rounds = $ROUNDS
grain = $ROWS
progress = no
[load]
n = $N
dtype = float32
verify = 16
[devices]
cpu = all
cpu_teams = $teams
cuda = none
[compare]
schedulers = hass, greedy, starpu:dmda, starpu:ws
INI
    echo "== $name"
    timeout 300 "$BUILD/hetfarm" compare "$OUT/$name.ini" -o "$OUT/$name.json" \
        --profiles "$OUT/profiles" || status=1
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "matmul-*.json"))):
    print(os.path.basename(f))
    for r in json.load(open(f))["runs"]:
        ms = [x["makespan_s"] for x in r["rounds"] if x["round"] >= 2]
        print("  %-12s median makespan from round 2 %.1f ms" % (r["scheduler"],
                                                               statistics.median(ms) * 1e3))
PY
python3 bench/condense.py --bench starpu_cpu_shape --out "$RESULT" "$OUT"/matmul-*.json || status=1
exit $status
