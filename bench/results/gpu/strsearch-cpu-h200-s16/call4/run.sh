#!/bin/bash
# session 16, call 4: which threads share the CPU team's cores while CPU + H200 run strsearch (call 3: the
# CPU's slow bundles come in runs, while the GPU's piece shows a 4-5.5 ms "copy-out" phase for 800 bytes,
# i.e. its host callback waited)? Run call 3's B config (HASS, CPU + H200) for 40 passes in the background
# and sample every thread of the process every 20 ms: name, allowed CPUs, the CPU it last ran on, CPU time.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm-diag build/hetfarm
nproc; R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
sed -e 's|^out = .*||; s|^rounds = 5|rounds = 40|; s|^passes = 5|passes = 40|' configs/strsearch.ini > $R/B.ini
build/hetfarm run $R/B.ini --profiles $R/prof -o $R/B.json > $R/B.log 2>&1 &
pid=$!
for i in $(seq 1 150); do
  [ -d /proc/$pid ] || break
  for t in /proc/$pid/task/*; do
    tid=${t##*/}
    name=$(cat $t/comm 2>/dev/null) || continue
    allowed=$(awk '/Cpus_allowed_list/ {print $2}' $t/status 2>/dev/null)
    stat=$(cat $t/stat 2>/dev/null) || continue
    rest=${stat##*) }
    set -- $rest
    echo "$i $tid $name $allowed cpu=${37} utime=${12} stime=${13}"
  done
  sleep 0.02
done > $R/threads.txt
wait $pid; echo "run rc=$?"
python3 - $R <<'P'
import sys, collections
R=sys.argv[1]
first={}; last={}; info={}
cpus=collections.defaultdict(set)
for l in open(R+'/threads.txt'):
    f=l.split()
    i,tid,name,allowed=f[0],f[1],f[2],f[3]
    cpu=int(f[4].split('=')[1]); ut=int(f[5].split('=')[1]); st=int(f[6].split('=')[1])
    info[tid]=(name,allowed)
    first.setdefault(tid,ut+st); last[tid]=ut+st
    cpus[tid].add(cpu)
print('threads sampled:', len(info))
for tid,(name,allowed) in sorted(info.items(), key=lambda x:int(x[0])):
    print('%7s %-18s allowed %-10s ran on %-30s cpu ticks %d' % (tid, name, allowed, ','.join(map(str,sorted(cpus[tid])))[:30], last[tid]-first[tid]))
P
python3 - $R <<'P'
import json,sys
d=json.load(open(sys.argv[1]+'/B.json')); r=d['runs'][0]
ev=[e for e in r['events'] if e['device']==0 and e['round']>=1]
g=sorted(e['count']*4*2**20/(e['end_s']-e['start_s'])/1e9 for e in ev)
print('CPU bundles %d, p50 %.2f GB/s, under 3 GB/s %d' % (len(g), g[len(g)//2], sum(1 for x in g if x<3)))
gp=[e for e in r['events'] if e['device']==1 and e['round']>=1]
co=sorted(e['copy_out_s']*1e3 for e in gp)
print('GPU pieces %d, copy-out phase ms p50 %.2f p90 %.2f max %.2f' % (len(co), co[len(co)//2], co[int(.9*(len(co)-1))], co[-1]))
P
tar -cJf $OUT/call4.tar.xz -C $R --exclude=prof .
