#!/bin/bash
# session 11, call 6: make run's config on CPU + 1 H200, three passes, events kept (why HASS trails min-min there)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
GPUS="" PASSES=3 OUT=$R/hass-real timeout 300 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$?"
grep -A5 "default-ini-pass" $R/hass-real/hass-real.log | grep "hass\|minmin\|pass"
rm -f $R/*/*.trace.json
cd $OUT && tar czf x.tgz r && rm -rf r
