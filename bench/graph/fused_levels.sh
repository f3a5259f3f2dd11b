#!/usr/bin/env bash
# bench/graph/fused_levels.sh - BFS with and without fused levels (bfs.c, "Fused levels")
# on one GPU, side by side: the road-like grid (thousands of small levels) and Kronecker
# (a few big ones), TRIALS interleaved runs of each, HASS, verify on. MODES: off (one
# level a round, fuse_edges = 0), small (fuse = small: small levels only), search
# (fuse = search: the GPU runs the rest of the search).
#
#   OUT=/tmp/fuse bench/graph/fused_levels.sh
#
# Writes $RESULT (bench/results/<machine>/graph_fused_levels.json): per graph and mode, each trial's summed round
# makespans, the same plus the host's work between rounds (next_load, partition,
# adapt; not verify), the host's merge seconds (inside the makespans), GTEPS, rounds and fused levels (from the run's results JSON).
set -u
export HF_BENCH=${HF_BENCH:-1} # hetfarm refuses a GPU named twice ([devices] cuda = 0,0)
cd "$(dirname "$0")/../.." || exit 1
. bench/common.sh
BENCH_KNOBS="OUT RESULT CACHE BUILD TRIALS GRAPHS MODES DEVICES" bench_record bench/graph/fused_levels.sh "$@"
OUT=${OUT:-/tmp/fused-levels}
RESULT=${RESULT:-$(bench_out graph_fused_levels)}
CACHE=${CACHE:-/tmp/hfg-cache}
BUILD=${BUILD:-build}
TRIALS=${TRIALS:-3}
GRAPHS=${GRAPHS:-road kron22}
MODES=${MODES:-off small search}
DEVICES=${DEVICES:-cpu = 0
cuda = 0}
mkdir -p "$OUT/full" "$CACHE"
graph_keys() {
    case $1 in
        road) printf 'generate = grid\nrows = 4900\ncols = 4900\n' ;;
        roadsmall) printf 'generate = grid\nrows = 1000\ncols = 1000\n' ;;
        kron22) printf 'generate = kron\nscale = 22\nedge_factor = 16\n' ;;
        kron16) printf 'generate = kron\nscale = 16\nedge_factor = 16\n' ;;
        kron24) printf 'generate = kron\nscale = 24\nedge_factor = 16\n' ;;
    esac
}
status=0
for t in $(seq 1 "$TRIALS"); do
    for g in $GRAPHS; do
        for f in $MODES; do
            case $f in
                off) fuse='fuse_edges = 0' ;;
                small) fuse='fuse = small' ;;
                search) fuse='fuse = search' ;;
                *) echo "unknown mode $f (off, small, search)"; exit 2 ;;
            esac
            name=bfs-$g-$f-t$t
            { printf '[run]\napp = bfs\nrounds = 100000\ngrain = 16384\nprogress = no\nscheduler = hass\n'
              printf '[load]\n'; graph_keys "$g"
              printf 'seed = 1\ncache_dir = %s\nsource = maxdegree\n%s\n' "$CACHE" "$fuse"
              printf '[devices]\n%s\n' "$DEVICES"; } >"$OUT/full/$name.ini"
            timeout 300 "$BUILD/hetfarm" run "$OUT/full/$name.ini" -o "$OUT/full/$name.json" \
                >"$OUT/full/$name.log" 2>&1 || { echo "$name failed:"; tail -5 "$OUT/full/$name.log"; status=1; }
        done
    done
done
python3 - "$OUT" "$RESULT" <<'PY'
import glob, json, os, re, sys
sys.path.insert(0, "bench")
import machine
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "full", "bfs-*.json"))):
    m = re.match(r"bfs-(\w+)-(off|small|search)-t(\d+)\.json", os.path.basename(f))
    r = json.load(open(f))
    run = r["runs"][0]
    fig = {k: v["value"] for k, v in run.get("app_figures", {}).items()}
    rnd = run["rounds"]
    rows.append({"graph": m[1], "mode": m[2], "trial": int(m[3]),
                 "seconds": sum(x["makespan_s"] for x in rnd),
                 "merge_s": sum(x.get("host", {}).get("merge_s", 0) for x in rnd),
                 # makespans plus the host's work between rounds (verify excluded)
                 "with_host_s": sum(x["makespan_s"] + sum(v for k, v in x.get("host", {}).items()
                                                          if k not in ("merge_s", "verify_s", "cpu_s"))
                                    for x in rnd),
                 "rounds": len(run["rounds"]), "gteps": fig.get("gteps"),
                 "levels": fig.get("levels"), "fused_levels": fig.get("fused_levels"),
                 "wall_s": run.get("wall_s")})
machine.write_json_atomic(sys.argv[2], {"bench": "fused_levels", "machine": r["machine"],
                                        "rows": rows})
for g in sorted({x["graph"] for x in rows}):
    for fz in sorted({x["mode"] for x in rows}):
        s = sorted(x["seconds"] for x in rows if x["graph"] == g and x["mode"] == fz)
        ex = next(x for x in rows if x["graph"] == g and x["mode"] == fz)
        print(f"{g:8s} {fz:6s} median {s[len(s)//2]*1e3:9.2f} ms  trials "
              + " ".join(f"{v*1e3:.2f}" for v in s)
              + f"  rounds {ex['rounds']} levels {ex['levels']} fused {ex['fused_levels']} gteps {ex['gteps']}"
              + f"  merge {ex['merge_s']*1e3:.2f} ms  with host {ex['with_host_s']*1e3:.2f} ms")
PY
exit $status
