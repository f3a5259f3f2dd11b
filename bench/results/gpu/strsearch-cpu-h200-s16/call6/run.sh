#!/bin/bash
# session 16, call 6: call 5 found the CPU team collapses (0.52 GB/s a bundle, 24x) when any other
# runnable thread shares one of its cores: each 4 MiB bundle is one parallel region of about one
# 256 KiB sub-range per thread, so a thread that loses its core for a scheduler time slice holds the
# bundle. With a GPU, hf_topo_confine_threads moves every other thread - CUDA's callback thread too -
# onto the team's cores. Variants, CPU + H200 (HASS), 12 passes, each twice: B cpu = all (the team
# takes 15 cores), B14 cpu = 14 (one core left idle for the other threads), BP cpu = all with
# OMP_WAIT_POLICY=passive. Diagnostic build of call 3 (per-bundle CPU events).
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm-diag build/hetfarm
R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
base() { sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini; }
base > $R/B.ini
base | sed -e 's|^cpu = all|cpu = 14|' > $R/B14.ini
cp $R/B.ini $R/BP.ini
for k in 1 2; do for v in B B14 BP; do
  env=""; [ $v = BP ] && env="OMP_WAIT_POLICY=passive"
  env $env timeout 120 build/hetfarm run $R/$v.ini --profiles $R/prof-$v -o $R/$v-$k.json > $R/$v-$k.log 2>&1
  echo "$v-$k rc=$?"
done; done
python3 - $R <<'P'
import json,sys
for v in ['B','B14','BP']:
  for k in (1,2):
    try: d=json.load(open('%s/%s-%d.json'%(sys.argv[1],v,k)))
    except Exception as e: print(v,k,'no json',e); continue
    r=d['runs'][0]
    ev=[e for e in r['events'] if e['device']==0 and e['round']>=1]
    g=sorted(e['count']*4*2**20/(e['end_s']-e['start_s'])/1e9 for e in ev)
    q=lambda p: g[int(p*(len(g)-1))] if g else 0
    gp=[e for e in r['events'] if e['device']==1 and e['round']>=1]
    co=sorted(e['copy_out_s']*1e3 for e in gp)
    ms=[1e3*x['makespan_s'] for x in r['rounds'] if x['round']>=2]
    print('%-4s %d: mean from r2 %.2f ms (%s); CPU bundles %d p10 %.2f p50 %.2f GB/s, under 3 GB/s %d; CPU share %.3f; GPU copy-out phase p50 %.2f max %.2f ms' % (v, k, sum(ms)/len(ms), ' '.join('%.1f'%x for x in ms), len(g), q(.1), q(.5), sum(1 for x in g if x<3), r['rounds'][-1]['devices'][0]['share'], co[len(co)//2], co[-1]))
P
tar -cJf $OUT/call6.tar.xz -C $R --exclude='prof*' .
