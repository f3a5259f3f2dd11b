#!/usr/bin/env bash
# bench/whatif/nodes.sh - issue 16 (Simulation) as a WHAT-IF: 1..64 modelled
# nodes of 16 CPU cores + 8 H200s ([devices] nodes = N, core/sim_node.c),
# every scheduler, strong and weak scaling of matmul (n = 65536) and a 1 TiB
# search, over two networks, with the device rates MEASURED on the 2x H200
# node (bench/whatif/scaleout.sh, bench/results/h200x2/gpu_matmul.json,
# strsearch_gpu.json). Where a node's data lives is a choice of the app, so
# each load runs with the placements that matter ([sim.net] bytes_share):
#
#   matmul gather   0.5  A generated on every node from the seed, the rows of C
#                        a node computed gathered to rank 0 (the transport's
#                        hf_mpi_gather_ranges); B broadcast once (not modelled)
#   matmul scatter  1    A's rows sent from rank 0 as well
#   matmul resident 0    C stays distributed: only the span messages move
#   matmul gather-own-links  the gather with [sim.net] shared = no: each node's
#                        bytes on a link of its own (a control: what rank 0's
#                        one link costs)
#   search sent     1    the text streamed from rank 0
#   search local    0    each node reads its own part (local disk, parallel FS)
#
# Networks: 200 Gb/s InfiniBand HDR (25 GB/s, 2 us per message) and 100 Gb/s
# Ethernet (12.5 GB/s, 10 us). With [sim.net] shared = yes (the default) every
# node's transfer goes through rank 0's one link.
#
#   bench/whatif/nodes.sh   -> bench/results/<machine>/whatif_nodes.json
#   NETS=ib NODES="1 8 64" OUT=... bench/whatif/nodes.sh   (a subset)
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
BENCH_KNOBS="BIN OUT NODES NETS" bench_record bench/whatif/nodes.sh "$@"
BIN=${BIN:-build/hetfarm}
OUT=${OUT:-$(bench_out whatif_nodes)}
NODES=${NODES:-1 2 4 8 16 32 64}
NETS=${NETS:-ib eth}   # a subset: NETS=ib NODES="1 8 64"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$BIN" ] || make >/dev/null

# Measured (2x H200 node, bench/whatif/scaleout.sh): CPU team SGEMM 3.1e11
# flop/s on 64-row chunks; one H200 through hetfarm 5.2e13 flop/s with its
# transfers overlapped (~3 ms pipeline fill), so the GPU's own PCIe term is in
# its rate (bandwidth_gbs unset) and a bundle's bytes cost only on the
# network; strsearch: CPU 14.5 GB/s, one H200 end to end 53.7 GB/s.
write() { # file app load-lines nodes net-lat-us net-gbs bytes-share cpu-rate gpu-rate gpu-lat-us shared
    local nodes=$4 cpu=$8 gpu=$9
    # static's ratios: the devices' measured rates, a node as 8 GPUs + its
    # CPU. One per device on one INI line (at most 197 characters) holds them
    # for up to 16 nodes, so static runs up to 16 nodes.
    local static=""
    [ "$nodes" -le 16 ] && static="[static]
ratios = $(python3 -c "
c, g, n = $cpu, $gpu, $nodes
node = (c + 8 * g) / g
print(', '.join(['%.4f' % (c / g)] + ['1'] * 8 + ['%.3f' % node] * (n - 1)))")"
    cat > "$1" <<INI
[run]
app = $2
rounds = 10
engine = sim
seed = 1
[load]
$3
[devices]
sim = host, gpu, gpu, gpu, gpu, gpu, gpu, gpu, gpu
nodes = $nodes
[sim.net]
latency_us = $5
bandwidth_gbs = $6
bytes_share = $7
shared = ${11:-yes}
[sim.host]
kind = cpu
rate = $cpu
latency_us = 5
jitter = 0.01
[sim.gpu]
kind = gpu
rate = $gpu
latency_us = ${10}
jitter = 0.003
[compare]
schedulers = hass, greedy, minmin, qilin$([ "$nodes" -le 16 ] && echo ", static")
$static
[qilin]
train_fraction = 0.1
cpu_cores = 24
INI
}

run() { # name app load-lines nodes net share cpu gpu gpu-lat [shared]
    local lat gbs
    case $5 in
    ib) lat=2 gbs=25 ;;
    eth) lat=10 gbs=12.5 ;;
    esac
    write "$WORK/$1.ini" "$2" "$3" "$4" "$lat" "$gbs" "$6" "$7" "$8" "$9" "${10:-yes}"
    "$BIN" compare "$WORK/$1.ini" -o "$WORK/$1.json" >/dev/null
}

for net in $NETS; do
    for n in $NODES; do
        for p in gather:0.5:yes scatter:1:yes resident:0:yes gather-own-links:0.5:no; do
            IFS=: read -r place share shared <<<"$p"
            run "strong~matmul-65536~$place~$net~$n" matmul "n = 65536
dtype = float32" "$n" "$net" "$share" 3.1e11 5.2e13 3000 "$shared"
        done
        # 1 TiB of text in 256 MiB chunks (work = bytes scanned).
        for p in sent:1 local:0; do
            run "strong~search-1TiB~${p%%:*}~$net~$n" noop "chunks = 4096
work_per_chunk = 268435456
bytes_per_chunk = 268435456" "$n" "$net" "${p##*:}" 1.45e10 5.37e10 200
        done
        # Weak: the same work per node. matmul's work grows as n^3, so n grows
        # as the cube root of the nodes (to a multiple of 64 rows); the search
        # scans 1 TiB per node.
        wn=$(python3 -c "print(round(65536 * $n ** (1 / 3) / 64) * 64)")
        run "weak~matmul-65536-per-node~gather~$net~$n" matmul "n = $wn
dtype = float32" "$n" "$net" 0.5 3.1e11 5.2e13 3000
        for p in sent:1 local:0; do
            run "weak~search-1TiB-per-node~${p%%:*}~$net~$n" noop "chunks = $((4096 * n))
work_per_chunk = 268435456
bytes_per_chunk = 268435456" "$n" "$net" "${p##*:}" 1.45e10 5.37e10 200
        done
    done
done

python3 - "$WORK" "$OUT" <<'PY'
import glob, json, os, sys
work, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, "bench")
import machine
nets = {"ib": "200 Gb/s InfiniBand: 25 GB/s, 2 us per message",
        "eth": "100 Gb/s Ethernet: 12.5 GB/s, 10 us per message"}
res = {"bench": "whatif_nodes", "simulated": True, "machine": machine.describe(),
       "note": "SIMULATED what-if (sim engine, virtual seconds, seed 1, 10 rounds): 1-64 nodes "
               "of 16 CPU cores + 8 H200 with rates measured on 2x H200 (CPU SGEMM 3.1e11 flop/s, "
               "H200 5.2e13 flop/s through hetfarm; search CPU 14.5 GB/s, H200 53.7 GB/s end to "
               "end); network per [sim.net], rank 0's one link shared by every node's transfers "
               "(core/sim_node.c says what is and is not modelled)",
       "networks": nets, "cases": {}}
for path in sorted(glob.glob(os.path.join(work, "*.json"))):
    scaling, load, place, net, n = os.path.basename(path)[:-5].split("~")
    key = f"{scaling} {load} {place} {net}"
    case = res["cases"].setdefault(key, {"scaling": scaling, "load": load, "placement": place,
                                         "network": nets[net], "nodes": {}})
    runs = json.load(open(path))["runs"]
    case["nodes"][n] = {
        r["scheduler"]: {
            "final_makespan_s": r["rounds"][-1]["makespan_s"],
            "final_bound_s": r["rounds"][-1]["bound_s"],
            "efficiency_per_round": [round(x["efficiency"], 4) for x in r["rounds"]],
            "mean_efficiency_from_round_2": round(
                sum(x["efficiency"] for x in r["rounds"][2:]) / len(r["rounds"][2:]), 4),
            "min_efficiency_from_round_2": round(min(x["efficiency"] for x in r["rounds"][2:]), 4),
            "mean_makespan_from_round_2_s": sum(x["makespan_s"] for x in r["rounds"][2:])
                                            / len(r["rounds"][2:]),
        } for r in runs}
for key, c in res["cases"].items():
    nodes = sorted(c["nodes"], key=int)
    t = {int(n): c["nodes"][n]["hass"]["mean_makespan_from_round_2_s"] for n in nodes}
    best = {int(n): min(v["mean_makespan_from_round_2_s"] for v in c["nodes"][n].values())
            for n in nodes}
    if 1 in t:
        if c["scaling"] == "strong":
            c["hass_speedup"] = {n: round(t[1] / t[n], 3) for n in t}
            c["hass_parallel_efficiency"] = {n: round(t[1] / t[n] / n, 3) for n in t}
        else:
            c["hass_weak_efficiency"] = {n: round(t[1] / t[n], 3) for n in t}
        # Where scaling stops: strong, the first doubling of the nodes that
        # gains less than 10% (in a subset of NODES, the first step up from
        # the count before it); weak, the first node count whose time per load
        # is more than 1.25x one node's (weak efficiency < 0.8).
        prev = lambda n: max(m for m in t if m < n)
        c["hass_scaling_stops_at"] = next(
            (n for n in sorted(t) if n > 1 and (t[n] > 0.9 * t[prev(n)] if c["scaling"] == "strong"
                                                else t[n] > 1.25 * t[1])), None)
    c["hass_mean_efficiency_from_round_2"] = {
        n: c["nodes"][str(n)]["hass"]["mean_efficiency_from_round_2"] for n in t}
    c["hass_makespan_vs_best_scheduler"] = {n: round(t[n] / best[n], 3) for n in t}
machine.write_json_atomic(out, res)
for key, c in res["cases"].items():
    print(key)
    print("   speedup" if c["scaling"] == "strong" else "   weak eff",
          c.get("hass_speedup", c.get("hass_weak_efficiency")), "stops at",
          c.get("hass_scaling_stops_at"))
    print("   HASS eff (mean r>=2)", c["hass_mean_efficiency_from_round_2"])
    print("   HASS / best makespan", c["hass_makespan_vs_best_scheduler"])
PY
