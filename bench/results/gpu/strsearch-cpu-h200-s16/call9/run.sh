#!/bin/bash
# session 16, call 9: the product build with OpenMP waiting passively by default (runtime_env.c: set
# and re-exec unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT), working tree after 2a7899b.
# Every GPU test; then, in turn, passive (the new default) against GOMP_SPINCOUNT=300000 (libgomp's
# own default spin, i.e. before): strsearch CPU + H200 (HASS, 12 passes) x3, strsearch CPU alone
# (greedy) x3, make run's config (matmul n = 2048, HASS, CPU + H200) x2, noop's 200000 empty chunks
# on the CPU alone x2.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
R=/tmp/r; mkdir -p $R/tests
build/hetfarm devices | tail -2
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
base() { sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini; }
base > $R/ssg.ini
base | sed -e 's|^cuda = all|cuda = none|; s|^scheduler = hass|scheduler = greedy|' > $R/ssc.ini
cp configs/noop.ini $R/noop.ini
sed -e 's|^rounds = 6|rounds = 10|' configs/default.ini > $R/mm.ini
run() { # name ini env
  env $3 timeout 120 build/hetfarm run $R/$2 --profiles $R/prof -o $R/$1.json > $R/$1.log 2>&1
  echo "$1 rc=$?"
}
for k in 1 2 3; do
  run ssg-pas-$k ssg.ini X=1; run ssg-spin-$k ssg.ini GOMP_SPINCOUNT=300000
  run ssc-pas-$k ssc.ini X=1; run ssc-spin-$k ssc.ini GOMP_SPINCOUNT=300000
  if [ $k -le 2 ]; then
    run mm-pas-$k mm.ini X=1; run mm-spin-$k mm.ini GOMP_SPINCOUNT=300000
    run noop-pas-$k noop.ini X=1; run noop-spin-$k noop.ini GOMP_SPINCOUNT=300000
  fi
done
cd $R && python3 - <<'P'
import json,glob
for f in sorted(glob.glob('*.json')):
    d=json.load(open(f)); r=d['runs'][0]
    ms=[1e3*x['makespan_s'] for x in r['rounds'] if x['round']>=2]
    cpu=[i for i,x in enumerate(r['devices']) if x['kind']=='cpu'][0]
    print('%-12s %s: mean from r2 %8.3f ms (min %.3f max %.3f), CPU share %.3f' % (f[:-5], d['machine'].get('openmp','?'), sum(ms)/len(ms), min(ms), max(ms), r['rounds'][-1]['devices'][cpu]['share']))
    for x in d['runs']: x.pop('events',None)
    json.dump(d,open(f,'w'))
P
tar -cJf $OUT/call9.tar.xz --exclude='prof*' *.json *.log *.ini tests
