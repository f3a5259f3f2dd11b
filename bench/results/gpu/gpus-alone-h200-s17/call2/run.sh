#!/bin/bash
# session 17, call 2: the GPU tests again at the session's final code (c8ba924: views of repeated
# sizes from 1/(8 devices), no release of a GPU's share where GPUs run alone on inexact work, the
# size set shared), and the hump on the H200 alone once under all five schedulers.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
cp bench/results/gpu/gpus-alone-h200-s17/call1/noop-hump-gpu.ini $R/
timeout 200 build/hetfarm compare $R/noop-hump-gpu.ini --profiles $R/prof -o $R/noop-hump-gpu.json > $R/noop-hump-gpu.log 2>&1; echo "noop-hump-gpu rc=$?"
cd $R && python3 - <<'P'
import json
d=json.load(open('noop-hump-gpu.json'))
for r in d['runs']:
    late=[x for x in r['rounds'] if x['round']>=2]
    print('%-6s %-8s mean from r2 %7.3f ms' % (r['scheduler'], r.get('chunk_costs'), sum(1e3*x['makespan_s'] for x in late)/len(late)))
    r.pop('events',None)
json.dump(d,open('noop-hump-gpu.json','w'))
P
tar -cJf $OUT/call2.tar.xz *.json *.log tests
