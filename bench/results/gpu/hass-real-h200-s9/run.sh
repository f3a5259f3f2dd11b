#!/bin/bash
# session 9, call 4: GPU tests at the final code (8 MiB pieces); issue 12's real table on CPU + 1 H200 (bench/gpu/hass_real.sh)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests build/bench && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/graph_export build/ && cp .gpubin/test_* build/tests/ && cp .gpubin/partition_cuda_check build/bench/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  timeout 300 build/tests/$t > $R/$t.log 2>&1; echo "$t rc=$? $(grep -E 'PASSED|FAILED' $R/$t.log | tr '\n' ' ')"
done
timeout 120 build/bench/partition_cuda_check > $R/pcc.log 2>&1; echo "partition_cuda_check rc=$? $(tail -1 $R/pcc.log)"
OUT=$R/hass-real GPUS=1 PASSES=2 timeout 420 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$?"
tail -30 $R/hass-real/hass-real.log
rm -rf $R/hass-real/profiles
cd $OUT && tar czf x.tgz r && rm -rf r
