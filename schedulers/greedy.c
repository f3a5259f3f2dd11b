/* greedy.c - greedy self-scheduling with fixed-size chunks.
 *
 * DESIGN
 * ------
 * The definition implemented is the greedy baseline of Yuan et al.: pure
 * self-scheduling from one shared pool. The round's chunks are kept in chunk
 * order; whenever a device is idle it takes the next `take` chunks (knob
 * [greedy] take, default 1) from the front, whatever kind of device it is. There
 * is no profiling, no per-device buffer, no bundling beyond `take` and no
 * adaptation: the policy balances only because fast devices come back for more
 * work more often. That is exactly what makes it a useful baseline for HASS: it
 * wastes nothing at the end of a round but pays a dispatch and a transfer per
 * take on every GPU. A retired device simply stops asking.
 */
#include <stdlib.h>

#include "sched.h"

struct greedy {
    long take;
    const struct hf_round *r;
    size_t next; /* front of the shared pool */
};

static int greedy_create(void **state, const struct hf_sched_env *env)
{
    struct greedy *g = calloc(1, sizeof *g);
    if (!g)
        return hf_fail(HF_ENOMEM, "greedy: out of memory");
    int rc = hf_config_long(env->cfg, "greedy", "take", 1, 1, 1L << 30, &g->take);
    if (rc) {
        free(g);
        return rc;
    }
    *state = g;
    return 0;
}

static int greedy_round_begin(void *state, const struct hf_round *r)
{
    struct greedy *g = state;
    g->r = r;
    g->next = 0;
    return 0;
}

/* An idle device takes the next `take` chunks in chunk order. */
static int greedy_next(void *state, int dev, struct hf_span *out)
{
    struct greedy *g = state;
    if (!g->r->alive[dev] || g->next >= g->r->nchunks)
        return 0;
    size_t k = (size_t)g->take;
    if (k > g->r->nchunks - g->next)
        k = g->r->nchunks - g->next;
    out->first = g->next;
    out->count = k;
    out->stolen = 0;
    g->next += k;
    return 1;
}

static void greedy_destroy(void *state)
{
    free(state);
}

/* The knobs of [greedy] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key greedy_keys[] = {
    {NULL, "take", HF_KEY_INT, 1, 1073741824.0, 0, NULL, "1", "chunks per request"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_greedy = {
    .keys = greedy_keys,
    .name = "greedy",
    .summary = "self-scheduling: an idle device takes the next `take` chunks from one shared pool",
    .create = greedy_create,
    .round_begin = greedy_round_begin,
    .next = greedy_next,
    .destroy = greedy_destroy,
};
