/* hs_direct.c - Hyperscan called directly: the baseline of bench/strsearch/cpu.sh.
 *
 * DESIGN
 * ------
 * The same work hetfarm's CPU path does, with nothing around it: the patterns
 * compiled as literals (hs_compile_lit_multi, flags 0: every overlapping match),
 * the text memory-mapped, cut into 4 MiB blocks that the threads take
 * dynamically (each scanned with the longest pattern - 1 bytes of overlap,
 * matches starting past the block dropped) and per-pattern counts kept per
 * thread. Untimed first repetition: it faults the mapping in. It prints one
 * line: `threads bytes seconds_median seconds_best total_matches`.
 *
 *   hs_direct TEXT PATTERNS THREADS REPS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hs.h>
#include <omp.h>

#define BLOCK ((size_t)4 << 20)

struct cb {
    unsigned long long *counts;
    const size_t *len;
    unsigned long long base, limit;
};

/* Counts a match when it starts inside the thread's slice. */
static int on_match(unsigned id, unsigned long long from, unsigned long long to, unsigned fl,
                    void *arg)
{
    (void)from;
    (void)fl;
    struct cb *c = arg;
    if (c->base + to - c->len[id] < c->limit)
        c->counts[id]++;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: hs_direct TEXT PATTERNS THREADS REPS\n");
        return 2;
    }
    int threads = atoi(argv[3]), reps = atoi(argv[4]);
    FILE *pf = fopen(argv[2], "rb");
    if (!pf) {
        perror(argv[2]);
        return 1;
    }
    static char buf[4 << 20];
    size_t plen = fread(buf, 1, sizeof buf - 1, pf);
    fclose(pf);
    const char **pats = calloc(10001, sizeof *pats);
    size_t *lens = calloc(10001, sizeof *lens), n = 0, maxlen = 0;
    unsigned *ids = calloc(10001, sizeof *ids), *flags = calloc(10001, sizeof *flags);
    for (size_t i = 0; i < plen && n < 10000;) {
        char *nl = memchr(buf + i, '\n', plen - i);
        size_t e = nl ? (size_t)(nl - buf) : plen;
        if (e > i) {
            pats[n] = buf + i, lens[n] = e - i, ids[n] = (unsigned)n;
            maxlen = lens[n] > maxlen ? lens[n] : maxlen;
            n++;
        }
        i = e + 1;
    }
    hs_database_t *db;
    hs_compile_error_t *err;
    if (hs_compile_lit_multi(pats, flags, ids, lens, (unsigned)n, HS_MODE_BLOCK, NULL, &db,
                             &err) != HS_SUCCESS) {
        fprintf(stderr, "hs_compile_lit_multi: %s\n", err->message);
        return 1;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    const char *text = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    hs_scratch_t *proto = NULL;
    hs_alloc_scratch(db, &proto);
    double *t = calloc((size_t)reps, sizeof *t);
    unsigned long long total = 0;
    for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
        total = 0;
        double t0 = now();
        #pragma omp parallel num_threads(threads) reduction(+ : total)
        {
            hs_scratch_t *s = NULL;
            hs_clone_scratch(proto, &s);
            unsigned long long *counts = calloc(n, sizeof *counts);
            /* 4 MiB blocks handed out dynamically, so that a thread the OS
             * preempts does not hold up the others (hetfarm balances the same way). */
            size_t nblk = (size + BLOCK - 1) / BLOCK;
            #pragma omp for schedule(dynamic, 1)
            for (size_t i = 0; i < nblk; i++) {
                size_t w = i * BLOCK, lim = size - w > BLOCK ? w + BLOCK : size;
                size_t stop = size - lim > maxlen - 1 ? lim + maxlen - 1 : size;
                struct cb c = {counts, lens, w, lim};
                hs_scan(db, text + w, (unsigned)(stop - w), 0, s, on_match, &c);
            }
            for (size_t i = 0; i < n; i++)
                total += counts[i];
            free(counts);
            hs_free_scratch(s);
        }
        if (r >= 0)
            t[r] = now() - t0;
    }
    double best = t[0];
    for (int r = 1; r < reps; r++)
        best = t[r] < best ? t[r] : best;
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("%d %zu %.6f %.6f %llu\n", threads, size, t[reps / 2], best, total);
    return 0;
}
