#!/bin/bash
# session 15, call 1: a7f0267: every GPU test, then do apps whose work is not exact (strsearch, pagerank) learn chunk costs from a real host's noise? Each runs twice over one profile directory on CPU + 1 H200 (HASS); a .cost file after a run means its costs were learned; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini > $R/strsearch.ini
sed -e 's|^scale = 16|scale = 21|' configs/graph-pagerank.ini > $R/pagerank.ini
for app in strsearch pagerank; do
  for k in 1 2 3; do
    s=$(date +%s); timeout 150 build/hetfarm run $R/$app.ini --profiles $R/prof-$app -o $R/$app-run$k.json > $R/$app-run$k.log 2>&1
    echo "$app run $k rc=$? $(( $(date +%s) - s ))s; cost files: $(find $R/prof-$app -name '*.cost' | wc -l)"
    find $R/prof-$app -name '*.cost' -exec cp {} $R/$app-after-run$k.cost \;
  done
done
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/*-run*.json')):
    for r in json.load(open(f))['runs']:
        rs=r['rounds']; late=[x for x in rs if x['round']>=2]
        print('%-20s %-6s rounds %d mean from r2 %.3f ms eff %.3f r0 %.1f r1 %.2f ms; shares r2.. %s' % (os.path.basename(f), r['scheduler'], len(rs), sum(1e3*x['makespan_s'] for x in late)/max(1,len(late)), sum(x['efficiency'] for x in late)/max(1,len(late)), 1e3*rs[0]['makespan_s'], 1e3*rs[1]['makespan_s'], ' '.join('%.3f' % d.get('share',0) for d in late[-1].get('devices',[])) if late else '-'))
        print('   per round ms:', ' '.join('%.2f' % (1e3*x['makespan_s']) for x in rs[:40]))
P
for f in $R/*.cost; do [ -f "$f" ] && python3 - "$f" <<'P'
import sys
l=open(sys.argv[1]).read().split('\n')[2:]
v=[tuple(map(float,x.split())) for x in l if x.strip()]
q=[e/d for d,e,w in v if d>0]
import statistics as s
print(sys.argv[1].split('/')[-1], 'chunks', len(q), 'learned/declared min %.2f median %.2f max %.2f' % (min(q), s.median(q), max(q)))
P
done
rm -f $R/*.trace.json
tar -cJf $OUT/call1.tar.xz -C $R .
