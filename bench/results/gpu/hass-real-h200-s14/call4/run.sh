#!/bin/bash
# session 14, call 4: 7b6ad22 (hf_load.work_exact: matmul's chunk costs never learned): every GPU test, then make run's config with [compare] passes = 10 (a whole Williams design for 5 schedulers; fresh profiles) and matmul 16384 on CPU + 1 H200; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); GPUS=1 PASSES=10 OUT=$R/hass-real timeout 420 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
grep -A12 "over the passes" $R/hass-real/hass-real.log
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/hass-real/*.json')):
    if f.endswith('trace.json'): continue
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        print('%-22s %-7s p%s makespan %.3f ms eff %.3f r0 %.1f ms r1 %.3f ms' % (os.path.basename(f), r['scheduler'], r.get('pass','-'), sum(1e3*x['makespan_s'] for x in rs)/len(rs), sum(x['efficiency'] for x in rs)/len(rs), 1e3*r['rounds'][0]['makespan_s'], 1e3*r['rounds'][1]['makespan_s']))
P
find $R/hass-real/profiles -type f | sed "s/^/profile: /"
rm -f $R/*/*.trace.json
tar -cJf $OUT/call4.tar.xz -C $R .
