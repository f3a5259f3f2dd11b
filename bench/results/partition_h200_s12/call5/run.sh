#!/bin/bash
# session 12, call 5: the session's final code (7156fb4 + this call's script): every GPU test and the kernel check, issue 12's real runs (make run's config two passes, matmul 16384) and issue 18's irregular noop on CPU + 1 H200, and the partitioner on rgg 2^20, road 2048^2, road 4900^2 and Kronecker 20 against gpmetis
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests
G=/tmp/g; mkdir -p $G /tmp/cache
(build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null; build/graph_export $G/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null; build/graph_export $G/road24.graph generate=grid rows=4900 cols=4900 seed=1 > /dev/null; build/graph_export $G/kron.graph generate=kron scale=20 edge_factor=16 seed=1 > /dev/null) &
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda test_engine_starpu_cuda; do
  s=$(date +%s); timeout 240 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(( $(date +%s) - s ))s $(tail -1 $R/tests/partition_cuda_check.log)"
s=$(date +%s); GPUS=1 PASSES=2 OUT=$R/hass-real timeout 300 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -17 $R/hass-real/hass-real.log
s=$(date +%s); GPUS=1 OUT=$R/irregular timeout 150 bench/gpu/irregular.sh > $R/irregular.out 2>&1; echo "irregular rc=$? $(( $(date +%s) - s ))s"
python3 - $R/irregular <<'P'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/noop-*.json')):
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        print(f.split('/')[-1], r['scheduler'], 'mean makespan from round 2 %.2f ms eff %.3f' % (1e3*sum(x['makespan_s'] for x in rs)/len(rs), sum(x['efficiency'] for x in rs)/len(rs)))
P
wait
run1() { # graph devset i
  local dk="cpu = all\ncuda = none"; [ $2 = cpu+gpus ] && dk="cpu = all\ncuda = all"
  local ini=$R/$1-$2-$3.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = %s\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" "$3" > $ini
  build/hetfarm run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']
print('$1 $2 $3 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d imb %.4f' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value'], a['max_imbalance']['value']))"
}
for g in rgg road road24 kron; do gpmetis $G/$g.graph 64 -ufactor=30 > $R/$g.metis.log 2>&1; echo "$g gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/$g.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"; done
for i in 1 2 3; do run1 rgg cpu+gpus $i; done; run1 rgg cpu 1
run1 road cpu+gpus 1; run1 road24 cpu+gpus 1; run1 kron cpu+gpus 1
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis2.log 2>&1; echo "rgg gpmetis again $(grep -h 'Partitioning:' $R/rgg.metis2.log | tr -s ' \t' ' ')"
rm -f $R/*/*.trace.json
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json')+glob.glob(sys.argv[1]+'/*/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
