#!/bin/bash
# session 11, call 2: the slot path + pinned level arrays (c833949, "new") against c36f49e ("old"): partition_cuda_check (+ memcheck), test_graph_partition_cuda, then rgg 2^20 and road 2048^2 A/B with gpmetis side by side
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/hetfarm.old .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests
G=/tmp/g; mkdir -p $G /tmp/cache
(build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null; build/graph_export $G/road.graph generate=grid rows=2048 cols=2048 seed=1 > /dev/null) &
s=$(date +%s); timeout 120 build/bench/partition_cuda_check > $R/tests/partition_cuda_check.log 2>&1; echo "partition_cuda_check rc=$? $(( $(date +%s) - s ))s $(tail -1 $R/tests/partition_cuda_check.log)"; grep -i "slots\|packed" $R/tests/partition_cuda_check.log | head -12
s=$(date +%s); timeout 200 compute-sanitizer --tool memcheck build/bench/partition_cuda_check > $R/tests/memcheck.log 2>&1; echo "memcheck rc=$? $(( $(date +%s) - s ))s $(tail -2 $R/tests/memcheck.log | tr '\n' ' ')"
for i in 1 2; do s=$(date +%s); timeout 240 build/tests/test_graph_partition_cuda > $R/tests/test_graph_partition_cuda-$i.log 2>&1; echo "test_graph_partition_cuda rc=$? $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/test_graph_partition_cuda-$i.log | tr '\n' ' ')"; done
wait
for g in rgg road; do gpmetis $G/$g.graph 64 -ufactor=30 > $R/$g.metis.log 2>&1; echo "$g gpmetis $(grep -h 'Partitioning:\|Edgecut' $R/$g.metis.log | tr -s ' \t' ' ' | tr '\n' ' ')"; done
run1() { # graph devset build i
  local dk="cpu = all\ncuda = none"; [ $2 = cpu+gpus ] && dk="cpu = all\ncuda = all"
  local bin=build/hetfarm; [ $3 = old ] && bin=build/hetfarm.old
  local ini=$R/$1-$2-$3-$4.ini
  printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\n%b\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' "$dk" "$G/$1.graph" > $ini
  $bin run $ini -o ${ini%.ini}.json > ${ini%.ini}.log 2>&1 || echo "FAIL $ini"
  python3 -c "
import json; r=json.load(open('${ini%.ini}.json'))['runs'][0]; a=r['app_figures']
print('$1 $2 $3 $4 phases %.4f coarsen %.4f initial %.4f uncoarsen %.4f cut %d' % (sum(a[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s')), a['coarsen_s']['value'], a['initial_s']['value'], a['uncoarsen_s']['value'], a['edge_cut']['value']))"
}
for i in 1 2 3; do run1 rgg cpu+gpus new $i; run1 rgg cpu+gpus old $i; run1 rgg cpu new $i; done
for i in 1 2 3; do run1 road cpu+gpus new $i; run1 road cpu+gpus old $i; run1 road cpu new $i; done
python3 - "$R" <<'P' > $R/gpu_pieces.log 2>&1
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*-cpu+gpus-*.json')):
    r=json.load(open(f))['runs'][0]
    print(f)
    ev=r.get('events',[])
    tot=[0,0,0,0]
    for x in r['rounds']:
        af=x.get('app_figures',{})
        g=[e for e in ev if e['round']==x['round'] and (e.get('copy_in_s',0)+e.get('kernel_s',0)+e.get('copy_out_s',0))>0]
        ci=sum(e['copy_in_s'] for e in g)*1e3; k=sum(e['kernel_s'] for e in g)*1e3; co=sum(e['copy_out_s'] for e in g)*1e3
        span=sum(e['end_s']-e['start_s'] for e in g)*1e3
        tot[0]+=span; tot[1]+=ci; tot[2]+=k; tot[3]+=co
        if x['round']<24: print('r%-3d %-8s L%-2s %7.2f ms  gpu pieces %2d span %6.2f in %6.2f kern %6.2f out %6.2f' % (x['round'], af.get('phase',{}).get('unit'), af.get('level',{}).get('value'), x['makespan_s']*1e3, len(g), span, ci, k, co))
    print('total gpu span %.1f in %.1f kern %.1f out %.1f ms' % tuple(tot))
P
grep -A25 "rgg-cpu+gpus-new-1" $R/gpu_pieces.log; grep "^/\|^total" $R/gpu_pieces.log
for f in $R/*-cpu*.json; do python3 /dev/stdin "$f" > "${f%.json}.phases" <<'P'
import sys,runpy; sys.argv=['p',sys.argv[1]]; runpy.run_path('bench/graph/partition_phases.py',run_name='__main__')
P
done
cat $R/rgg-cpu+gpus-new-1.phases $R/rgg-cpu+gpus-old-1.phases $R/rgg-cpu-new-1.phases
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
