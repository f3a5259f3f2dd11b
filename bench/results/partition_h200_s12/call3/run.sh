#!/bin/bash
# session 12, call 3: why rgg 2^20 CPU + GPU runs take 0.13 s or 0.27 s on one host (CPU-only rounds 2-7x slower in the slow ones): the kernel's memory counters (THP faults, compaction stalls, page faults) around each run, six runs in a row, then after a memory compaction
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/graph_export .gpubin/hetfarm build/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; free -g | head -2
R=$OUT/r; mkdir -p $R
G=/tmp/g; mkdir -p $G /tmp/cache
build/graph_export $G/rgg.graph generate=rgg vertices=1048576 degree=6 seed=1 > /dev/null
printf '[run]\napp = partition\nrounds = 1000000\nprogress = no\n[devices]\ncpu = all\ncuda = all\n[load]\ngraph = %s\nformat = metis\nparts = 64\nimbalance = 0.03\nseed = 1\ncache_dir = /tmp/cache\n' $G/rgg.graph > $R/rgg.ini
vm() { grep -E '^(thp_fault_alloc|thp_fault_fallback|compact_stall|compact_fail|pgfault|pgmajfault|numa_hint_faults|pgmigrate_success) ' /proc/vmstat | awk '{printf "%s=%s ", $1, $2}'; }
one() { # tag
  local a b; a=$(vm); local t0=$(date +%s.%N)
  build/hetfarm run $R/rgg.ini -o $R/rgg-$1.json > $R/rgg-$1.log 2>&1 || echo "FAIL $1"
  local t1=$(date +%s.%N); b=$(vm)
  python3 - "$a" "$b" "$R/rgg-$1.json" "$1" "$t0" "$t1" <<'P'
import json,sys
a=dict(x.split('=') for x in sys.argv[1].split()); b=dict(x.split('=') for x in sys.argv[2].split())
r=json.load(open(sys.argv[3]))['runs'][0]; f=r['app_figures']
ph=sum(f[k]['value'] for k in ('coarsen_s','initial_s','uncoarsen_s'))
d={k:int(b[k])-int(a[k]) for k in a}
print('%-8s phases %.4f wall %.2f cut %d | %s' % (sys.argv[4], ph, float(sys.argv[6])-float(sys.argv[5]), f['edge_cut']['value'], ' '.join('%s %d'%(k,v) for k,v in d.items() if v)))
P
}
for i in 1 2 3 4 5 6; do one seq$i; done
sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo dropped; echo 1 > /proc/sys/vm/compact_memory 2>/dev/null && echo compacted
for i in 1 2 3; do one after$i; done
OMP_WAIT_POLICY=passive one passive1; OMP_WAIT_POLICY=passive one passive2
OMP_PROC_BIND=false one nobind1
gpmetis $G/rgg.graph 64 -ufactor=30 > $R/rgg.metis.log 2>&1; echo "rgg gpmetis $(grep -h 'Partitioning:' $R/rgg.metis.log | tr -s ' \t' ' ')"
cd $OUT && tar czf x.tgz r && rm -rf r
