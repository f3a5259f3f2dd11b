#!/bin/bash
# session 9, call 6: A/B of the coarsest-graph cap (A: HF_PART_COARSEST 60, B: none, METIS's target) on rgg 2^20 and road 2048^2
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/graph_export build/
R=$OUT/r; mkdir -p $R /tmp/g
build/graph_export /tmp/g/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null
build/graph_export /tmp/g/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null
for g in rgg road; do for ds in cpu gpu; do
  cuda=none; [ $ds = gpu ] && cuda=all
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\ncpu = all\ncuda = %s\n[load]\ngraph = /tmp/g/%s.graph\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/g\n' $cuda $g > $R/$g-$ds.ini
done; done
for rep in 1 2 3; do for g in rgg road; do for ds in cpu gpu; do for v in A B; do
  b=.gpubin/hetfarm; [ $v = B ] && b=.gpubin/hetfarm_b
  $b run $R/$g-$ds.ini -o $R/$g-$ds-$v-$rep.json > $R/$g-$ds-$v-$rep.log 2>&1 || echo "fail $g $ds $v $rep"
  python3 -c "
import json,sys
d=json.load(open('$R/$g-$ds-$v-$rep.json')); r=d['runs'][0]; a=r['app_figures']
t=a['coarsen_s']['value']+a['initial_s']['value']+a['uncoarsen_s']['value']
print('$g $ds $v $rep total %.3f coarsen %.3f initial %.3f uncoarsen %.3f rounds %d levels %d cut %d' % (t,a['coarsen_s']['value'],a['initial_s']['value'],a['uncoarsen_s']['value'],len(r['rounds']),a['levels']['value'],a['edge_cut']['value']))"
done; done; done; done
cd $OUT && tar czf x.tgz r && rm -rf r
