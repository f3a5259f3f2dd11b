/* fuzz_graph_load.c - libFuzzer harness: the graph loaders (apps/graph/).
 * seeds: tests/fuzz/corpus/fuzz_graph_load
 *
 * Built and run like every harness (tests/fuzz/README.md): `make fuzz`, and
 * a 3 s smoke run in `make test`. tests/fuzz/corpus/fuzz_graph_load holds the
 * seeds and every crash found so far, as regression inputs.
 *
 * The first byte of an input picks what is fuzzed, the rest is the file:
 *   bits 0-2: 0 METIS, 1 Matrix Market, 2 DIMACS, 3 and 6-7 edge list,
 *             4 edge list with an explicit format name, 5 .hfg via a temp file;
 *   bits 3-5: the loader options symmetrise, drop_self_loops, dedupe;
 *   bits 6-7: chunks forced on the parallel parser: auto, 2, 3 or 5, so that
 *             chunk boundaries are fuzzed without megabytes of input.
 * Every input must either load into a graph that passes hf_graph_check or
 * fail with HF_ECONFIG (HF_EIO for .hfg) and a message naming the file:line;
 * anything else aborts. max_nv keeps a huge id from allocating gigabytes.
 *
 * Runs so far (2 shared cores, ASan+UBSan, OMP_NUM_THREADS=1): 331 s, 17.4M
 * executions, 977 edges / 4125 features; after the inlined id parser and
 * pre-sized arc blocks, 201 s more, 7.5M executions, 1029 edges / 4360
 * features. No crash, leak, timeout or abort in 24.9M executions, so no
 * regression input beyond the seeds yet.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/layer/graph.h"
#include "graph/layer/graph_tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const names[8] = {"f.graph", "f.mtx", "f.gr", "f.txt",
                                         "f.dat",   "f.hfg", "f.el", "f"};
    static const int chunks[4] = {0, 2, 3, 5};
    unsigned sel = data[0], mode = sel & 7;
    struct hf_graph_opts o = {.cache_dir = "",
                              .max_nv = 1u << 16,
                              .symmetrise = (sel >> 3) & 1,
                              .drop_self_loops = (sel >> 4) & 1,
                              .dedupe = (sel >> 5) & 1,
                              .format = mode == 4 ? "edgelist" : NULL};
    hf__text_chunks = chunks[sel >> 6];
    struct hf_graph g;
    int rc;
    hf_clear_error();
    if (mode == 5) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/fuzz_graph_%d.hfg", (int)getpid());
        FILE *f = fopen(path, "wb");
        if (!f)
            return 0;
        fwrite(data + 1, 1, size - 1, f);
        fclose(f);
        rc = hf_graph_read_bin(&g, path);
        unlink(path);
        if (rc != 0 && rc != HF_ECONFIG && rc != HF_EIO)
            abort();
    } else {
        rc = hf_graph_parse_buffer(&g, names[mode], data + 1, size - 1, &o);
        /* A parse failure is a bad file, named with its line. */
        if (rc != 0 && (rc != HF_ECONFIG || !strstr(hf_last_error(), names[mode]) ||
                        !strchr(hf_last_error(), ':')))
            abort();
    }
    if (rc == 0 && hf_graph_check(&g) != 0)
        abort();
    if (rc != 0 && (g.offsets || g.adj || g.nv))
        abort(); /* failures leave the graph zeroed */
    hf_graph_free(&g);
    return 0;
}
