#!/bin/bash
# session 18, call 1: the session's final code (chunk costs of GPUs alone net of a new size's
# warm-up; HASS on GPUs alone on inexact work: no model latency, plans by rates changed only beyond
# what plans missed by): every GPU test, then session 16's loads on CPU + 1 H200 under all five
# schedulers (a CPU is there, so none of the new paths runs: they must not change), and the hump on
# the H200 alone (one GPU: chunk costs of GPUs alone need two).
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
R=/tmp/r; mkdir -p $R/tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_cuda test_graph_cuda test_strsearch_cuda; do  # (mst, partition: graph code unchanged; the tree must stay under 64 MiB)
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
cp bench/results/gpu/judge-h200-s16/call2/*.ini $R/
sed -e 's/^sim *=.*//' -e 's/^cpu *=.*/cpu = 0/' $R/noop-hump.ini > $R/noop-hump-gpu.ini
for app in noop-uniform noop-hump pagerank noop-hump-gpu; do
  timeout 200 build/hetfarm compare $R/$app.ini --profiles $R/prof-$app -o $R/$app.json > $R/$app.log 2>&1; echo "$app rc=$?"
done
cd $R && python3 - <<'P'
import json
for app in ['noop-uniform','noop-hump','pagerank','noop-hump-gpu']:
    try: d=json.load(open(app+'.json'))
    except Exception as e: print(app, 'no results:', e); continue
    for r in d['runs']:
        rs=r['rounds']; late=[x for x in rs if x['round']>=2]
        print('%-13s %-6s %-8s devices %d, mean from r2 %7.3f ms' % (app, r['scheduler'], r.get('chunk_costs'), len(rs[0]['devices']), sum(1e3*x['makespan_s'] for x in late)/len(late)))
    for x in d['runs']: x.pop('events',None)
    json.dump(d,open(app+'.json','w'))
P
tar -cJf $OUT/call1.tar.xz *.json *.log *.ini tests
