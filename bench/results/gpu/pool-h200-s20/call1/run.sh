#!/bin/bash
# session 20, call 1: f7db7c7 (HASS: a profile slope checked against the standalone pass, no CPU
# chunk from a GPU tail it would outlast, alike GPUs pooled, one latency for bundle-adding
# decisions): every GPU test carried, then make run's config with [compare] passes = 4 and matmul
# 16384 on CPU + 1 H200 (bench/gpu/hass_real.sh, fresh profiles).
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_strsearch_cuda; do  # (mst, partition: graph code unchanged; the tree must stay under 64 MiB)
  s=$(date +%s); timeout 150 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); GPUS=1 PASSES=4 OUT=$R/hass-real timeout 380 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
grep -A12 "over the passes" $R/hass-real/hass-real.log
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/hass-real/*.json')):
    if f.endswith('trace.json'): continue
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        print('%-22s %-7s p%s makespan %.3f ms eff %.3f r0 %.1f ms r1 %.3f ms' % (os.path.basename(f), r['scheduler'], r.get('pass','-'), sum(1e3*x['makespan_s'] for x in rs)/len(rs), sum(x['efficiency'] for x in rs)/len(rs), 1e3*r['rounds'][0]['makespan_s'], 1e3*r['rounds'][1]['makespan_s']))
P
rm -f $R/*/*.trace.json
tar -cJf $OUT/call1.tar.xz -C $R .
