#!/bin/bash
# session 9, call 7: coarse levels packed into pinned memory (C) against pageable (A), CPU + GPU, rgg 2^20, road 2048^2, kron 20
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/graph_export build/
R=$OUT/r; mkdir -p $R /tmp/g
build/graph_export /tmp/g/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null
build/graph_export /tmp/g/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null
build/graph_export /tmp/g/kron.graph generate=kron scale=20 edge_factor=16 seed=1 > /dev/null
for g in rgg road kron; do
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\ncpu = all\ncuda = all\n[load]\ngraph = /tmp/g/%s.graph\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/g\n' $g > $R/$g.ini
done
for rep in 1 2 3; do for g in rgg road kron; do for v in A C; do
  [ $g = kron ] && [ $rep = 3 ] && continue
  b=.gpubin/hetfarm; [ $v = C ] && b=.gpubin/hetfarm_c
  $b run $R/$g.ini -o $R/$g-$v-$rep.json > $R/$g-$v-$rep.log 2>&1 || { echo "fail $g $v $rep"; tail -3 $R/$g-$v-$rep.log; }
  python3 -c "
import json
d=json.load(open('$R/$g-$v-$rep.json')); r=d['runs'][0]; a=r['app_figures']
t=a['coarsen_s']['value']+a['initial_s']['value']+a['uncoarsen_s']['value']
m=sum(x['makespan_s'] for x in r['rounds'] if (x.get('app_figures',{}).get('phase',{}) or {}).get('value', x.get('app_figures',{}).get('phase'))==0)
print('$g $v $rep total %.3f coarsen %.3f initial %.3f uncoarsen %.3f rounds %d cut %d' % (t,a['coarsen_s']['value'],a['initial_s']['value'],a['uncoarsen_s']['value'],len(r['rounds']),a['edge_cut']['value']))"
done; done; done
cd $OUT && tar czf x.tgz r && rm -rf r
