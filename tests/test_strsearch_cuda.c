/* test_strsearch_cuda.c - the strsearch app's GPU path (PFAC) against the reference.
 *
 * Skipped (exit 77) in builds without CUDA and on machines without a GPU. Whole
 * runs on the real engine with the CPU and every GPU (GPU 0 as two devices,
 * cuda = 0,0, where it is the only one: gpu_pair.h), in both output modes, with
 * pieces small enough that the CUDA driver pipelines several per bundle: text
 * copied from the pinned mapping and through the staging buffers, a match
 * buffer that overflows (the CPU then searches the piece again), NUL bytes,
 * prefixes, repeated patterns and patterns across every chunk boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_files.h"
#include "strsearch_expected.h"

#include "strsearch/strsearch.h"
#include "core/engine.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#include "gpu_pair.h"
#endif

#ifdef HF_HAVE_CUDA
extern const struct hf_app hf_app_strsearch;

static char dir[256], text_path[300], pat_path[300], out_path[300];

/* Runs text/pats through CPU + GPUs under `sched` in every mode and pin setting. */
static void check(const char *text, size_t tlen, const char *pats, size_t plen, size_t chunk)
{
    write_file(text_path, text, tlen);
    write_file(pat_path, pats, plen);
    for (int matches = 0; matches < 2; matches++)
        for (int pin = 0; pin < 2; pin++)
            for (int sc = 0; sc < 2; sc++) {
                char ini[2048];
                snprintf(ini, sizeof ini,
                         "[load]\ntext = %s\npatterns = %s\nout = %s\noutput = %s\nchunk = %zu\n"
                         "pin = %s\n[devices]\ncpu = 1\ncuda = %s\n",
                         text_path, pat_path, out_path, matches ? "matches" : "counts", chunk,
                         pin ? "yes" : "no", hf_test_gpus());
                hf_config_t cfg;
                assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
                struct hf_run_options o = {
                    .app = &hf_app_strsearch, .sched = hf_sched_find(sc ? "greedy" : "hass"),
                    .cfg = cfg, .engine = HF_ENGINE_REAL, .rounds = 3, .seed = 1, .verify = 1,
                };
                unlink(out_path);
                struct hf_run *run = NULL;
                int rc = hf_run(&o, &run);
                if (rc)
                    print_error("%s\n", hf_last_error());
                assert_int_equal(rc, 0);
                hf_run_free(run);
                hf_config_destroy(cfg);
                size_t elen, glen;
                char *want = ss_expected(pat_path, text, tlen, matches, &elen);
                char *got = read_file(out_path, &glen);
                assert_non_null(got);
                assert_int_equal(glen, elen);
                assert_memory_equal(got, want, elen);
                free(want);
                free(got);
            }
}

static void gpu_matches_reference(void **state)
{
    (void)state;
    size_t n = 3u << 20;
    char *text = malloc(n);
    uint64_t r = 99;
    for (size_t i = 0; i < n; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        text[i] = i < (1u << 20) ? 'a' : "abc\0\n\xff"[(r >> 33) % 6];
    }
    /* The first MiB of 'a's overflows the match buffer (3 matches per byte). */
    const char pats[] = "a\naa\naaa\naa\nabca\nc\0\n\0\0\n\xff\xff\nbcbcb\n";
    check(text, n, pats, sizeof pats - 1, 64 << 10);
    free(text);
}

#endif

int main(void)
{
#ifndef HF_HAVE_CUDA
    printf("no CUDA in this build\n");
    return 77;
#else
    if (hf_cuda_device_count() == 0) {
        printf("no CUDA device\n");
        return 77;
    }
    setenv("HF_CUDA_MIN_PIECE_MB", "1", 1); /* several pieces per bundle */
    snprintf(dir, sizeof dir, "/tmp/test_strsearch_cuda.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(text_path, sizeof text_path, "%s/text", dir);
    snprintf(pat_path, sizeof pat_path, "%s/patterns", dir);
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    const struct CMUnitTest tests[] = {cmocka_unit_test(gpu_matches_reference)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(text_path);
    unlink(pat_path);
    unlink(out_path);
    rmdir(dir);
    return rc;
#endif
}
