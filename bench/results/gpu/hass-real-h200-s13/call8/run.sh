#!/bin/bash
# session 13, call 8: ddfc7e8, the final code: test_cuda, make run's config 4 passes (order alternated) and matmul 16384 on CPU + 1 H200; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R/tests; cp .gpubin/test_cuda build/tests/; timeout 200 build/tests/test_cuda > $R/tests/test_cuda.log 2>&1; echo "test_cuda rc=$? $(grep -E "^\[  (PASSED|FAILED) " $R/tests/test_cuda.log | tr "\n" " ")"
s=$(date +%s); GPUS=1 PASSES=4 OUT=$R/hass-real timeout 400 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -40 $R/hass-real/hass-real.log | grep -v "^ *\(greedy\|qilin\|static\)"
rm -f $R/*/*.trace.json
tar -cJf $OUT/call8.tar.xz -C $R .
