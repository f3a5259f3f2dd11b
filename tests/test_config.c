/* test_config.c - the INI reader: line numbers, typed getters, errors, unused keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetfarm.h"

static hf_config_t parse_ok(const char *text)
{
    hf_config_t cfg = NULL;
    hf_clear_error();
    int rc = hf_config_parse(&cfg, "t.ini", text);
    if (rc != 0)
        fail_msg("parse failed: %s", hf_last_error());
    assert_non_null(cfg);
    return cfg;
}

/* Parses text that must fail; returns the message. */
static const char *parse_bad(const char *text, int want)
{
    hf_config_t cfg = (hf_config_t)1;
    hf_clear_error();
    assert_int_equal(hf_config_parse(&cfg, "t.ini", text), want);
    assert_null(cfg);
    return hf_last_error();
}

static void test_values_and_where(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("; comment\n"
                               "[run]\n"
                               "app = matmul\n"
                               "\n"
                               "  rounds = 7   # indented, inline comment\n"
                               "[load]\n"
                               "n = 4096 ; semicolon comment\n"
                               "name = sim:h200#1\n");
    assert_string_equal(hf_config_get(cfg, "run", "app"), "matmul");
    assert_string_equal(hf_config_get(cfg, "run", "rounds"), "7");
    assert_string_equal(hf_config_get(cfg, "load", "n"), "4096");
    /* '#' without whitespace before it is part of the value. */
    assert_string_equal(hf_config_get(cfg, "load", "name"), "sim:h200#1");
    assert_null(hf_config_get(cfg, "load", "missing"));
    assert_string_equal(hf_config_where(cfg, "run", "rounds"), "t.ini:5");
    assert_string_equal(hf_config_where(cfg, "load", "n"), "t.ini:7");
    assert_string_equal(hf_config_where(cfg, "load", "missing"), "t.ini");
    assert_string_equal(hf_config_path(cfg), "t.ini");
    assert_true(hf_config_has_section(cfg, "run"));
    assert_false(hf_config_has_section(cfg, "nope"));
    hf_config_destroy(cfg);
}

static void test_empty_section_exists(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("\xEF\xBB\xBF[hass]\r\n[run]\r\napp = x\r\n");
    assert_true(hf_config_has_section(cfg, "hass"));
    assert_string_equal(hf_config_get(cfg, "run", "app"), "x"); /* CRLF line ends */
    hf_config_destroy(cfg);
}

static void test_long_and_double(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("[a]\nx = 42\nhex = 0x10\nbad = 4x\nbig = 100\n"
                               "f = 2.5e3\nfbad = abc\n");
    long l;
    double d;
    assert_int_equal(hf_config_long(cfg, "a", "x", 0, 0, 100, &l), 0);
    assert_int_equal(l, 42);
    assert_int_equal(hf_config_long(cfg, "a", "hex", 0, 0, 100, &l), 0);
    assert_int_equal(l, 16);
    assert_int_equal(hf_config_long(cfg, "a", "absent", 9, 0, 100, &l), 0);
    assert_int_equal(l, 9);
    hf_clear_error();
    assert_int_equal(hf_config_long(cfg, "a", "bad", 0, 0, 100, &l), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:4: [a] bad = 4x: expected an integer"));
    hf_clear_error();
    assert_int_equal(hf_config_long(cfg, "a", "big", 0, 0, 10, &l), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:5: [a] big = 100: expected an integer in [0, 10]"));
    assert_int_equal(hf_config_double(cfg, "a", "f", 0, 0, 1e9, &d), 0);
    assert_true(d == 2500.0);
    hf_clear_error();
    assert_int_equal(hf_config_double(cfg, "a", "fbad", 0, 0, 1, &d), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:7: [a] fbad = abc: expected a number"));
    hf_config_destroy(cfg);
}

static void test_sizes(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("[s]\na = 4096\nb = 64K\nc = 2MiB\nd = 1G\ne = 1.5k\n"
                               "f = 3X\ng = 2TiB\nh = 0.3\n");
    size_t v;
    assert_int_equal(hf_config_size(cfg, "s", "a", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(hf_config_size(cfg, "s", "b", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(hf_config_size(cfg, "s", "c", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, 2u << 20);
    assert_int_equal(hf_config_size(cfg, "s", "d", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, 1u << 30);
    assert_int_equal(hf_config_size(cfg, "s", "e", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(hf_config_size(cfg, "s", "g", 0, 0, SIZE_MAX, &v), 0);
    assert_int_equal(v, (size_t)2 << 40);
    hf_clear_error();
    assert_int_equal(hf_config_size(cfg, "s", "f", 0, 0, SIZE_MAX, &v), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:7: [s] f = 3X"));
    hf_clear_error();
    assert_int_equal(hf_config_size(cfg, "s", "h", 0, 0, SIZE_MAX, &v), HF_ECONFIG);
    hf_clear_error();
    assert_int_equal(hf_config_size(cfg, "s", "b", 0, 0, 1000, &v), HF_ECONFIG);
    hf_config_destroy(cfg);
}

static void test_bool_and_str(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("[b]\ny = yes\nn = Off\nt = true\nbad = maybe\ns = hello world\n");
    int b;
    const char *s;
    assert_int_equal(hf_config_bool(cfg, "b", "y", 0, &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(hf_config_bool(cfg, "b", "n", 1, &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(hf_config_bool(cfg, "b", "t", 0, &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(hf_config_bool(cfg, "b", "absent", 1, &b), 0);
    assert_int_equal(b, 1);
    hf_clear_error();
    assert_int_equal(hf_config_bool(cfg, "b", "bad", 0, &b), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:5: [b] bad = maybe: expected yes or no"));
    assert_int_equal(hf_config_str(cfg, "b", "s", "d", &s), 0);
    assert_string_equal(s, "hello world");
    assert_int_equal(hf_config_str(cfg, "b", "absent", "d", &s), 0);
    assert_string_equal(s, "d");
    hf_config_destroy(cfg);
}

static void test_lists(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("[c]\nl = hass, greedy ,minmin\none = x\nbad = a,,b\n");
    char **items;
    assert_int_equal(hf_config_list(cfg, "c", "l", &items), 3);
    assert_string_equal(items[0], "hass");
    assert_string_equal(items[1], "greedy");
    assert_string_equal(items[2], "minmin");
    assert_null(items[3]);
    for (int i = 0; items[i]; i++)
        free(items[i]);
    free(items);
    assert_int_equal(hf_config_list(cfg, "c", "one", &items), 1);
    free(items[0]);
    free(items);
    assert_int_equal(hf_config_list(cfg, "c", "absent", &items), 0);
    assert_null(items[0]);
    free(items);
    hf_clear_error();
    assert_int_equal(hf_config_list(cfg, "c", "bad", &items), HF_ECONFIG);
    assert_null(items);
    assert_non_null(strstr(hf_last_error(), "t.ini:4:"));
    hf_config_destroy(cfg);
}

static void test_duplicate_key(void **state)
{
    (void)state;
    const char *m = parse_bad("[run]\napp = a\nrounds = 1\napp = b\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:4:"));
    assert_non_null(strstr(m, "line 2"));
    assert_non_null(strstr(m, "app"));
    /* The same key in two sections is fine. */
    hf_config_t cfg = parse_ok("[a]\nk = 1\n[b]\nk = 2\n");
    hf_config_destroy(cfg);
}

static void test_malformed(void **state)
{
    (void)state;
    const char *m = parse_bad("[run]\napp = a\nthis line has no equals sign\nx = 1\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:3: malformed line"));
    m = parse_bad("[run\napp = a\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:1: malformed line"));
    m = parse_bad("app = a\n[run]\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:1:"));
    assert_non_null(strstr(m, "outside any [section]"));
    /* The first of two errors is reported. */
    m = parse_bad("[a]\nbroken\nk = 1\nk = 2\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:2: malformed line"));
    m = parse_bad("[a]\nk = 1\nk = 2\nbroken\n", HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:3:"));
    /* An over-long line is refused rather than split. */
    char big[600];
    memset(big, 'x', sizeof big);
    memcpy(big, "[a]\nk = ", 8);
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    m = parse_bad(big, HF_ECONFIG);
    assert_non_null(strstr(m, "t.ini:2: line too long"));
    /* ... unless it is a comment. */
    memcpy(big, "[a]\n# = ", 8);
    hf_config_t cfg = parse_ok(big);
    hf_config_destroy(cfg);
}

static void test_unused(void **state)
{
    (void)state;
    hf_config_t cfg = parse_ok("[run]\napp = a\nrouds = 3\n[hass]\nknob = 1\n");
    static const char *const sections[] = {"run", NULL};
    assert_non_null(hf_config_get(cfg, "run", "app"));
    hf_clear_error();
    assert_int_equal(hf_config_check_unused(cfg, sections), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "t.ini:3: [run] rouds"));
    /* Once read (any getter), the key counts as used; [hass] is not checked. */
    long l;
    assert_int_equal(hf_config_long(cfg, "run", "rouds", 0, 0, 10, &l), 0);
    assert_int_equal(hf_config_check_unused(cfg, sections), 0);
    static const char *const both[] = {"run", "hass", NULL};
    assert_int_equal(hf_config_check_unused(cfg, both), HF_ECONFIG);
    hf_config_destroy(cfg);
}

static void test_load_file(void **state)
{
    (void)state;
    char path[] = "/tmp/hf_test_config_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "[run]\napp = noop\n\n[load]\nchunks = 12x\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (int)(sizeof text - 1));
    close(fd);
    hf_config_t cfg;
    hf_clear_error();
    assert_int_equal(hf_config_load(&cfg, path), 0);
    long l;
    hf_clear_error();
    assert_int_equal(hf_config_long(cfg, "load", "chunks", 1, 1, 100, &l), HF_ECONFIG);
    char want[128];
    snprintf(want, sizeof want, "%s:5: [load] chunks = 12x", path);
    assert_non_null(strstr(hf_last_error(), want));
    hf_config_destroy(cfg);
    unlink(path);

    hf_clear_error();
    assert_int_equal(hf_config_load(&cfg, "/nonexistent/x.ini"), HF_ENOENT);
    assert_null(cfg);
    assert_non_null(strstr(hf_last_error(), "/nonexistent/x.ini"));
}

static void test_errors(void **state)
{
    (void)state;
    assert_string_equal(hf_strerror(HF_ECONFIG), "bad configuration");
    assert_string_equal(hf_strerror(0), "success");
    assert_string_equal(hf_strerror(12345), "unknown error");
    hf_clear_error();
    assert_string_equal(hf_last_error(), "");
    assert_int_equal(hf_fail(HF_EIO, "first %d", 1), HF_EIO);
    assert_int_equal(hf_fail(HF_EINVAL, "second"), HF_EINVAL);
    assert_string_equal(hf_last_error(), "first 1");
    hf_clear_error();
    assert_string_equal(hf_last_error(), "");
}

/* A table in the shape owners write them: one line per key. */
static const struct hf_config_key dev_keys[] = {
    {"devices", "sim", HF_KEY_LIST, 0, 0, HF_KEY_NAMES_SECTIONS, "sim", NULL, "modelled devices"},
    {"sim.*", "rate", HF_KEY_NUM, 0, 1e300, HF_KEY_MIN_OPEN | HF_KEY_REQUIRED, NULL, NULL, "work/s"},
    {"sim.*", "jitter", HF_KEY_NUM, 0, 1, HF_KEY_MAX_OPEN, NULL, "0", "noise"},
    {"sim.*", "kind", HF_KEY_STR, 0, 0, 0, "gpu|cpu", "gpu", "what it models"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};
static const struct hf_config_key load_keys[] = {
    {NULL, "n", HF_KEY_INT, 1, 100, 0, "auto", "auto", "size"},
    {NULL, "chunk", HF_KEY_SIZE, 1, 1 << 20, 0, NULL, "4K", "bytes"},
    {NULL, "pin", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "pin"},
    {NULL, "modes", HF_KEY_LIST, 0, 0, 0, "a|b", NULL, "modes"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};
static const struct hf_config_key no_keys[] = {{NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const struct hf_config_rules rules[] = {
    {NULL, dev_keys, NULL},
    {"load", load_keys, "app t"},
    {"quiet", no_keys, NULL}, /* a section without keys */
    {"legacy", NULL, NULL},   /* an owner without a table: not checked here */
};

/* Validates `text` against the rules: 0, or the message must hold `want`. */
static void validate(const char *text, const char *want)
{
    hf_config_t cfg = parse_ok(text);
    hf_clear_error();
    int rc = hf_config_validate(cfg, rules, sizeof rules / sizeof rules[0]);
    if (!want && rc)
        fail_msg("rejected: %s", hf_last_error());
    if (want && (rc != HF_ECONFIG || !strstr(hf_last_error(), want)))
        fail_msg("want \"%s\", got %d \"%s\"", want, rc, hf_last_error());
    hf_config_destroy(cfg);
}

#define DEV "[devices]\nsim = a\n[sim.a]\nrate = 1\n"

static void test_validate(void **state)
{
    (void)state;
    validate(DEV "jitter = 0.5\nkind = cpu\n[load]\nn = auto\nchunk = 64K\npin = no\n"
                 "modes = a, b\n[quiet]\n", NULL);
    validate(DEV "[load]\nn = 100\n", NULL);
    validate(DEV "latncy = 1\n", "t.ini:5: [sim.a] latncy: unknown key; valid keys: rate, jitter, kind");
    validate(DEV "[simm]\n", "t.ini:5: [simm]: unknown section; valid sections: devices, sim.NAME, load, quiet, legacy");
    validate(DEV "jitter = 1\n", "t.ini:5: [sim.a] jitter = 1: expected a number in [0, 1)");
    validate(DEV "jitter = -0\n", NULL);
    validate("[devices]\nsim = a\n[sim.a]\nrate = 0\n", "t.ini:4: [sim.a] rate = 0: expected a number in (0, 1e+300]");
    validate("[devices]\nsim = a\n[sim.a]\nrate = nan\n", "rate = nan: expected a finite number");
    validate("[devices]\nsim = a\n[sim.a]\nrate = -inf\n", "rate = -inf: expected a finite number");
    validate("[devices]\nsim = a\n[sim.a]\nkind = cpu\n", "t.ini:3: [sim.a] rate: missing");
    validate(DEV "kind = fpga\n", "[sim.a] kind = fpga: expected one of gpu|cpu");
    validate(DEV "[sim.b]\nrate = 1\n", "t.ini:5: [sim.b]: not named by [devices] sim");
    validate("[devices]\nsim = a, b\n[sim.a]\nrate = 1\n", "'b' names no [sim.b] section");
    validate("[sim.a]\nrate = 1\n", "t.ini:1: [sim.a]: not named by [devices] sim");
    validate(DEV "[load]\nn = 0\n", "[load] n = 0: expected an integer in [1, 100]");
    validate(DEV "[load]\nn = 99999999999999999999\n", "overflows");
    validate(DEV "[load]\nn = lots\n", "expected an integer or one of auto");
    validate(DEV "[load]\nchunk = 0\n", "[load] chunk = 0: expected a size in [1, 1048576] bytes");
    validate(DEV "[load]\nchunk = 2M\n", "expected a size in [1, 1048576] bytes");
    validate(DEV "[load]\nchunk = 0.5\n", "expected a whole number of bytes");
    validate(DEV "[load]\nchunk = 4Q\n", "expected a size such as");
    validate(DEV "[load]\npin = perhaps\n", "expected yes or no");
    validate(DEV "[load]\nmodes = a, c\n", "'c' is not one of a|b");
    validate(DEV "[load]\nmodes = a,,b\n", "empty item");
    validate(DEV "[quiet]\nknob = 1\n", "[quiet] knob: unknown key; valid keys: none");
    validate(DEV "[legacy]\nanything = at all\n", NULL);
}

/* The help lists every key with its range, default and text, from the same tables. */
static void test_keys_help(void **state)
{
    (void)state;
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    hf_config_keys_help(f, rules, sizeof rules / sizeof rules[0]);
    fclose(f);
    assert_non_null(strstr(buf, "[sim.NAME]\n"));
    assert_non_null(strstr(buf, "jitter          number in [0, 1), default 0; noise"));
    assert_non_null(strstr(buf, "rate            number in (0, 1e+300], required; work/s"));
    assert_non_null(strstr(buf, "[load] (for app t)"));
    assert_non_null(strstr(buf, "n               integer in [1, 100] or auto, default auto; size"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_where), cmocka_unit_test(test_empty_section_exists),
        cmocka_unit_test(test_long_and_double),  cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_bool_and_str),     cmocka_unit_test(test_lists),
        cmocka_unit_test(test_duplicate_key),    cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_unused),           cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_errors),           cmocka_unit_test(test_validate),
        cmocka_unit_test(test_keys_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
