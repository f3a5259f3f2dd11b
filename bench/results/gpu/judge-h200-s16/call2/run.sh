#!/bin/bash
# session 16, call 2: every GPU test at 2a7899b (pairs centred per device group; Qilin saves refitted lines), then the loads of call 1 again; PageRank under all five schedulers. (Call 1 was at 2e0e4e5 + chunk_costs in
# results.json), then what the judge makes of a real host's noise and of a real
# irregular load, on CPU + 1 H200: pagerank on kron scale 21 (declared work = edges,
# not exact), noop with equal chunks declared in units (cost_known = no, uniform) and
# noop's hump in units. Each load: HASS and Qilin, two runs over one profile
# directory (the second reads any .cost file the first saved). Everything in one tar.
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/ && cp .gpubin/test_* build/tests/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R/tests
for t in test_cuda test_graph_cuda test_graph_mst_cuda test_graph_partition_cuda test_strsearch_cuda; do
  s=$(date +%s); timeout 200 build/tests/$t > $R/tests/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED) ' $R/tests/$t.log | tr '\n' ' ')"
done
sed -e 's|^scale = 16|scale = 21|' configs/graph-pagerank.ini > $R/pagerank.ini
printf "\n[compare]\nschedulers = hass, greedy, minmin, qilin, static\nengines = real\n" >> $R/pagerank.ini
for shape in uniform hump; do
  cat > $R/noop-$shape.ini <<INI
[run]
app = noop
rounds = 10
seed = 1
[load]
chunks = 512
work_per_chunk = 1
spin_ns = 100000
shape = $shape
cost_known = no
[devices]
cpu = all
cuda = all
[compare]
schedulers = hass, greedy, minmin, qilin, static
engines = real
INI
done
for app in pagerank noop-uniform noop-hump; do
  for k in 1 2; do
    s=$(date +%s); timeout 150 build/hetfarm compare $R/$app.ini --profiles $R/prof-$app -o $R/$app-run$k.json > $R/$app-run$k.log 2>&1
    echo "$app run $k rc=$? $(( $(date +%s) - s ))s; cost files: $(find $R/prof-$app -name '*.cost' | wc -l)"
  done
done
python3 - $R <<'P'
import json,glob,sys,os
for f in sorted(glob.glob(sys.argv[1]+'/*-run*.json')):
    for r in json.load(open(f))['runs']:
        rs=r['rounds']; late=[x for x in rs if x['round']>=2]
        print('%-22s %-6s chunk_costs %-9s rounds %d mean from r2 %.3f ms eff %.3f; last shares %s' % (os.path.basename(f), r['scheduler'], r.get('chunk_costs','-'), len(rs), sum(1e3*x['makespan_s'] for x in late)/max(1,len(late)), sum(x['efficiency'] for x in late)/max(1,len(late)), ' '.join('%.3f' % d.get('share',0) for d in rs[-1].get('devices',[]))))
        print('   per round ms:', ' '.join('%.2f' % (1e3*x['makespan_s']) for x in rs[:30]))
P
rm -f $R/*.trace.json $R/*/*.html
tar -cJf $OUT/call2.tar.xz -C $R .
