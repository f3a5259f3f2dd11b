#!/bin/bash
# session 14, call 5: 85e933d: issue 18's irregular noop (hump, tail; cost_known = no) on CPU + 1 H200, twice over one profile directory: chunk costs are still learned on real devices and saved (now only when learned), and the second run starts from them; everything tarred into one file
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build/tests && tar -xJf .gpubin/libs.tar.xz -C .gpulibs && cp .gpubin/hetfarm build/
nvidia-smi -L; nproc
R=/tmp/r; mkdir -p $R
for k in 1 2; do
  s=$(date +%s); GPUS=1 OUT=$R/irregular timeout 250 bench/gpu/irregular.sh > $R/irregular-$k.out 2>&1; echo "irregular run $k rc=$? $(( $(date +%s) - s ))s"
  cp $R/irregular/irregular.log $R/irregular-$k.log
  for f in $R/irregular/noop-*.json; do cp $f $R/$(basename $f .json)-run$k.json; done
  grep "mean efficiency" $R/irregular/irregular.log
done
find $R/irregular -name "*.cost" | sed "s/^/cost file: /"
rm -f $R/*/*.trace.json
tar -cJf $OUT/call5.tar.xz -C $R .
