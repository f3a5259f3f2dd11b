/* test_devices.c - [devices] cuda: the GPU list, one GPU as several devices
 * (cuda = 0,0), and the errors that name file, line, key and value.
 *
 * DESIGN
 * ------
 * The list is built as though the machine had the GPUs the case needs
 * (hf__devlist_init_with_gpus), so that the shared-GPU devices, their names
 * and flags are checked where no GPU is lent; nothing is opened. The last
 * case builds the list of the machine itself: without a GPU `cuda = 0,0`
 * must fail with HF_ENODEV and a message naming the key and its value, with
 * one it must give the two shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

/* Parses `[devices]` + body as file "gpus.ini" (the header is line 1, the
 * body's first key line 2). */
static hf_config_t parse(const char *body)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[devices]\n%s\n", body);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "gpus.ini", ini), 0);
    return cfg;
}

/* The list of a machine with `present` GPUs; returns its code. */
static int list_of(const char *body, int present, hf_devlist_t *out)
{
    hf_config_t cfg = parse(body);
    hf_clear_error();
    int rc = hf__devlist_init_with_gpus(out, cfg, present);
    hf_config_destroy(cfg);
    return rc;
}

/* The device of list l named `name`, or NULL. */
static const struct hf_device_info *named(hf_devlist_t l, const char *name)
{
    for (int i = 0; i < hf_devlist_count(l); i++)
        if (strcmp(hf_devlist_get(l, i)->info.name, name) == 0)
            return &hf_devlist_get(l, i)->info;
    return NULL;
}

/* cuda = 0,0 on a one-GPU machine: two CUDA devices of ordinal 0, distinct
 * names, each flagged as sharing the GPU with one other, each with a host
 * core of its own. */
static void zero_zero_is_two_devices(void **state)
{
    (void)state;
    hf_devlist_t l;
    assert_int_equal(list_of("cpu = 0\ncuda = 0,0", 1, &l), 0);
    assert_int_equal(hf_devlist_count(l), 2);
    const struct hf_device_info *a = named(l, "cuda0#1"), *b = named(l, "cuda0#2");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->index, 0);
    assert_int_equal(b->index, 1);
    assert_int_equal(a->kind, HF_DEV_CUDA);
    assert_int_equal(b->kind, HF_DEV_CUDA);
    assert_true(a->is_gpu && b->is_gpu);
    assert_int_equal(a->cuda_ordinal, 0);
    assert_int_equal(b->cuda_ordinal, 0);
    assert_int_equal(a->shares_gpu, 2);
    assert_int_equal(b->shares_gpu, 2);
    assert_true(a->host_core >= 0 && b->host_core >= 0);
    assert_int_not_equal(a->host_core, b->host_core);
    /* The app's view says the same. */
    const struct hf_devices *v = hf_devlist_view(l);
    assert_int_equal(v->count, 2);
    assert_string_equal(v->dev[1].name, "cuda0#2");
    assert_int_equal(v->dev[1].shares_gpu, 2);
    hf_devlist_destroy(l);
}

/* GPUs named once keep their plain names and no flag: cuda = all, 0,1. */
static void plain_gpus_are_not_shared(void **state)
{
    (void)state;
    const char *specs[] = {"cpu = 0\ncuda = all", "cpu = 0\ncuda = 1,0"};
    for (int k = 0; k < 2; k++) {
        hf_devlist_t l;
        assert_int_equal(list_of(specs[k], 2, &l), 0);
        assert_int_equal(hf_devlist_count(l), 2);
        for (int i = 0; i < 2; i++) {
            const struct hf_device_info *d = &hf_devlist_get(l, i)->info;
            char want[16];
            snprintf(want, sizeof want, "cuda%d", d->cuda_ordinal);
            assert_string_equal(d->name, want);
            assert_int_equal(d->shares_gpu, 0);
        }
        assert_int_equal(hf_devlist_get(l, 0)->info.cuda_ordinal, k ? 1 : 0);
        hf_devlist_destroy(l);
    }
}

/* A mixed list: the repeated ordinal's devices are numbered in list order,
 * the other GPU is plain; three shares of one GPU are numbered 1..3. */
static void names_of_mixed_lists(void **state)
{
    (void)state;
    int ord[8];
    char name[48];
    int shares = -1;
    hf_config_t cfg = parse("cuda = 0, 1, 0");
    assert_int_equal(hf_cuda_list(cfg, 2, ord, 8), 3);
    hf_config_destroy(cfg);
    const char *want[] = {"cuda0#1", "cuda1", "cuda0#2"};
    const int want_shares[] = {2, 0, 2};
    for (int g = 0; g < 3; g++) {
        hf_cuda_device_name(ord, 3, g, name, sizeof name, &shares);
        assert_string_equal(name, want[g]);
        assert_int_equal(shares, want_shares[g]);
    }
    cfg = parse("cuda = 0,0,0");
    assert_int_equal(hf_cuda_list(cfg, 1, ord, 8), 3);
    hf_config_destroy(cfg);
    hf_cuda_device_name(ord, 3, 2, name, sizeof name, &shares);
    assert_string_equal(name, "cuda0#3");
    assert_int_equal(shares, 3);
}

/* Nonsense is refused with the file, the line, the key and the value; a
 * malformed item is named as such even where its GPU does not exist. */
static void bad_values_are_named(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        int present, rc;
        const char *says;
    } cases[] = {
        {"cuda = -1", 1, HF_ECONFIG, "'-1' is not all, none or a GPU number"},
        {"cuda = 0,-1", 0, HF_ECONFIG, "'-1' is not all, none or a GPU number"},
        {"cuda = 0,x", 1, HF_ECONFIG, "'x' is not all, none or a GPU number"},
        {"cuda = 0,1.5", 2, HF_ECONFIG, "'1.5' is not all, none or a GPU number"},
        {"cuda = 0,2", 2, HF_ENODEV, "GPU 2 asked for"},
        {"cuda = 0,0", 0, HF_ENODEV, "GPU 0 asked for"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        hf_devlist_t l = NULL;
        int rc = list_of(cases[k].body, cases[k].present, &l);
        assert_int_equal(rc, cases[k].rc);
        const char *msg = hf_last_error();
        assert_non_null(strstr(msg, "gpus.ini:2"));
        assert_non_null(strstr(msg, "[devices] "));
        assert_non_null(strstr(msg, cases[k].body));
        assert_non_null(strstr(msg, cases[k].says));
    }
}

/* Under a benchmark (HF_BENCH set) a repeated ordinal is refused: a shared
 * GPU's seconds must never be counted as several GPUs', on any machine. HF_BENCH=0 and
 * lists without a repeat pass. */
static void benchmarks_refuse_a_shared_gpu(void **state)
{
    (void)state;
    hf_devlist_t l;
    setenv("HF_BENCH", "1", 1);
    assert_int_equal(list_of("cpu = 0\ncuda = 0,0", 1, &l), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "gpus.ini:3"));
    assert_non_null(strstr(hf_last_error(), "cuda = 0,0 names GPU 0 more than once"));
    /* Refused as a config, before the GPUs are looked for. */
    assert_int_equal(list_of("cpu = 0\ncuda = 0,0", 0, &l), HF_ECONFIG);
    assert_int_equal(list_of("cpu = 0\ncuda = 1,0", 2, &l), 0);
    hf_devlist_destroy(l);
    setenv("HF_BENCH", "0", 1);
    assert_int_equal(list_of("cpu = 0\ncuda = 0,0", 1, &l), 0);
    hf_devlist_destroy(l);
    unsetenv("HF_BENCH");
}

/* The machine's own list: without a GPU (or without CUDA in the build)
 * cuda = 0,0 fails cleanly, naming the key; with one it is two devices. */
static void this_machine(void **state)
{
    (void)state;
    hf_config_t cfg = parse("cpu = 0\ncuda = 0,0");
    hf_devlist_t l = NULL;
    hf_clear_error();
    int rc = hf_devlist_init(&l, cfg, 0);
    hf_config_destroy(cfg);
#ifdef HF_HAVE_CUDA
    int present = hf_cuda_device_count();
#else
    int present = 0;
#endif
    if (present == 0) {
        assert_int_equal(rc, HF_ENODEV);
        assert_non_null(strstr(hf_last_error(), "gpus.ini:3: [devices] cuda = 0,0: GPU 0"));
        printf("no GPU here: cuda = 0,0 fails with \"%s\"\n", hf_last_error());
        return;
    }
    assert_int_equal(rc, 0);
    assert_non_null(named(l, "cuda0#1"));
    assert_non_null(named(l, "cuda0#2"));
    hf_devlist_destroy(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_zero_is_two_devices),
        cmocka_unit_test(plain_gpus_are_not_shared),
        cmocka_unit_test(names_of_mixed_lists),
        cmocka_unit_test(bad_values_are_named),
        cmocka_unit_test(benchmarks_refuse_a_shared_gpu),
        cmocka_unit_test(this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
