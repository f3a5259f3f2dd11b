#!/usr/bin/env python3
"""test_check_includes.py - the include rules hold on the tree, and the checker
really fails on each kind of wrong include (a checker that cannot fail proves
nothing). Copies framework/, schedulers/ and apps/ into a temporary folder,
breaks one rule at a time there, and runs check_includes.py on the copy.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "check_includes.py")


def check(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return p.returncode, p.stdout


def copy_tree(dst):
    for d in ("framework", "schedulers", "apps"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(dst, d))


def prepend(path, line):
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(line + "\n" + text)


# (what is broken, file to edit relative to the copy, line to add or None, words expected)
CASES = [
    ("a scheduler includes core", "schedulers/greedy.c", '#include "core/engine.h"',
     "schedulers/greedy.c:1: includes framework/core/engine.h"),
    ("an app includes io", "apps/noop/noop.c", '#include "io/files.h"',
     "apps/noop/noop.c:1: includes framework/io/files.h"),
    ("a driver includes core", "framework/drivers/device_cpu.c", '#include "core/pool.h"',
     "room drivers may include only"),
    ("report includes a driver header", "framework/report/trace.c",
     '#include "drivers/blas_env.h"', "room report may include only"),
    ("the StarPU policy includes core", "framework/starpu/deal.c", '#include "core/pool.h"',
     "room starpu may include only"),
    ("the MPI transport includes core", "framework/mpi/transport.c", '#include "core/pool.h"',
     "room mpi may include only"),
    ("a driver includes the MPI transport", "framework/drivers/device_cpu.c",
     '#include "mpi/transport.h"', "room drivers may include only"),
    ("a face includes a room", "framework/sched.h", '#include "core/profile.h"',
     "room faces may include only"),
]


def main():
    failures = 0
    rc, out = check(ROOT)
    if rc != 0:
        print("the tree itself breaks the rules:\n" + out)
        failures += 1
    for what, rel, line, words in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(tmp)
            prepend(os.path.join(tmp, rel), line)
            rc, out = check(tmp)
            if rc != 1 or words not in out:
                print("%s: expected exit 1 and %r, got %d:\n%s" % (what, words, rc, out))
                failures += 1
    # A cycle between two headers of one room (allowed by the rooms, not by the rule).
    with tempfile.TemporaryDirectory() as tmp:
        copy_tree(tmp)
        prepend(os.path.join(tmp, "framework/core/pool.h"), '#include "engine_internal.h"')
        rc, out = check(tmp)
        if rc != 1 or "include cycle" not in out:
            print("cycle: expected exit 1 and 'include cycle', got %d:\n%s" % (rc, out))
            failures += 1
    print("%d of %d cases failed" % (failures, len(CASES) + 2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
