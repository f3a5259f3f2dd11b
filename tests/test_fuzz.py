#!/usr/bin/env python3
"""test_fuzz.py - the smoke run of every fuzz harness, part of `make test`.

Builds every libFuzzer harness tests/fuzz/fuzz_*.c (`make fuzz-build`, found by
the wildcard, so a new harness is smoked without editing anything), then runs
each for FUZZ_SMOKE_SECONDS (default 3) on its seeds and regression inputs
(tests/fuzz/run.sh): every input that once crashed is replayed. Exits 77 when
clang or its libFuzzer runtime is missing, 1 when a harness crashes.
"""
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def have_libfuzzer():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "f.c")
        with open(src, "w") as f:
            f.write("#include <stdint.h>\n#include <stddef.h>\n"
                    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
                    "{ (void)d; (void)n; return 0; }\n")
        try:
            r = subprocess.run(["clang", "-fsanitize=fuzzer,address", "-o",
                                os.path.join(d, "f"), src], capture_output=True)
        except OSError:
            return False
        return r.returncode == 0


def main():
    if not have_libfuzzer():
        print("clang with libFuzzer not found (Debian: clang libclang-rt-dev): fuzz smoke skipped")
        return 77
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    env.pop("MFLAGS", None)
    r = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "fuzz-build"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(r.stdout[-4000:] + r.stderr[-4000:])
        print("the fuzz harnesses do not build")
        return 1
    names = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(ROOT, "tests/fuzz/fuzz_*.c")))
    bins = [os.path.join(ROOT, "build/fuzz/fuzz", n) for n in names]
    secs = os.environ.get("FUZZ_SMOKE_SECONDS", "3")
    r = subprocess.run([os.path.join(ROOT, "tests/fuzz/run.sh"), secs] + bins, env=env)
    print("fuzz smoke: %d harness(es), %s s each" % (len(bins), secs))
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
