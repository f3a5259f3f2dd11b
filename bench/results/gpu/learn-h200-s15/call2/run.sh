#!/bin/bash
# session 15, call 2: a7f0267 against the same code with strsearch's work declared exact (hetfarm-exact: load->work_exact = 1 in strsearch.c): does learning a real host's noise cost strsearch anything? Every scheduler, 2 passes (Williams orders), on CPU + 1 H200, 512 MiB of text, twice over one profile directory per binary; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm .gpubin/hetfarm-exact build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
python3 bench/strsearch/gen.py /tmp/text.txt 512 /tmp/patterns.txt 100 > /dev/null
sed -e 's|^out = .*||; s|^rounds = 5|rounds = 12|; s|^passes = 5|passes = 12|; s|^schedulers = .*|schedulers = hass, greedy, minmin, qilin, static\npasses = 2|' configs/strsearch.ini > $R/strsearch.ini
for bin in hetfarm hetfarm-exact; do
  for k in 1 2; do
    s=$(date +%s); timeout 200 build/$bin compare $R/strsearch.ini --profiles $R/prof-$bin -o $R/$bin-run$k.json > $R/$bin-run$k.log 2>&1
    echo "$bin run $k rc=$? $(( $(date +%s) - s ))s; cost files: $(find $R/prof-$bin -name '*.cost' | wc -l)"
  done
done
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/*-run*.json')):
    for r in json.load(open(f))['runs']:
        rs=r['rounds']; late=[x for x in rs if x['round']>=2]
        cpu=[e for e in r['events'] if e['device']==0 and e['round']>=2]
        gbs=' '.join('%d:%.1f' % (e['count'], e['count']*4.194304e-3/(e['end_s']-e['start_s'])) for e in cpu[:12])
        print('%-22s %-7s p%s mean from r2 %.3f ms eff %.3f cpu share %.3f; cpu bundles chunks:GB/s %s' % (os.path.basename(f), r['scheduler'], r.get('pass','-'), sum(1e3*x['makespan_s'] for x in late)/len(late), sum(x['efficiency'] for x in late)/len(late), sum(x['devices'][0].get('share',0) for x in late)/len(late), gbs))
P
for f in $R/*.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
for r in d['runs']: r.pop('events',None)
json.dump(d,open(sys.argv[1],'w'))" $f; done
tar -cJf $OUT/call2.tar.xz -C $R .
