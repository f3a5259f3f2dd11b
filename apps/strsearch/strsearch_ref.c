/* strsearch_ref.c - the plain reference of the strsearch app.
 *
 * DESIGN
 * ------
 * The design is simple on purpose: at every offset of the range, compare every
 * pattern with memcmp, and count (and record) each one that fits before the end
 * of the text. Nothing is clever, so nothing can be subtly wrong: overlapping
 * occurrences, prefixes of each other, repeated patterns and NUL bytes are all
 * just "memcmp says equal at this offset". Tests and verify compare every
 * other matcher with it; its cost is offsets x patterns, so verify bounds the
 * bytes it checks.
 */
#include <string.h>

#include "strsearch.h"

/* Finds every pattern at every offset of [part->begin, part->end). A match may
 * run past part->end (it belongs to the range holding its first byte) but not
 * past the text's end. */
int hf__ss_ref(const struct hf__ss_patterns *p, const unsigned char *text, uint64_t size,
               struct hf__ss_part *part)
{
    uint64_t end = part->end < size ? part->end : size;
    for (uint64_t off = part->begin; off < end; off++) {
        for (size_t i = 0; i < p->n; i++) {
            /* The first-byte test only skips a memcmp that would fail anyway. */
            if (text[off] != p->p[i][0] || p->len[i] > size - off ||
                memcmp(text + off, p->p[i], p->len[i]) != 0)
                continue;
            part->counts[i]++;
            if (part->want_m && hf__ss_part_push(part, off, i))
                return HF_ENOMEM;
        }
    }
    return 0;
}
