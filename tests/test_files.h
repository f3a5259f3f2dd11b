/* test_files.h - file helpers shared by the tests (include after <cmocka.h>). */
#ifndef HF_TEST_FILES_H
#define HF_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The data the repository ships for its tests (tests/data/README.md says
 * where each file comes from). Paths are relative to the repository root:
 * the Makefile runs every test from there, so a clone in any folder finds
 * them, and no test reads anything outside the repository. */
#define HF_TEST_4ELT "tests/data/4elt.graph"

/* `path` (one of the HF_TEST_* files), after checking that it is there. The
 * data is part of the repository, so a missing file is a failure, not a
 * skip: the test was started from another folder than the root. */
static inline const char *test_data(const char *path)
{
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "%s: not found: run the tests from the repository root (make test does)\n",
                path);
        exit(1);
    }
    return path;
}

/* Writes len bytes to path, failing the test on any error. */
static inline void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* The whole file, NUL-terminated, with its length in *len; NULL when absent. */
static inline char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* The whole file as a NUL-terminated string (free it), or NULL when absent. */
static inline char *read_text(const char *path)
{
    size_t len;
    return read_file(path, &len);
}

/* Writes n bytes of a four-letter alphabet (a fixed LCG, so every run sees the
 * same text) and the few patterns that occur often in it: a strsearch load. */
static inline void write_dna_load(const char *text_path, size_t n, const char *pat_path)
{
    char *text = malloc(n);
    assert_non_null(text);
    unsigned long x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        text[i] = "acgt"[(x >> 33) & 3];
    }
    write_file(text_path, text, n);
    free(text);
    const char pats[] = "acgt\ngattaca\nttt\ncagcag\n";
    write_file(pat_path, pats, sizeof pats - 1);
}

/* Removes a test's temporary directory and everything in it; 0 on success. */
static inline int remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
