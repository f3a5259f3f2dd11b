#!/bin/bash
# session 13, call 5: SPIN_S 0.1 s (was 0.02): make run's config on CPU + 1 H200, hass and minmin, 10 rounds, as is (3 passes) and with [load] verify = 0 (1 pass): the host-held time of a round
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
python3 bench/ini_set.py configs/default.ini $R/base.ini run.rounds=10 compare.engines=real "compare.schedulers=hass, minmin"
python3 bench/ini_set.py configs/default.ini $R/nover.ini run.rounds=10 compare.engines=real "compare.schedulers=hass, minmin" load.verify=0
build/hetfarm compare $R/base.ini -o $R/warm.json --profiles $R/prof > /dev/null 2>&1
for p in 1 2 3; do
  build/hetfarm compare $R/base.ini -o $R/base-$p.json --profiles $R/prof > $R/base-$p.log 2>&1
  [ $p = 1 ] && build/hetfarm compare $R/nover.ini -o $R/nover-$p.json --profiles $R/prof > $R/nover-$p.log 2>&1
done
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/*-[123].json')):
    for r in json.load(open(f))['runs']:
        rs=[x for x in r['rounds'] if x['round']>=2]
        gaps=[1e3*(x['makespan_s']-max(d['busy_s'] for d in x['devices'])) for x in rs]
        ms=sum(1e3*x['makespan_s'] for x in rs)/len(rs)
        print('%-14s %-7s makespan %.3f ms  gap mean %.3f max %.3f  host %s' % (os.path.basename(f), r['scheduler'], ms, sum(gaps)/len(gaps), max(gaps), ' '.join('%s=%.3f' % (k, 1e3*sum(x['host'][k] for x in rs)/len(rs)) for k in rs[0]['host'])))
P
tar -cJf $OUT/call5.tar.xz -C $R .
