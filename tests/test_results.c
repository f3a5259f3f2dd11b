/* test_results.c - results.json, the comparison table and the Chrome trace, from a hand-built run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hf_test_results_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

/* A sim run of a CPU and a GPU over 4 rounds whose plan settles at round 2. */
static struct hf_device_info devs[2] = {
    {.index = 0, .kind = HF_DEV_SIM, .is_gpu = 0, .name = "sim:host", .cuda_ordinal = -1},
    {.index = 1, .kind = HF_DEV_SIM, .is_gpu = 1, .name = "sim:h200#1", .cuda_ordinal = -1},
};
static double rates[2] = {1e11, 9e11};
static double plans[4][2] = {{0.5, 0.5}, {0.3, 0.7}, {0.301, 0.699}, {0.3005, 0.6995}};
static struct hf_round_device rdev[4][2];
static struct hf_round_stats rounds[4];
static struct hf_event events[5] = {
    {.round = 0, .device = 0, .first = 0, .count = 4, .work = 40, .start_s = 0, .end_s = 0.4},
    {.round = 0, .device = 1, .first = 4, .count = 6, .work = 60, .start_s = 0, .end_s = 0.1,
     .t = {.copy_in_s = 0.02, .kernel_s = 0.07, .copy_out_s = 0.01}},
    {.round = 1, .device = 1, .first = 0, .count = 7, .work = 70, .start_s = 0.5, .end_s = 0.6,
     .t = {.copy_in_s = 0.05, .kernel_s = 0.05, .copy_out_s = 0.05}}, /* overlapping: scaled */
    {.round = 1, .device = 0, .first = 7, .count = 3, .work = 30, .start_s = 0.5, .end_s = 0.8},
    {.round = 1, .device = 1, .first = 9, .count = 1, .work = 10, .start_s = 0.6, .end_s = 0.62,
     .stolen = 1},
};
static struct hf_run run;

static struct hf_run *make_run(const char *engine)
{
    memset(&run, 0, sizeof run);
    snprintf(run.scheduler, sizeof run.scheduler, "hass");
    snprintf(run.app, sizeof run.app, "matmul");
    snprintf(run.engine, sizeof run.engine, "%s", engine);
    snprintf(run.signature, sizeof run.signature, "n=4096 dtype=float32");
    run.ndevices = 2;
    run.devs = devs;
    run.standalone_rate = rates;
    run.total_work = 100;
    run.nrounds = 4;
    run.rounds = rounds;
    for (int r = 0; r < 4; r++) {
        rounds[r].round = r;
        rounds[r].makespan_s = 0.2 + 0.01 * r;
        rounds[r].ideal_s = 0.1;
        rounds[r].efficiency = rounds[r].ideal_s / rounds[r].makespan_s;
        rounds[r].has_plan = 1;
        rounds[r].plan = plans[r];
        rounds[r].dev = rdev[r];
        for (int d = 0; d < 2; d++) {
            rdev[r][d].chunks = 5;
            rdev[r][d].bundles = 1 + d;
            rdev[r][d].stolen = d == 1 && r == 1;
            rdev[r][d].work = 50;
            rdev[r][d].share = 0.5;
            rdev[r][d].busy_s = 0.1 * (d + 1);
        }
    }
    run.nevents = 5;
    run.events = events;
    run.wall_s = 1.5;
    return &run;
}

static cJSON *parse_file(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    return j;
}

static int count_entries(const char *d)
{
    DIR *dp = opendir(d);
    assert_non_null(dp);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += e->d_name[0] != '.';
    closedir(dp);
    return n;
}

#define GET(obj, key) cJSON_GetObjectItemCaseSensitive((obj), (key))
/* cJSON prints doubles with 15 significant digits when they read back within
 * an epsilon, so compare within 1e-14 relative. */
#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-14 * fabs(b))

static void test_results_json(void **state)
{
    (void)state;
    struct hf_run *runs[2] = {make_run("sim"), make_run("sim")};
    char path[128];
    snprintf(path, sizeof path, "%s/results.json", dir);
    hf_clear_error();
    assert_int_equal(hf_results_write(path, runs, 2, NULL), 0);
    assert_int_equal(count_entries(dir), 1);
    cJSON *j = parse_file(path);
    assert_string_equal(GET(j, "hetfarm")->valuestring, "0.1");
    cJSON *m = GET(j, "machine");
    assert_true(cJSON_IsString(GET(m, "host")));
    assert_true(cJSON_IsString(GET(m, "cpu_model")));
    assert_true(GET(m, "cores")->valuedouble >= 1);
    assert_true(GET(m, "numa_nodes")->valuedouble >= 1);
    assert_non_null(strstr(GET(m, "blas")->valuestring, "OpenBLAS"));
    assert_true(cJSON_IsNull(GET(j, "config")));
    cJSON *rs = GET(j, "runs");
    assert_int_equal(cJSON_GetArraySize(rs), 2);
    cJSON *r = cJSON_GetArrayItem(rs, 0);
    assert_string_equal(GET(r, "scheduler")->valuestring, "hass");
    assert_string_equal(GET(r, "app")->valuestring, "matmul");
    assert_string_equal(GET(r, "engine")->valuestring, "sim");
    assert_string_equal(GET(r, "signature")->valuestring, "n=4096 dtype=float32");
    assert_true(cJSON_IsTrue(GET(r, "simulated")));
    cJSON *d1 = cJSON_GetArrayItem(GET(r, "devices"), 1);
    assert_string_equal(GET(d1, "name")->valuestring, "sim:h200#1");
    assert_string_equal(GET(d1, "kind")->valuestring, "sim");
    assert_true(cJSON_IsTrue(GET(d1, "is_gpu")));
    assert_true(GET(d1, "standalone_rate")->valuedouble == 9e11);
    assert_true(GET(r, "total_work")->valuedouble == 100);
    assert_true(GET(r, "wall_s")->valuedouble == 1.5);
    assert_string_equal(GET(r, "fault")->valuestring, "");
    cJSON *rounds_j = GET(r, "rounds");
    assert_int_equal(cJSON_GetArraySize(rounds_j), 4);
    cJSON *r1 = cJSON_GetArrayItem(rounds_j, 1);
    assert_int_equal(GET(r1, "round")->valueint, 1);
    NEAR(GET(r1, "makespan_s")->valuedouble, rounds[1].makespan_s);
    assert_true(GET(r1, "ideal_s")->valuedouble == 0.1);
    NEAR(GET(r1, "efficiency")->valuedouble, rounds[1].efficiency);
    assert_true(cJSON_GetArrayItem(GET(r1, "plan"), 1)->valuedouble == 0.7);
    cJSON *rd = cJSON_GetArrayItem(GET(r1, "devices"), 1);
    assert_string_equal(GET(rd, "name")->valuestring, "sim:h200#1");
    assert_int_equal(GET(rd, "chunks")->valueint, 5);
    assert_int_equal(GET(rd, "bundles")->valueint, 2);
    assert_int_equal(GET(rd, "stolen")->valueint, 1);
    assert_true(GET(rd, "work")->valuedouble == 50);
    assert_true(GET(rd, "share")->valuedouble == 0.5);
    assert_true(GET(rd, "busy_s")->valuedouble == 0.2);
    cJSON *ev = GET(r, "events");
    assert_int_equal(cJSON_GetArraySize(ev), 5);
    cJSON *e1 = cJSON_GetArrayItem(ev, 1);
    assert_int_equal(GET(e1, "device")->valueint, 1);
    assert_int_equal(GET(e1, "first")->valueint, 4);
    assert_int_equal(GET(e1, "count")->valueint, 6);
    assert_true(GET(e1, "kernel_s")->valuedouble == 0.07);
    assert_true(cJSON_IsTrue(GET(cJSON_GetArrayItem(ev, 4), "stolen")));
    cJSON_Delete(j);

    /* A run without plans writes null. */
    rounds[0].has_plan = 0;
    runs[0] = &run;
    assert_int_equal(hf_results_write(path, runs, 1, NULL), 0);
    j = parse_file(path);
    cJSON *r0 = cJSON_GetArrayItem(GET(cJSON_GetArrayItem(GET(j, "runs"), 0), "rounds"), 0);
    assert_true(cJSON_IsNull(GET(r0, "plan")));
    cJSON_Delete(j);
}

static void test_results_unwritable(void **state)
{
    (void)state;
    struct hf_run *runs[1] = {make_run("real")};
    hf_clear_error();
    assert_int_equal(hf_results_write("/nonexistent-dir/results.json", runs, 1, NULL), HF_EIO);
    assert_non_null(strstr(hf_last_error(), "/nonexistent-dir/results.json"));
    /* The rename fails (the target is a directory): the temporary file is removed. */
    char target[128];
    snprintf(target, sizeof target, "%s/adir", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    hf_clear_error();
    assert_int_equal(hf_results_write(target, runs, 1, NULL), HF_EIO);
    assert_int_equal(count_entries(dir), 1);
    hf_clear_error();
    assert_int_equal(hf_trace_write(target, runs, 1), HF_EIO);
    assert_int_equal(count_entries(dir), 1);
}

static void test_table(void **state)
{
    (void)state;
    struct hf_run *runs[1] = {make_run("sim")};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    assert_non_null(strstr(buf, "SIMULATED"));
    assert_non_null(strstr(buf, "hass"));
    /* Plans: 0.5 -> 0.3 -> 0.301 -> 0.3005: stable from round 2; mean eff over rounds 2, 3. */
    char want[64];
    double mean = (0.1 / 0.22 + 0.1 / 0.23) / 2;
    snprintf(want, sizeof want, "%9.3f %7s %7d", mean, "2", 1);
    assert_non_null(strstr(buf, want));
    assert_null(strstr(buf, "sim's own bound")); /* no sim_bound_s in the rounds */
    free(buf);

    /* With the sim's own bound in every round from 2: its line, the mean of
     * sim_bound_s / makespan_s over rounds 2 and 3. */
    for (int r = 0; r < 4; r++)
        rounds[r].sim_bound_s = 0.2;
    f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    snprintf(want, sizeof want, "every run): hass %.3f\n", (0.2 / 0.22 + 0.2 / 0.23) / 2);
    assert_non_null(strstr(buf, want));
    free(buf);
    for (int r = 0; r < 4; r++)
        rounds[r].sim_bound_s = 0.0;

    /* A plan that keeps moving never settles; no plans at all give "-". */
    plans[3][0] = 0.4;
    plans[3][1] = 0.6;
    f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    assert_non_null(strstr(buf, "never"));
    assert_non_null(strstr(buf, "SIMULATED"));
    free(buf);
    for (int r = 0; r < 4; r++)
        rounds[r].has_plan = 0;
    snprintf(run.engine, sizeof run.engine, "real");
    f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    snprintf(want, sizeof want, "%9.3f %7s", mean, "-");
    assert_non_null(strstr(buf, want));
    assert_null(strstr(buf, "SIMULATED"));
    free(buf);
    plans[3][0] = 0.3005;
    plans[3][1] = 0.6995;
}

/* Two devices on one GPU (cuda = 0,0): results.json records shares_gpu on
 * each (and not on a device with its GPU to itself), the table names them
 * under a SHARED GPU line, and the HTML report read back from the file
 * badges them and says what the mode is. */
static void test_shared_gpu(void **state)
{
    (void)state;
    static struct hf_device_info three[3] = {
        {.index = 0, .kind = HF_DEV_CPU, .name = "cpu", .nthreads = 1, .cuda_ordinal = -1},
        {.index = 1, .kind = HF_DEV_CUDA, .is_gpu = 1, .name = "cuda0#1", .cuda_ordinal = 0,
         .shares_gpu = 2},
        {.index = 2, .kind = HF_DEV_CUDA, .is_gpu = 1, .name = "cuda0#2", .cuda_ordinal = 0,
         .shares_gpu = 2},
    };
    struct hf_run *r = make_run("real");
    r->devs = three; /* the events and rounds name devices 0 and 1 only */
    r->ndevices = 3;
    static double rates3[3] = {1e11, 4e11, 4e11};
    static struct hf_round_device rdev3[4][3];
    for (int k = 0; k < 4; k++) {
        rdev3[k][0] = rdev[k][0];
        rdev3[k][1] = rdev3[k][2] = rdev[k][1];
        rounds[k].dev = rdev3[k];
        rounds[k].has_plan = 0;
    }
    r->standalone_rate = rates3;
    struct hf_run *runs[1] = {r};
    char path[128], html[128];
    snprintf(path, sizeof path, "%s/results.json", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    hf_clear_error();
    assert_int_equal(hf_results_write(path, runs, 1, NULL), 0);
    cJSON *j = parse_file(path);
    const cJSON *devs_j = GET(cJSON_GetArrayItem(GET(j, "runs"), 0), "devices");
    assert_int_equal(cJSON_GetArraySize(devs_j), 3);
    assert_null(GET(cJSON_GetArrayItem(devs_j, 0), "shares_gpu"));
    for (int d = 1; d < 3; d++) {
        const cJSON *x = cJSON_GetArrayItem(devs_j, d);
        assert_int_equal(GET(x, "shares_gpu")->valueint, 2);
        assert_int_equal(GET(x, "cuda_ordinal")->valueint, 0);
    }
    cJSON_Delete(j);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    assert_non_null(strstr(buf, "SHARED GPU: cuda0#1, cuda0#2 are one GPU"));
    free(buf);

    assert_int_equal(hf_report_write(path, html), 0);
    f = fopen(html, "r");
    assert_non_null(f);
    static char page[1 << 20];
    size_t n = fread(page, 1, sizeof page - 1, f);
    page[n] = '\0';
    fclose(f);
    assert_non_null(strstr(page, "class=\"banner gshareb\""));
    int badges = 0;
    for (const char *p = page; (p = strstr(p, "<span class=\"gshare\" title=")); p++)
        badges++;
    assert_int_equal(badges, 2); /* one per shared device in the summary's list */

    /* A plain GPU run says nothing of the kind. */
    three[1].shares_gpu = three[2].shares_gpu = 0;
    snprintf(three[1].name, sizeof three[1].name, "cuda0");
    snprintf(three[2].name, sizeof three[2].name, "cuda1");
    three[2].cuda_ordinal = 1;
    assert_int_equal(hf_results_write(path, runs, 1, NULL), 0);
    f = open_memstream(&buf, &len);
    hf_results_table(f, runs, 1);
    fclose(f);
    assert_null(strstr(buf, "SHARED GPU"));
    free(buf);
    assert_int_equal(hf_report_write(path, html), 0);
    f = fopen(html, "r");
    n = fread(page, 1, sizeof page - 1, f);
    page[n] = '\0';
    fclose(f);
    assert_null(strstr(page, "SHARED GPU"));
    for (int k = 0; k < 4; k++)
        rounds[k].dev = rdev[k];
}

static void test_trace(void **state)
{
    (void)state;
    struct hf_run *runs[2] = {make_run("sim"), make_run("sim")};
    char path[128];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    assert_int_equal(hf_trace_write(path, runs, 2), 0);
    cJSON *j = parse_file(path);
    assert_string_equal(GET(j, "displayTimeUnit")->valuestring, "ms");
    cJSON *ev = GET(j, "traceEvents");
    int bundles = 0, parts = 0, procs = 0, threads = 0, instants = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = GET(e, "ph")->valuestring;
        const char *name = GET(e, "name")->valuestring;
        if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0) {
            procs++;
            assert_string_equal(GET(GET(e, "args"), "name")->valuestring, "hass (sim)");
        } else if (strcmp(ph, "M") == 0 && strcmp(name, "thread_name") == 0) {
            threads++;
        } else if (strcmp(ph, "i") == 0) {
            instants++;
        } else if (strcmp(ph, "X") == 0 && strncmp(name, "round ", 6) == 0) {
            bundles++;
            if (GET(e, "pid")->valueint == 0 && strcmp(name, "round 1 chunks 7..9") == 0) {
                assert_true(GET(e, "ts")->valuedouble == 0.5e6);
                assert_true(GET(e, "dur")->valuedouble > 0.3e6 - 1e-3);
                assert_true(GET(GET(e, "args"), "work")->valuedouble == 30);
            }
        } else if (strcmp(ph, "X") == 0) {
            parts++;
            /* Parts stay inside their bundle even when the times overlap. */
            double ts = GET(e, "ts")->valuedouble, dur = GET(e, "dur")->valuedouble;
            int inside = (ts >= -1e-6 && ts + dur <= 0.1e6 + 1e-3) ||
                         (ts >= 0.5e6 - 1e-3 && ts + dur <= 0.6e6 + 1e-3);
            assert_true(inside);
        }
    }
    assert_int_equal(procs, 2);
    assert_int_equal(threads, 4);
    assert_int_equal(instants, 4);      /* rounds 0 and 1 of each run */
    assert_int_equal(bundles, 2 * 5);   /* one slice per event */
    assert_int_equal(parts, 2 * 2 * 3); /* two GPU bundles with copy times, three parts each */
    cJSON_Delete(j);
}

/* make_run's run as if across nodes: its GPU stands for node1, which holds
 * node1:cpu and node1:cuda0, each with a bundle in round 1. */
static struct hf_run *make_node_run(void)
{
    static struct hf_device_info ndevs[2];
    static struct hf_inner_device inner[2] = {{"node1:cpu", 1}, {"node1:cuda0", 1}};
    static struct hf_round_device in_rd[4][2];
    static struct hf_event in_ev[2] = {
        {.round = 1, .device = 0, .first = 0, .count = 3, .work = 30, .start_s = 0.51,
         .end_s = 0.55},
        {.round = 1, .device = 1, .first = 3, .count = 4, .work = 40, .start_s = 0.51,
         .end_s = 0.58, .t = {.copy_in_s = 0.01, .kernel_s = 0.05, .copy_out_s = 0.01}},
    };
    struct hf_run *r = make_run("real");
    memcpy(ndevs, devs, sizeof ndevs);
    ndevs[1].kind = HF_DEV_NODE;
    snprintf(ndevs[1].name, sizeof ndevs[1].name, "node1");
    r->devs = ndevs;
    r->ninner = 2;
    r->inner = inner;
    for (int k = 0; k < 4; k++) {
        rounds[k].inner = in_rd[k];
        in_rd[k][0] = (struct hf_round_device){.chunks = 3, .bundles = 1, .work = 30, .share = 0.4};
        in_rd[k][1] = (struct hf_round_device){.chunks = 4, .bundles = 1, .work = 40, .share = 0.6};
    }
    r->ninner_events = 2;
    r->inner_events = in_ev;
    return r;
}

/* A run across nodes: results.json names the devices inside the nodes and
 * holds their bundles; the trace gives each a thread under its node's. */
static void test_node_run(void **state)
{
    (void)state;
    struct hf_run *runs[1] = {make_node_run()};
    char path[128], trace[128];
    snprintf(path, sizeof path, "%s/results.json", dir);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    assert_int_equal(hf_results_write(path, runs, 1, NULL), 0);
    assert_int_equal(hf_trace_write(trace, runs, 1), 0);
    for (int k = 0; k < 4; k++)
        rounds[k].inner = NULL; /* the other tests' runs have no nodes */
    cJSON *j = parse_file(path);
    cJSON *r = cJSON_GetArrayItem(GET(j, "runs"), 0);
    cJSON *nd = GET(r, "node_devices");
    assert_int_equal(cJSON_GetArraySize(nd), 2);
    assert_string_equal(GET(cJSON_GetArrayItem(nd, 1), "name")->valuestring, "node1:cuda0");
    assert_string_equal(GET(cJSON_GetArrayItem(nd, 1), "node")->valuestring, "node1");
    cJSON *r1 = cJSON_GetArrayItem(GET(r, "rounds"), 1);
    assert_true(GET(cJSON_GetArrayItem(GET(r1, "node_devices"), 1), "share_of_node")
                    ->valuedouble == 0.6);
    cJSON *ne = GET(r, "node_events");
    assert_int_equal(cJSON_GetArraySize(ne), 2);
    cJSON *e1 = cJSON_GetArrayItem(ne, 1);
    assert_int_equal(GET(e1, "device")->valueint, 1);
    assert_int_equal(GET(e1, "first")->valueint, 3);
    assert_true(GET(e1, "kernel_s")->valuedouble == 0.05);
    cJSON_Delete(j);

    /* The trace: threads 2 and 3 are node1:cpu and node1:cuda0, sorted
     * between node1 (thread 1) and whatever would follow it. */
    j = parse_file(trace);
    double sort[4] = {-1, -1, -1, -1};
    int cuda0_bundles = 0, cuda0_parts = 0;
    const char *tname[4] = {0};
    cJSON *e;
    cJSON_ArrayForEach(e, GET(j, "traceEvents"))
    {
        const char *ph = GET(e, "ph")->valuestring, *name = GET(e, "name")->valuestring;
        int tid = GET(e, "tid")->valueint;
        if (strcmp(ph, "M") == 0 && strcmp(name, "thread_name") == 0 && tid < 4)
            tname[tid] = GET(GET(e, "args"), "name")->valuestring;
        else if (strcmp(ph, "M") == 0 && strcmp(name, "thread_sort_index") == 0 && tid < 4)
            sort[tid] = GET(GET(e, "args"), "sort_index")->valuedouble;
        else if (strcmp(ph, "X") == 0 && tid == 3)
            *(strncmp(name, "round ", 6) == 0 ? &cuda0_bundles : &cuda0_parts) += 1;
    }
    assert_string_equal(tname[2], "node1:cpu");
    assert_string_equal(tname[3], "node1:cuda0");
    assert_true(sort[0] < sort[1] && sort[1] < sort[2] && sort[2] < sort[3]);
    assert_int_equal(cuda0_bundles, 1);
    assert_int_equal(cuda0_parts, 3); /* copy-in, kernel, copy-out */
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_results_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_unwritable, setup, teardown),
        cmocka_unit_test(test_table),
        cmocka_unit_test_setup_teardown(test_shared_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
