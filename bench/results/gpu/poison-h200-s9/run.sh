#!/bin/bash
# session 9, call 2: default.ini on CPU + 1 GPU: C poisoned with streaming stores (hetfarm_nt) vs ordinary (hetfarm)
export LD_LIBRARY_PATH=$PWD/.gpulibs:/usr/local/cuda/lib64
mkdir -p .gpulibs build && tar -xJf .gpubin/libs.tar.xz -C .gpulibs
nvidia-smi -L; nproc
R=$OUT/r; mkdir -p $R
mk() { python3 bench/ini_set.py configs/default.ini $R/$1.ini run.rounds=10 compare.engines=real compare.schedulers="$2" ${3:+$3}; }
mk base "hass, minmin, qilin"
mk gpuonly "hass, minmin" devices.cpu=0
run() { # name binary ini env...
  local n=$1 b=$2 ini=$3; shift 3
  echo "== $n $*"; env "$@" timeout 240 .gpubin/$b compare $R/$ini.ini -o $R/$n.json --profiles $R/prof 2>&1 | grep -E "^(hass|minmin|qilin) "
}
run warm hetfarm base
for p in 1 2 3; do
  run old$p hetfarm base
  run nt$p hetfarm_nt base
done
run nt_pm4 hetfarm_nt base HF_CUDA_MIN_PIECE_MB=4
run nt_pm8 hetfarm_nt base HF_CUDA_MIN_PIECE_MB=8
run old_gpu hetfarm gpuonly
run nt_gpu hetfarm_nt gpuonly
python3 bench/ini_set.py configs/default.ini $R/big.ini run.rounds=6 load.n=16384 run.grain=64 compare.engines=real compare.schedulers="hass, minmin"
run old_big hetfarm big
run nt_big hetfarm_nt big
cd $OUT && tar czf x.tgz r && rm -rf r
