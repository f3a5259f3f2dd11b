/* test_strsearch.c - the strsearch app against its plain reference.
 *
 * The matchers first (Hyperscan against the memcmp reference on adversarial
 * and random ranges), then whole runs through hf_run: the sim engine with
 * execute = yes under several schedulers, and the real engine with two CPU
 * teams, in both output modes, with tiny chunks so that patterns straddle every
 * chunk and segment boundary. The output file must equal what the reference
 * gives for the whole text. Bad inputs must fail with a message naming the
 * file and line and leave no output file behind.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_files.h"
#include "strsearch_expected.h"

#include "strsearch/strsearch.h"
#include "core/engine.h"

extern const struct hf_app hf_app_strsearch;

static char dir[256];
static char text_path[300], pat_path[300], out_path[300];

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t rng = 12345;
static unsigned rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng >> 33);
}

/* What the output file must hold, from the reference over the whole text. */
static char *expected_output(const char *text, size_t tlen, const char *pats, size_t plen,
                             int matches, size_t *outlen)
{
    write_file(pat_path, pats, plen);
    return ss_expected(pat_path, text, tlen, matches, outlen);
}

static const char *sim_devices =
    "[devices]\nsim = host, gpu, gpu\n"
    "[sim.host]\nkind = cpu\nrate = 1e9\n"
    "[sim.gpu]\nkind = gpu\nrate = 4e9\nlatency_us = 10\nbandwidth_gbs = 10\njitter = 0.02\n";
static const char *real_devices = "[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n";

/* Runs strsearch with [load] from `load` and the devices of `devices`. */
static int run_app(const char *load, const char *devices, enum hf_engine_kind engine,
                   const char *sched, int rounds)
{
    char ini[4096];
    snprintf(ini, sizeof ini, "[load]\ntext = %s\npatterns = %s\nout = %s\n%s\n%s", text_path,
             pat_path, out_path, load, devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    const struct hf_sched_ops *s = hf_sched_find(sched);
    assert_non_null(s);
    struct hf_run_options o = {
        .app = &hf_app_strsearch, .sched = s, .cfg = cfg, .engine = engine, .rounds = rounds,
        .seed = 3, .execute = 1, .verify = 1,
    };
    struct hf_run *run = NULL;
    int rc = hf_run(&o, &run);
    hf_run_free(run);
    hf_config_destroy(cfg);
    return rc;
}

/* Runs one case on every engine/scheduler and compares the output each time. */
static void check_case(const char *text, size_t tlen, const char *pats, size_t plen,
                       const char *extra)
{
    write_file(text_path, text, tlen);
    for (int matches = 0; matches < 2; matches++) {
        size_t elen;
        char *want = expected_output(text, tlen, pats, plen, matches, &elen);
        static const struct {
            const char *sched;
            int real;
        } runs[] = {{"hass", 0}, {"greedy", 0}, {"static", 0}, {"hass", 1}, {"greedy", 1}};
        for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
            char load[512];
            snprintf(load, sizeof load, "output = %s\ncpu_split = 5\n%s\n",
                     matches ? "matches" : "counts", extra);
            unlink(out_path);
            int rc = run_app(load, runs[r].real ? real_devices : sim_devices,
                             runs[r].real ? HF_ENGINE_REAL : HF_ENGINE_SIM, runs[r].sched, 3);
            if (rc)
                print_error("%s run (%s): %s\n", runs[r].sched, runs[r].real ? "real" : "sim",
                            hf_last_error());
            assert_int_equal(rc, 0);
            size_t glen = 0;
            char *got = read_file(out_path, &glen);
            assert_non_null(got);
            if (glen != elen || memcmp(got, want, elen) != 0)
                print_error("mode %d %s: got\n%.300s\nwant\n%.300s\n", matches, runs[r].sched,
                            got, want);
            assert_int_equal(glen, elen);
            assert_memory_equal(got, want, elen);
            free(got);
        }
        free(want);
    }
}

/* ---- the matchers ---------------------------------------------------------------- */

/* Hyperscan and the reference agree on random ranges of a random text. */
static void hyperscan_matches_reference(void **state)
{
    (void)state;
    const char pats[] = "a\naa\naaa\nab\nb\0a\nba\naa\nabab\n\0\nbbbbbbb\n";
    write_file(pat_path, pats, sizeof pats - 1);
    struct hf__ss_patterns p;
    assert_int_equal(hf__ss_patterns_load(pat_path, &p), 0);
    assert_int_equal(p.n, 10);
    assert_int_equal(p.len[4], 3); /* "b\0a": NUL inside a line */
    assert_int_equal(p.maxlen, 7);
    struct hf__ss_hs *hs;
    assert_int_equal(hf__ss_hs_create(&hs, &p), 0);
    unsigned char text[5000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = i < 1000 ? 'a' : "ab\0"[rnd() % 3];
    for (int t = 0; t < 200; t++) {
        uint64_t b = rnd() % sizeof text, e = b + rnd() % (sizeof text - b + 1);
        struct hf__ss_part x = {0}, y = {0};
        assert_int_equal(hf__ss_part_reset(&x, p.n, b, e, 1), 0);
        assert_int_equal(hf__ss_part_reset(&y, p.n, b, e, 1), 0);
        assert_int_equal(hf__ss_ref(&p, text, sizeof text, &x), 0);
        assert_int_equal(hf__ss_hs_scan(hs, text, sizeof text, &y), 0);
        assert_memory_equal(x.counts, y.counts, p.n * sizeof *x.counts);
        hf__ss_sort_matches(x.m, x.nm);
        hf__ss_sort_matches(y.m, y.nm);
        assert_int_equal(x.nm, y.nm);
        assert_memory_equal(x.m, y.m, x.nm * sizeof *x.m);
        hf__ss_part_free(&x);
        hf__ss_part_free(&y);
    }
    /* In 1000 'a's: a 1000 times, aa 999 (twice: listed twice), aaa 998. */
    struct hf__ss_part x = {0};
    assert_int_equal(hf__ss_part_reset(&x, p.n, 0, 1000, 0), 0);
    assert_int_equal(hf__ss_hs_scan(hs, text, 1000, &x), 0);
    assert_int_equal(x.counts[0], 1000);
    assert_int_equal(x.counts[1], 999);
    assert_int_equal(x.counts[2], 998);
    assert_int_equal(x.counts[6], 999);
    hf__ss_part_free(&x);
    hf__ss_hs_destroy(hs);
    hf__ss_patterns_free(&p);
}

/* ---- whole runs -------------------------------------------------------------------- */

static void repeated_bytes(void **state)
{
    (void)state;
    char text[3001];
    memset(text, 'a', sizeof text);
    const char pats[] = "a\naa\naaa\naa\n";
    check_case(text, sizeof text, pats, sizeof pats - 1, "chunk = 64\n");
}

static void prefixes_binary_and_nul(void **state)
{
    (void)state;
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "abc\0\n\xff"[rnd() % 6];
    const char pats[] = "a\nab\nabc\nabca\nabcab\nc\0\n\0\0\n\xff\xff\nbcbcb\n";
    check_case(text, sizeof text, pats, sizeof pats - 1, "chunk = 97\n");
}

/* A pattern across every chunk boundary: tiny chunks, the pattern at every
 * offset around each one. */
static void pattern_across_every_chunk_boundary(void **state)
{
    (void)state;
    char text[4096];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "xyz"[i % 3];
    const char pats[] = "xyzxyzx\nzx\nyzxy\n";
    check_case(text, sizeof text, pats, sizeof pats - 1, "chunk = 7\n");
}

/* Segments: one per round, a pattern across every segment boundary, two passes. */
static void segments_and_passes(void **state)
{
    (void)state;
    char text[10007];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "ab"[rnd() % 2];
    const char pats[] = "abba\nbab\naaaaa\nb\n";
    write_file(text_path, text, sizeof text);
    size_t elen;
    char *want = expected_output(text, sizeof text, pats, sizeof pats - 1, 0, &elen);
    unlink(out_path);
    /* 10007 bytes in segments of 1000: 11 segments, 2 passes = 22 rounds. */
    assert_int_equal(run_app("chunk = 100\nsegment = 1000\npasses = 2\n", sim_devices,
                             HF_ENGINE_SIM, "hass", 50), 0);
    size_t glen = 0;
    char *got = read_file(out_path, &glen);
    assert_non_null(got);
    assert_int_equal(glen, elen);
    assert_memory_equal(got, want, elen);
    free(got);
    /* Too few rounds for the whole text: nothing is written. */
    unlink(out_path);
    assert_int_equal(run_app("chunk = 100\nsegment = 1000\n", sim_devices, HF_ENGINE_SIM,
                             "greedy", 5), 0);
    assert_int_equal(access(out_path, F_OK), -1);
    /* Sampled verification (segment larger than verify) passes too. */
    assert_int_equal(run_app("chunk = 100\nverify = 300\noutput = matches\n", real_devices,
                             HF_ENGINE_REAL, "hass", 2), 0);
    assert_int_equal(access(out_path, F_OK), 0);
    free(want);
}

/* A scan's time is linear in its bytes, the declared work, so the engine never
 * learns chunk costs for it (hf_load.work_exact): on a real host (CPU + one
 * H200) a uniform text's chunks were learned as 0.55-4.0x one another from the
 * CPU's noise, and Qilin, fitted in the moved unit, gave the CPU 56-60% of the
 * load: 35-48 ms rounds against 12.5-16 (9edd91b:bench/NOTES.md, fifteenth session).
 * Here a sim CPU whose bundle times vary 40%, which the judge would take for
 * an irregular load. */
static void scan_work_is_never_learned(void **state)
{
    (void)state;
    char text[64 * 100];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "ab"[rnd() % 2];
    write_file(text_path, text, sizeof text);
    write_file(pat_path, "abba\nbab\n", 9);
    char ini[1024];
    snprintf(ini, sizeof ini,
             "[load]\ntext = %s\npatterns = %s\nchunk = 100\npasses = 6\nverify = 0\n"
             "[devices]\nsim = host, gpu\n[sim.host]\nkind = cpu\nrate = 2e7\njitter = 0.4\n"
             "[sim.gpu]\nkind = gpu\nrate = 4e8\nlatency_us = 20\n",
             text_path, pat_path);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    struct hf_run_options o = {
        .app = &hf_app_strsearch, .sched = hf_sched_find("hass"), .cfg = cfg,
        .engine = HF_ENGINE_SIM, .rounds = 6, .seed = 3, .execute = 1, .verify = 1,
    };
    struct hf_run *run = NULL;
    assert_int_equal(hf_run(&o, &run), 0);
    assert_int_equal(run->nchunk_cost, 64);
    double off = 0.0, mean = run->total_work / (double)run->nchunk_cost;
    for (size_t i = 0; i < run->nchunk_cost; i++)
        off = fmax(off, fabs(run->chunk_cost[i] / mean - 1.0));
    print_message("chunk costs off the declared work by up to %.1f%%\n", 100 * off);
    assert_true(off < 1e-9);
    hf_run_free(run);
    hf_config_destroy(cfg);
}

/* ---- bad input ------------------------------------------------------------------------ */

static void expect_failure(const char *pats, size_t plen, const char *load, int code,
                           const char *msg1, const char *msg2)
{
    if (pats)
        write_file(pat_path, pats, plen);
    unlink(out_path);
    int rc = run_app(load, sim_devices, HF_ENGINE_SIM, "hass", 1);
    if (rc != code || !strstr(hf_last_error(), msg1) || (msg2 && !strstr(hf_last_error(), msg2)))
        print_error("rc %d: %s\n", rc, hf_last_error());
    assert_int_equal(rc, code);
    assert_non_null(strstr(hf_last_error(), msg1));
    if (msg2)
        assert_non_null(strstr(hf_last_error(), msg2));
    assert_int_equal(access(out_path, F_OK), -1);
}

static void bad_inputs_are_named(void **state)
{
    (void)state;
    write_file(text_path, "hello world", 11);
    expect_failure("", 0, "", HF_ECONFIG, pat_path, "empty file");
    expect_failure("ab\ncd\n\nef\n", 10, "", HF_ECONFIG, pat_path, ":3: empty pattern");
    expect_failure("ab\n\n", 4, "", HF_ECONFIG, ":2: empty pattern", NULL);
    expect_failure("abcdefgh\n", 9, "chunk = 4\n", HF_ECONFIG, "chunk = 4", "8 bytes");
    /* Long patterns run on the CPU (Hyperscan); past 64 KiB they are refused. */
    static char longpat[HF_SS_MAX_PATLEN + 1];
    memset(longpat, 'x', sizeof longpat);
    expect_failure(longpat, sizeof longpat, "", HF_ECONFIG, ":1: pattern of 65537 bytes", NULL);
    expect_failure("ab\n", 3, "output = lines\n", HF_ECONFIG, "output = lines", NULL);
    unlink(pat_path);
    expect_failure(NULL, 0, "", HF_EIO, pat_path, "No such file");
    write_file(pat_path, "ab\n", 3);
    unlink(text_path);
    expect_failure(NULL, 0, "", HF_EIO, text_path, "No such file");
    write_file(text_path, "", 0);
    expect_failure(NULL, 0, "", HF_ECONFIG, text_path, "empty file");
    /* A FIFO is refused before an open that would block until a writer came. */
    unlink(text_path);
    assert_int_equal(mkfifo(text_path, 0600), 0);
    expect_failure(NULL, 0, "", HF_EIO, text_path, "not a regular file");
    unlink(text_path);
    write_file(text_path, "hello world", 11);
    /* A directory that does not exist for the output. */
    char ini[2048];
    snprintf(ini, sizeof ini, "[load]\ntext = %s\npatterns = %s\nout = %s/no/such/dir/out\n%s",
             text_path, pat_path, dir, sim_devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    struct hf_run_options o = {.app = &hf_app_strsearch, .sched = hf_sched_find("hass"),
                               .cfg = cfg, .engine = HF_ENGINE_SIM, .rounds = 1, .execute = 1};
    struct hf_run *run;
    assert_int_equal(hf_run(&o, &run), HF_EIO);
    assert_non_null(strstr(hf_last_error(), "[load] out"));
    hf_config_destroy(cfg);
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_strsearch.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(text_path, sizeof text_path, "%s/text", dir);
    snprintf(pat_path, sizeof pat_path, "%s/patterns", dir);
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    unlink(text_path);
    unlink(pat_path);
    unlink(out_path);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hyperscan_matches_reference),
        cmocka_unit_test(repeated_bytes),
        cmocka_unit_test(prefixes_binary_and_nul),
        cmocka_unit_test(pattern_across_every_chunk_boundary),
        cmocka_unit_test(segments_and_passes),
        cmocka_unit_test(scan_work_is_never_learned),
        cmocka_unit_test(bad_inputs_are_named),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
