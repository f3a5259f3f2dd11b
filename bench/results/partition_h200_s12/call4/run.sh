#!/bin/bash
# session 12, call 4: the glue branch (host glue on the main thread's team: small-level FM, METIS's bisections as tasks, claims as one range) merged (B, f8d6053) against main before it (A, 2a88b05), alternated on one H200 host: rgg 2^20 and road 2048^2, CPU + GPU and CPU alone, against gpmetis; the partition GPU test and kernel check on B
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/graph_export build/ && cp .gpubin/test_graph_partition_cuda build/tests/ && cp .gpubin/partition_cuda_check build/bench/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests
G=/tmp/g; mkdir -p $G /tmp/cache
(build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null; build/graph_export $G/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null) &
timeout 120 build/tests/test_graph_partition_cuda > $R/tests/test_graph_partition_cuda.log 2>&1; echo "test_graph_partition_cuda rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/test_graph_partition_cuda.log | tr '\n' ' ')"
timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(tail -1 $R/tests/partition_cuda_check.log)"
wait
for g in rgg road; do gpmetis $G/$g.graph 64 -ufactor=30 > $R/$g.metis.log 2>&1; echo "$g gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/$g.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"; done
run1() { # graph devset build i
  local dk="cpu = all\ncuda = none"; [ $2 = gpu ] && dk="cpu = all\ncuda = all"
  local ini=$R/$1-$2-$3-$4.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = %s\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" "$4" > $ini
  .gpubin/hetfarm$5 run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']
print('$1 $2 $3 seed $4 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d imb %.4f' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value'], a['max_imbalance']['value']))"
}
for i in 1 2 3 4; do run1 rgg gpu A $i .A; run1 rgg gpu B $i ""; done
for i in 1 2; do run1 rgg cpu A $i .A; run1 rgg cpu B $i ""; done
for i in 1 2; do run1 road gpu A $i .A; run1 road gpu B $i ""; done
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis2.log 2>&1; echo "rgg gpmetis again $(grep -h 'Partitioning:' $R/rgg.metis2.log | tr -s ' \t' ' ')"
for f in $R/rgg-gpu-A-1 $R/rgg-gpu-B-1; do echo "== $f"; python3 bench/graph/partition_phases.py $f.json | head -10; done
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
