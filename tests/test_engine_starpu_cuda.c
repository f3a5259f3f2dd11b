/* test_engine_starpu_cuda.c - StarPU's policies on CPU + CUDA workers (core/engine_starpu.c).
 *
 * DESIGN
 * ------
 * test_engine_starpu.c's conformance with a GPU in the team: with a StarPU
 * built with CUDA (`make starpu-cuda`), a starpu:POLICY row gets a CUDA worker
 * per GPU next to its CPU workers, and a task StarPU gives a CUDA worker runs
 * the app's run_cuda through the CUDA driver. matmul (float32, every row of
 * the product checked against the plain reference) and strsearch (counts
 * checked against its reference, per-device state per worker) run under
 * starpu:dmda and starpu:eager on two CPU workers and GPU 0: every round must
 * have run each chunk exactly once (per-device chunk counts add up, and the
 * engine fails with HF_ESCHED otherwise) and verify; the GPU must be one of
 * the devices, must have run chunks (both policies put tasks on an idle or
 * uncalibrated worker), and its tasks must carry the kernel time the CUDA
 * driver measures (so they really went through run_cuda, not run_cpu).
 * `cuda = none` must leave only CPU workers. Skips (exit 77) without StarPU,
 * with a StarPU without CUDA (Debian's) or a build without CUDA, and without
 * a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>


#include "starpu_test_util.h"
#ifdef HF_HAVE_CUDA
#include "device.h"
#endif

static const char *const policies[] = {"dmda", "eager", NULL};

/* Every round ran each of `nchunks` chunks exactly once (nchunks 0: as many
 * as round 0), on two CPU workers and GPU 0, which ran some of them through
 * run_cuda. */
static void check_gpu_run(const struct hf_run *run, int rounds, size_t nchunks)
{
    assert_string_equal(run->engine, "starpu");
    assert_int_equal(run->nrounds, rounds);
    int gpu = -1, ncpu = 0;
    for (int d = 0; d < run->ndevices; d++) {
        const struct hf_device_info *di = &run->devs[d];
        assert_int_equal(di->index, d);
        if (di->kind == HF_DEV_CUDA) {
            assert_int_equal(gpu, -1); /* one GPU asked for */
            assert_true(di->is_gpu);
            assert_int_equal(di->cuda_ordinal, 0);
            assert_string_equal(di->name, "starpu-cuda0");
            gpu = d;
        } else {
            assert_true(strncmp(di->name, "starpu-cpu", 10) == 0);
            assert_int_equal(gpu, -1); /* CPU workers come first */
            ncpu++;
        }
    }
    assert_int_equal(ncpu, 2);
    assert_true(gpu >= 0);
    size_t gpu_chunks = 0;
    for (int r = 0; r < run->nrounds; r++) {
        const struct hf_round_stats *rs = &run->rounds[r];
        size_t sum = 0;
        for (int d = 0; d < run->ndevices; d++)
            sum += rs->dev[d].chunks;
        if (r == 0 && nchunks == 0)
            nchunks = sum;
        assert_int_equal(sum, nchunks);
        assert_true(rs->makespan_s > 0);
        assert_true(rs->bound_s <= rs->makespan_s * 1.0001);
        gpu_chunks += rs->dev[gpu].chunks;
    }
    assert_true(gpu_chunks > 0);
    size_t gpu_events = 0;
    for (size_t e = 0; e < run->nevents; e++) {
        const struct hf_event *ev = &run->events[e];
        if (ev->device != gpu) {
            assert_true(ev->t.kernel_s == 0); /* CPU tasks have no GPU phases */
            continue;
        }
        gpu_events++;
        assert_true(ev->t.kernel_s > 0); /* timed by the CUDA driver's events */
        assert_true(ev->t.kernel_s <= ev->end_s - ev->start_s + 1e-6);
    }
    assert_int_equal(gpu_events, gpu_chunks);
    print_message("# %s on %s: %zu of %zu chunks on the GPU over %d rounds\n", run->scheduler,
                  run->app, gpu_chunks, nchunks * (size_t)rounds, rounds);
}

static void test_matmul(void **state)
{
    (void)state;
    const char *ini = "[run]\napp = matmul\n[load]\nn = 512\ndtype = float32\nverify = 512\n"
                      "[devices]\ncpu = 2\ncuda = 0\n";
    for (int p = 0; policies[p]; p++) {
        struct hf_run *run;
        assert_int_equal(run_ini(policies[p], ini, HF_ENGINE_REAL, 4, 32, &run), 0);
        check_gpu_run(run, 4, 16);
        hf_run_free(run);
    }
}

static void test_strsearch(void **state)
{
    (void)state;
    write_dna_load(text_path, 8 << 20, pat_path);
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[run]\napp = strsearch\n[load]\ntext = %s\npatterns = %s\nout = %s\n"
             "chunk = 512KiB\npasses = 3\nverify = 8MiB\n[devices]\ncpu = 2\ncuda = 0\n",
             text_path, pat_path, out_path);
    for (int p = 0; policies[p]; p++) {
        struct hf_run *run;
        assert_int_equal(run_ini(policies[p], ini, HF_ENGINE_REAL, 3, 0, &run), 0);
        check_gpu_run(run, 3, 0);
        hf_run_free(run);
    }
}

/* cuda = none: the same StarPU starts no CUDA worker. */
static void test_cuda_none(void **state)
{
    (void)state;
    const char *ini = "[run]\napp = matmul\n[load]\nn = 256\ndtype = float32\nverify = 256\n"
                      "[devices]\ncpu = 2\ncuda = none\n";
    struct hf_run *run;
    assert_int_equal(run_ini("dmda", ini, HF_ENGINE_REAL, 2, 32, &run), 0);
    assert_int_equal(run->ndevices, 2);
    for (int d = 0; d < run->ndevices; d++)
        assert_int_equal(run->devs[d].kind, HF_DEV_CPU);
    hf_run_free(run);
}

static int setup(void **state)
{
    (void)state;
    return sp_open("test_engine_starpu_cuda");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    hf_clear_error();
    if (!hf__starpu_sched("eager")) {
        printf("%s: test skipped\n", hf_last_error());
        return 77;
    }
    if (!hf__starpu_has_cuda()) {
        printf("StarPU's tasks have no CUDA implementation in this build (a StarPU without "
               "CUDA, e.g. Debian's, or no nvcc; make starpu-cuda builds one): test skipped\n");
        return 77;
    }
#ifdef HF_HAVE_CUDA
    if (hf_cuda_device_count() == 0) {
        printf("no CUDA device: test skipped\n");
        return 77;
    }
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_none),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_strsearch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
