#!/bin/bash
# session 11, call 4: issue 12's real runs (make run's config twice, matmul 16384 on CPU + 1 H200) and issue 18's irregular noop at 4e4f1f1 (HASS's hedge and guessed warm-up)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
s=$(date +%s); GPUS=1 PASSES=2 OUT=$R/hass-real timeout 420 bench/gpu/hass_real.sh > $R/hass-real.out 2>&1; echo "hass_real rc=$? $(( $(date +%s) - s ))s"
tail -30 $R/hass-real/hass-real.log
s=$(date +%s); GPUS=1 OUT=$R/irregular timeout 150 bench/gpu/irregular.sh > $R/irregular.out 2>&1; echo "irregular rc=$? $(( $(date +%s) - s ))s"
tail -16 $R/irregular/irregular.log
rm -f $R/*/*.trace.json
python3 - "$R" <<'P' > $R/strip.log 2>&1
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*/*.json'):
    d=json.load(open(f))
    for r in d.get('runs',[]):
        r.pop('events',None)
    json.dump(d,open(f,'w'),indent=1)
P
cd $OUT && tar czf x.tgz r && rm -rf r
