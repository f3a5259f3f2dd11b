#!/bin/bash
# session 9, call 5: app = partition at the final code against gpmetis (its own Partitioning time), rgg 2^20, road 2048^2, kron 20
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
s=$(date +%s)
GRAPHS="rgg road kron" RGG_N=1048576 ROAD=2048 KRON=20 TOOLS="metis hetfarm" DEVSETS="cpu cpu+gpus" OUT=/tmp/pb RESULT=$R/partition.json timeout 500 bench/graph/partition.sh > $R/partition.log 2>&1
echo "partition rc=$? $(( $(date +%s) - s ))s"; cut -c1-200 /tmp/pb/runs.jsonl; cp /tmp/pb/runs.jsonl $R/
mkdir -p $R/parts && cp /tmp/pb/parts/*.results.json /tmp/pb/parts/*.log $R/parts/ 2>/dev/null
grep -h "Partitioning:" /tmp/pb/parts/*.metis.log
for f in /tmp/pb/parts/*hetfarm*.results.json; do echo "== $f"; python3 bench/graph/partition_phases.py $f | tail -2; done
cd $OUT && tar czf x.tgz r && rm -rf r
