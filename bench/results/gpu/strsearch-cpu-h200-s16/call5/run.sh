#!/bin/bash
# session 16, call 5: is the CPU scan slowed by the GPU's copies from host memory (call 3: slow CPU
# bundles come in runs during the GPU's copy-in from the pinned text)? 12 passes each, the diagnostic
# build of call 3 (per-bundle CPU events): B1 CPU + H200 (HASS) with the text pinned (the GPU's DMA reads
# the mapping), B2 the same with pin = no (the GPU host thread copies into a staging buffer), A2 the CPU
# alone while 1 core (the one kept for a GPU) copies memory in a loop, A3 the same with 4 copying
# processes on the team's cores. Host facts first: NUMA, THP, NUMA balancing.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm-diag build/hetfarm
nproc; lscpu | grep -iE 'numa|model name|socket'; cat /sys/kernel/mm/transparent_hugepage/enabled; cat /proc/sys/kernel/numa_balancing 2>/dev/null
R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
base() { sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini; }
base > $R/B1.ini
base | sed -e 's|^pin = yes|pin = no|' > $R/B2.ini
base | sed -e 's|^cuda = all|cuda = none|; s|^scheduler = hass|scheduler = greedy|' > $R/A2.ini
cp $R/A2.ini $R/A3.ini
hog() { python3 -c "
b=bytearray(256<<20)
import time
t=time.time()
while time.time()-t<30: c=bytes(b)
" & }
for v in B1 B2 A2 A3; do
  pids=""
  if [ $v = A2 ]; then taskset -c 15 bash -c "$(declare -f hog); hog; wait" & pids=$!; fi
  if [ $v = A3 ]; then for c in 3 7 11 14; do taskset -c $c bash -c "$(declare -f hog); hog; wait" & pids="$pids $!"; done; fi
  sleep 0.5
  s=$(date +%s.%N); timeout 120 build/hetfarm run $R/$v.ini --profiles $R/prof -o $R/$v.json > $R/$v.log 2>&1
  echo "$v rc=$? $(python3 -c "print(round($(date +%s.%N)-$s,1))")s"
  for p in $pids; do pkill -P $p 2>/dev/null; kill $p 2>/dev/null; done; wait 2>/dev/null
done
python3 - $R <<'P'
import json,sys
for v in ['B1','B2','A2','A3']:
    try: d=json.load(open('%s/%s.json'%(sys.argv[1],v)))
    except Exception as e: print(v,'no json',e); continue
    r=d['runs'][0]
    cpu=[i for i,x in enumerate(r['devices']) if x['kind']=='cpu'][0]
    ev=[e for e in r['events'] if e['device']==cpu and e['round']>=1]
    g=sorted(e['count']*4*2**20/(e['end_s']-e['start_s'])/1e9 for e in ev)
    q=lambda p: g[int(p*(len(g)-1))] if g else 0
    gp=[e for e in r['events'] if e['device']!=cpu and e['round']>=1]
    ci=sorted(e['copy_in_s']*1e3/max(1,e['count']) for e in gp)
    print('%s: CPU bundles %d, GB/s p10 %.2f p50 %.2f p90 %.2f, under 3 GB/s %d (%.0f%%); makespan ms %s%s' % (v, len(g), q(.1), q(.5), q(.9), sum(1 for x in g if x<3), 100*sum(1 for x in g if x<3)/max(1,len(g)), ' '.join('%.1f'%(1e3*x['makespan_s']) for x in r['rounds'][1:]), ('; GPU copy-in ms per chunk p50 %.3f max %.3f' % (ci[len(ci)//2], ci[-1])) if ci else ''))
P
tar -cJf $OUT/call5.tar.xz -C $R --exclude=prof .
