/* graph_bin.c - the .hfg binary CSR file: the cache of a parsed text graph.
 *
 * DESIGN
 * ------
 * Parsing a 100M-edge text file takes seconds; reading its CSR back is a few
 * large sequential reads. A .hfg file is a fixed 512-byte header followed by
 * the arrays exactly as they sit in memory: offsets (nv + 1 x u64), adj
 * (ne x u32), then weights (ne x f32) and vertex weights (nv x i32) when the
 * flags say so. Native byte order: a byte-order word in the header makes a
 * file from a big-endian host fail cleanly instead of being misread.
 *
 * The header records what the graph was built from (the source's size and
 * mtime in nanoseconds, the format and the loader options) so that
 * hf_graph_load can tell a valid cache from a stale one without opening the
 * source. A reader trusts nothing: sizes are checked against the file's length
 * with overflow-safe arithmetic before anything is allocated, and the arrays
 * go through the structural check, so a corrupt cache is refused, not run.
 *
 * Writing goes to a temporary file in the target's directory, then rename():
 * two processes caching the same graph at once each write their own temporary
 * and the last rename wins with a complete file. There is no fsync: a cache
 * torn by a power cut fails the size or structure checks and is rebuilt.
 *
 * The cache-facing functions record no message (hf_fail keeps the first one,
 * and a failed best-effort cache write must not hide the caller's real error);
 * the public hf_graph_write_bin / hf_graph_read_bin add it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_internal.h"

#define HFG_MAGIC "HFGRAPH"
#define HFG_VERSION 1u
#define HFG_BYTE_ORDER 0x01020304u

enum { HFG_WEIGHTED = 1, HFG_VWGT = 2, HFG_SYMMETRIC = 4, HFG_BASE1 = 8, HFG_HAS_KEY = 16 };

struct hfg_header {
    char magic[8];
    uint32_t version, header_size, byte_order, flags;
    uint64_t nv, ne;
    uint64_t self_loops_dropped, duplicates_dropped, arcs_added_by_symmetrise;
    uint64_t src_size;
    int64_t src_mtime_ns;
    uint32_t format, opts;
    char source_desc[256];
    char pad[168];
};
_Static_assert(sizeof(struct hfg_header) == 512, "the .hfg header is 512 bytes");

/* Writes all of buf or fails. */
static int write_all(FILE *f, const void *buf, size_t n)
{
    return n == 0 || fwrite(buf, 1, n, f) == n ? 0 : -1;
}

int hf__bin_write(const struct hf_graph *g, const char *path, const struct hf__cache_key *key,
                  char *msg, size_t msglen)
{
    struct hfg_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, HFG_MAGIC, sizeof HFG_MAGIC);
    h.version = HFG_VERSION;
    h.header_size = sizeof h;
    h.byte_order = HFG_BYTE_ORDER;
    h.flags = (g->weights ? HFG_WEIGHTED : 0) | (g->vwgt ? HFG_VWGT : 0) |
              (g->symmetric ? HFG_SYMMETRIC : 0) | (g->base ? HFG_BASE1 : 0) |
              (key ? HFG_HAS_KEY : 0);
    h.nv = g->nv;
    h.ne = g->ne;
    h.self_loops_dropped = g->self_loops_dropped;
    h.duplicates_dropped = g->duplicates_dropped;
    h.arcs_added_by_symmetrise = g->arcs_added_by_symmetrise;
    if (key) {
        h.src_size = key->src_size;
        h.src_mtime_ns = key->src_mtime_ns;
        h.format = key->format;
        h.opts = key->opts;
    }
    memcpy(h.source_desc, g->source_desc, sizeof h.source_desc);
    h.source_desc[sizeof h.source_desc - 1] = 0;

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return snprintf(msg, msglen, "%s: out of memory", path), HF_ENOMEM;
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(msg, msglen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        free(tmp);
        return HF_EIO;
    }
    fchmod(fd, 0644); /* mkstemp's 0600 would hide a shared cache from other users */
    FILE *f = fdopen(fd, "wb");
    int bad = !f;
    if (f) {
        bad = write_all(f, &h, sizeof h) ||
              write_all(f, g->offsets, (size_t)(g->nv + 1) * sizeof *g->offsets) ||
              write_all(f, g->adj, (size_t)g->ne * sizeof *g->adj) ||
              (g->weights && write_all(f, g->weights, (size_t)g->ne * sizeof *g->weights)) ||
              (g->vwgt && write_all(f, g->vwgt, (size_t)g->nv * sizeof *g->vwgt));
        bad |= fclose(f) != 0;
    } else {
        close(fd);
    }
    if (bad || rename(tmp, path) != 0) {
        snprintf(msg, msglen, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return HF_EIO;
    }
    free(tmp);
    return 0;
}

/* Reads n bytes into a new buffer (NULL on short read or no memory). */
static void *read_array(FILE *f, size_t n)
{
    void *p = hf__big_alloc(n);
    if (p && n && fread(p, 1, n, f) != n) {
        free(p);
        return NULL;
    }
    return p;
}

int hf__bin_read(struct hf_graph *g, const char *path, const struct hf__cache_key *want, char *msg,
                 size_t msglen)
{
#define BAD(rc, ...)                                                                               \
    do {                                                                                           \
        snprintf(msg, msglen, __VA_ARGS__);                                                        \
        fclose(f);                                                                                 \
        hf_graph_free(g);                                                                          \
        return rc;                                                                                 \
    } while (0)
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "rb");
    if (!f)
        return snprintf(msg, msglen, "%s: %s", path, strerror(errno)), HF_EIO;
    struct stat st;
    struct hfg_header h;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        BAD(HF_EIO, "%s: not a regular file", path);
    if (fread(&h, 1, sizeof h, f) != sizeof h)
        BAD(HF_ECONFIG, "%s: shorter than a .hfg header", path);
    if (memcmp(h.magic, HFG_MAGIC, sizeof HFG_MAGIC) != 0)
        BAD(HF_ECONFIG, "%s: not a .hfg file (bad magic)", path);
    if (h.byte_order != HFG_BYTE_ORDER)
        BAD(HF_ECONFIG, "%s: .hfg written with another byte order", path);
    if (h.version != HFG_VERSION || h.header_size != sizeof h)
        BAD(HF_ENOENT, "%s: .hfg version %u, this build reads %u", path, h.version, HFG_VERSION);
    if (want &&
        (!(h.flags & HFG_HAS_KEY) || h.src_size != want->src_size ||
         h.src_mtime_ns != want->src_mtime_ns || h.format != want->format || h.opts != want->opts))
        BAD(HF_ENOENT, "%s: stale cache (source or options changed)", path);
    /* 2^40 of either bounds every product below well under 2^64. */
    if (h.nv < 1 || h.nv > HF_GRAPH_MAX_NV || h.ne > (1ull << 40))
        BAD(HF_ECONFIG, "%s: nv=%llu ne=%llu out of range", path, (unsigned long long)h.nv,
            (unsigned long long)h.ne);
    uint64_t need = sizeof h + (h.nv + 1) * 8 + h.ne * 4 + (h.flags & HFG_WEIGHTED ? h.ne * 4 : 0) +
                    (h.flags & HFG_VWGT ? h.nv * 4 : 0);
    if ((uint64_t)st.st_size != need)
        BAD(HF_ECONFIG, "%s: %lld bytes, the header implies %llu (truncated?)", path,
            (long long)st.st_size, (unsigned long long)need);
    g->nv = h.nv;
    g->ne = h.ne;
    g->offsets = read_array(f, (size_t)(h.nv + 1) * 8);
    g->adj = g->offsets ? read_array(f, (size_t)h.ne * 4) : NULL;
    if (g->adj && (h.flags & HFG_WEIGHTED))
        g->weights = read_array(f, (size_t)h.ne * 4);
    if (g->adj && (h.flags & HFG_VWGT))
        g->vwgt = read_array(f, (size_t)h.nv * 4);
    if (!g->adj || (!g->weights && (h.flags & HFG_WEIGHTED)) || (!g->vwgt && (h.flags & HFG_VWGT)))
        BAD(HF_EIO, "%s: read failed or out of memory", path);
    fclose(f);
    g->symmetric = !!(h.flags & HFG_SYMMETRIC);
    g->base = h.flags & HFG_BASE1 ? 1 : 0;
    g->self_loops_dropped = h.self_loops_dropped;
    g->duplicates_dropped = h.duplicates_dropped;
    g->arcs_added_by_symmetrise = h.arcs_added_by_symmetrise;
    memcpy(g->source_desc, h.source_desc, sizeof g->source_desc);
    g->source_desc[sizeof g->source_desc - 1] = 0;
    char why[400];
    int rc = hf__graph_check_msg(g, why, sizeof why);
    if (rc) {
        snprintf(msg, msglen, "%s: corrupt .hfg: %s", path, why);
        hf_graph_free(g);
        return HF_ECONFIG;
    }
    return 0;
#undef BAD
}

int hf_graph_write_bin(const struct hf_graph *g, const char *path)
{
    char msg[600];
    int rc = hf__bin_write(g, path, NULL, msg, sizeof msg);
    return rc ? hf_fail(rc, "%s", msg) : 0;
}

int hf_graph_read_bin(struct hf_graph *g, const char *path)
{
    char msg[600];
    int rc = hf__bin_read(g, path, NULL, msg, sizeof msg);
    return rc ? hf_fail(rc == HF_ENOENT ? HF_ECONFIG : rc, "%s", msg) : 0;
}
