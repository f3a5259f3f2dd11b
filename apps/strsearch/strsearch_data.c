/* strsearch_data.c - the strsearch app's data: the patterns file, per-range
 * results and the output file.
 *
 * DESIGN
 * ------
 * The patterns file is small by definition (at most 10,000 lines of at most
 * 64 KiB, and 64 MiB in all), so it is read whole and split at '\n' in place;
 * a pattern is any bytes but '\n' (NUL and '\r' included, as grep -F takes
 * them). Every problem is reported with the file and the 1-based line, so a
 * user can fix the file. Patterns longer than 255 bytes run on the CPU only:
 * the GPU matcher keeps the longest pattern in shared memory (strsearch.c's
 * setup says so when such a set meets a GPU).
 *
 * Inputs named by the user may be anything: a FIFO would block open() forever,
 * so the file type is checked before an open that could block.
 *
 * A part is the result of one range of the text: per-pattern counters and,
 * in `matches` mode, the list of matches. Parts keep their buffers between
 * uses, so a device re-using its parts round after round allocates nothing.
 *
 * The output is written to a temporary name next to the target and renamed
 * over it, so a reader sees the old file or the complete new one, never half.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strsearch.h"

/* Opens `path` read-only without ever blocking: a FIFO (or a device) named
 * as an input would block open() until a writer came, so the type is checked
 * first with stat(), the open is non-blocking, and fstat() checks again what
 * was really opened (the name may have changed in between). Returns the
 * descriptor, or -1 with errno set (EINVAL: not a regular file). */
static int open_regular(const char *path, struct stat *st)
{
    if (stat(path, st) != 0)
        return -1;
    if (!S_ISREG(st->st_mode)) {
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* The message of a failed open_regular(). */
static const char *open_error(int err)
{
    return err == EINVAL ? "not a regular file" : strerror(err);
}

int hf__ss_text_open(const char *where, const char *path, int *fd, uint64_t *size)
{
    struct stat st;
    *fd = open_regular(path, &st);
    if (*fd < 0)
        return hf_fail(HF_EIO, "%s: [load] text = %s: %s", where, path, open_error(errno));
    if (st.st_size == 0)
        return hf_fail(HF_ECONFIG, "%s: [load] text = %s: empty file, nothing to search", where,
                       path);
    *size = (uint64_t)st.st_size;
    return 0;
}

/* Reads the whole patterns file, refusing anything that cannot be a patterns
 * file before reading it (a huge file is not 10,000 patterns). */
static int read_small_file(const char *path, char **buf, size_t *len)
{
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return hf_fail(HF_EIO, "strsearch: patterns file %s: %s", path, open_error(errno));
    if ((size_t)st.st_size > HF_SS_MAX_FILE) {
        close(fd);
        return hf_fail(HF_ECONFIG,
                       "strsearch: patterns file %s: %lld bytes, more than the %zu MiB a "
                       "patterns file may hold",
                       path, (long long)st.st_size, HF_SS_MAX_FILE >> 20);
    }
    char *b = malloc((size_t)st.st_size + 1);
    if (!b) {
        close(fd);
        return hf_fail(HF_ENOMEM, "strsearch: patterns file %s: out of memory", path);
    }
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t got = read(fd, b + n, (size_t)st.st_size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (n != (size_t)st.st_size) {
        free(b);
        return hf_fail(HF_EIO, "strsearch: patterns file %s: read error", path);
    }
    *buf = b;
    *len = n;
    return 0;
}

int hf__ss_patterns_load(const char *path, struct hf__ss_patterns *out)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    int rc = read_small_file(path, &buf, &len);
    return rc ? rc : hf__ss_patterns_parse(path, buf, len, out);
}

int hf__ss_patterns_parse(const char *path, char *buf, size_t len, struct hf__ss_patterns *out)
{
    memset(out, 0, sizeof *out);
    out->buf = buf;
    if (len == 0) {
        hf__ss_patterns_free(out);
        return hf_fail(HF_ECONFIG, "strsearch: patterns file %s:1: empty file, no patterns",
                       path);
    }
    /* A final '\n' ends the last line; it does not start an empty one. */
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += out->buf[i] == '\n';
    lines += out->buf[len - 1] != '\n';
    if (lines > HF_SS_MAX_PATTERNS) {
        hf__ss_patterns_free(out);
        return hf_fail(HF_ECONFIG, "strsearch: patterns file %s:%d: more than %d patterns", path,
                       HF_SS_MAX_PATTERNS + 1, HF_SS_MAX_PATTERNS);
    }
    out->p = calloc(lines, sizeof *out->p);
    out->len = calloc(lines, sizeof *out->len);
    if (!out->p || !out->len) {
        hf__ss_patterns_free(out);
        return hf_fail(HF_ENOMEM, "strsearch: patterns file %s: out of memory", path);
    }
    size_t start = 0;
    for (size_t line = 0; line < lines; line++) {
        char *nl = memchr(out->buf + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - out->buf) : len;
        size_t plen = end - start;
        if (plen == 0 || plen > HF_SS_MAX_PATLEN) {
            hf__ss_patterns_free(out);
            if (plen == 0)
                return hf_fail(HF_ECONFIG, "strsearch: patterns file %s:%zu: empty pattern line",
                               path, line + 1);
            return hf_fail(HF_ECONFIG,
                           "strsearch: patterns file %s:%zu: pattern of %zu bytes, at most %d "
                           "allowed",
                           path, line + 1, plen, HF_SS_MAX_PATLEN);
        }
        out->p[line] = (const unsigned char *)out->buf + start;
        out->len[line] = plen;
        if (plen > out->maxlen)
            out->maxlen = plen;
        start = end + 1;
    }
    out->n = lines;
    return 0;
}

void hf__ss_patterns_free(struct hf__ss_patterns *p)
{
    free(p->buf);
    free(p->p);
    free(p->len);
    memset(p, 0, sizeof *p);
}

int hf__ss_part_reset(struct hf__ss_part *part, size_t npat, uint64_t begin, uint64_t end,
                      int want_m)
{
    if (!part->counts && !(part->counts = malloc(npat * sizeof *part->counts)))
        return hf_fail(HF_ENOMEM, "strsearch: out of memory for %zu counters", npat);
    memset(part->counts, 0, npat * sizeof *part->counts);
    part->begin = begin;
    part->end = end;
    part->nm = 0;
    part->want_m = want_m;
    part->overflow = 0;
    part->err = 0;
    return 0;
}

int hf__ss_part_push(struct hf__ss_part *part, uint64_t off, uint64_t pat)
{
    if (part->nm == part->mcap) {
        size_t cap = part->mcap ? 2 * part->mcap : 1024;
        void *m = realloc(part->m, cap * sizeof *part->m);
        if (!m)
            return HF_ENOMEM;
        part->m = m;
        part->mcap = cap;
    }
    part->m[part->nm++] = (struct hf__ss_match){off, pat};
    return 0;
}

void hf__ss_part_free(struct hf__ss_part *part)
{
    free(part->counts);
    free(part->m);
    memset(part, 0, sizeof *part);
}

static int match_cmp(const void *a, const void *b)
{
    const struct hf__ss_match *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->pat > y->pat) - (x->pat < y->pat);
}

void hf__ss_sort_matches(struct hf__ss_match *m, size_t n)
{
    if (n > 1)
        qsort(m, n, sizeof *m, match_cmp);
}
