/* fuzz_strsearch.c - libFuzzer harness: the strsearch patterns file and text reader.
 * seeds: tests/fuzz/seeds/strsearch
 *
 * DESIGN
 * ------
 * One input is a patterns file and a text: the first two bytes give the
 * patterns file's length (little-endian, cut to what is there), the rest is
 * the text. The patterns go through the same parser as a file on disk
 * (hf__ss_patterns_parse); the text is written to a scratch file and opened
 * through hf__ss_text_open, the reader `[load] text` uses. When both are
 * accepted the harness is differential: Hyperscan (the CPU matcher) must
 * count exactly what the plain reference counts, over the whole text and over
 * the text cut in two ranges (the chunk overlap), or the harness aborts.
 * Rejected inputs must come with a message (hf_last_error) naming the file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "strsearch/strsearch.h"

static char text_path[64];

/* Checks that a refusal came with a message naming the input. */
static void check_message(const char *name)
{
    if (!strstr(hf_last_error(), name)) {
        fprintf(stderr, "refusal without the file in its message: '%s'\n", hf_last_error());
        abort();
    }
}

/* Counts with the reference and with Hyperscan over [begin, end); aborts on a difference. */
static void compare(const struct hf__ss_patterns *p, struct hf__ss_hs *hs,
                    const unsigned char *text, uint64_t size, uint64_t begin, uint64_t end)
{
    struct hf__ss_part ref = {0}, got = {0};
    if (hf__ss_part_reset(&ref, p->n, begin, end, 1) || hf__ss_part_reset(&got, p->n, begin, end, 1))
        abort();
    if (hf__ss_ref(p, text, size, &ref) || hf__ss_hs_scan(hs, text, size, &got)) {
        fprintf(stderr, "matcher failed: %s\n", hf_last_error());
        abort();
    }
    for (size_t i = 0; i < p->n; i++)
        if (ref.counts[i] != got.counts[i]) {
            fprintf(stderr, "pattern %zu: reference %llu, Hyperscan %llu in [%llu, %llu)\n", i,
                    (unsigned long long)ref.counts[i], (unsigned long long)got.counts[i],
                    (unsigned long long)begin, (unsigned long long)end);
            abort();
        }
    hf__ss_part_free(&ref);
    hf__ss_part_free(&got);
}

/* Writes the text to the scratch file and opens it as [load] text would. */
static int open_text(const uint8_t *data, size_t len, int *fd, uint64_t *size)
{
    int w = open(text_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (w < 0 || (len && write(w, data, len) != (ssize_t)len))
        abort();
    close(w);
    hf_clear_error();
    int rc = hf__ss_text_open("fuzz.ini:3", text_path, fd, size);
    if (rc)
        check_message(text_path);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!text_path[0])
        snprintf(text_path, sizeof text_path, "/tmp/hf-fuzz-text-%d", (int)getpid());
    if (size < 2)
        return 0;
    size_t plen = (size_t)data[0] | (size_t)data[1] << 8;
    if (plen > size - 2)
        plen = size - 2;
    char *buf = malloc(plen + 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 2, plen);
    buf[plen] = '\0';
    struct hf__ss_patterns p;
    hf_clear_error();
    if (hf__ss_patterns_parse("fuzz.pat", buf, plen, &p) != 0) {
        check_message("fuzz.pat");
        return 0;
    }
    int fd = -1;
    uint64_t tsize = 0;
    const uint8_t *t = data + 2 + plen;
    if (open_text(t, size - 2 - plen, &fd, &tsize) == 0) {
        void *m = mmap(NULL, tsize, PROT_READ, MAP_SHARED, fd, 0);
        struct hf__ss_hs *hs = NULL;
        if (m != MAP_FAILED && hf__ss_hs_create(&hs, &p) == 0) {
            compare(&p, hs, m, tsize, 0, tsize);
            compare(&p, hs, m, tsize, 0, tsize / 2);
            compare(&p, hs, m, tsize, tsize / 2, tsize);
            hf__ss_hs_destroy(hs);
        }
        if (m != MAP_FAILED)
            munmap(m, tsize);
    }
    if (fd >= 0)
        close(fd);
    hf__ss_patterns_free(&p);
    return 0;
}
