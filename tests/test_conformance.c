/* test_conformance.c - every registered scheduler through the real round loop.
 *
 * DESIGN
 * ------
 * test_sched.c checks the policies against a toy event loop; this file runs
 * them through hf_run() itself, so the engine's own ledger (HF_ESCHED on a lost
 * or repeated chunk) and the app's verify (HF_EVERIFY against the plain
 * reference) judge them. Each scheduler in hf_schedulers[] runs matmul with the
 * sim engine and `execute = 1` (every bundle really computed on this CPU) on a
 * modelled CPU + 2 GPU node, the noop app on the same node and on odd device
 * sets, loads marked cpu_only (GPUs sit them out), and, when the machine
 * allows, the real engine with two CPU teams. The
 * last test is HASS's performance contract on a smaller copy of the modelled
 * node of configs/sim-matmul.ini and configs/sim-search.ini: efficiency >= 0.95
 * from round 2 and shares that stop moving (< 1%) by round 3. The sim engine is
 * deterministic for a seed, so that is an exact check, not a timing test.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/engine.h"

static const char node3[] = "[devices]\nsim = host, gpu, gpu\ncuda = none\n"
                            "[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\njitter = 0.02\n"
                            "[sim.gpu]\nkind = gpu\nrate = 4e10\nlatency_us = 20\n"
                            "bandwidth_gbs = 10\njitter = 0.02\n";

/* Runs `sched` on INI text; returns hf_run's rc and the run in *out. */
static int run_ini(const char *sched, const char *ini, enum hf_engine_kind engine, int rounds,
                   size_t grain, int execute, struct hf_run **out)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "conformance.ini", ini), 0);
    const char *app = NULL;
    assert_int_equal(hf_config_str(cfg, "run", "app", "noop", &app), 0);
    struct hf_run_options o = {.app = hf_app_find(app), .sched = hf_sched_find(sched),
                               .cfg = cfg, .engine = engine, .rounds = rounds, .seed = 1,
                               .grain = grain, .execute = execute, .verify = 1};
    assert_non_null(o.app);
    assert_non_null(o.sched);
    hf_clear_error();
    *out = NULL;
    int rc = hf_run(&o, out);
    if (rc)
        print_error("%s on %s: %s: %s\n", sched, app, hf_strerror(rc), hf_last_error());
    hf_config_destroy(cfg);
    return rc;
}

/* Every round of the run handed out each of `nchunks` chunks once. */
static void check_counts(const struct hf_run *run, int rounds, size_t nchunks)
{
    assert_int_equal(run->nrounds, rounds);
    for (int r = 0; r < run->nrounds; r++) {
        size_t sum = 0;
        for (int d = 0; d < run->ndevices; d++)
            sum += run->rounds[r].dev[d].chunks;
        assert_int_equal(sum, nchunks);
    }
}

/* matmul n = 192 float64 in 8-row chunks, computed for real and verified. */
static void test_matmul_sim_execute(void **unused)
{
    (void)unused;
    char ini[1024];
    snprintf(ini, sizeof ini, "[run]\napp = matmul\n[load]\nn = 192\ndtype = float64\n%s", node3);
    for (int s = 0; hf_schedulers[s]; s++) {
        struct hf_run *run;
        assert_int_equal(run_ini(hf_schedulers[s]->name, ini, HF_ENGINE_SIM, 3, 8, 1, &run), 0);
        check_counts(run, 3, 24);
        hf_run_free(run);
    }
}

/* The noop app on the modelled node, on GPUs only, on two CPU teams. */
static void test_noop_sim(void **unused)
{
    (void)unused;
    static const char *const devsets[] = {
        "[devices]\nsim = host, gpu, gpu\n",
        "[devices]\nsim = gpu, gpu, gpu\n",
        "[devices]\nsim = host, host\n",
        "[devices]\nsim = host, host, gpu\n",
    };
    for (size_t k = 0; k < sizeof devsets / sizeof *devsets; k++)
        for (int s = 0; hf_schedulers[s]; s++) {
            char ini[1024];
            snprintf(ini, sizeof ini,
                     "[run]\napp = noop\n[load]\nchunks = 997\nwork_per_chunk = 1e6\n"
                     "bytes_per_chunk = 1e5\n%s"
                     "[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\njitter = 0.02\n"
                     "[sim.gpu]\nkind = gpu\nrate = 4e10\nlatency_us = 20\n"
                     "bandwidth_gbs = 10\njitter = 0.02\n",
                     devsets[k]);
            struct hf_run *run;
            assert_int_equal(run_ini(hf_schedulers[s]->name, ini, HF_ENGINE_SIM, 4, 1, 1, &run),
                             0);
            check_counts(run, 4, 997);
            hf_run_free(run);
        }
}

/* Loads without a GPU kernel (noop's cpu_only = odd: hf_load.cpu_only in
 * rounds 1, 3, 5): every scheduler runs them on the CPU alone and gives the
 * GPUs work again in the rounds after; on GPUs alone they still run. */
static void test_cpu_only_loads(void **unused)
{
    (void)unused;
    static const char fmt[] = "[run]\napp = noop\n[load]\nchunks = 400\nwork_per_chunk = 1e6\n"
                              "cpu_only = %s\n[devices]\nsim = %s\n"
                              "[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\n"
                              "[sim.gpu]\nkind = gpu\nrate = 4e10\nlatency_us = 20\n";
    for (int s = 0; hf_schedulers[s]; s++) {
        char ini[1024];
        snprintf(ini, sizeof ini, fmt, "odd", "host, gpu, gpu");
        struct hf_run *run;
        assert_int_equal(run_ini(hf_schedulers[s]->name, ini, HF_ENGINE_SIM, 6, 1, 1, &run), 0);
        check_counts(run, 6, 400);
        for (int r = 1; r < 6; r++) {
            size_t gpu = run->rounds[r].dev[1].chunks + run->rounds[r].dev[2].chunks;
            if (r % 2 && gpu != 0)
                fail_msg("%s: GPUs ran %zu chunks of cpu_only round %d", hf_schedulers[s]->name,
                         gpu, r);
            if (!(r % 2) && gpu == 0)
                fail_msg("%s: the GPUs got nothing in round %d, after a cpu_only round",
                         hf_schedulers[s]->name, r);
        }
        hf_run_free(run);
        snprintf(ini, sizeof ini, fmt, "all", "gpu, gpu");
        assert_int_equal(run_ini(hf_schedulers[s]->name, ini, HF_ENGINE_SIM, 3, 1, 1, &run), 0);
        check_counts(run, 3, 400);
        hf_run_free(run);
    }
}

/* The real engine with two CPU teams (threads, wall clock): matmul verified. */
static void test_real_two_teams(void **unused)
{
    (void)unused;
    static const char ini[] = "[run]\napp = matmul\n[load]\nn = 96\ndtype = float64\n"
                              "[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n";
    for (int s = 0; hf_schedulers[s]; s++) {
        struct hf_run *run;
        int rc = run_ini(hf_schedulers[s]->name, ini, HF_ENGINE_REAL, 2, 8, 1, &run);
        if (rc == HF_ENODEV || rc == HF_ECONFIG) {
            hf_clear_error();
            skip(); /* fewer than 2 usable cores, or no team support */
        }
        assert_int_equal(rc, 0);
        check_counts(run, 2, 12);
        hf_run_free(run);
    }
}

/* HASS's contract on a smaller copy of the performance nodes: efficiency >= 0.95
 * from round 2, planned shares moving < 1% from round 3 on. */
static void check_hass_contract(const char *ini, size_t grain)
{
    struct hf_run *run;
    assert_int_equal(run_ini("hass", ini, HF_ENGINE_SIM, 6, grain, 0, &run), 0);
    for (int r = 0; r < run->nrounds; r++) {
        const struct hf_round_stats *st = &run->rounds[r];
        print_message("round %d efficiency %.3f\n", r, st->efficiency);
        assert_true(st->has_plan);
        if (r >= 2)
            assert_true(st->efficiency >= 0.95);
        if (r >= 2) /* plan[r-1] is round r's split, plan[r] round r+1's */
            for (int d = 0; d < run->ndevices; d++)
                assert_true(fabs(st->plan[d] - run->rounds[r - 1].plan[d]) < 0.01);
    }
    hf_run_free(run);
}

static void test_hass_performance(void **unused)
{
    (void)unused;
    /* matmul n = 4096 float32 in 16-row chunks: 256 chunks, like n = 16384 / 64. */
    check_hass_contract("[run]\napp = matmul\n[load]\nn = 4096\ndtype = float32\n"
                        "[devices]\nsim = host, h200, h200\n"
                        "[sim.host]\nkind = cpu\nrate = 1.4e12\nlatency_us = 5\njitter = 0.02\n"
                        "[sim.h200]\nkind = gpu\nrate = 5.0e13\nlatency_us = 20\n"
                        "bandwidth_gbs = 55\njitter = 0.02\n[hass]\nwarm_start = no\nreserve = 0.03\n",
                        16);
    /* search-like: bandwidth-bound GPUs, the CPU does ~30%. */
    check_hass_contract("[run]\napp = noop\n[load]\nchunks = 1024\nwork_per_chunk = 1048576\n"
                        "bytes_per_chunk = 1048576\n[devices]\nsim = host, h200, h200\n"
                        "[sim.host]\nkind = cpu\nrate = 4.2e10\nlatency_us = 2\njitter = 0.02\n"
                        "[sim.h200]\nkind = gpu\nrate = 5.0e11\nlatency_us = 20\n"
                        "bandwidth_gbs = 55\njitter = 0.02\n[hass]\nwarm_start = no\nreserve = 0.03\n",
                        1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_sim_execute),
        cmocka_unit_test(test_noop_sim),
        cmocka_unit_test(test_cpu_only_loads),
        cmocka_unit_test(test_real_two_teams),
        cmocka_unit_test(test_hass_performance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
