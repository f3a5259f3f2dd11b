#!/bin/bash
# session 13, call 3: d4c82c5 (a probe must fit at 4x its model's time): make run's config, 6 passes (order alternated), and matmul 16384 on CPU + 1 H200; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
s=$(date +%s); GPUS=1 PASSES=6 OUT=$R/hass-real timeout 400 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -40 $R/hass-real/hass-real.log | grep -v "^ *\(greedy\|qilin\|static\)"
rm -f $R/*/*.trace.json
tar -cJf $OUT/call3.tar.xz -C $R .
