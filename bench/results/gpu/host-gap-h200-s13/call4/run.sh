#!/bin/bash
# session 13, call 4: make run's config on CPU + 1 H200, real engine, hass and minmin, 10 rounds: where does the host-held time of a round (makespan - busiest device, 0.05-0.37 ms) come from? Variants: as is; [load] verify = 0; OMP_WAIT_POLICY=passive; GOMP_SPINCOUNT=0. Two passes each.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
python3 bench/ini_set.py configs/default.ini $R/base.ini run.rounds=10 compare.engines=real "compare.schedulers=hass, minmin"
python3 bench/ini_set.py configs/default.ini $R/nover.ini run.rounds=10 compare.engines=real "compare.schedulers=hass, minmin" load.verify=0
build/hetfarm compare $R/base.ini -o $R/warm.json --profiles $R/prof > /dev/null 2>&1
for p in 1 2; do
  build/hetfarm compare $R/base.ini -o $R/base-$p.json --profiles $R/prof > $R/base-$p.log 2>&1
  build/hetfarm compare $R/nover.ini -o $R/nover-$p.json --profiles $R/prof > $R/nover-$p.log 2>&1
  OMP_WAIT_POLICY=passive build/hetfarm compare $R/base.ini -o $R/passive-$p.json --profiles $R/prof > $R/passive-$p.log 2>&1
  GOMP_SPINCOUNT=0 build/hetfarm compare $R/base.ini -o $R/spin0-$p.json --profiles $R/prof > $R/spin0-$p.log 2>&1
  build/hetfarm compare $R/base.ini -o $R/base2-$p.json --profiles $R/prof --trace $R/base2-$p.trace.json > $R/base2-$p.log 2>&1
done
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/*-[12].json')):
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        gaps=[1e3*(x['makespan_s']-max(d['busy_s'] for d in x['devices'])) for x in rs]
        ms=sum(1e3*x['makespan_s'] for x in rs)/len(rs)
        print('%-14s %-7s makespan %.3f ms  gap mean %.3f max %.3f  host %s' % (os.path.basename(f), r['scheduler'], ms, sum(gaps)/len(gaps), max(gaps), ' '.join('%s=%.3f' % (k, 1e3*sum(x['host'][k] for x in rs)/len(rs)) for k in rs[0]['host'])))
P
tar -cJf $OUT/call4.tar.xz -C $R .
