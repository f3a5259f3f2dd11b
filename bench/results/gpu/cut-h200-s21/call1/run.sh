#!/bin/bash
# session 21, call 1: 85bed3a (HASS: a GPU keeps a bundle count it has run under a plan by
# rates, a GPU is pooled with peers whose median line fits its repeats, the reserve priced at the
# split's latency): every GPU test carried, make run's config with [compare] passes = 4 and
# matmul 16384 on CPU + 1 H200 (bench/gpu/hass_real.sh, fresh profiles), and the irregular noop
# loads (hump, tail; costs learned) on CPU + 1 H200, every scheduler (bench/gpu/irregular.sh).
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 150 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); GPUS=1 PASSES=4 OUT=$R/hass-real timeout 240 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
grep -A12 "over the passes" $R/hass-real/hass-real.log
s=$(date +%s); GPUS=1 OUT=$R/irregular timeout 150 bench/gpu/irregular.sh > $R/irregular.out 2>&1; echo "irregular rc=$? $(( $(date +%s) - s ))s"
cat $R/irregular/irregular.log | tail -30
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/hass-real/*.json'))+sorted(glob.glob(sys.argv[1]+'/irregular/*.json')):
    if f.endswith('trace.json'): continue
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        if not rs: continue
        print('%-22s %-7s p%s makespan %.3f ms eff %.3f r0 %.1f ms r1 %.3f ms' % (os.path.basename(f), r['scheduler'], r.get('pass','-'), sum(1e3*x['makespan_s'] for x in rs)/len(rs), sum(x['efficiency'] for x in rs)/len(rs), 1e3*r['rounds'][0]['makespan_s'], 1e3*r['rounds'][1]['makespan_s']))
P
rm -f $R/*/*.trace.json
tar -cJf $OUT/call1.tar.xz -C $R .
