#!/usr/bin/env bash
# bench/graph/run.sh - the graph benchmarks of issue 11, on the GPU machine.
#
# For every app of $APPS and graph of $GRAPHS, one `hetfarm compare` per
# device set of $DEVSETS runs every scheduler of $SCHEDS (HASS alone on the
# single-device sets of $SOLO) on the same graph
# (generated once, cached as .hfg under $CACHE); then GAP's reference CPU codes
# (gapbs, built here and carried in .peers/gapbs) run on a graph of the same
# generator and size with the same thread count, for the CPU comparison.
# Full results JSON stay on the machine ($OUT); summarize.py writes one compact
# JSON ($RESULT: bench/results/<machine>/graph.json, bench/machine.py) with per-run totals, the apps' figures and, per
# round, the frontier size next to HASS's efficiency.
#
#   APPS="bfs pagerank" GRAPHS="kron22 road" OUT=/tmp/out bench/graph/run.sh
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="OUT RESULT CACHE APPS GRAPHS DEVSETS SCHEDS SOLO CPUS" bench_record bench/graph/run.sh "$@"
OUT=${OUT:-/tmp/graph-bench}
RESULT=${RESULT:-$(bench_out graph)}
CACHE=${CACHE:-/tmp/hfg-cache}
APPS=${APPS:-bfs pagerank cc sssp mst}
GRAPHS=${GRAPHS:-kron22 road}
DEVSETS=${DEVSETS:-cpu gpu1 cpu+gpu1 cpu+gpu2}
SCHEDS=${SCHEDS:-hass, greedy, minmin, qilin, static}
# One device needs no comparison of schedulers: those sets run HASS only.
SOLO=${SOLO:-cpu gpu1 gpu2}
CPUS=${CPUS:-16}
mkdir -p "$OUT/full" "$CACHE"
[ -d .gpulibs ] && export LD_LIBRARY_PATH="$PWD/.gpulibs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

graph_keys() {
    case $1 in
        kron16) printf 'generate = kron\nscale = 16\nedge_factor = 16\n' ;;
        kron20) printf 'generate = kron\nscale = 20\nedge_factor = 16\n' ;;
        kron22) printf 'generate = kron\nscale = 22\nedge_factor = 16\n' ;;
        kron24) printf 'generate = kron\nscale = 24\nedge_factor = 16\n' ;;
        road) printf 'generate = grid\nrows = 4900\ncols = 4900\n' ;;
        roadsmall) printf 'generate = grid\nrows = 1000\ncols = 1000\n' ;;
    esac
}
dev_keys() {
    case $1 in
        cpu) printf 'cpu = %s\ncuda = none\n' "$CPUS" ;;
        gpu1) printf 'cpu = 0\ncuda = 0\n' ;;
        gpu2) printf 'cpu = 0\ncuda = all\n' ;;
        cpu+gpu1) printf 'cpu = %s\ncuda = 0\n' "$CPUS" ;;
        cpu+gpu2) printf 'cpu = %s\ncuda = all\n' "$CPUS" ;;
    esac
}

status=0
for g in $GRAPHS; do
    for app in $APPS; do
        for ds in $DEVSETS; do
            name="$app-$g-$ds"
            { printf '[run]\napp = %s\nrounds = 100000\ngrain = %s\nprogress = no\n' "$app" "${GRAIN:-16384}"
              case " $SOLO " in *" $ds "*) sch=hass ;; *) sch=$SCHEDS ;; esac
              printf '[compare]\nschedulers = %s\n' "$sch"
              printf '[load]\n'; graph_keys "$g"
              printf 'seed = 1\nweighted = yes\ncache_dir = %s\n' "$CACHE"
              case $app in bfs|sssp) printf 'source = maxdegree\n' ;; esac
              printf '[devices]\n'; dev_keys "$ds"; } > "$OUT/full/$name.ini"
            echo "== $name"
            start=$(date +%s%N)
            build/hetfarm compare "$OUT/full/$name.ini" -o "$OUT/full/$name.json" \
                > "$OUT/full/$name.log" 2>&1
            rc=$?
            echo "exit $rc ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
            grep -E "^(hass|greedy|minmin|qilin|static) " "$OUT/full/$name.log" | grep -v real || true
            [ $rc = 0 ] || { status=1; tail -n 5 "$OUT/full/$name.log"; }
        done
    done
done

# GAP (gapbs) on the same generator family and size, $CPUS threads.
if [ -x .peers/gapbs/bfs ] && [ "${GAP:-1}" = 1 ]; then
    for g in $GRAPHS; do
        case $g in kron*) gen="-g ${g#kron} -k 16" ;; *) continue ;; esac
        for k in bfs pr cc sssp; do
            echo "== gap-$k-$g"
            extra=""; [ $k = sssp ] && extra="-d 2"
            OMP_NUM_THREADS=$CPUS timeout 300 .peers/gapbs/$k $gen -n 8 $extra \
                > "$OUT/full/gap-$k-$g.log" 2>&1
            grep -E "Average Time|Build Time" "$OUT/full/gap-$k-$g.log"
        done
    done
fi
python3 bench/graph/summarize.py "$OUT/full" > "$OUT/graph_bench.json" || status=1
python3 - "$OUT/graph_bench.json" "$RESULT" <<'PY' || status=1
import json, sys
sys.path.insert(0, "bench")
import machine
with open(sys.argv[1]) as f:
    machine.write_json_atomic(sys.argv[2], {"bench": "graph", **json.load(f)})
PY
exit $status
