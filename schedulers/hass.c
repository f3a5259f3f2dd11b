/* hass.c - HASS, the Heterogeneous Architecture Scheduling Strategy
 * (Goodarzi 2018, Algorithm 3.1): the ops table and the flow of a round.
 *
 * DESIGN
 * ------
 * Every device d has a cost model T_d(w, b) = lat_d + w * inv_d + b * inv_bw_d
 * (struct hf_cost_model: w a bundle's work, b the bytes a GPU copies), fitted
 * robustly from every bundle it ran, and every decision HASS makes compares
 * finish times under those models. Profile (hass_profile.c): a round without a
 * plan runs from one shared pool while each device is measured on spans of
 * growing size, which tell latency from rate. Plan (hass_plan.c): all devices
 * are to finish together under their models, padded by what their spread may
 * cost; a GPU runs its share as one bundle, a CPU team drains its buffer; a
 * load whose chunk costs the engine learns is planned by the rates the devices
 * showed (hass_rates.c). Steal (hass_steal.c): an idle device takes unstarted
 * work from another's tail, sized so that the round ends soonest. Adapt
 * (hass_adapt.c): each bundle feeds its device's model and the warm-up a new
 * size costs it; the plan in force stays unless a new one gains more than the
 * models' error and pays its warm-ups back within HASS_AMORTISE rounds. Shared
 * links enter the models in hass_link.c; device_set.c chooses which devices
 * take part. The scheduler never sleeps nor reads a clock: it sees the
 * engine's events and each bundle's seconds.
 */
#include <stdlib.h>
#include <string.h>

#include "hass.h"

static void hass_destroy(void *state)
{
    struct hass *h = state;
    if (!h)
        return;
    hf__devset_free(&h->devset);
#define HASS_FREE(f, k) free(h->f);
    HASS_ARRAYS(HASS_FREE)
#undef HASS_FREE
    free(h->chunk_s);
    free(h->chunk_dev);
    free(h->ran_by);
    free(h);
}

/* Reads the [hass] knobs and allocates the per-device arrays. */
static int hass_create(void **state, const struct hf_sched_env *env)
{
    struct hass *h = calloc(1, sizeof *h);
    if (!h)
        return hf_fail(HF_ENOMEM, "hass: out of memory");
    h->ndev = env->ndevices;
    h->dev = env->dev;
    h->profile = env->profile;
    hf_config_t cfg = env->cfg;
    int rc;
    if ((rc = hf_config_long(cfg, "hass", "profile_chunks", 1, 1, 1L << 30, &h->profile_chunks)) ||
        (rc = hf_config_double(cfg, "hass", "growth_stop", 0.10, 0.0, 10.0, &h->growth_stop)) ||
        (rc = hf_config_double(cfg, "hass", "stable_tol", 0.01, 0.0, 1.0, &h->stable_tol)) ||
        (rc = hf_config_long(cfg, "hass", "reprobe", 8, 0, 1L << 20, &h->reprobe)) ||
        (rc = hf_config_double(cfg, "hass", "reserve", 0.0, 0.0, 0.5, &h->reserve)) ||
        (rc = hf_config_bool(cfg, "hass", "steal", 1, &h->steal)) ||
        (rc = hf_config_bool(cfg, "hass", "warm_start", 1, &h->warm_start))) {
        free(h);
        return rc;
    }
    size_t n = (size_t)(h->ndev > 0 ? h->ndev : 1);
    int ok = 1;
#define HASS_ALLOC(f, k) ok &= (h->f = calloc(n * (k), sizeof *h->f)) != NULL;
    HASS_ARRAYS(HASS_ALLOC)
#undef HASS_ALLOC
    if (!ok || (rc = hf__devset_init(&h->devset, env))) {
        hass_destroy(h);
        return ok ? rc : hf_fail(HF_ENOMEM, "hass: out of memory");
    }
    for (int d = 0; d < h->ndev; d++)
        hass_model_reset(h, d);
    h->nlinks = hf__link_index(h->dev, h->ndev, h->link_of);
    hf__hass_links_refresh(h);
    *state = h;
    return 0;
}

/* Starts a round: the shared pool without a plan, else the plan laid out. */
static int hass_round_begin(void *state, const struct hf_round *r)
{
    struct hass *h = state;
    h->r = r;
    h->mean_bytes = hf__mean_chunk_bytes(r);
    hf__hass_chunks_begin(h, r);
    h->plan_due = 0;
    for (size_t i = 0; i < h->chunk_n; i++)
        h->ran_by[i] = -1;
#define HASS_ZERO(f) memset(h->f, 0, (size_t)h->ndev * sizeof *h->f);
    HASS_ROUND_ARRAYS(HASS_ZERO)
#undef HASS_ZERO
    h->split = 0;
    h->pool_next = 0;
    hf__hass_link_tick(h);
    if (r->round == 0 && !h->have_ratio) {
        hf__hass_profile_begin(h);
        if (h->warm_start && hf__hass_warm_models(h))
            h->have_ratio = 1;
    }
    h->profiling = !h->have_ratio;
    if (h->profiling) {
        h->r = hf__devset_begin(&h->devset, r, NULL, NULL);
        return 0;
    }
    double lat[h->ndev], inv[h->ndev];
    hf__hass_set_models(h, lat, inv);
    r = h->r = hf__devset_begin(&h->devset, r, lat, inv);
    int fresh = h->plan_chunks != r->nchunks;
    for (int d = 0; d < h->ndev && !fresh; d++)
        fresh = (h->plan_n[d] > 0 && !r->alive[d]) || (r->alive[d] && !h->was_alive[d]);
    if (fresh) {
        hf__hass_split_rest(h, 0);
        return 0;
    }
    size_t counts[h->ndev];
    memcpy(counts, h->plan_n, sizeof counts);
    hf__hass_refresh_rates(h);
    hf__hass_lay_out(h, counts, 0);
    hf__hass_plan_pieces(h);
    return 0;
}

/* Device d's next span: pool, own buffer, an orphan's, or a steal. */
static int hass_pick(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    if (!r->alive[d])
        return 0;
    if (!h->split)
        return hf__hass_pool_take(h, d, out);
    if (!h->dev[d].is_gpu && hf__hass_cpu_should_leave(h, d))
        return 0;
    if (h->released[d] > 0.0 && h->buf[d].lo < h->buf[d].hi)
        return hf__hass_released_piece(h, d, out);
    if (h->piece[d] > 0 && hf__take_front(h->buf, d, h->piece[d], out))
        return 1;
    if (hf__take_own(h->buf, h->dev, d, out))
        return 1;
    if (hf__take_orphan(h->buf, h->dev, r->alive, h->ndev, d, out))
        return 1;
    return h->steal && hf__hass_link_may_steal(h, d) ? hf__hass_steal(h, d, out) : 0;
}

/* Hands out device d's next span and books its work and bytes. */
static int hass_next(void *state, int d, struct hf_span *out)
{
    struct hass *h = state;
    int got = hass_pick(h, d, out);
    if (got > 0) {
        struct hf__buf span = {out->first, out->first + out->count};
        double work = hf__buf_work(h->r, &span);
        h->committed[d] += work;
        hf__hass_link_give(h, d, hf__buf_bytes(h->r, &span));
        h->inflight[d] = 1;
        h->run_w[d] = work;
        h->run_at[d] = hass_clock(h);
    }
    return got;
}

/* Books a finished span and learns from it. */
static void hass_finished(void *state, int d, const struct hf_span *span, double seconds)
{
    struct hass *h = state;
    h->inflight[d] = 0;
    hf__hass_link_tick(h);
    if (seconds <= 0.0)
        return;
    h->bundles[d]++;
    h->spent[d] += seconds;
    for (size_t i = span->first; i < span->first + span->count && i < h->chunk_n; i++)
        h->ran_by[i] = d;
    if (!h->dev[d].is_gpu && span->count == 1 && span->first < h->chunk_n) {
        h->chunk_s[span->first] = seconds;
        h->chunk_dev[span->first] = d;
    }
    hf__hass_learn(h, d, span, seconds);
}

/* Ends a round: refits the models and plans the next round. */
static int hass_round_end(void *state, const struct hf_round_report *rep)
{
    struct hass *h = state;
    const struct hf_round *r = h->r;
    if (r && r->round == 0)
        hf__hass_profile_end(h, r);
    for (int d = 0; d < h->ndev; d++) { /* a round sat out is not a round left out */
        h->left_out[d] = rep->chunks[d] > 0 ? 0 : h->left_out[d] + (r && r->alive[d]);
        h->was_alive[d] = !r || r->alive[d];
    }
    hf__devset_end(&h->devset, rep);
    hf__hass_refresh_rates(h);
    hf__hass_save_models(h);
    if (!r || r->nchunks == 0)
        return 0;
    memcpy(h->busy_last, rep->busy_s, (size_t)h->ndev * sizeof *h->busy_last);
    memcpy(h->bundles_last, h->bundles, (size_t)h->ndev * sizeof *h->bundles_last);
    memcpy(h->plan_ran, h->plan_n, (size_t)h->ndev * sizeof *h->plan_ran);
    h->plan_due = h->learned && r->round >= 1 && hass_gpus_alone(h);
    if (h->plan_due ||
        !hf__hass_plan_next(h, rep->work, rep->busy_s, r->nchunks, h->learned && r->round >= 1))
        return 0;
    hf__hass_hedge_surprises(h);
    h->have_ratio = 1;
    return 0;
}

static int hass_device_set(void *state, struct hf_set_choice *out)
{
    return hf__devset_report(&((struct hass *)state)->devset, out);
}

static int hass_plan(void *state, double *out)
{
    struct hass *h = state;
    if (!h->have_ratio)
        return 0;
    memcpy(out, h->ratio, (size_t)h->ndev * sizeof *out);
    return 1;
}

/* The knobs of [hass] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key hass_keys[] = {
    {NULL, "profile_chunks", HF_KEY_INT, 1, 1073741824.0, 0, NULL, "1",
     "a GPU's first span in round 0, chunks"},
    {NULL, "growth_stop", HF_KEY_NUM, 0, 10, 0, NULL, "0.10",
     "profiling stops when the rate grows less"},
    {NULL, "stable_tol", HF_KEY_NUM, 0, 1, 0, NULL, "0.01", "a split this close is stable"},
    {NULL, "window", HF_KEY_INT, 1, 64, 0, NULL, "4", "accepted and ignored (old configs)"},
    {NULL, "reprobe", HF_KEY_INT, 0, 1048576.0, 0, NULL, "8",
     "rounds before a left-out device is re-measured (0: never)"},
    {NULL, "reserve", HF_KEY_NUM, 0, 0.5, 0, NULL, "0", "share of each GPU's work left to steal"},
    {NULL, "steal", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "idle GPUs steal from the CPU buffer"},
    {NULL, "warm_start", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "start from the saved profile"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_hass = {
    .keys = hass_keys,
    .name = "hass",
    .summary = "HASS: profile, split by measured rates, GPUs steal from the CPU, adapt per round",
    .create = hass_create,
    .round_begin = hass_round_begin,
    .next = hass_next,
    .finished = hass_finished,
    .round_end = hass_round_end,
    .plan = hass_plan,
    .device_set = hass_device_set,
    .destroy = hass_destroy,
};
