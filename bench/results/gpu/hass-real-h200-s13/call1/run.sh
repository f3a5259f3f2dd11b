#!/bin/bash
# session 13, call 1: c014f69 (keep_plan's noise from the devices that move; a warm-up's like repeat is a drift; long GPU shares in 4 pieces released on a slow surprise): test_cuda, issue 12's real runs on CPU + 1 H200 (make run's config, 4 passes alternating the order; matmul 16384), and matmul 32768 (long rounds: where pieces may engage)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_cuda build/tests/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R/tests
s=$(date +%s); timeout 200 build/tests/test_cuda > $R/tests/test_cuda.log 2>&1; echo "test_cuda rc=$? $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/test_cuda.log | tr '\n' ' ')"
s=$(date +%s); GPUS=1 PASSES=4 OUT=$R/hass-real timeout 300 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -22 $R/hass-real/hass-real.log
s=$(date +%s); GPUS=1 PASSES=0 N=32768 OUT=$R/hass-real-32k timeout 260 bench/gpu/hass_real.sh > $R/hass-real-32k.out 2>&1; echo "hass_real 32768 rc=$? $(( $(date +%s) - s ))s"
tail -8 $R/hass-real-32k/hass-real.log
python3 - $R <<'P'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/hass-real*/matmul-*.json')):
    for r in json.load(open(f))['runs']:
        if r['scheduler']!='hass': continue
        for x in r['rounds']:
            print(f.split('/')[-1], 'r%d %.2f ms' % (x['round'], 1e3*x['makespan_s']), ' '.join('%s:%.4f/%d' % (d['name'], d['share'], d.get('bundles',0)) for d in x['devices']))
P
rm -f $R/*/*.trace.json
