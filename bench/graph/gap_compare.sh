#!/usr/bin/env bash
# bench/graph/gap_compare.sh - hetfarm's CPU-only graph apps beside GAP (gapbs)
# on the very same graph, same thread count, trials interleaved (issue 11).
#
# The graph: hetfarm's Kronecker generator (scale $SCALE, edge factor $EF,
# seed 1, weights 1..255) exported by $BUILD/graph_export as a METIS .graph;
# GAP's converter turns that file into its .sg / .wsg (symmetrised, so both
# hold the same undirected simple graph) and hetfarm loads the same file
# (its .hfg cache next to it). BFS and SSSP start at hetfarm's `maxdegree`
# vertex, passed to GAP with -r. PageRank runs exactly $PR_ITERS sweeps on
# both (hetfarm tol 1e-300, GAP -t 0). GAP's SSSP runs with -d $GAP_DELTA (its
# suite's setting for kron is 2); hetfarm's with its default delta.
#
# GAP is built (g++ -O3 -fopenmp, its own Makefile) from $GAPBS_DIR, or from
# the git directory $GAPBS_GIT (a local mirror of it) extracted under $WORK,
# or else from a clone of $GAPBS_URL (https://github.com/sbeamer/gapbs) under
# $WORK: it is never copied into this repository.
#
# One trial = one hetfarm run (its time is the sum of the rounds' makespans,
# graph loading excluded) and one GAP run with -n 1 ("Trial Time", loading
# excluded) per app, apps and the two codes interleaved, $TRIALS times. The
# summary (gap_compare.py) keeps every trial and the medians and ratios.
# With BASELINE=DIR (a folder holding an older build's `hetfarm`, e.g. one
# built from the commit before a change) that build runs in every trial too,
# between the other two, for a before/after under the same conditions.
# GRAIN=N writes `grain = N` into [run]; empty (the default) leaves it to the
# apps (the graph apps' automatic grain, hf__gapp_grain; a build older than
# that uses its fixed default, 4096). BASELINE_GRAIN (default: GRAIN) is the
# baseline's, so that a new default can be set against an old build's best.
#
#   SCALE=20 THREADS=2 TRIALS=5 bench/graph/gap_compare.sh [OUT.json]
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="SCALE EF THREADS TRIALS PR_ITERS GAP_DELTA APPS BUILD WORK GAPBS_GIT GRAIN SCHED BASELINE BASELINE_GRAIN" bench_record bench/graph/gap_compare.sh "$@"
ROOT=$PWD
SCALE=${SCALE:-20}
EF=${EF:-16}
THREADS=${THREADS:-$(nproc)}
TRIALS=${TRIALS:-5}
PR_ITERS=${PR_ITERS:-20}
GAP_DELTA=${GAP_DELTA:-2}
APPS=${APPS:-bfs pagerank cc sssp}
BUILD=${BUILD:-build}
WORK=${WORK:-/tmp/gap-compare}
GAPBS_GIT=${GAPBS_GIT:-}   # a git directory of gapbs (a mirror); empty: clone GAPBS_URL
GAPBS_URL=${GAPBS_URL:-https://github.com/sbeamer/gapbs}
GRAIN=${GRAIN:-} # empty: the apps' own (automatic) grain
SCHED=${SCHED:-hass}
BASELINE=${BASELINE:-}
BASELINE_GRAIN=${BASELINE_GRAIN-$GRAIN}
OUT=${1:-$(bench_out graph_cpu_vs_gap)}
mkdir -p "$WORK/logs"

# --- GAP ---------------------------------------------------------------------
if [ -z "${GAPBS_DIR:-}" ]; then
    GAPBS_DIR=$WORK/gapbs
    if [ ! -f "$GAPBS_DIR/Makefile" ] && [ -n "$GAPBS_GIT" ]; then
        mkdir -p "$GAPBS_DIR"
        git --git-dir="$GAPBS_GIT" archive HEAD | tar -x -C "$GAPBS_DIR" || {
            echo "gap_compare: cannot extract gapbs from $GAPBS_GIT (set GAPBS_DIR)" >&2; exit 1; }
    elif [ ! -f "$GAPBS_DIR/Makefile" ]; then
        git clone -q --depth 1 "$GAPBS_URL" "$GAPBS_DIR" || {
            echo "gap_compare: cannot clone $GAPBS_URL (set GAPBS_DIR or GAPBS_GIT)" >&2; exit 1; }
    fi
    [ -n "$GAPBS_GIT" ] || GAPBS_GIT=$GAPBS_DIR/.git
fi
GAP_COMMIT=$(git --git-dir="$GAPBS_GIT" rev-parse HEAD 2>/dev/null || echo unknown)
make -C "$GAPBS_DIR" -j"$THREADS" CXX=g++ bfs pr cc sssp converter > "$WORK/logs/gap-build.log" 2>&1 ||
    { echo "gap_compare: building gapbs failed (see $WORK/logs/gap-build.log)" >&2; exit 1; }

# --- hetfarm -----------------------------------------------------------------
[ -x "$BUILD/hetfarm" ] && [ -x "$BUILD/graph_export" ] ||
    { echo "gap_compare: build $BUILD/hetfarm and $BUILD/graph_export first (make graph-export)" >&2
      exit 1; }

# --- the graph ---------------------------------------------------------------
G=$WORK/kron$SCALE-ef$EF
if [ ! -s "$G.graph" ]; then
    "$BUILD/graph_export" "$G.graph" generate=kron scale="$SCALE" edge_factor="$EF" seed=1 \
        weighted=1 > "$WORK/logs/export.log" || exit 1
fi
[ -s "$G.sg" ] || "$GAPBS_DIR/converter" -f "$G.graph" -s -b "$G.sg" > "$WORK/logs/conv-sg.log" || exit 1
[ -s "$G.wsg" ] || "$GAPBS_DIR/converter" -f "$G.graph" -s -wb "$G.wsg" > "$WORK/logs/conv-wsg.log" ||
    exit 1
# hetfarm's `source = maxdegree`: the first vertex of highest degree (a METIS
# line with weights holds two tokens per neighbour).
SRC=$(awk 'NR > 1 { d = NF / 2; if (d > m) { m = d; v = NR - 2 } } END { print v }' "$G.graph")

ini() { # app grain
    printf '[run]\napp = %s\nscheduler = %s\nrounds = 100000\nprogress = no\n' "$1" "$SCHED"
    [ -z "$2" ] || printf 'grain = %s\n' "$2"
    printf '[load]\ngraph = %s.graph\n' "$G"
    case $1 in
        bfs | sssp) printf 'source = maxdegree\n' ;;
        pagerank) printf 'max_iters = %s\ntol = 1e-300\n' "$PR_ITERS" ;;
    esac
    printf '[devices]\ncpu = %s\ncuda = none\n' "$THREADS"
}
gap_cmd() { # app
    case $1 in
        bfs) echo "$GAPBS_DIR/bfs -f $G.sg -r $SRC" ;;
        pagerank) echo "$GAPBS_DIR/pr -f $G.sg -i $PR_ITERS -t 0" ;;
        cc) echo "$GAPBS_DIR/cc -f $G.sg" ;;
        sssp) echo "$GAPBS_DIR/sssp -f $G.wsg -r $SRC -d $GAP_DELTA" ;;
    esac
}
for app in $APPS; do
    ini "$app" "$GRAIN" > "$WORK/$app.ini"
    ini "$app" "$BASELINE_GRAIN" > "$WORK/$app-base.ini"
done
# Loads the graph once, so that the .hfg cache exists before the first trial.
# (With the first app of $APPS: its .ini is the one written whatever APPS holds.)
set -- $APPS
"$BUILD/hetfarm" run "$WORK/$1.ini" -o "$WORK/logs/warm.json" > "$WORK/logs/warm.log" 2>&1 ||
    { echo "gap_compare: hetfarm failed (see $WORK/logs/warm.log)" >&2; exit 1; }

status=0
for t in $(seq 1 "$TRIALS"); do
    for app in $APPS; do
        "$BUILD/hetfarm" run "$WORK/$app.ini" -o "$WORK/logs/hf-$app-$t.json" \
            > "$WORK/logs/hf-$app-$t.log" 2>&1 || { echo "hetfarm $app trial $t failed" >&2; status=1; }
        if [ -n "$BASELINE" ]; then
            "$BASELINE/hetfarm" run "$WORK/$app-base.ini" -o "$WORK/logs/hfbase-$app-$t.json" \
                > "$WORK/logs/hfbase-$app-$t.log" 2>&1 ||
                { echo "baseline $app trial $t failed" >&2; status=1; }
        fi
        OMP_NUM_THREADS=$THREADS $(gap_cmd "$app") -n 1 > "$WORK/logs/gap-$app-$t.log" 2>&1 ||
            { echo "gap $app trial $t failed" >&2; status=1; }
    done
    echo "trial $t done"
done
python3 bench/graph/gap_compare.py --logs "$WORK/logs" --trials "$TRIALS" --apps "$APPS" \
    --graph "$G.graph" --scale "$SCALE" --edge-factor "$EF" --threads "$THREADS" \
    --source "$SRC" --pr-iters "$PR_ITERS" --gap-delta "$GAP_DELTA" --gap-commit "$GAP_COMMIT" \
    --hetfarm-commit "$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo +dirty)" \
    --grain "$GRAIN" ${BASELINE:+--baseline "$BASELINE" --baseline-grain "$BASELINE_GRAIN"} --out "$OUT" || status=1
exit $status
