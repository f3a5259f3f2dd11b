#!/usr/bin/env bash
# starpu-cuda.sh - StarPU 1.3 with CUDA, built from Debian's own source package (make starpu-cuda).
#
# Usage: framework/starpu/starpu-cuda.sh PREFIX CUDA_HOME [JOBS]
#
# DESIGN
# ------
# Debian's libstarpu is built without CUDA, so the starpu:POLICY rows of
# `compare` could only use CPU workers. This script builds the same StarPU
# (the installed 1.3.10+dfsg-2, Debian's patches included) with CUDA into
# PREFIX (build/starpu-cuda), never into the repository: it downloads the
# source package's .dsc and tarballs from deb.debian.org (deb-src is not
# configured, so apt-get source cannot), checks the .dsc against the SHA-256
# pinned below and every tarball against the .dsc's Checksums-Sha256,
# unpacks them with dpkg-source (which applies Debian's quilt patches),
# applies starpu-1.3.10-cuda13.patch (two fixes for CUDA 13; the patch
# says which and why), configures a small StarPU (no MPI, OpenCL, Fortran,
# docs, examples, tests, FFT, OpenMP runtime; CUDA on; up to 128 CPU and 8
# CUDA workers, where Debian's has 4 CPU workers at most) and installs it
# stripped. The Makefile uses PREFIX's starpu-1.3.pc when it exists and links
# with an rpath to PREFIX/lib, so ldd (and a tool that packs libraries by ldd)
# find this libstarpu, not Debian's. PREFIX/lib/pkgconfig/starpu-1.3.pc is
# written last: a failed build leaves no half StarPU for the Makefile to use.
# Every step's output goes to PREFIX/build.log; a failure prints the lines
# with "error" in them and the log's tail, and exits non-zero.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 PREFIX CUDA_HOME [JOBS]" >&2; exit 2; }
prefix=$(realpath -m "$1")
cuda=$2
jobs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)

version=1.3.10+dfsg-2
pool=http://deb.debian.org/debian/pool/main/s/starpu
dsc=starpu_${version}.dsc
# SHA-256 of Debian's starpu_1.3.10+dfsg-2.dsc (bookworm), pinned: the .dsc's
# own checksums then vouch for the tarballs.
dsc_sha256=dfbcc64d917fb0c6241d5b2d1bbe763e315ebe6b1a3c8e8004bf73f74be36c15
patchfile=$here/starpu-1.3.10-cuda13.patch

fail() { echo "starpu-cuda: $*" >&2; exit 1; }
for tool in curl sha256sum dpkg-source patch make cc; do
    command -v "$tool" >/dev/null ||
        fail "needs '$tool' (apt-get install curl dpkg-dev patch build-essential)"
done
[ -x "$cuda/bin/nvcc" ] ||
    fail "no nvcc at $cuda/bin/nvcc: StarPU with CUDA needs the CUDA toolkit (give CUDA_HOME)"
[ -f "$patchfile" ] || fail "missing $patchfile"

mkdir -p "$prefix/dl"
log=$prefix/build.log
: > "$log"
start=$(date +%s)

# Runs a step with its output in the log; on failure shows what went wrong.
step() {
    local what=$1; shift
    echo "starpu-cuda: $what" | tee -a "$log"
    if ! "$@" >> "$log" 2>&1; then
        echo "starpu-cuda: FAILED: $what (log: $log)" >&2
        grep -n -E 'error:|Error [0-9]|#error|undefined reference' "$log" | head -n 20 >&2 || true
        echo "--- last lines of $log:" >&2
        tail -n 25 "$log" >&2
        exit 1
    fi
}

# Downloads $1 into dl/ unless a copy with the expected SHA-256 ($2) is there.
fetch() {
    local f=$prefix/dl/$1
    if [ -f "$f" ] && echo "$2  $f" | sha256sum -c --status; then return 0; fi
    curl -fsS --retry 3 -o "$f.part" "$pool/$1" || fail "cannot download $pool/$1"
    echo "$2  $f.part" | sha256sum -c --status ||
        fail "$1: SHA-256 is $(sha256sum "$f.part" | cut -d' ' -f1), expected $2"
    mv "$f.part" "$f"
}

fetch "$dsc" "$dsc_sha256"
# The tarballs the .dsc lists under Checksums-Sha256: " SHA256 SIZE NAME".
files=$(awk '/^Checksums-Sha256:/{on=1; next} /^[^ ]/{on=0} on && NF==3 {print $1 " " $3}' \
        "$prefix/dl/$dsc")
[ -n "$files" ] || fail "$dsc lists no Checksums-Sha256"
while read -r sum name; do
    fetch "$name" "$sum"
done <<< "$files"

rm -rf "$prefix/src" "$prefix/obj" "$prefix/lib/pkgconfig/starpu-1.3.pc"
# --no-check: the .dsc's signature is not checked (debian-keyring is not
# needed); its SHA-256 is pinned above and it checks the tarballs.
step "unpacking Debian's source package (with Debian's patches)" \
    dpkg-source --no-check -x "$prefix/dl/$dsc" "$prefix/src"
rm -f "$prefix"/starpu_*.orig.tar.* # dpkg-source copies the tarball next to src/; dl/ has it
step "applying $(basename "$patchfile")" patch -d "$prefix/src" -p1 -i "$patchfile"
mkdir -p "$prefix/obj"
cd "$prefix/obj"
# ac_cv_lib_cusparse_cusparseCreate=no: StarPU would link cuSPARSE (only for its
# cusparse helpers, unused here), which a GPU host's CUDA runtime may lack.
step "configuring (CUDA at $cuda)" \
    "$prefix/src/configure" --prefix="$prefix" \
        --with-cuda-dir="$cuda" --enable-maxcudadev=8 --enable-maxcpus=128 \
        --disable-opencl --disable-mpi --disable-fortran --disable-build-doc \
        --disable-build-examples --disable-build-tests --disable-starpufft --disable-socl \
        --disable-openmp --disable-static --disable-glpk --disable-hdf5 \
        --enable-blas-lib=none --disable-fxt-lock \
        ac_cv_lib_cusparse_cusparseCreate=no \
        CFLAGS="-O2" \
        NVCCFLAGS="-O2 -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
grep -q '^#define STARPU_USE_CUDA 1' include/starpu_config.h ||
    fail "configure did not enable CUDA (see 'CUDA' in $log)"
step "building with $jobs jobs" make -j"$jobs"
# install-strip writes the .pc with the rest; it is moved aside until the end.
step "installing (stripped) into $prefix" make install-strip
mv "$prefix/lib/pkgconfig/starpu-1.3.pc" "$prefix/lib/pkgconfig/starpu-1.3.pc.new"
so=$(readlink -f "$prefix/lib/libstarpu-1.3.so")
[ -f "$so" ] || fail "no libstarpu-1.3.so under $prefix/lib"
if ldd "$so" | grep -q 'not found'; then
    ldd "$so" | grep 'not found' >&2
    fail "$so needs libraries that are not found"
fi
mv "$prefix/lib/pkgconfig/starpu-1.3.pc.new" "$prefix/lib/pkgconfig/starpu-1.3.pc"
cd "$prefix" && rm -rf "$prefix/obj" # the objects (150 MB); src/ stays to be read
end=$(date +%s)
echo "starpu-cuda: StarPU $version with CUDA in $prefix ($(du -sh "$so" | cut -f1) $(basename "$so")," \
     "$((end - start)) s); the next 'make' builds hetfarm against it" | tee -a "$log"
