#!/bin/bash
# session 10, call 6: app = partition at fe6e205 (phases end before verify) against gpmetis's own Partitioning time: rgg 2^20, road 2048^2, kron 20; CPU and CPU + GPU, three runs each (kron one), verify on as by default
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
G=/tmp/g; mkdir -p $G /tmp/cache
build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null
build/graph_export $G/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null
build/graph_export $G/kron.graph generate=kron scale=20 edge_factor=16 seed=1 > /dev/null
for g in rgg road kron; do gpmetis $G/$g.graph 64 -ufactor=30 > $R/$g.metis.log 2>&1; echo "$g gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/$g.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"; done
run1() { # graph devset i
  local dk="cpu = all\ncuda = none"; [ $2 = cpu+gpus ] && dk="cpu = all\ncuda = all"
  local ini=$R/$1-$2-$3.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" > $ini
  build/hetfarm run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']; v=sum(x['host']['verify_s'] for x in r['rounds'])
print('$1 $2 $3 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f verify %.4f cut %d imb %.4f' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], v, a['edge_cut']['value'], a['max_imbalance']['value']))"
}
for g in rgg road; do for i in 1 2 3; do for ds in cpu+gpus cpu; do run1 $g $ds $i; done; done; done
for ds in cpu+gpus cpu; do run1 kron $ds 1; done
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
