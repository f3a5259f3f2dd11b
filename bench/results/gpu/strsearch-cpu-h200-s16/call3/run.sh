#!/bin/bash
# session 16, call 3: where do the H200 host's slow CPU strsearch bundles come from (session 15: one in
# five to ten at 0.4-2 GB/s against 7-11)? 512 MiB of generated text, 4 MiB chunks, 12 rounds each:
# A CPU alone (greedy), B CPU + H200 (HASS), C as A with one thread per chunk (cpu_split = 4MiB),
# D as A without pinning the text (pin = no), E as A with OMP_WAIT_POLICY=active. Per CPU bundle:
# GB/s from its events (a diagnostic build of 2a7899b whose record_event does not merge a CPU's contiguous bundles into one event), the share under 3 GB/s, and where in the round the slow ones fall.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm-diag build/hetfarm
nproc; R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
base() { sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini; }
base | sed -e 's|^cuda = all|cuda = none|; s|^scheduler = hass|scheduler = greedy|' > $R/A.ini
base > $R/B.ini
sed -e 's|^cpu_split = 256KiB|cpu_split = 4MiB|' $R/A.ini > $R/C.ini
sed -e 's|^pin = yes|pin = no|' $R/A.ini > $R/D.ini
cp $R/A.ini $R/E.ini
for v in A B C D E; do
  env=""; [ $v = E ] && env="OMP_WAIT_POLICY=active"
  s=$(date +%s); env $env timeout 120 build/hetfarm run $R/$v.ini --profiles $R/prof -o $R/$v.json > $R/$v.log 2>&1
  echo "$v rc=$? $(( $(date +%s) - s ))s"
done
python3 - $R <<'P'
import json,sys,statistics as st
for v in 'ABCDE':
    try: d=json.load(open('%s/%s.json'%(sys.argv[1],v)))
    except Exception as e: print(v,'no json',e); continue
    r=d['runs'][0]
    cpu=[i for i,x in enumerate(r['devices']) if x['kind']=='cpu'][0]
    ev=[e for e in r['events'] if e['device']==cpu and e['round']>=1]
    gbs=[]; slow=[]
    for e in ev:
        t=e['end_s']-e['start_s']; b=e['count']*4*2**20
        g=b/t/1e9; gbs.append(g)
        if g<3: slow.append((e['round'],e['first'],e['count'],round(t*1e3,2)))
    rs=[x for x in r['rounds'] if x['round']>=1]
    gbs.sort()
    q=lambda p: gbs[int(p*(len(gbs)-1))]
    print('%s: %d CPU bundles from round 1; GB/s p10 %.2f p50 %.2f p90 %.2f; under 3 GB/s: %d (%.0f%%); makespan ms %s' % (v,len(gbs),q(.1),q(.5),q(.9),len(slow),100*len(slow)/max(1,len(gbs)),' '.join('%.1f'%(1e3*x['makespan_s']) for x in rs)))
    print('   slow (round, first chunk, chunks, ms):', slow[:12])
P
rm -f $R/*.trace.json
tar -cJf $OUT/call3.tar.xz -C $R --exclude=prof .
