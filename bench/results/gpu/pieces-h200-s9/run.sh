#!/bin/bash
# session 9, call 3: GPU tests at the session's HASS code; HF_CUDA_MIN_PIECE_MB 32/16/8/4 on matmul and vscale
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  timeout 300 build/tests/$t > $R/$t.log 2>&1; echo "$t rc=$? $(grep -E 'PASSED|FAILED' $R/$t.log | tr '\n' ' ')"
done
timeout 120 build/bench/partition_cuda_check > $R/pcc.log 2>&1; echo "partition_cuda_check rc=$? $(tail -1 $R/pcc.log)"
ini() { python3 bench/ini_set.py configs/$1.ini $R/$2.ini run.rounds=10 compare.engines=real "${@:3}"; }
ini default mm2048 compare.schedulers="hass, minmin"
ini default mm4096 compare.schedulers="hass" load.n=4096 run.grain=64 devices.cpu=0
ini vscale vs4m compare.schedulers="hass" devices.cpu=0
ini vscale vs64m compare.schedulers="hass" load.n=67108864 devices.cpu=0
run() { local n=$1; shift; echo "== $n $*"; env "$@" timeout 120 build/hetfarm compare $R/${n%%_*}.ini -o $R/$n.json --profiles $R/prof 2>&1 | grep -E "^(hass|minmin) "; }
for c in mm2048 mm4096 vs4m vs64m; do run ${c}_warm; done
for p in 1 2; do for pm in 32 16 8 4; do for c in mm2048 mm4096 vs4m vs64m; do run ${c}_pm${pm}_$p HF_CUDA_MIN_PIECE_MB=$pm; done; done; done
export PATH=$PWD/.gpubin/bin:$PATH
for p in 1 2; do
  GRAPHS="rgg road" RGG_N=1048576 ROAD=2048 TOOLS="metis hetfarm" DEVSETS="cpu cpu+gpus" OUT=/tmp/pb RESULT=$R/partition$p.json timeout 200 bench/graph/partition.sh > $R/partition$p.log 2>&1
  echo "partition pass $p rc=$?"; cut -c1-220 /tmp/pb/runs.jsonl; cp /tmp/pb/runs.jsonl $R/partition-runs$p.jsonl
  mkdir -p $R/parts$p && cp /tmp/pb/parts/*.results.json $R/parts$p/ 2>/dev/null
  for f in /tmp/pb/parts/*hetfarm*.results.json; do echo "== $f"; python3 bench/graph/partition_phases.py $f | tail -8; done
done
cd $OUT && tar czf x.tgz r && rm -rf r
