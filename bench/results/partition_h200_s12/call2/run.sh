#!/bin/bash
# session 12, call 2: old (41d9bf2) against new (the session's HASS changes + no reserve for a lone GPU) on one H200 host, alternated: make run's config (all schedulers, real engine) and the partitioner on rgg 2^20 (CPU + GPU) against gpmetis
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/graph_export build/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc; grep -m1 'model name' /proc/cpuinfo
R=$OUT/r; mkdir -p $R
G=/tmp/g; mkdir -p $G /tmp/cache
build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null &
for p in 1 2; do for b in old new; do
  [ $b = old ] && cp .gpubin/hetfarm.old build/hetfarm || cp .gpubin/hetfarm build/hetfarm
  BUILD=build PASSES=1 GPUS=none OUT=$R/mr-$b-$p timeout 100 bench/gpu/hass_real.sh > $R/mr-$b-$p.out 2>&1
  echo "make-run $b pass $p"; grep -A6 "default-ini-pass1" $R/mr-$b-$p/hass-real.log | grep "makespan" | head -5
done; done
wait
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis.log 2>&1; echo "rgg gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/rgg.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"
printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\ncpu = all\ncuda = all\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' $G/rgg.graph > $R/rgg.ini
for i in 1 2 3; do for b in old new; do
  [ $b = old ] && cp .gpubin/hetfarm.old build/hetfarm || cp .gpubin/hetfarm build/hetfarm
  build/hetfarm run $R/rgg.ini -o $R/rgg-$b-$i.json > $R/rgg-$b-$i.log 2>&1 || echo "FAIL $b $i"
  python3 -c "
import json; r=json.load(open('$R/rgg-$b-$i.json'))['runs'][0]; a=r['app_figures']
print('rgg $b $i phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value']))"
done; done
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis2.log 2>&1; echo "rgg gpmetis again $(grep -h 'Partitioning:' $R/rgg.metis2.log | tr -s ' \t' ' ')"
rm -f $R/*/*.trace.json
cd $OUT && tar czf x.tgz r && rm -rf r
