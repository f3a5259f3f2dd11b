/* graph_load.c - hf_graph_load: pick the format, use a valid cache, else map
 * the file, parse it, and leave a cache for next time.
 *
 * DESIGN
 * ------
 * The file is mmap'ed read-only and parsed in place (graph_text.c), so a
 * 2 GB edge list costs no copy and the kernel reads ahead while threads parse.
 * The price of mmap: a file truncated by another process while we parse it
 * raises SIGBUS. Data sets are not rewritten under a running experiment, so
 * we accept that rather than copy every byte through read().
 *
 * Caching is best effort by design: it only ever saves time. The cache key is
 * the source's size and mtime (nanoseconds), the resolved format, the loader
 * options, the .hfg version, and the source's path (in source_desc); any
 * mismatch means the cache is stale and is rebuilt. A missing, unreadable or
 * corrupt cache is parsed around, and a directory we cannot write (a shared
 * read-only data set) just means there is no cache: neither is an error.
 * The key is taken before parsing, so a source rewritten during the parse
 * leaves a cache whose key is already stale.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_internal.h"

/* Where the cache of `path` lives, or 0 when caching is off. The directory
 * form names the options, so one cache_dir holds several variants. */
static int cache_path(char *out, size_t n, const char *path, const struct hf_graph_opts *o, int fmt)
{
    if (o->cache_dir && !*o->cache_dir)
        return 0;
    int len;
    if (!o->cache_dir) {
        len = snprintf(out, n, "%s.hfg", path);
    } else {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        len = snprintf(out, n, "%s/%s.%s-s%dl%dd%d.hfg", o->cache_dir, base, hf__format_name(fmt),
                       !!o->symmetrise, !!o->drop_self_loops, !!o->dedupe);
    }
    return len > 0 && (size_t)len < n;
}

int hf_graph_load(struct hf_graph *g, const char *path, const struct hf_graph_opts *o)
{
    static const struct hf_graph_opts defaults = {0};
    memset(g, 0, sizeof *g);
    if (!o)
        o = &defaults;
    int fmt = hf__format_resolve(o->format, path);
    if (fmt < 0)
        return hf_fail(HF_EINVAL,
                       "%s: unknown graph format '%s' (auto, metis, mtx, dimacs, "
                       "edgelist or bin)",
                       path, o->format);
    if (fmt == HF__FMT_BIN)
        return hf_graph_read_bin(g, path);

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return hf_fail(HF_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return hf_fail(HF_EIO, "%s: not a regular file", path);
    }
    struct hf__cache_key key = {
        .src_size = (uint64_t)st.st_size,
        .src_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
        .format = (uint32_t)fmt,
        .opts = (o->symmetrise ? 1u : 0) | (o->drop_self_loops ? 2u : 0) | (o->dedupe ? 4u : 0),
    };
    char cpath[4200], desc[sizeof g->source_desc], msg[600];
    int caching = cache_path(cpath, sizeof cpath, path, o, fmt);
    snprintf(desc, sizeof desc, "%s:%s", hf__format_name(fmt), path);
    if (caching && hf__bin_read(g, cpath, &key, msg, sizeof msg) == 0) {
        if (strcmp(g->source_desc, desc) == 0) {
            close(fd);
            g->loaded_from_cache = 1;
            return 0;
        }
        hf_graph_free(g); /* another file's cache under the same name */
    }

    size_t len = (size_t)st.st_size;
    void *data = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (len && data == MAP_FAILED) {
        int err = errno;
        close(fd);
        return hf_fail(HF_EIO, "%s: mmap: %s", path, strerror(err));
    }
    if (data)
        madvise(data, len, MADV_WILLNEED); /* T threads read T streams: not SEQUENTIAL */
    int rc = hf_graph_parse_buffer(g, path, data ? data : "", len, o);
    if (data)
        munmap(data, len);
    close(fd);
    if (rc)
        return rc;
    if (caching)
        (void)hf__bin_write(g, cpath, &key, msg, sizeof msg); /* best effort, see above */
    return 0;
}
