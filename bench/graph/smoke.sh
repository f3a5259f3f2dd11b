#!/usr/bin/env bash
# bench/graph/smoke.sh - on the GPU machine: the CUDA tests and each graph app
# on CPU + GPUs and on GPUs alone, small enough to finish in a minute or two,
# every run verified. Logs go to $OUT (default /tmp/graph-smoke).
#
#   bench/graph/smoke.sh            # from the repository root, after building here
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/graph-smoke}
mkdir -p "$OUT"
[ -d .gpulibs ] && export LD_LIBRARY_PATH="$PWD/.gpulibs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
log() { echo "== $*"; }
for t in build/tests/test_cuda build/tests/test_strsearch_cuda build/tests/test_shared build/tests/test_graph_cuda \
         build/tests/test_graph_mst_cuda; do
    [ -x "$t" ] || continue
    log "$t"
    "$t" > "$OUT/$(basename "$t").log" 2>&1; rc=$?
    echo "exit $rc"; tail -n 5 "$OUT/$(basename "$t").log"
    [ $rc = 0 ] || status=1
done
run() { # name, then config lines
    local name=$1; shift
    printf '%s\n' "$@" > "$OUT/$name.ini"
    log "$name"
    build/hetfarm run "$OUT/$name.ini" -o "$OUT/$name.json" > "$OUT/$name.log" 2>&1; rc=$?
    echo "exit $rc"; tail -n 6 "$OUT/$name.log"
    [ $rc = 0 ] || status=1
}
for app in ${APPS:-bfs pagerank cc sssp mst}; do
    for dev in "cpu = all|cuda = all" "cpu = 0|cuda = all" "cpu = 0|cuda = 0"; do
        tag=$(echo "$dev" | tr -cd 'a-z0-9')
        run "$app-kron18-$tag" "[run]" "app = $app" "rounds = 100000" "grain = 4096" \
            "[load]" "generate = kron" "scale = 18" "edge_factor = 16" "weighted = yes" \
            "[devices]" "${dev%%|*}" "${dev##*|}"
        run "$app-grid-$tag" "[run]" "app = $app" "rounds = 100000" "grain = 4096" \
            "[load]" "generate = grid" "rows = 300" "cols = 300" "weighted = yes" \
            "[devices]" "${dev%%|*}" "${dev##*|}"
    done
done
exit $status
