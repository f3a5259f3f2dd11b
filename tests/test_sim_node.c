/* test_sim_node.c - the sim engine's nodes behind a network (core/sim_node.c).
 *
 * DESIGN
 * ------
 * Five checks. A node's modelled time is the formula of sim_node.c's DESIGN,
 * worked out here by hand for a node of one CPU and one GPU: the inner split
 * that finishes both together, a message each way, the bytes over the link,
 * a second transfer that waits for rank 0's shared link (and does not when
 * the link is not shared), and a GPU warm-up that lands on the node's first
 * bundle. Every registered scheduler runs on nodes = 3 (node 0's devices plus
 * node1 and node2) with every chunk run exactly once (the engine's ledger and
 * matmul's verify against the reference, bundles really computed) and
 * efficiency <= 1 in every round. HASS on a cell behind rank 0's shared link
 * settles from round 2 and leaves out the nodes that would only wait for the
 * link (test_nodes_shared_link). The config errors name file:line: a bad
 * nodes value, [sim.net] without its required keys, a device named net. And
 * the validation knows [sim.net] is the network, not a [sim.NAME] device.
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
#include "core/sim_node.h"
#include "device.h"

/* Node 0 = one CPU + one GPU; the numbers make every term of the formula visible. */
static const char pair[] = "[devices]\n"
                           "sim = cpu, gpu\n"
                           "nodes = 2\n"
                           "[sim.net]\n"
                           "latency_us = 10\n"
                           "bandwidth_gbs = 1\n"
                           "bytes_share = 0.5\n"
                           "[sim.cpu]\nkind = cpu\nrate = 1e9\nlatency_us = 100\n"
                           "[sim.gpu]\nkind = gpu\nrate = 1e10\nlatency_us = 1000\n"
                           "bandwidth_gbs = 10\nwarmup_ms = 5\n";

static hf_devlist_t devlist(const char *ini, hf_config_t *cfg)
{
    assert_int_equal(hf_config_parse(cfg, "nodes.ini", ini), 0);
    hf_devlist_t l = NULL;
    hf_clear_error();
    int rc = hf_devlist_init(&l, *cfg, 1);
    if (rc)
        print_error("%s\n", hf_last_error());
    assert_int_equal(rc, 0);
    return l;
}

static void test_node_formula(void **unused)
{
    (void)unused;
    hf_config_t cfg;
    hf_devlist_t l = devlist(pair, &cfg);
    assert_int_equal(hf_devlist_count(l), 3);
    const struct hf_device *node = hf_devlist_get(l, 2);
    assert_string_equal(node->info.name, "node1");
    assert_int_equal(node->info.kind, HF_DEV_NODE);
    assert_int_equal(node->info.is_gpu, 1);
    assert_non_null(node->node);
    assert_int_equal(node->node->count, 2);
    assert_null(hf_devlist_get(l, 0)->node);

    /* 10 chunks, 1e10 work, 1e8 bytes (0.01 byte per unit of work). */
    struct hf_bundle b = {.first = 0, .count = 10, .work = 1e10, .bytes = 1e8};
    /* CPU: 1e-9 s per unit plus its 100 us per chunk of 1e9; GPU: 1 ms, then
     * 1e-10 s per unit plus 0.01 byte per unit over 10 GB/s. Both finish
     * together at T: (T - 0) / inv_c + (T - lat_g) / inv_g = work. */
    double inv_c = 1e-9 + 1e-4 / 1e9, inv_g = 1e-10 + 0.01 / 1e10, lat_g = 1e-3;
    double T = (1e10 + lat_g / inv_g) / (1.0 / inv_c + 1.0 / inv_g);
    double x[2];
    assert_true(fabs(hf__sim_node_inner(node->node, &b, x) - T) < 1e-12 * T + 1e-15);
    assert_true(fabs(x[0] - T / inv_c) < 1e-6 * x[0]);
    assert_true(fabs(x[1] - (T - lat_g) / inv_g) < 1e-6 * x[1]);
    assert_true(fabs(x[0] + x[1] - 1e10) < 1.0);

    /* Network: 10 us out, half of 1e8 bytes over 1 GB/s, 10 us back. */
    double link = 0.0, net = 10e-6 + 0.5e8 / 1e9 + 10e-6;
    assert_true(fabs(hf__sim_node_network(&node->node->net, &b, 0.0, &link) - net) < 1e-12);
    assert_true(fabs(link - (10e-6 + 0.05)) < 1e-12);
    /* A second node's transfer handed out at the same time waits for the link. */
    double second = hf__sim_node_network(&node->node->net, &b, 0.0, &link);
    assert_true(fabs(second - (10e-6 + 0.05 + 0.05 + 10e-6)) < 1e-12);
    struct hf_sim_net own = node->node->net;
    own.shared = 0;
    assert_true(fabs(hf__sim_node_network(&own, &b, 0.0, &link) - net) < 1e-12);

    /* The whole bundle, no jitter: network + T; in a recorded round the
     * node's first bundle also pays the GPU's 5 ms warm-up. */
    uint64_t rng = 1;
    struct hf__sim_when clean = {.recording = 0}, first = {.recording = 1, .first = 1};
    link = 0.0;
    double s = hf__sim_node_seconds(node->node, &b, &clean, &rng, 0.0, &link);
    assert_true(fabs(s - (net + T)) < 1e-9);
    link = 0.0;
    s = hf__sim_node_seconds(node->node, &b, &first, &rng, 0.0, &link);
    assert_true(fabs(s - (net + T + 5e-3)) < 1e-9);
    hf_devlist_destroy(l);
    hf_config_destroy(cfg);
}

/* Runs `sched` on INI text with the sim engine at `seed`; returns the run. */
static struct hf_run *run_seed(const struct hf_sched_ops *sched, const char *ini, int rounds,
                               size_t grain, int execute, uint64_t seed)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "nodes.ini", ini), 0);
    const char *app = NULL;
    assert_int_equal(hf_config_str(cfg, "run", "app", "noop", &app), 0);
    struct hf_run_options o = {.app = hf_app_find(app), .sched = sched, .cfg = cfg,
                               .engine = HF_ENGINE_SIM, .rounds = rounds, .seed = seed,
                               .grain = grain, .execute = execute, .verify = 1};
    struct hf_run *run = NULL;
    hf_clear_error();
    int rc = hf_run(&o, &run);
    if (rc)
        print_error("%s on %s: %s: %s\n", sched->name, app, hf_strerror(rc), hf_last_error());
    assert_int_equal(rc, 0);
    hf_config_destroy(cfg);
    return run;
}

/* The same at seed 1. */
static struct hf_run *run_ini(const struct hf_sched_ops *sched, const char *ini, int rounds,
                              size_t grain, int execute)
{
    return run_seed(sched, ini, rounds, grain, execute, 1);
}

/* Every chunk once per round, and efficiency <= 1 in every round. */
static void check_run(const struct hf_run *run, int rounds, size_t nchunks)
{
    assert_int_equal(run->nrounds, rounds);
    for (int r = 0; r < run->nrounds; r++) {
        const struct hf_round_stats *st = &run->rounds[r];
        size_t sum = 0;
        for (int d = 0; d < run->ndevices; d++)
            sum += st->dev[d].chunks;
        assert_int_equal(sum, nchunks);
        assert_true(st->bound_s > 0.0);
        assert_true(st->efficiency <= 1.0 + 1e-9);
    }
}

static const char node3[] = "[devices]\nsim = host, gpu, gpu\nnodes = 3\n"
                            "[sim.net]\nlatency_us = 2\nbandwidth_gbs = 25\nbytes_share = 0.5\n"
                            "[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\njitter = 0.02\n"
                            "[sim.gpu]\nkind = gpu\nrate = 4e10\nlatency_us = 20\n"
                            "bandwidth_gbs = 10\njitter = 0.02\n";

/* Every scheduler on nodes = 3: matmul computed for real and verified, and
 * the noop app over more rounds; the nodes are devices 3 and 4. */
static void test_nodes_conformance(void **unused)
{
    (void)unused;
    char mm[1024], noop[1024];
    snprintf(mm, sizeof mm, "[run]\napp = matmul\n[load]\nn = 192\ndtype = float64\n%s", node3);
    snprintf(noop, sizeof noop,
             "[run]\napp = noop\n[load]\nchunks = 997\nwork_per_chunk = 1e6\n"
             "bytes_per_chunk = 1e5\n%s", node3);
    for (int s = 0; hf_schedulers[s]; s++) {
        struct hf_run *run = run_ini(hf_schedulers[s], mm, 3, 8, 1);
        assert_int_equal(run->ndevices, 5);
        assert_string_equal(run->devs[3].name, "node1");
        assert_string_equal(run->devs[4].name, "node2");
        check_run(run, 3, 24);
        hf_run_free(run);
        run = run_ini(hf_schedulers[s], noop, 6, 1, 0);
        check_run(run, 6, 997);
        /* The nodes are real devices to the top level: some policy hands them
         * work, and HASS, whose split is by measured rates, always does. */
        if (strcmp(hf_schedulers[s]->name, "hass") == 0)
            for (int r = 1; r < run->nrounds; r++)
                assert_true(run->rounds[r].dev[3].work > 0 && run->rounds[r].dev[4].work > 0);
        hf_run_free(run);
    }
}

/* A cell behind rank 0's shared link: node 0 is one GPU of 1e10 work/s, and
 * the node devices the same GPU behind a 1 GB/s link that carries every
 * chunk's bytes. `bytes` per chunk of 1e7 work: 1e7 (a search whose text is
 * sent from rank 0: a node's chunk costs the link 10 ms against 1 ms of
 * compute, so the link is the whole story) or 1e6 (1 ms on the link per 1 ms
 * of compute: the nodes help, as many as the link can feed). */
static struct hf_run *link_cell(double bytes, int nodes, int rounds, uint64_t seed)
{
    char ini[1024];
    snprintf(ini, sizeof ini,
             "[run]\napp = noop\n[load]\nchunks = 1000\nwork_per_chunk = 1e7\n"
             "bytes_per_chunk = %g\n[devices]\nsim = gpu\nnodes = %d\n"
             "[sim.net]\nlatency_us = 2\nbandwidth_gbs = 1\nbytes_share = 1\n"
             "[sim.gpu]\nkind = gpu\nrate = 1e10\nlatency_us = 10\njitter = 0.003\n",
             bytes, nodes);
    struct hf_run *run = run_seed(hf_sched_find("hass"), ini, rounds, 1, 0, seed);
    check_run(run, rounds, 1000);
    return run;
}

/* HASS's split knows the nodes share one link (hf_device_info.link, declared
 * by the sim's node devices; schedulers/hass_link.c). It settles within two
 * rounds: from round 2 on no round is more than 3% faster than round 2 (a
 * split that sees each node alone learns the waits over ~7 rounds). Where the
 * link is the whole story, the nodes that would only wait for it get nothing
 * (at least 4 of 8) and the run beats node 0 alone (1000 chunks of 1 ms: 1 s),
 * where a split that sees each node alone (11 ms per chunk) offers all of
 * them work they can only get one at a time. Where the link feeds several
 * nodes, the first served takes the most (its transfer goes first). The
 * round's bound counts the declared link (engine.c), and HASS's rounds from
 * round 2 are within 10% of it (check_run: never above it). At seeds 1-8:
 * until HASS stopped reading warm-ups behind a link, a link wait that its
 * estimate missed passed for a warm-up at about a third of the seeds, and
 * the plan that fed every node was kept. */
static void test_nodes_shared_link(void **unused)
{
    (void)unused;
    const int rounds = 8;
    for (int k = 0; k < 16; k++) { /* seeds 1-8, both cells */
        uint64_t seed = 1 + (uint64_t)k / 2;
        int cell = k % 2, nodes = cell == 0 ? 9 : 5;
        struct hf_run *run = link_cell(cell == 0 ? 1e7 : 1e6, nodes, rounds, seed);
        assert_int_equal(run->ndevices, nodes);
        assert_int_equal(run->devs[1].link, 1);
        assert_true(fabs(run->devs[1].link_bandwidth - 1e9) < 1.0);
        assert_int_equal(run->devs[0].link, 0);
        double best = INFINITY;
        for (int r = 2; r < rounds; r++)
            best = fmin(best, run->rounds[r].makespan_s);
        for (int r = 2; r < rounds; r++) {
            const struct hf_round_stats *st = &run->rounds[r];
            int out = 0;
            print_message("seed %d link cell %d round %d: %.4f s, chunks", (int)seed, cell, r,
                          st->makespan_s);
            for (int d = 0; d < nodes; d++) {
                print_message(" %zu", st->dev[d].chunks);
                out += d > 0 && st->dev[d].chunks == 0;
            }
            print_message("\n");
            assert_true(st->makespan_s < 1.03 * best);
            /* The bound knows the declared link too (engine.c): HASS reaches
             * it within 10% (without the link it reads 0.7 here). */
            assert_true(st->efficiency > 0.9);
            if (cell == 0) {
                assert_true(out >= 4);
                assert_true(st->dev[1].chunks > 0); /* the link's share is not wasted */
                assert_true(st->makespan_s < 0.95);
            } else {
                assert_true(st->dev[1].chunks > st->dev[2].chunks);
                assert_true(st->dev[2].chunks > 0);
            }
        }
        hf_run_free(run);
    }
}

/* hf_devlist_init fails with HF_ECONFIG and a message holding `where` and `what`. */
static void config_fails(const char *ini, const char *where, const char *what)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "nodes.ini", ini), 0);
    hf_devlist_t l = NULL;
    hf_clear_error();
    int rc = hf_devlist_init(&l, cfg, 1);
    print_message("%s\n", hf_last_error());
    assert_int_equal(rc, HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), where));
    assert_non_null(strstr(hf_last_error(), what));
    hf_config_destroy(cfg);
}

static const char gpu[] = "[sim.gpu]\nrate = 1e10\n";

static void test_nodes_config_errors(void **unused)
{
    (void)unused;
    char ini[512];
    static const char *const bad[] = {"0", "65", "two", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(ini, sizeof ini,
                 "[devices]\nsim = gpu\nnodes = %s\n[sim.net]\nlatency_us = 2\n"
                 "bandwidth_gbs = 25\n%s", bad[i], gpu);
        config_fails(ini, "nodes.ini:3", "nodes");
    }
    snprintf(ini, sizeof ini, "[devices]\nsim = gpu\nnodes = 2\n%s", gpu);
    config_fails(ini, "nodes.ini:3", "[sim.net] latency_us");
    snprintf(ini, sizeof ini, "[devices]\nsim = gpu\nnodes = 4\n[sim.net]\nlatency_us = 2\n%s",
             gpu);
    config_fails(ini, "nodes.ini:3", "[sim.net] bandwidth_gbs");
    snprintf(ini, sizeof ini,
             "[devices]\nsim = gpu\nnodes = 2\n[sim.net]\nlatency_us = 2\nbandwidth_gbs = 0\n%s",
             gpu);
    config_fails(ini, "nodes.ini:6", "bandwidth_gbs = 0");
    snprintf(ini, sizeof ini,
             "[devices]\nsim = gpu\nnodes = 2\n[sim.net]\nlatency_us = 2\nbandwidth_gbs = 1\n"
             "bytes_share = 2\n%s", gpu);
    config_fails(ini, "nodes.ini:7", "bytes_share");
    snprintf(ini, sizeof ini, "[devices]\nsim = gpu, net\n%s[sim.net]\nrate = 1\n", gpu);
    config_fails(ini, "nodes.ini:2", "'net'");

    /* nodes = 1 is today's run: no node device, [sim.net] not needed. */
    hf_config_t cfg;
    snprintf(ini, sizeof ini, "[devices]\nsim = gpu\nnodes = 1\n%s", gpu);
    hf_devlist_t l = devlist(ini, &cfg);
    assert_int_equal(hf_devlist_count(l), 1);
    hf_devlist_destroy(l);
    hf_config_destroy(cfg);
}

/* The validation (hetfarm run checks every key first) takes [sim.net] as the
 * network: its keys are known, it needs no rate and no device names it; a
 * misspelt key there is caught with its line. */
static void test_nodes_validation(void **unused)
{
    (void)unused;
    struct hf_config_rules rules[] = {{NULL, hf_device_keys, NULL}};
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "nodes.ini", pair), 0);
    hf_clear_error();
    int rc = hf_config_validate(cfg, rules, 1);
    if (rc)
        print_error("%s\n", hf_last_error());
    assert_int_equal(rc, 0);
    hf_config_destroy(cfg);
    static const char typo[] = "[devices]\nsim = gpu\nnodes = 2\n[sim.net]\nlatency_us = 2\n"
                               "bandwith_gbs = 25\n[sim.gpu]\nrate = 1e10\n";
    assert_int_equal(hf_config_parse(&cfg, "nodes.ini", typo), 0);
    hf_clear_error();
    assert_int_equal(hf_config_validate(cfg, rules, 1), HF_ECONFIG);
    print_message("%s\n", hf_last_error());
    assert_non_null(strstr(hf_last_error(), "nodes.ini:6"));
    assert_non_null(strstr(hf_last_error(), "bandwith_gbs"));
    hf_config_destroy(cfg);
    static const char nodes0[] = "[devices]\nsim = gpu\nnodes = 0\n[sim.gpu]\nrate = 1e10\n";
    assert_int_equal(hf_config_parse(&cfg, "nodes.ini", nodes0), 0);
    hf_clear_error();
    assert_int_equal(hf_config_validate(cfg, rules, 1), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "nodes.ini:3"));
    hf_config_destroy(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_formula),
        cmocka_unit_test(test_nodes_conformance),
        cmocka_unit_test(test_nodes_shared_link),
        cmocka_unit_test(test_nodes_config_errors),
        cmocka_unit_test(test_nodes_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
