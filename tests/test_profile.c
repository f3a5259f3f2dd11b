/* test_profile.c - the profile store: round trip, atomic save, bad files, memory store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/profile.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hf_test_profile_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Counts the files in the profile's directory (temporary files must not stay). */
static int count_files(const char *path)
{
    char d[512];
    snprintf(d, sizeof d, "%s", path);
    *strrchr(d, '/') = '\0';
    DIR *dp = opendir(d);
    if (!dp)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += e->d_name[0] != '.';
    closedir(dp);
    return n;
}

static void test_round_trip(void **state)
{
    (void)state;
    hf_profile_t p;
    assert_int_equal(hf_profile_open(&p, dir, "matmul", "n=4096 dtype=float32"), 0);
    const char *path = hf_profile_path(p);
    assert_non_null(strstr(path, dir));
    assert_non_null(strstr(path, "/matmul.n=4096_dtype=float32.prof"));
    double v[4];
    assert_int_equal(hf_profile_get(p, "cpu", "standalone_rate", v, 4), 0);
    double rate = 1.0 / 3.0 * 1e12, fit[2] = {0.1, 2.5e-12};
    assert_int_equal(hf_profile_set(p, "cpu", "standalone_rate", &rate, 1), 0);
    assert_int_equal(hf_profile_set(p, "sim:h200#1", "qilin.fit", fit, 2), 0);
    fit[0] = 0.2; /* replacing */
    assert_int_equal(hf_profile_set(p, "sim:h200#1", "qilin.fit", fit, 2), 0);
    assert_int_equal(hf_profile_save(p), 0);
    char saved[512];
    snprintf(saved, sizeof saved, "%s", path);
    hf_profile_destroy(p);

    const char *text = slurp(saved);
    assert_non_null(text);
    assert_non_null(strstr(text, "# hetfarm profile\n"));
    assert_non_null(strstr(text, "# host: "));
    assert_non_null(strstr(text, "# date: 20"));
    assert_non_null(strstr(text, "# app: matmul\n"));
    assert_non_null(strstr(text, "# signature: n=4096 dtype=float32\n"));
    assert_non_null(strstr(text, "sim:h200#1\tqilin.fit\t0.20000000000000001 "));
    assert_int_equal(count_files(saved), 1);

    assert_int_equal(hf_profile_open(&p, dir, "matmul", "n=4096 dtype=float32"), 0);
    assert_int_equal(hf_profile_get(p, "cpu", "standalone_rate", v, 4), 1);
    assert_true(v[0] == rate); /* %.17g: bit-exact */
    assert_int_equal(hf_profile_get(p, "sim:h200#1", "qilin.fit", v, 1), 2); /* cap 1 */
    assert_true(v[0] == 0.2);
    assert_int_equal(hf_profile_get(p, "sim:h200#1", "qilin.fit", v, 4), 2);
    assert_true(v[1] == 2.5e-12);
    /* Another signature is another file. */
    hf_profile_t q;
    assert_int_equal(hf_profile_open(&q, dir, "matmul", "n=8192 dtype=float32"), 0);
    assert_int_equal(hf_profile_get(q, "cpu", "standalone_rate", v, 4), 0);
    assert_string_not_equal(hf_profile_path(p), hf_profile_path(q));
    hf_profile_destroy(q);
    hf_profile_destroy(p);
}

static void test_atomic_save(void **state)
{
    (void)state;
    hf_profile_t p;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/deep/er", dir); /* mkdir -p */
    assert_int_equal(hf_profile_open(&p, sub, "noop", "chunks=10"), 0);
    double one = 1;
    assert_int_equal(hf_profile_set(p, "cpu", "k", &one, 1), 0);
    assert_int_equal(hf_profile_save(p), 0);
    struct stat st1;
    assert_int_equal(stat(hf_profile_path(p), &st1), 0);
    assert_int_equal(count_files(hf_profile_path(p)), 1);
    /* A second save writes a new file and renames it over the old one. */
    double two = 2;
    assert_int_equal(hf_profile_set(p, "cpu", "k", &two, 1), 0);
    assert_int_equal(hf_profile_save(p), 0);
    struct stat st2;
    assert_int_equal(stat(hf_profile_path(p), &st2), 0);
    assert_true(st1.st_ino != st2.st_ino);
    assert_int_equal(count_files(hf_profile_path(p)), 1);
    /* An unchanged profile is not rewritten. */
    assert_int_equal(hf_profile_set(p, "cpu", "k", &two, 1), 0);
    assert_int_equal(hf_profile_save(p), 0);
    struct stat st3;
    assert_int_equal(stat(hf_profile_path(p), &st3), 0);
    assert_true(st3.st_ino == st2.st_ino);
    hf_profile_destroy(p);

    /* A directory that cannot be created fails cleanly. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/file", dir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(hf_profile_open(&p, bad, "noop", "x"), 0);
    assert_int_equal(hf_profile_set(p, "cpu", "k", &one, 1), 0);
    hf_clear_error();
    assert_int_equal(hf_profile_save(p), HF_EIO);
    assert_non_null(strstr(hf_last_error(), bad));
    hf_profile_destroy(p);
}

static void test_malformed(void **state)
{
    (void)state;
    hf_profile_t p;
    assert_int_equal(hf_profile_open(&p, dir, "app", "bad"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s", hf_profile_path(p));
    double one = 1;
    hf_profile_set(p, "cpu", "k", &one, 1);
    assert_int_equal(hf_profile_save(p), 0);
    hf_profile_destroy(p);

    FILE *f = fopen(path, "a");
    fputs("# comment\ncpu\tonly-two-fields\n", f);
    fclose(f);
    hf_clear_error();
    assert_int_equal(hf_profile_open(&p, dir, "app", "bad"), HF_ECONFIG);
    assert_null(p);
    char want[600];
    snprintf(want, sizeof want, "%s:8: malformed profile line", path);
    assert_non_null(strstr(hf_last_error(), want));

    f = fopen(path, "w");
    fputs("# hetfarm profile\ncpu\trate\t1.5 abc\n", f);
    fclose(f);
    hf_clear_error();
    assert_int_equal(hf_profile_open(&p, dir, "app", "bad"), HF_ECONFIG);
    snprintf(want, sizeof want, "%s:2: malformed profile value 'abc'", path);
    assert_non_null(strstr(hf_last_error(), want));
}

static void test_memory_store(void **state)
{
    (void)state;
    hf_profile_t p;
    assert_int_equal(hf_profile_open(&p, NULL, "matmul", "n=1"), 0);
    assert_string_equal(hf_profile_path(p), "");
    double v[3] = {1, 2, 3}, out[3];
    assert_int_equal(hf_profile_set(p, "cpu", "hass.rate", v, 3), 0);
    assert_int_equal(hf_profile_get(p, "cpu", "hass.rate", out, 3), 3);
    assert_true(out[2] == 3);
    assert_int_equal(hf_profile_save(p), 0);
    /* Names that the file format could not hold are refused. */
    hf_clear_error();
    assert_int_equal(hf_profile_set(p, "c\tpu", "k", v, 1), HF_EINVAL);
    hf_profile_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_save, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test(test_memory_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
