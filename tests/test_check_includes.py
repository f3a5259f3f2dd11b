#!/usr/bin/env python3
"""test_check_includes.py - the include rules hold on the tree, and the checker
really fails on each kind of wrong include and on a call circle between files
of apps/ (a checker that cannot fail proves nothing). Copies framework/,
schedulers/ and apps/ into a temporary folder, breaks one rule at a time there,
and runs check_includes.py on the copy.
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
    # apps/graph's rooms (apps/graph/README.md)
    ("the graph layer includes the apps' room", "apps/graph/layer/graph_csr.c",
     '#include "graph/app/graph_app.h"', "room apps/graph/layer may include only"),
    ("the apps' room includes the partitioner", "apps/graph/app/graph_app.c",
     '#include "graph/partition/partition.h"', "room apps/graph/app may include only"),
    ("the partitioner includes placement", "apps/graph/partition/partition.c",
     '#include "graph/placement/graph_place.h"', "room apps/graph/partition may include only"),
    ("a primitive includes another", "apps/graph/bfs/bfs.c", '#include "graph/sssp/sssp.h"',
     "room apps/graph/bfs may include only"),
    ("another app includes the graph layer", "apps/matmul/matmul.c",
     '#include "graph/layer/graph.h"', "apps/matmul/matmul.c:1: includes apps/graph/layer/graph.h"),
    ("a reference includes its app", "apps/graph/bfs/bfs_ref.c", '#include "bfs.h"',
     "a reference depends on nothing of the app it checks"),
    ("a reference includes the apps' room", "apps/graph/mst/mst_ref.h",
     '#include "graph/app/graph_app.h"', "a reference depends on nothing"),
]

# (what is broken, file to append to, code to append, words expected): a
# function of one module used by another and back.
CALL_CASES = [
    ("the tokenizer calls a parser", "apps/graph/layer/graph_tok.c",
     "int hf__text_probe(struct hf__text *t, struct hf_graph *g)\n{\n"
     "    return hf__parse_metis(t, g);\n}\n",
     "call circle: apps/graph/layer/graph_metis -> apps/graph/layer/graph_tok"),
    ("a phase calls the partitioner's app", "apps/graph/partition/partition_coarsen.c",
     "int hf__part_again(const struct hf_graph *g, uint32_t *part, double *cut)\n{\n"
     "    return hf__partition_graph(g, 2, 0.03, 1, 1, part, cut);\n}\n",
     "apps/graph/partition/partition_coarsen.c names hf__partition_graph"),
    ("a reference helper lives in the app", "apps/graph/mst/mst.c",
     "uint64_t hf__mst_edges_of(const struct hf_graph *g)\n{\n    return g->ne;\n}\n",
     None),
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
    # A source outside the rooms of apps/graph, and a room the checker does not know.
    for rel, words in (("apps/graph/stray.c", "apps/graph/ holds rooms only"),
                       ("apps/graph/misc/stray.c", "unknown room apps/graph/misc/")):
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(tmp)
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write('#include "hetfarm.h"\n')
            rc, out = check(tmp)
            if rc != 1 or words not in out:
                print("%s: expected exit 1 and %r, got %d:\n%s" % (rel, words, rc, out))
                failures += 1
    for what, rel, code, words in CALL_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(tmp)
            with open(os.path.join(tmp, rel), "a") as f:
                f.write(code)
            if words is None:
                # mst_ref.c calls the helper mst.c now defines: mst -> mst_ref -> mst.
                ref = os.path.join(tmp, "apps/graph/mst/mst_ref.c")
                with open(ref, "a") as f:
                    f.write("uint64_t hf__mst_edges_of(const struct hf_graph *g);\n"
                            "uint64_t hf__mst_ref_edges(const struct hf_graph *g)\n{\n"
                            "    return hf__mst_edges_of(g);\n}\n")
                words = "call circle: apps/graph/mst/mst -> apps/graph/mst/mst_ref -> " \
                        "apps/graph/mst/mst"
            rc, out = check(tmp)
            if rc != 1 or words not in out:
                print("%s: expected exit 1 and %r, got %d:\n%s" % (what, words, rc, out))
                failures += 1
    print("%d of %d cases failed" % (failures, len(CASES) + len(CALL_CASES) + 4))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
