#!/usr/bin/env bash
# bench/whatif/scaleout.sh - issue 6 as a WHAT-IF: HASS and the baselines on
# modelled nodes of 16 CPU cores + 1, 2, 4 and 8 H200s, with the device rates
# MEASURED on the 2x H200 node (bench/results/h200x2/gpu_matmul.json, strsearch_gpu.json).
# The sim engine models each device's rate and per-bundle latency, not shared
# resources (host memory bandwidth, PCIe switches, host threads), so these are
# what the schedulers would do if those did not saturate - not measurements.
#
#   bench/whatif/scaleout.sh   -> bench/results/<machine>/whatif_scaleout.json
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
BENCH_KNOBS="BIN OUT" bench_record bench/whatif/scaleout.sh "$@"
BIN=${BIN:-build/hetfarm}
OUT=${OUT:-$(bench_out whatif_scaleout)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$BIN" ] || make >/dev/null

# Measured (2x H200 node, 32-core Xeon, OpenBLAS Cooperlake):
#   CPU team SGEMM on 64-row chunks 3.1e11 flop/s; one H200 through hetfarm
#   5.2e13 flop/s at n = 32768 (transfers overlapped, ~3 ms pipeline fill);
#   strsearch: CPU 14.5 GB/s, one H200 end to end 53.7 GB/s.
write() { # file app load-lines ngpu cpu-rate gpu-rate gpu-latency-us
    local sims="host" i
    for i in $(seq "$4"); do sims="$sims, gpu"; done
    cat > "$1" <<INI
[run]
app = $2
rounds = 10
engine = sim
seed = 1
[load]
$3
[devices]
sim = $sims
[sim.host]
kind = cpu
rate = $5
latency_us = 5
jitter = 0.01
[sim.gpu]
kind = gpu
rate = $6
latency_us = $7
jitter = 0.003
[compare]
schedulers = hass, greedy, minmin, qilin, static
[static]
ratios = $(printf '0.03'; for i in $(seq "$4"); do printf ', 1'; done)
[qilin]
train_fraction = 0.1
cpu_cores = $((16 + $4))
INI
}

for g in 1 2 4 8; do
    for n in 32768 65536; do
        write "$WORK/matmul-n$n-g$g.ini" matmul "n = $n
dtype = float32" "$g" 3.1e11 5.2e13 3000
        "$BIN" compare "$WORK/matmul-n$n-g$g.ini" -o "$WORK/matmul-n$n-g$g.json" >/dev/null
    done
    # 64 GiB of text in 4 MiB chunks (work = bytes), streamed from host memory.
    write "$WORK/search-g$g.ini" noop "chunks = 16384
work_per_chunk = 4194304
bytes_per_chunk = 0" "$g" 1.45e10 5.37e10 200
    "$BIN" compare "$WORK/search-g$g.ini" -o "$WORK/search-g$g.json" >/dev/null
done

python3 - "$WORK" "$OUT" <<'PY'
import glob, json, os, sys
work, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, "bench")
import machine
res = {"bench": "whatif_scaleout", "simulated": True, "machine": machine.describe(),
       "note": "SIMULATED what-if on modelled nodes with rates measured on 2x H200 "
               "(bench/results/h200x2/gpu_matmul.json, strsearch_gpu.json); shared host memory "
               "bandwidth, PCIe switches and host threads are not modelled",
       "loads": {}}
for path in sorted(glob.glob(os.path.join(work, "*.json"))):
    name = os.path.basename(path)[:-5]
    load, g = name.rsplit("-g", 1)
    runs = json.load(open(path))["runs"]
    entry = res["loads"].setdefault(load, {})
    entry[f"{g} GPUs"] = {
        r["scheduler"]: {
            "final_makespan_s": r["rounds"][-1]["makespan_s"],
            "ideal_s": r["rounds"][-1]["ideal_s"],
            "efficiency_per_round": [round(x["efficiency"], 4) for x in r["rounds"]],
            "min_efficiency_from_round_2": round(min(x["efficiency"] for x in r["rounds"][2:]), 4),
            "shares_per_round": [[round(d["share"], 4) for d in x["devices"]] for x in r["rounds"]],
        } for r in runs}
for load, e in res["loads"].items():
    h = {int(k.split()[0]): v["hass"]["final_makespan_s"] for k, v in e.items()}
    if 1 in h and 8 in h:
        e["hass_scaling_1_to_8_gpus"] = round(h[1] / h[8], 3)
    e["hass_min_efficiency_from_round_2"] = min(v["hass"]["min_efficiency_from_round_2"]
                                                for k, v in e.items() if k.endswith("GPUs"))
machine.write_json_atomic(out, res)
for load, e in res["loads"].items():
    print(load, "scaling 1->8:", e.get("hass_scaling_1_to_8_gpus"),
          "HASS min eff from round 2:", e["hass_min_efficiency_from_round_2"])
    for k, v in e.items():
        if k.endswith("GPUs"):
            print("  ", k, {s: (round(x["final_makespan_s"], 4), x["min_efficiency_from_round_2"])
                            for s, x in v.items()})
PY
