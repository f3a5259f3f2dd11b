/* strsearch.h - the strsearch app's shared pieces: the pattern set, match
 * records and per-range results, and the three matchers that fill them (the
 * plain reference, Hyperscan on the CPU, PFAC on the GPU).
 *
 * Offsets are always file offsets of the text (uint64), so that results of
 * different segments, chunks and pieces can be merged by plain addition and
 * concatenation. A "range" [begin, end) owns every match whose FIRST byte lies
 * in it; a matcher reads up to (longest pattern - 1) bytes past `end` (the
 * overlap) but never past the end of the text.
 */
#ifndef HF_STRSEARCH_H
#define HF_STRSEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HF_SS_MAX_PATTERNS 10000
/* The CPU path (Hyperscan literals) takes long patterns; the bound keeps the
 * overlap between chunks small next to a chunk and the file small enough to
 * read whole. */
#define HF_SS_MAX_PATLEN 65536
#define HF_SS_MAX_FILE ((size_t)64 << 20)
/* The GPU path (PFAC) holds a tile of text plus (longest pattern - 1) bytes
 * in shared memory: longer patterns are searched on the CPU only. */
#define HF_SS_GPU_MAX_PATLEN 255

/* The patterns, one per line of the patterns file, in file order. */
struct hf__ss_patterns {
    size_t n;                  /* 1 .. HF_SS_MAX_PATTERNS */
    const unsigned char **p;   /* p[i] points into buf; patterns may hold NUL bytes */
    size_t *len;               /* 1 .. HF_SS_MAX_PATLEN */
    size_t maxlen;             /* the longest pattern: overlap = maxlen - 1 */
    char *buf;                 /* the file's bytes */
};

/* One occurrence: the file offset of its first byte and the pattern index. */
struct hf__ss_match {
    uint64_t off;
    uint64_t pat;
};

/* The result of matching one range [begin, end) of the text (file offsets). */
struct hf__ss_part {
    uint64_t begin, end;
    uint64_t *counts;          /* npat counters (capacity kept between uses) */
    struct hf__ss_match *m;    /* matches, unsorted, when want_m */
    size_t nm, mcap;
    int want_m;
    int overflow;              /* GPU: the match buffer overflowed, rescan on the CPU */
    int err;                   /* an HF_E* code from the matcher, 0 when fine */
};

/* Reads a patterns file. Fails with HF_EIO / HF_ECONFIG and a message naming
 * the file and line (missing file, empty file, empty line, too long, too many). */
int hf__ss_patterns_load(const char *path, struct hf__ss_patterns *out);
/* The same from `len` bytes already in memory; takes `buf` (malloc'd, one byte
 * longer than len) in every case. `path` names the file in messages. */
int hf__ss_patterns_parse(const char *path, char *buf, size_t len, struct hf__ss_patterns *out);
/* Opens the text to search: checks the file type BEFORE an open that could
 * block (a FIFO), refuses what is not a non-empty regular file, and returns
 * the descriptor and size. `where` is the config's file:line for messages. */
int hf__ss_text_open(const char *where, const char *path, int *fd, uint64_t *size);
void hf__ss_patterns_free(struct hf__ss_patterns *p);

/* Prepares `part` for a range: sets begin/end, zeroes its counts (allocating
 * them for npat patterns) and empties its matches. */
int hf__ss_part_reset(struct hf__ss_part *part, size_t npat, uint64_t begin, uint64_t end,
                      int want_m);
/* Appends a match (growing the array). */
int hf__ss_part_push(struct hf__ss_part *part, uint64_t off, uint64_t pat);
void hf__ss_part_free(struct hf__ss_part *part);
/* Orders matches by offset, then pattern index. */
void hf__ss_sort_matches(struct hf__ss_match *m, size_t n);

/* The reference (strsearch_ref.c): a memcmp of every pattern at every offset
 * of [part->begin, part->end) of text[0..size). Obviously correct, slow. */
int hf__ss_ref(const struct hf__ss_patterns *p, const unsigned char *text, uint64_t size,
               struct hf__ss_part *part);

/* Hyperscan (strsearch_hs.c): a literal database and a pool of scratches. */
struct hf__ss_hs;
int hf__ss_hs_create(struct hf__ss_hs **hs, const struct hf__ss_patterns *p);
void hf__ss_hs_destroy(struct hf__ss_hs *hs);
/* Scans [part->begin, part->end) of text[0..size) (plus the overlap) into part.
 * Thread-safe: each call takes a scratch from the pool. */
int hf__ss_hs_scan(struct hf__ss_hs *hs, const unsigned char *text, uint64_t size,
                   struct hf__ss_part *part);

#ifdef HF_HAVE_CUDA
struct hf_cuda;
/* The GPU side (strsearch_cuda.cu). A PFAC automaton built once on the host
 * (hf__ss_pfac_build) and uploaded lazily to each GPU. */
struct hf__ss_pfac;
int hf__ss_pfac_build(struct hf__ss_pfac **pf, const struct hf__ss_patterns *p);
void hf__ss_pfac_destroy(struct hf__ss_pfac *pf); /* frees every GPU's copy too */
/* Enqueues the search of part's range on `gpu`: text[0..size) is the whole
 * mapped text (`pinned`: registered with CUDA, copied directly; else through
 * the slot's staging buffer). Results land in `part` when the piece finishes;
 * part->overflow asks the caller to rescan the range on the CPU. */
int hf__ss_cuda_run(struct hf_cuda *gpu, struct hf__ss_pfac *pf, const unsigned char *text,
                    uint64_t size, int pinned, struct hf__ss_part *part);
#endif

#ifdef __cplusplus
}
#endif
#endif
