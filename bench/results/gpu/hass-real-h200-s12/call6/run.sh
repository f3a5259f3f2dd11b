#!/bin/bash
# session 12, call 6: does the order of `compare` decide make run's config? HASS and min-min give the GPU the whole load as one bundle from round 1, yet HASS's bundle took 6% longer in call 5's pass 1 (HASS runs first). Four compares of the two, the order alternated, 10 rounds each: mean makespan and GPU busy from round 2
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
for i in 1 2 3 4; do
  order="hass, minmin"; [ $((i % 2)) = 0 ] && order="minmin, hass"
  python3 bench/ini_set.py configs/default.ini $R/c$i.ini run.rounds=10 compare.engines=real "compare.schedulers=$order"
  build/hetfarm compare $R/c$i.ini -o $R/c$i.json --profiles $R/profiles-$i > $R/c$i.log 2>&1 || echo "FAIL $i"
  python3 - $R/c$i.json "$order" <<'P'
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['runs']:
    rs=[x for x in r['rounds'] if x['round']>=2]
    ms=sum(x['makespan_s'] for x in rs)/len(rs); gb=sum(x['devices'][-1]['busy_s'] for x in rs)/len(rs)
    cb=sum(1 for x in rs if x['devices'][0]['chunks']>0)
    print('order [%s] %-7s makespan %.3f ms gpu busy %.3f ms overhead %.3f ms cpu-rounds %d' % (sys.argv[2], r['scheduler'], ms*1e3, gb*1e3, (ms-gb)*1e3, cb))
P
done
cd $OUT && tar czf x.tgz r && rm -rf r
