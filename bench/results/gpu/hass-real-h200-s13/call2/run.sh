#!/bin/bash
# session 13, call 2: 7e0fe84 (pieces only beside a helper, sticky while the plan holds): make run's config, 2 passes (order alternated), and matmul 32768 on CPU + 1 H200 (no pieces expected now); everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
s=$(date +%s); GPUS=1 PASSES=2 N=32768 OUT=$R/hass-real timeout 400 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -20 $R/hass-real/hass-real.log
python3 - $R <<'P'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/hass-real/matmul-*.json')):
    if f.endswith('trace.json'): continue
    for r in json.load(open(f))['runs']:
        if r['scheduler']!='hass': continue
        for x in r['rounds']:
            print(f.split('/')[-1], 'r%d %.2f ms' % (x['round'], 1e3*x['makespan_s']), ' '.join('%s:%.4f/%d' % (d['name'], d['share'], d.get('bundles',0)) for d in x['devices']))
P
rm -f $R/*/*.trace.json; rm -rf $R/hass-real/profiles/*.lock 2>/dev/null
tar -cJf $OUT/call2.tar.xz -C $R .
