/* graph_export.c - writes any graph hetfarm can load or generate as a METIS
 * .graph file, so gpmetis, Scotch and `app = partition` read the very same
 * graph (bench/graph/partition.sh).
 *
 * DESIGN
 * ------
 * A bench tool rather than a `hetfarm` subcommand: the CLI may include only
 * the framework's faces (make check-includes), and the graph layer lives
 * under apps/graph/. It takes the graph apps' own [load] description, as
 * key=value arguments with the graph apps' defaults (symmetrise, drop self
 * loops and dedupe on: METIS needs an undirected simple graph):
 *
 *   build/graph_export OUT graph=PATH [format=auto]
 *   build/graph_export OUT generate=kron [scale=16] [edge_factor=16] [seed=1] [weighted=1]
 *   build/graph_export OUT generate=grid [rows=256] [cols=256] [keep=0.6] [seed=1] [weighted=1]
 *   build/graph_export OUT generate=rgg [vertices=65536] [degree=6] [seed=1] [weighted=1]
 *
 * The file goes through hf_graph_write_metis (written to a temporary name and
 * renamed; refuses what METIS would read differently), and one JSON line
 * says what was written. Built by `make graph-export` into $(BUILD)/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/layer/graph.h"

static const char *arg(int argc, char **argv, const char *key, const char *def)
{
    size_t n = strlen(key);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return def;
}

static const char *known[] = {"graph", "format", "generate", "scale", "edge_factor", "seed",
                              "weighted", "rows", "cols", "keep", "vertices", "degree", NULL};

static int num(int argc, char **argv, const char *key, double def, double lo, double hi,
               double *out)
{
    const char *s = arg(argc, argv, key, NULL);
    char *end;
    *out = s ? strtod(s, &end) : def;
    if (s && (*end || end == s || !(*out >= lo && *out <= hi))) {
        fprintf(stderr, "graph_export: %s = %s: expected a number in [%g, %g]\n", key, s, lo,
                hi);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: graph_export OUT.graph graph=PATH [format=F] | generate=kron|grid|rgg "
                        "[scale= edge_factor= rows= cols= keep= vertices= degree= seed= "
                        "weighted=]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        int ok = 0;
        for (const char **k = known; *k && !ok; k++)
            ok = strncmp(argv[i], *k, strlen(*k)) == 0 && argv[i][strlen(*k)] == '=';
        if (!ok) {
            fprintf(stderr, "graph_export: %s: unknown argument (keys: graph format generate "
                            "scale edge_factor seed weighted rows cols keep vertices degree)\n", argv[i]);
            return 2;
        }
    }
    const char *out = argv[1], *path = arg(argc, argv, "graph", NULL),
               *gen = arg(argc, argv, "generate", NULL);
    double scale, ef, seed, weighted, rows, cols, keep, nv, degree;
    if (num(argc, argv, "scale", 16, 1, 31, &scale) ||
        num(argc, argv, "edge_factor", 16, 1, 1024, &ef) ||
        num(argc, argv, "seed", 1, 0, 9e15, &seed) || num(argc, argv, "weighted", 0, 0, 1, &weighted) ||
        num(argc, argv, "rows", 256, 1, 4294967295.0, &rows) ||
        num(argc, argv, "cols", 256, 1, 4294967295.0, &cols) ||
        num(argc, argv, "keep", HF_GRAPH_GRID_KEEP, 0, 1, &keep) ||
        num(argc, argv, "vertices", 65536, 1, 4294967295.0, &nv) ||
        num(argc, argv, "degree", 6, 0, 1000, &degree))
        return 2;
    struct hf_graph g = {0};
    int rc;
    if (path && !gen) {
        struct hf_graph_opts o = {.format = arg(argc, argv, "format", "auto"), .symmetrise = 1,
                                  .drop_self_loops = 1, .dedupe = 1, .cache_dir = ""};
        rc = hf_graph_load(&g, path, &o);
    } else if (gen && !path && strcmp(gen, "kron") == 0) {
        rc = hf_graph_kronecker(&g, (int)scale, (int)ef, (uint64_t)seed, weighted != 0);
    } else if (gen && !path && strcmp(gen, "grid") == 0) {
        rc = hf_graph_grid(&g, (uint32_t)rows, (uint32_t)cols, keep, (uint64_t)seed, weighted != 0);
    } else if (gen && !path && strcmp(gen, "rgg") == 0) {
        rc = hf_graph_rgg(&g, (uint64_t)nv, degree, (uint64_t)seed, weighted != 0);
    } else {
        fprintf(stderr, "graph_export: give exactly one of graph=PATH or generate=kron|grid|rgg "
                        "(got generate=%s)\n", gen ? gen : "(none)");
        return 2;
    }
    if (rc || (rc = hf_graph_write_metis(&g, out))) {
        fprintf(stderr, "graph_export: %s\n", hf_last_error());
        hf_graph_free(&g);
        return 1;
    }
    printf("{\"out\": \"%s\", \"source\": \"%s\", \"nv\": %llu, \"edges\": %llu, "
           "\"edge_weights\": %s}\n",
           out, g.source_desc, (unsigned long long)g.nv, (unsigned long long)g.ne / 2,
           g.weights ? "true" : "false");
    hf_graph_free(&g);
    return 0;
}
