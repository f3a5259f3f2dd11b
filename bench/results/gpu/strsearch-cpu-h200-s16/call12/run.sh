#!/bin/bash
# session 16, call 12: call 11 again, on a fresh host, three times each in turn (call 11 ran on call
# 10's warm host and found no order). 090f2d8: passive (the default), GOMP_SPINCOUNT=10000,
# GOMP_SPINCOUNT=300000 (libgomp's own); PageRank kron 21 under HASS, min-min and Qilin, and strsearch
# CPU + H200 under HASS.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
R=/tmp/r; mkdir -p $R
sed -e 's|^schedulers = .*|schedulers = hass, minmin, qilin|' bench/results/gpu/judge-h200-s16/call2/pagerank.ini > $R/pr.ini
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini > $R/ssg.ini
for k in 1 2 3; do
  for v in pas s10k s300k; do
    env=X=1; [ $v = s10k ] && env=GOMP_SPINCOUNT=10000; [ $v = s300k ] && env=GOMP_SPINCOUNT=300000
    env $env timeout 150 build/hetfarm compare $R/pr.ini --profiles $R/prof -o $R/pr-$v-$k.json > $R/pr-$v-$k.log 2>&1; echo "pr-$v-$k rc=$?"
    env $env timeout 150 build/hetfarm run $R/ssg.ini --profiles $R/prof -o $R/ssg-$v-$k.json > $R/ssg-$v-$k.log 2>&1; echo "ssg-$v-$k rc=$?"
  done
done
cd $R && python3 - <<'P'
import json,glob
for f in sorted(glob.glob('*.json')):
    d=json.load(open(f))
    for r in d['runs']:
        late=[x for x in r['rounds'] if x['round']>=2]; n=len(late)
        print('%-14s %-6s mean from r2 %7.3f ms, CPU busy %.3f ms, share %.3f, next_load %.3f ms' % (f[:-5], r['scheduler'], sum(x['makespan_s'] for x in late)/n*1e3, sum(x['devices'][0]['busy_s'] for x in late)/n*1e3, late[-1]['devices'][0]['share'], sum(x['host'].get('next_load_s',0) for x in late)/n*1e3))
        r.pop('events',None)
    json.dump(d,open(f,'w'))
P
tar -cJf $OUT/call12.tar.xz *.json *.log
