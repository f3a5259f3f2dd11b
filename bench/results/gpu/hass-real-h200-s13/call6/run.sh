#!/bin/bash
# session 13, call 6: dd1d0e9, the session's final code: every GPU test and the partition kernel check, then issue 12's real runs on CPU + 1 H200 (make run's config, 4 passes alternating the order; matmul 16384); everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 240 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(( $(date +%s) - s ))s $(tail -1 $R/tests/partition_cuda_check.log)"
s=$(date +%s); GPUS=1 PASSES=4 OUT=$R/hass-real timeout 300 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/hass-real/*.json')):
    if f.endswith('trace.json'): continue
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        gaps=[1e3*(x['makespan_s']-max(d['busy_s'] for d in x['devices'])) for x in rs]
        print('%-24s %-7s makespan %.3f ms eff %.3f gap mean %.3f max %.3f' % (os.path.basename(f), r['scheduler'], sum(1e3*x['makespan_s'] for x in rs)/len(rs), sum(x['efficiency'] for x in rs)/len(rs), sum(gaps)/len(gaps), max(gaps)))
P
rm -f $R/*/*.trace.json
tar -cJf $OUT/call6.tar.xz -C $R .
