#!/bin/bash
# session 16, call 7: what OMP_WAIT_POLICY=passive (call 6: the fix with a GPU) costs without one, and
# whether a short spin (GOMP_SPINCOUNT=10000) does as well with it. Each variant twice, alternating:
# strsearch CPU + H200 (HASS, 12 passes): default, passive, spin 10k; strsearch CPU alone (greedy):
# default, passive; noop, 200000 empty chunks on the CPU alone (the framework's own cost per chunk,
# greedy, 5 rounds): default, passive; matmul n = 2048 (default.ini, HASS, CPU + H200): default, passive.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm-diag build/hetfarm
R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
base() { sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini; }
base > $R/ssg.ini
base | sed -e 's|^cuda = all|cuda = none|; s|^scheduler = hass|scheduler = greedy|' > $R/ssc.ini
sed -e 's|^cuda = none|cuda = none|' configs/noop.ini > $R/noop.ini
cp configs/default.ini $R/mm.ini
run() { # name ini env...
  local name=$1 ini=$2; shift 2
  env "$@" timeout 120 build/hetfarm run $R/$ini --profiles $R/prof -o $R/$name.json > $R/$name.log 2>&1
  echo "$name rc=$?"
}
for k in 1 2; do
  run ssg-def-$k ssg.ini X=1; run ssg-pas-$k ssg.ini OMP_WAIT_POLICY=passive; run ssg-s10k-$k ssg.ini GOMP_SPINCOUNT=10000
  run ssc-def-$k ssc.ini X=1; run ssc-pas-$k ssc.ini OMP_WAIT_POLICY=passive
  run noop-def-$k noop.ini X=1; run noop-pas-$k noop.ini OMP_WAIT_POLICY=passive
  run mm-def-$k mm.ini X=1; run mm-pas-$k mm.ini OMP_WAIT_POLICY=passive
done
python3 - $R <<'P'
import json,sys,glob,os
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    name=os.path.basename(f)[:-5]
    r=json.load(open(f))['runs'][0]
    ms=[1e3*x['makespan_s'] for x in r['rounds'] if x['round']>=2]
    cpu=[i for i,x in enumerate(r['devices']) if x['kind']=='cpu'][0]
    share=r['rounds'][-1]['devices'][cpu]['share']
    print('%-12s mean from r2 %8.3f ms  min %8.3f  max %8.3f  CPU share %.3f' % (name, sum(ms)/len(ms), min(ms), max(ms), share))
P
tar -cJf $OUT/call7.tar.xz -C $R --exclude='prof*' --exclude='*.json' .
cd $R && python3 -c "
import json,glob
for f in glob.glob('*.json'):
    d=json.load(open(f))
    for r in d['runs']: r.pop('events',None)
    json.dump(d,open(f,'w'))
" && tar -cJf $OUT/call7-json.tar.xz *.json
