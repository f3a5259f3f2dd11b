#!/bin/bash
# session 10, call 5: every GPU test at 22ab872 (rgg2 merged), then app = partition A/B: the binary before the merge (8f87743, "old") against 22ab872 ("new"), alternating, on rgg 2^20 and road 2048^2, CPU and CPU + GPU; gpmetis once per graph, kron 20 new only
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests $R/ab
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda test_engine_starpu_cuda; do
  s=$(date +%s); timeout 240 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(tail -1 $R/tests/partition_cuda_check.log)"
G=/tmp/g; mkdir -p $G
build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null
build/graph_export $G/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null
build/graph_export $G/kron.graph generate=kron scale=20 edge_factor=16 seed=1 > /dev/null
for g in rgg road kron; do gpmetis $G/$g.graph 64 -ufactor=30 > $R/ab/$g.metis.log 2>&1; echo "$g gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/ab/$g.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"; done
run1() { # graph devset version i
  local dk="cpu = all\ncuda = none"; [ $2 = cpu+gpus ] && dk="cpu = all\ncuda = all"
  local b=build/hetfarm; [ $3 = old ] && b=.gpubin/old/hetfarm
  local ini=$R/ab/$1-$2-$3-$4.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" > $ini
  $b run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json,sys; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']
print('$1 $2 $3 $4 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d imb %.4f' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value'], a['max_imbalance']['value']))"
}
mkdir -p /tmp/cache
for g in rgg road; do for i in 1 2 3; do for ds in cpu+gpus cpu; do for v in old new; do run1 $g $ds $v $i; done; done; done; done
for ds in cpu+gpus cpu; do run1 kron $ds new 1; done
cd $OUT && tar czf x.tgz r && rm -rf r
