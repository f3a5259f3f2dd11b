#!/usr/bin/env bash
# bench/graph/partition.sh - issue 14's anchors: gpmetis, Scotch and hetfarm's
# `app = partition`, side by side on the same graphs in one invocation.
#
# Every graph of $GRAPHS is written once as a METIS .graph by build/graph_export
# (4elt round-trips through it too, so nothing is written next to the
# repository's copy), so the three tools read the very same graph. For each graph:
#   metis    gpmetis GRAPH $PARTS -ufactor=(1000 * $IMB)       (METIS 5.1, Debian metis)
#   scotch   scotch_gpart $PARTS GRAPH.grf -b$IMB -Cd           (Scotch 7, Debian scotch:
#            k-way graph partitioning with the default quality strategy, load
#            imbalance tolerance $IMB, deterministic); the graph converted from
#            METIS (= Chaco) by `gcv -ic` first, outside the timed region, and
#            the mapping's "label part" lines sorted back into a part file
#   hetfarm  build/hetfarm run, [run] app = partition, [load] parts/imbalance/out,
#            once per device set of $DEVSETS (cpu | gpus | cpu+gpus); it fails clearly,
#            and the other tools still run, when this hetfarm has no partition app
# Every part file is checked by tests/partition_check.py (format, ids < $PARTS,
# cut, imbalance); a part over 1 + $IMB is kept with "within_bound": false
# (gpmetis itself overshoots by a vertex at times, e.g. 4219/4096 on rgg 2^18);
# seconds are each command's wall clock including its graph read (gpmetis and
# hetfarm read the same .graph; Scotch its binary .grf). One JSON line per run
# goes to $OUT/runs.jsonl; partition_summary.py writes $RESULT with the machine.
#
#   GRAPHS="4elt rgg road kron" RGG_N=1048576 ROAD=4900 KRON=20 bench/graph/partition.sh
#   (here, small:) GRAPHS="4elt rgg road kron" RGG_N=262144 ROAD=512 KRON=16 \
#       TOOLS="metis scotch" RESULT=bench/results/dev-vm/partition_small.json bench/graph/partition.sh
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="BUILD OUT GRAPHS RGG_N ROAD KRON PARTS IMB TOOLS DEVSETS CPUS FOURELT RESULT" bench_record bench/graph/partition.sh "$@"
ROOT=$PWD
BUILD=${BUILD:-build}
OUT=${OUT:-/tmp/partition-bench}
GRAPHS=${GRAPHS:-4elt rgg road kron}
RGG_N=${RGG_N:-1048576}          # rgg vertices (degree 6)
ROAD=${ROAD:-4900}               # road-like grid ROAD x ROAD (4900^2 = 24M vertices)
KRON=${KRON:-20}                 # Kronecker scale (edge factor 16)
PARTS=${PARTS:-64}
IMB=${IMB:-0.03}
TOOLS=${TOOLS:-metis scotch hetfarm}
DEVSETS=${DEVSETS:-cpu cpu+gpus}
CPUS=${CPUS:-all}
FOURELT=${FOURELT:-$ROOT/tests/data/4elt.graph}   # the repository's copy (tests/data/README.md)
RESULT=${RESULT:-$(bench_out partition)}
mkdir -p "$OUT/graphs" "$OUT/parts"
RUNS=$OUT/runs.jsonl
: > "$RUNS"

# NVCC passes through (NVCC= BUILD=build-cpu for a CPU-only build tree).
[ -x "$BUILD/graph_export" ] || make --no-print-directory BUILD="$BUILD" ${NVCC+NVCC="$NVCC"} graph-export >/dev/null ||
    { echo "partition.sh: cannot build $BUILD/graph_export" >&2; exit 1; }

now() { date +%s.%N; }
secs() { awk "BEGIN { printf \"%.4f\", $2 - $1 }"; }
# record GRAPH TOOL DEVICES SECONDS PARTFILE [ERROR]: validates and appends one JSON line.
record() {
    local g=$1 tool=$2 dev=$3 s=$4 part=$5 err=${6:-} check rc
    if [ -z "$err" ]; then
        check=$(python3 tests/partition_check.py "$OUT/graphs/$g.graph" "$part" \
                --parts "$PARTS" 2>&1); rc=$?
        [ $rc = 0 ] || err="partition_check: $check"
    fi
    if [ -n "$err" ]; then
        echo "  $tool ($dev): FAILED: $err" >&2; status=1
        python3 -c 'import json,sys; print(json.dumps({"graph":sys.argv[1],"tool":sys.argv[2],
"devices":sys.argv[3],"error":sys.argv[4]}))' "$g" "$tool" "$dev" "$err" >> "$RUNS"
    else
        echo "  $tool ($dev): $s s $check"
        python3 -c 'import json,sys; c=json.loads(sys.argv[5]); print(json.dumps({"graph":sys.argv[1],
"tool":sys.argv[2],"devices":sys.argv[3],"seconds":round(float(sys.argv[4]),4),
"edge_cut":c["edge_cut"],"max_imbalance":c["max_imbalance"],"empty_parts":c["empty_parts"],
"within_bound":c["max_imbalance"] <= 1 + float(sys.argv[6]) + 1e-9}))' \
            "$g" "$tool" "$dev" "$s" "$check" "$IMB" >> "$RUNS"
    fi
}

export_graph() {
    local g=$1 f=$OUT/graphs/$1.graph
    case $g in
        4elt) "$BUILD/graph_export" "$f" graph="$FOURELT" ;;
        rgg) "$BUILD/graph_export" "$f" generate=rgg vertices="$RGG_N" degree=6 seed=1 ;;
        road) "$BUILD/graph_export" "$f" generate=grid rows="$ROAD" cols="$ROAD" seed=1 ;;
        kron) "$BUILD/graph_export" "$f" generate=kron scale="$KRON" edge_factor=16 seed=1 ;;
        *) echo "partition.sh: unknown graph $g (4elt rgg road kron)" >&2; return 1 ;;
    esac > "$OUT/graphs/$g.json"
}

hetfarm_has_partition() {
    "$BUILD/hetfarm" run --help 2>&1 | sed -n '/^apps:/,/^$/p' | grep -q '^  partition '
}

status=0
for g in $GRAPHS; do
    export_graph "$g" || { status=1; continue; }
    G=$OUT/graphs/$g.graph
    echo "$g: $(cat "$OUT/graphs/$g.json")"
    for tool in $TOOLS; do
        case $tool in
        metis)
            command -v gpmetis >/dev/null || { record "$g" metis cpu 0 - "gpmetis not installed (Debian metis)"; continue; }
            rm -f "$G.part.$PARTS"
            t0=$(now)
            log=$(gpmetis "$G" "$PARTS" -ufactor="$(python3 -c "print(round(1000*$IMB))")" 2>&1)
            rc=$?; t1=$(now)
            mv -f "$G.part.$PARTS" "$OUT/parts/$g.metis" 2>/dev/null
            echo "$log" > "$OUT/parts/$g.metis.log"
            if [ $rc = 0 ]; then record "$g" metis cpu "$(secs "$t0" "$t1")" "$OUT/parts/$g.metis"
            else record "$g" metis cpu 0 - "gpmetis exit $rc: $(echo "$log" | tail -n 2)"; fi ;;
        scotch)
            command -v scotch_gpart >/dev/null || { record "$g" scotch cpu 0 - "scotch_gpart not installed (Debian scotch)"; continue; }
            gcv -ic "$G" "$G.grf" || { record "$g" scotch cpu 0 - "gcv -ic failed"; continue; }
            t0=$(now)
            scotch_gpart "$PARTS" "$G.grf" "$OUT/parts/$g.scotch.map" -b"$IMB" -Cd \
                > "$OUT/parts/$g.scotch.log" 2>&1
            rc=$?; t1=$(now)
            if [ $rc = 0 ]; then
                # the map: a count line, then "label<TAB>part" (labels 1-based, any order)
                tail -n +2 "$OUT/parts/$g.scotch.map" | sort -n -k1,1 | cut -f2 > "$OUT/parts/$g.scotch"
                record "$g" scotch cpu "$(secs "$t0" "$t1")" "$OUT/parts/$g.scotch"
            else record "$g" scotch cpu 0 - "scotch_gpart exit $rc: $(tail -n 2 "$OUT/parts/$g.scotch.log")"; fi ;;
        hetfarm)
            for ds in $DEVSETS; do
                if ! hetfarm_has_partition; then
                    record "$g" hetfarm "$ds" 0 - "$BUILD/hetfarm has no app 'partition' (issue 14's partitioner not merged)"
                    continue
                fi
                case $ds in cpu) dk="cpu = $CPUS\ncuda = none" ;; cpu+gpus) dk="cpu = $CPUS\ncuda = all" ;;
                    gpus) dk="cpu = 0\ncuda = all" ;;
                    *) record "$g" hetfarm "$ds" 0 - "unknown device set $ds (cpu gpus cpu+gpus)"; continue ;; esac
                ini=$OUT/parts/$g.hetfarm-$ds.ini part=$OUT/parts/$g.hetfarm-$ds
                printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = %s\nimbalance = %s\nseed = 1\nout = %s\n' \
                    "$dk" "$G" "$PARTS" "$IMB" "$part" > "$ini"
                rm -f "$part" "$G.hfg"   # no .hfg cache: every run parses the text, as gpmetis does
                t0=$(now)
                "$BUILD/hetfarm" run "$ini" -o "$part.results.json" > "$part.log" 2>&1
                rc=$?; t1=$(now)
                if [ $rc = 0 ]; then record "$g" hetfarm "$ds" "$(secs "$t0" "$t1")" "$part"
                else record "$g" hetfarm "$ds" 0 - "hetfarm exit $rc: $(tail -n 2 "$part.log")"; fi
            done ;;
        *) echo "partition.sh: unknown tool $tool (metis scotch hetfarm)" >&2; status=1 ;;
        esac
    done
done
python3 bench/graph/partition_summary.py "$OUT" "$RESULT" --parts "$PARTS" --imbalance "$IMB" || status=1
exit $status
