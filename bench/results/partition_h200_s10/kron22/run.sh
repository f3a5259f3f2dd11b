#!/bin/bash
# session 10, call 2: issue 14 anchors at Kronecker scale 22 (the issue names 20-22): gpmetis (its own Partitioning time) against app = partition on CPU and CPU + GPU
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/
export PATH=$PWD/.gpubin/bin:$PATH
nvidia-smi -L; nproc; free -g | head -2
R=$OUT/r; mkdir -p $R
s=$(date +%s)
GRAPHS="kron" KRON=22 TOOLS="metis hetfarm" DEVSETS="cpu+gpus cpu" OUT=/tmp/pb RESULT=$R/partition.json timeout 570 bench/graph/partition.sh > $R/partition.log 2>&1
echo "partition rc=$? $(( $(date +%s) - s ))s"; cut -c1-300 /tmp/pb/runs.jsonl; cp /tmp/pb/runs.jsonl $R/
mkdir -p $R/parts && cp /tmp/pb/parts/*.results.json /tmp/pb/parts/*.log $R/parts/ 2>/dev/null
grep -h "Partitioning:\|Edgecut" /tmp/pb/parts/*.metis.log
for f in /tmp/pb/parts/*hetfarm*.results.json; do echo "== $f"; python3 bench/graph/partition_phases.py $f | tail -2; done
cd $OUT && tar czf x.tgz r && rm -rf r
