/* test_pool.c - the exactly-once ledger, alone and hammered by threads (runs under TSan). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hetfarm.h"
#include "core/pool.h"

static void claim_complete_release(void **state)
{
    (void)state;
    hf_pool_t p;
    assert_int_equal(hf_pool_init(&p), 0);
    assert_int_equal(hf_pool_reset(p, 10), 0);
    assert_int_equal(hf_pool_claim(p, 0, 4), 0);
    assert_int_equal(hf_pool_claimed(p), 4);
    /* Overlaps, empty spans and spans past the end are refused and change nothing. */
    assert_int_equal(hf_pool_claim(p, 3, 2), HF_ESCHED);
    assert_int_equal(hf_pool_claim(p, 4, 0), HF_ESCHED);
    assert_int_equal(hf_pool_claim(p, 8, 3), HF_ESCHED);
    assert_int_equal(hf_pool_claimed(p), 4);
    assert_int_equal(hf_pool_complete(p, 0, 2), 0);
    assert_int_equal(hf_pool_complete(p, 0, 2), HF_ESCHED); /* twice */
    assert_int_equal(hf_pool_complete(p, 4, 1), HF_ESCHED); /* never claimed */
    assert_int_equal(hf_pool_release(p, 2, 2), 0);
    size_t first, len = hf_pool_next_free(p, 0, &first);
    assert_int_equal(first, 2);
    assert_int_equal(len, 8);
    assert_int_equal(hf_pool_claim(p, 2, 8), 0);
    assert_int_equal(hf_pool_complete(p, 2, 8), 0);
    assert_int_equal(hf_pool_done(p), 10);
    assert_int_equal(hf_pool_next_free(p, 0, &first), 0);
    /* A reset starts a fresh round. */
    assert_int_equal(hf_pool_reset(p, 3), 0);
    assert_int_equal(hf_pool_done(p), 0);
    assert_int_equal(hf_pool_size(p), 3);
    hf_pool_destroy(p);
}

#define WORKERS 4
#define CHUNKS 20000

struct race {
    hf_pool_t pool;
    int wins[WORKERS];
    int id;
};

/* Every worker tries to claim every chunk; exactly one claim per chunk may win. */
static void *contend(void *arg)
{
    struct race *r = arg;
    int me = __atomic_fetch_add(&r->id, 1, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < CHUNKS; i++)
        if (hf_pool_claim(r->pool, i, 1) == 0) {
            r->wins[me]++;
            assert_int_equal(hf_pool_complete(r->pool, i, 1), 0);
        }
    return NULL;
}

static void concurrent_claims_win_once(void **state)
{
    (void)state;
    struct race r = {0};
    assert_int_equal(hf_pool_init(&r.pool), 0);
    assert_int_equal(hf_pool_reset(r.pool, CHUNKS), 0);
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, contend, &r);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    int total = 0;
    for (int i = 0; i < WORKERS; i++)
        total += r.wins[i];
    assert_int_equal(total, CHUNKS);
    assert_int_equal(hf_pool_done(r.pool), CHUNKS);
    hf_pool_destroy(r.pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(claim_complete_release),
        cmocka_unit_test(concurrent_claims_win_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
