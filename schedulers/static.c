/* static.c - fixed ratios from the config.
 *
 * DESIGN
 * ------
 * [static] ratios = 0.2, 0.4, 0.4 gives one share per device in the order of
 * [devices]; they are normalised, so "1, 2, 2" means the same. The count must
 * match the devices (anything else is a config error naming the key); without
 * the key every device gets an equal share. Each round the chunks are split by
 * the ratios (floors, then leftover chunks to whoever finishes them first, at
 * the ratio taken as a speed), laid out contiguously; a GPU gets its share as
 * one bundle, a CPU drains its share chunk by chunk. No stealing, no
 * adaptation: the split is the user's. A retired device's ratio is dropped at
 * the next round; its unstarted buffer of the current round goes to whoever
 * asks next, so the round still completes.
 */
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "sched_util.h"

struct sstatic {
    int ndev;
    const struct hf_device_info *dev;
    double *ratio;
    struct hf__buf *buf;
    const struct hf_round *r;
};

static void static_destroy(void *state)
{
    struct sstatic *s = state;
    if (!s)
        return;
    free(s->ratio);
    free(s->buf);
    free(s);
}

/* Parses one ratio; returns 0 and sets *v, or HF_ECONFIG naming the key. */
static int parse_ratio(hf_config_t cfg, const char *item, double *v)
{
    char *end;
    *v = strtod(item, &end);
    if (end == item || *end != '\0' || !(*v >= 0.0) || *v > 1e300)
        return hf_fail(HF_ECONFIG, "%s: [static] ratios: '%s' is not a non-negative number",
                       hf_config_where(cfg, "static", "ratios"), item);
    return 0;
}

/* Reads [static] ratios (one per device) or defaults to equal shares. */
static int static_create(void **state, const struct hf_sched_env *env)
{
    struct sstatic *s = calloc(1, sizeof *s);
    if (!s)
        return hf_fail(HF_ENOMEM, "static: out of memory");
    s->ndev = env->ndevices;
    s->dev = env->dev;
    size_t n = (size_t)(s->ndev > 0 ? s->ndev : 1);
    s->ratio = calloc(n, sizeof *s->ratio);
    s->buf = calloc(n, sizeof *s->buf);
    if (!s->ratio || !s->buf) {
        static_destroy(s);
        return hf_fail(HF_ENOMEM, "static: out of memory");
    }
    int rc = 0;
    if (hf_config_get(env->cfg, "static", "ratios")) {
        char **items = NULL;
        int k = hf_config_list(env->cfg, "static", "ratios", &items);
        if (k < 0) {
            rc = k;
        } else if (k != s->ndev) {
            rc = hf_fail(HF_ECONFIG, "%s: [static] ratios: %d value(s) for %d device(s); give one "
                                     "ratio per device, in the order of [devices]",
                         hf_config_where(env->cfg, "static", "ratios"), k, s->ndev);
        } else {
            double sum = 0.0;
            for (int d = 0; d < k && rc == 0; d++) {
                rc = parse_ratio(env->cfg, items[d], &s->ratio[d]);
                sum += s->ratio[d];
            }
            if (rc == 0 && !(sum > 0.0))
                rc = hf_fail(HF_ECONFIG, "%s: [static] ratios: all zero; at least one device "
                                         "needs a positive share",
                             hf_config_where(env->cfg, "static", "ratios"));
        }
        for (int i = 0; k > 0 && i < k; i++)
            free(items[i]);
        free(items);
    } else {
        for (int d = 0; d < s->ndev; d++)
            s->ratio[d] = 1.0;
    }
    if (rc) {
        static_destroy(s);
        return rc;
    }
    hf__normalise(s->ratio, s->ndev);
    *state = s;
    return 0;
}

static int static_round_begin(void *state, const struct hf_round *r)
{
    struct sstatic *s = state;
    size_t counts[s->ndev];
    s->r = r;
    if (hf__split_counts(r->nchunks, s->ratio, r->alive, s->ndev, counts) == 0) {
        /* Every device with a share is retired: spread over the survivors. */
        double eq[s->ndev];
        for (int d = 0; d < s->ndev; d++)
            eq[d] = 1.0;
        hf__split_counts(r->nchunks, eq, r->alive, s->ndev, counts);
    }
    hf__cost_cut(r, 0, s->dev, s->ndev, counts); /* ratios are shares of work */
    hf__layout(s->buf, counts, s->dev, s->ndev, 0);
    return 0;
}

static int static_next(void *state, int dev, struct hf_span *out)
{
    struct sstatic *s = state;
    if (!s->r->alive[dev])
        return 0;
    if (hf__take_own(s->buf, s->dev, dev, out))
        return 1;
    return hf__take_orphan(s->buf, s->dev, s->r->alive, s->ndev, dev, out);
}

static int static_plan(void *state, double *out)
{
    struct sstatic *s = state;
    memcpy(out, s->ratio, (size_t)s->ndev * sizeof *out);
    return 1;
}

/* The knobs of [static] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key static_keys[] = {
    {NULL, "ratios", HF_KEY_LIST, 0, 0, 0, NULL, "equal", "one share per device"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_static = {
    .keys = static_keys,
    .name = "static",
    .summary = "fixed ratios from [static] ratios (equal shares by default)",
    .create = static_create,
    .round_begin = static_round_begin,
    .next = static_next,
    .plan = static_plan,
    .destroy = static_destroy,
};
