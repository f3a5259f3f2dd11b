#!/usr/bin/env bash
# bench/graph/placement.sh - issue 14, "the graph primitives use it": bfs,
# pagerank and cc with [load] placement = range and = partition side by side,
# on the same graphs and devices, and what each placement implies in
# cross-device traffic (apps/graph/app/graph_traffic.c says how it is counted).
#
# For every graph of $GRAPHS, app of $APPS and device set of $DEVSETS, the two
# placements run one after the other with verify on and `out =` written; the
# two output files must be identical (bfs, cc) or agree to 1e-8 relative
# (pagerank: its sums run in another order, and a rank printed with %.9g may
# then flip its last digit), or the pair is recorded as failed. Graphs:
#   4elt   METIS's 4elt mesh (tests/data/4elt.graph)
#   road   the road-like grid generator, $ROAD x $ROAD, keep 0.6 (default 1000)
#   wide   the same generator, $WIDE_ROWS x $WIDE_COLS (a road map's long strip)
#   kron   Graph500 Kronecker, scale $KRON, edge factor 16
# Device sets:
#   teams2  real engine, 2 CPU teams of 1 thread each (this VM's 2 cores)
#   sim4    sim engine with execute = yes: a modelled CPU and 3 modelled GPUs
#           (shares follow the models; every bundle really runs on the CPU)
# One JSON line per run goes to $OUT/runs.jsonl; placement_summary.py writes
# $RESULT with the machine.
#
#   bench/graph/placement.sh                       (defaults: all of the above)
#   GRAPHS="road kron" ROAD=500 KRON=14 bench/graph/placement.sh
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT GRAPHS APPS DEVSETS ROAD WIDE_ROWS WIDE_COLS KRON FOURELT RESULT" bench_record bench/graph/placement.sh "$@"
ROOT=$PWD
BUILD=${BUILD:-build}
OUT=${OUT:-/tmp/placement-bench}
GRAPHS=${GRAPHS:-4elt road wide kron}
APPS=${APPS:-bfs pagerank cc}
DEVSETS=${DEVSETS:-teams2 sim4}
ROAD=${ROAD:-1000}
WIDE_ROWS=${WIDE_ROWS:-100}
WIDE_COLS=${WIDE_COLS:-10000}
KRON=${KRON:-16}
FOURELT=${FOURELT:-$ROOT/tests/data/4elt.graph}   # the repository's copy (tests/data/README.md)
RESULT=${RESULT:-$(bench_out graph_placement)}
mkdir -p "$OUT/cache" "$OUT/runs"
RUNS=$OUT/runs.jsonl
: > "$RUNS"
[ -x "$BUILD/hetfarm" ] || { echo "placement.sh: no $BUILD/hetfarm (make BUILD=$BUILD)" >&2; exit 1; }

graph_keys() {
    case $1 in
        4elt) printf 'graph = %s\ncache_dir = %s\n' "$FOURELT" "$OUT/cache" ;;
        road) printf 'generate = grid\nrows = %s\ncols = %s\nseed = 1\ncache_dir = %s\n' "$ROAD" "$ROAD" "$OUT/cache" ;;
        wide) printf 'generate = grid\nrows = %s\ncols = %s\nseed = 1\ncache_dir = %s\n' "$WIDE_ROWS" "$WIDE_COLS" "$OUT/cache" ;;
        kron) printf 'generate = kron\nscale = %s\nedge_factor = 16\nseed = 1\ncache_dir = %s\n' "$KRON" "$OUT/cache" ;;
        *) return 1 ;;
    esac
}

device_keys() {
    case $1 in
        teams2) printf '[run]\nengine = real\n[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n' ;;
        sim4) printf '[run]\nengine = sim\nexecute = yes\n[devices]\nsim = host, gpu, gpu, gpu\n[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\n[sim.gpu]\nkind = gpu\nrate = 2e10\nlatency_us = 20\nbandwidth_gbs = 25\n' ;;
        *) return 1 ;;
    esac
}

status=0
for g in $GRAPHS; do
    graph_keys "$g" > /dev/null || { echo "placement.sh: unknown graph $g (4elt road wide kron)" >&2; status=1; continue; }
    for app in $APPS; do
        for ds in $DEVSETS; do
            device_keys "$ds" > /dev/null || { echo "placement.sh: unknown device set $ds (teams2 sim4)" >&2; status=1; continue; }
            for pl in range partition; do
                base=$OUT/runs/$g-$app-$ds-$pl
                src=""; [ "$app" = bfs ] && src="source = maxdegree"
                { device_keys "$ds" | sed '/^\[devices\]/,$d'
                  printf 'app = %s\nscheduler = hass\nrounds = 1000000\nverify = yes\nprogress = no\n' "$app"
                  printf '[load]\n'; graph_keys "$g"
                  printf 'placement = %s\ntraffic = yes\nout = %s.tsv\n%s\n' "$pl" "$base" "$src"
                  device_keys "$ds" | sed -n '/^\[devices\]/,$p'; } > "$base.ini"
                rm -f "$base.tsv"
                t0=$(date +%s.%N)
                "$BUILD/hetfarm" run -o "$base.json" "$base.ini" > "$base.log" 2>&1
                rc=$?; t1=$(date +%s.%N)
                err=""; [ $rc = 0 ] || err="hetfarm exit $rc: $(tail -n 2 "$base.log")"
                python3 bench/graph/placement_record.py "$base.json" "$g" "$app" "$ds" "$pl" \
                    "$(awk "BEGIN { print $t1 - $t0 }")" "$err" >> "$RUNS" || status=1
                [ -z "$err" ] || { echo "  $g $app $ds $pl: FAILED: $err" >&2; status=1; }
            done
            # the two placements' outputs must agree
            a=$OUT/runs/$g-$app-$ds-range.tsv b=$OUT/runs/$g-$app-$ds-partition.tsv
            if [ -f "$a" ] && [ -f "$b" ]; then
                if [ "$app" = pagerank ]; then
                    same=$(paste "$a" "$b" | awk '{ d = $2 - $4; if (d < 0) d = -d; if ($1 != $3 || d > 1e-8 * $2) bad++ } END { print bad ? "no" : "yes" }')
                else
                    same=$(cmp -s "$a" "$b" && echo yes || echo no)
                fi
            else
                same=missing
            fi
            echo "{\"graph\": \"$g\", \"app\": \"$app\", \"devices\": \"$ds\", \"outputs_equal\": \"$same\"}" >> "$RUNS"
            [ "$same" = yes ] || { echo "  $g $app $ds: outputs differ ($same)" >&2; status=1; }
        done
    done
done
python3 bench/graph/placement_summary.py "$OUT" "$RESULT" || status=1
exit $status
