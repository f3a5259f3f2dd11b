/* strsearch_expected.h - the output file the strsearch tests expect, written
 * here from the plain reference (strsearch_ref.c) in the documented formats,
 * independently of the app's own writer. Include after <cmocka.h>. */
#ifndef HF_TEST_STRSEARCH_EXPECTED_H
#define HF_TEST_STRSEARCH_EXPECTED_H

#include <stdio.h>

#include "strsearch/strsearch.h"

/* `<count>\t<pattern>` lines (counts) or sorted `<offset>\t<index>` lines
 * (matches) for the patterns in pat_path over text; malloc'd, length in *outlen. */
static inline char *ss_expected(const char *pat_path, const char *text, size_t tlen, int matches,
                                size_t *outlen)
{
    struct hf__ss_patterns p;
    assert_int_equal(hf__ss_patterns_load(pat_path, &p), 0);
    struct hf__ss_part part = {0};
    assert_int_equal(hf__ss_part_reset(&part, p.n, 0, tlen, matches), 0);
    assert_int_equal(hf__ss_ref(&p, (const unsigned char *)text, tlen, &part), 0);
    hf__ss_sort_matches(part.m, part.nm);
    char *buf;
    size_t blen;
    FILE *f = open_memstream(&buf, &blen);
    for (size_t i = 0; !matches && i < p.n; i++) {
        fprintf(f, "%llu\t", (unsigned long long)part.counts[i]);
        fwrite(p.p[i], 1, p.len[i], f);
        fputc('\n', f);
    }
    for (size_t i = 0; matches && i < part.nm; i++)
        fprintf(f, "%llu\t%llu\n", (unsigned long long)part.m[i].off,
                (unsigned long long)part.m[i].pat);
    fclose(f);
    hf__ss_part_free(&part);
    hf__ss_patterns_free(&p);
    *outlen = blen;
    return buf;
}

#endif
