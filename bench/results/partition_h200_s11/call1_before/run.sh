#!/bin/bash
# session 11, call 1: every GPU test at c36f49e; rgg 2^20 partition CPU / CPU + GPU with the GPU pieces' copy-in / kernel times per round (where the GPU's match rounds go)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests
G=/tmp/g; mkdir -p $G /tmp/cache
build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null &
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda test_engine_starpu_cuda; do
  s=$(date +%s); timeout 240 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
s=$(date +%s); timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(( $(date +%s) - s ))s $(tail -1 $R/tests/partition_cuda_check.log)"
wait
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis.log 2>&1; echo "rgg gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/rgg.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"
run1() { # graph devset i
  local dk="cpu = all\ncuda = none"; [ $2 = cpu+gpus ] && dk="cpu = all\ncuda = all"
  local ini=$R/$1-$2-$3.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" > $ini
  build/hetfarm run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']
print('$1 $2 $3 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value']))"
}
for i in 1 2 3; do for ds in cpu+gpus cpu; do run1 rgg $ds $i; done; done
python3 - "$R" <<'P' > $R/gpu_pieces.log 2>&1
# per round of the CPU + GPU runs: phase, level, makespan, the GPU's busy, copy-in, kernel, copy-out (ms)
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/rgg-cpu+gpus-*.json')):
    r=json.load(open(f))['runs'][0]
    print(f)
    ev=r.get('events',[])
    for x in r['rounds'][:40]:
        af=x.get('app_figures',{})
        g=[e for e in ev if e['round']==x['round'] and e.get('copy_in_s') is not None and (e.get('copy_in_s',0)+e.get('kernel_s',0)+e.get('copy_out_s',0))>0]
        ci=sum(e['copy_in_s'] for e in g)*1e3; k=sum(e['kernel_s'] for e in g)*1e3; co=sum(e['copy_out_s'] for e in g)*1e3
        span=sum(e['end_s']-e['start_s'] for e in g)*1e3
        print('r%-3d %-8s L%-2s %7.2f ms  gpu pieces %2d span %6.2f in %6.2f kern %6.2f out %6.2f' % (x['round'], af.get('phase',{}).get('unit'), af.get('level',{}).get('value'), x['makespan_s']*1e3, len(g), span, ci, k, co))
P
head -60 $R/gpu_pieces.log
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
