/* graph_load.c - how fast the graph layer parses, caches and generates.
 *
 * DESIGN
 * ------
 * The design is simple: each command times one operation of apps/graph/ with a
 * monotonic clock and prints one JSON object, so the figures in the README can
 * be reproduced on any machine. The edge-list command first writes a random
 * SNAP-style file (ids uniform below edges / 8, so degrees ~16 as in real
 * graphs) outside the timed region, then times a parse with caching off, a
 * parse that writes the .hfg cache, and a load that reads it back. The page
 * cache is warm for the parse (the file was just written), which is what a
 * repeated experiment sees; a cold first read is bounded by the disk instead.
 *
 * It links only the graph layer (apps/graph/layer/) and framework/io/error.c,
 * so it builds anywhere with gcc and OpenMP:
 *
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -fopenmp -iquote framework -iquote apps \
 *       bench/graph_load.c apps/graph/layer/*.c framework/io/error.c -o build/graph_load -lm
 *   OMP_NUM_THREADS=2 build/graph_load edgelist 20 /tmp/el20m.txt
 *   build/graph_load write 20 /tmp/el20m.txt       (the file alone, kept)
 *   OMP_NUM_THREADS=2 build/graph_load kron 22 16 [weighted]
 *   OMP_NUM_THREADS=2 build/graph_load grid 4900 4900
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/layer/graph.h"
#include "graph/layer/graph_internal.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Appends the decimal digits of x to p and returns the new end. */
static char *put_u64(char *p, uint64_t x)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + x % 10);
    while ((x /= 10));
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Writes `edges` random arcs "u v" (ids < edges / 8) to path. */
static int write_edgelist(const char *path, uint64_t edges)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    uint64_t nv = edges / 8 ? edges / 8 : 1;
    size_t cap = 1 << 24;
    char *buf = malloc(cap + 64), *p = buf;
    fputs("# random edge list written by bench/graph_load.c\n", f);
    for (uint64_t e = 0; e < edges; e++) {
        uint64_t r = hf__mix64(e);
        p = put_u64(p, (r >> 32) % nv);
        *p++ = ' ';
        p = put_u64(p, (r & 0xffffffffu) % nv);
        *p++ = '\n';
        if ((size_t)(p - buf) > cap) {
            fwrite(buf, 1, (size_t)(p - buf), f);
            p = buf;
        }
    }
    fwrite(buf, 1, (size_t)(p - buf), f);
    free(buf);
    return fclose(f);
}

/* CPU seconds of the whole process (every thread), to tell a slow operation
 * from a machine shared with other jobs (wall >> cpu / threads). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu0;

static void report(const char *what, const struct hf_graph *g, double s, double bytes)
{
    double cpu = cpu_now() - cpu0;
    printf("{\"op\": \"%s\", \"threads\": %d, \"seconds\": %.3f, \"cpu_seconds\": %.3f, "
           "\"nv\": %llu, \"arcs\": %llu",
           what, omp_get_max_threads(), s, cpu, (unsigned long long)g->nv,
           (unsigned long long)g->ne);
    if (bytes > 0)
        printf(", \"MB_per_s\": %.0f, \"arcs_per_s\": %.3g", bytes / s / 1e6, (double)g->ne / s);
    printf(", \"source\": \"%s\"}\n", g->source_desc);
}

int main(int argc, char **argv)
{
    struct hf_graph g;
    double t;
    if (argc >= 4 && strcmp(argv[1], "edgelist") == 0) {
        uint64_t edges = (uint64_t)(atof(argv[2]) * 1e6);
        const char *path = argv[3];
        char cache[4200];
        snprintf(cache, sizeof cache, "%s.hfg", path);
        if (write_edgelist(path, edges))
            return perror(path), 1;
        struct stat st;
        stat(path, &st);
        struct hf_graph_opts nocache = {.cache_dir = ""}, withcache = {0};
        t = now(), cpu0 = cpu_now();
        if (hf_graph_load(&g, path, &nocache))
            return fprintf(stderr, "%s\n", hf_last_error()), 1;
        report("parse", &g, now() - t, (double)st.st_size);
        hf_graph_free(&g);
        unlink(cache);
        t = now(), cpu0 = cpu_now();
        if (hf_graph_load(&g, path, &withcache))
            return fprintf(stderr, "%s\n", hf_last_error()), 1;
        report("parse+write_cache", &g, now() - t, (double)st.st_size);
        hf_graph_free(&g);
        t = now(), cpu0 = cpu_now();
        if (hf_graph_load(&g, path, &withcache) || !g.loaded_from_cache)
            return fprintf(stderr, "cache not used: %s\n", hf_last_error()), 1;
        report("read_cache", &g, now() - t, 0);
        hf_graph_free(&g);
        unlink(cache);
        unlink(path);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "write") == 0) /* the file alone, for profiling */
        return write_edgelist(argv[3], (uint64_t)(atof(argv[2]) * 1e6)) ? 1 : 0;
    if (argc >= 4 && strcmp(argv[1], "kron") == 0) {
        t = now(), cpu0 = cpu_now();
        if (hf_graph_kronecker(&g, atoi(argv[2]), atoi(argv[3]), 1, argc > 4))
            return fprintf(stderr, "%s\n", hf_last_error()), 1;
        report("kronecker", &g, now() - t, 0);
        hf_graph_free(&g);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "grid") == 0) {
        t = now(), cpu0 = cpu_now();
        if (hf_graph_grid(&g, (uint32_t)atol(argv[2]), (uint32_t)atol(argv[3]), HF_GRAPH_GRID_KEEP,
                          1, 1))
            return fprintf(stderr, "%s\n", hf_last_error()), 1;
        report("grid", &g, now() - t, 0);
        hf_graph_free(&g);
        return 0;
    }
    fprintf(stderr, "usage: graph_load edgelist|write MILLIONS FILE | kron SCALE EF [weighted] | "
                    "grid ROWS COLS\n");
    return 2;
}
