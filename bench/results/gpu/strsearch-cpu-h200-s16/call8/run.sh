#!/bin/bash
# session 16, call 8: the CUDA driver's own threads (its event handler, its host-callback worker, named
# "cuda...") moved with the GPU host threads, onto the GPUs' cores, instead of onto the CPU team's
# (hf_topo_confine_threads; "fix" build = 2a7899b + that change, "old" = call 3's build, both with
# per-bundle CPU events) against OMP_WAIT_POLICY=passive, call 6's remedy. strsearch, CPU + H200, HASS,
# 12 passes, three times each in turn.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs
R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|' configs/strsearch.ini > $R/ssg.ini
for k in 1 2 3; do
  for v in old fix oldpassive; do
    bin=.gpubin/hetfarm-diag; env="X=1"
    [ $v = fix ] && bin=.gpubin/hetfarm-diag2
    [ $v = oldpassive ] && env="OMP_WAIT_POLICY=passive"
    env $env timeout 120 $bin run $R/ssg.ini --profiles $R/prof-$v -o $R/$v-$k.json > $R/$v-$k.log 2>&1 &
    pid=$!
    sleep 1.5
    for t in /proc/$pid/task/*; do n=$(cat $t/comm 2>/dev/null); case $n in cuda*) echo "$v-$k $n $(awk '/Cpus_allowed_list/ {print $2}' $t/status)";; esac; done
    wait $pid; echo "$v-$k rc=$?"
  done
done
python3 - $R <<'P'
import json,sys
for v in ['old','fix','oldpassive']:
  for k in (1,2,3):
    try: r=json.load(open('%s/%s-%d.json'%(sys.argv[1],v,k)))['runs'][0]
    except Exception as e: print(v,k,'no json',e); continue
    ev=[e for e in r['events'] if e['device']==0 and e['round']>=1]
    g=sorted(e['count']*4*2**20/(e['end_s']-e['start_s'])/1e9 for e in ev)
    gp=[e for e in r['events'] if e['device']==1 and e['round']>=1]
    co=sorted(e['copy_out_s']*1e3 for e in gp)
    ms=[1e3*x['makespan_s'] for x in r['rounds'] if x['round']>=2]
    print('%-10s %d: mean from r2 %.2f ms (%s); CPU share %.3f, bundles %d p50 %.2f GB/s, under 3 GB/s %d; GPU copy-out phase max %.2f ms' % (v, k, sum(ms)/len(ms), ' '.join('%.1f'%x for x in ms), r['rounds'][-1]['devices'][0]['share'], len(g), g[len(g)//2] if g else 0, sum(1 for x in g if x<3), co[-1]))
P
cd $R && python3 -c "
import json,glob
for f in glob.glob('*.json'):
    d=json.load(open(f))
    for r in d['runs']: r.pop('events',None)
    json.dump(d,open(f,'w'))
" && tar -cJf $OUT/call8.tar.xz --exclude='prof*' *.json *.log
