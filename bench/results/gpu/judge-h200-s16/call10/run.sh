#!/bin/bash
# session 16, call 10: the session's final code (090f2d8: the engine's CPU model takes no bundle for a
# warm-up; OpenMP passive by default): every GPU test, then call 2's loads once each under all five
# schedulers (noop's 512 equal chunks in units, noop's hump in units, PageRank kron 21), with the CPU's
# outliers per round (calls 1-2: every CPU bundle of the hump flagged under HASS, greedy and min-min).
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
cp bench/results/gpu/judge-h200-s16/call2/*.ini $R/
for app in noop-uniform noop-hump pagerank; do
  timeout 200 build/hetfarm compare $R/$app.ini --profiles $R/prof-$app -o $R/$app.json > $R/$app.log 2>&1; echo "$app rc=$?"
done
cd $R && python3 - <<'P'
import json
for app in ['noop-uniform','noop-hump','pagerank']:
    d=json.load(open(app+'.json'))
    for r in d['runs']:
        rs=r['rounds']; late=[x for x in rs if x['round']>=2]
        print('%-13s %-6s %-8s mean from r2 %7.3f ms; CPU bundles/outliers by round: %s' % (app, r['scheduler'], r.get('chunk_costs'), sum(1e3*x['makespan_s'] for x in late)/len(late), ' '.join('%d/%d' % (x['devices'][0]['bundles'], x['devices'][0]['outliers']) for x in rs[:10])))
    for x in d['runs']: x.pop('events',None)
    json.dump(d,open(app+'.json','w'))
P
tar -cJf $OUT/call10.tar.xz *.json *.log tests
