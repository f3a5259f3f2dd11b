/* graph_metis_write.c - writes a CSR graph as a METIS .graph file.
 *
 * DESIGN
 * ------
 * So that gpmetis, Scotch (gcv -i m) and hetfarm's partitioner can read the
 * very same graph, whatever it was loaded or generated from. METIS wants an
 * undirected graph without self-loops, each edge listed at both ends, ids
 * 1-based, integer weights: the writer refuses (HF_EINVAL, naming the first
 * offending vertex) a graph that is not symmetric, has a self-loop, or has an
 * edge weight that is not an integer >= 1 (METIS rejects weight 0), rather
 * than write a file METIS would read differently. The header is `n m` plus
 * fmt 1 (edge weights), 10 (vertex weights) or 11 (both). The file is written
 * to a temporary name in the same directory and renamed, so a failure leaves
 * no half-written file behind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"

/* Is v in u's sorted neighbour list? */
static int has_arc(const struct hf_graph *g, hf_vid_t u, hf_vid_t v)
{
    uint64_t lo = g->offsets[u], hi = g->offsets[u + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->adj[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->offsets[u + 1] && g->adj[lo] == v;
}

static int writable(const struct hf_graph *g, const char *path)
{
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
            hf_vid_t v = g->adj[e];
            if (v == u)
                return hf_fail(HF_EINVAL, "%s: vertex %llu has a self-loop; METIS allows none",
                               path, (unsigned long long)u + 1);
            if (!g->symmetric && !has_arc(g, v, (hf_vid_t)u))
                return hf_fail(HF_EINVAL, "%s: arc %llu->%u has no reverse; METIS needs an "
                               "undirected graph", path, (unsigned long long)u + 1, v + 1);
            if (g->weights && !(g->weights[e] >= 1 && g->weights[e] <= 2147483647.0 &&
                                g->weights[e] == floorf(g->weights[e])))
                return hf_fail(HF_EINVAL, "%s: edge %llu-%u has weight %g; METIS needs "
                               "integers >= 1", path, (unsigned long long)u + 1, v + 1,
                               (double)g->weights[e]);
        }
    if (g->ne % 2)
        return hf_fail(HF_EINVAL, "%s: odd arc count %llu", path, (unsigned long long)g->ne);
    return 0;
}

int hf_graph_write_metis(const struct hf_graph *g, const char *path)
{
    int rc = writable(g, path);
    if (rc)
        return rc;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return hf_fail(HF_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        if (fd >= 0)
            close(fd), unlink(tmp);
        free(tmp);
        return hf_fail(HF_EIO, "%s: cannot write: %m", path);
    }
    int fmt = (g->vwgt ? 10 : 0) + (g->weights ? 1 : 0);
    fprintf(f, "%llu %llu", (unsigned long long)g->nv, (unsigned long long)g->ne / 2);
    if (fmt)
        fprintf(f, " %03d", fmt);
    fputc('\n', f);
    for (uint64_t u = 0; u < g->nv; u++) {
        int first = 1;
        if (g->vwgt)
            fprintf(f, "%d", (int)g->vwgt[u]), first = 0;
        for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++, first = 0) {
            fprintf(f, first ? "%u" : " %u", g->adj[e] + 1);
            if (g->weights)
                fprintf(f, " %.0f", (double)g->weights[e]);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        free(tmp);
        return hf_fail(HF_EIO, "%s: write failed: %m", path);
    }
    free(tmp);
    return 0;
}
