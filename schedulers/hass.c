/* hass.c - HASS, the Heterogeneous Architecture Scheduling Strategy
 * (Goodarzi 2018, Algorithm 3.1), with the improvements of issues 2 and 12.
 *
 * DESIGN
 * ------
 * Every device has a cost model T(w, b) = lat + w * inv + b * inv_bw (sched.h,
 * struct hf_cost_model; b is the bytes a GPU copies, 0 for a CPU), fed with
 * every span it ran: profile spans, its own bundles, steals. The model is
 * robust (median fits over a window of recent bundles): a
 * bundle far slower than predicted is an outlier and is not believed, and two
 * surprises in a row restart the window, so a real change is believed within
 * two bundles (two slow ones both much smaller than the window's largest,
 * such as steals, correct the latency and not the rate: a profile-span
 * intercept fitted low had made an equal GPU 30-45% slower for the plan;
 * other slow pairs scale the whole model, latency too: cost_model.c). The
 * thesis's three steps map onto it as follows.
 *
 * Profile (round 0, unless warm-started). Until every alive device has been
 * measured, the round's chunks form one shared pool taken from the front: a CPU
 * takes one chunk at a time, `profile_chunks` of them; a GPU takes a profile
 * span of `profile_chunks` chunks and doubles it after every span until its
 * rate rises by less than `growth_stop` - spans of different sizes are exactly
 * what the affine fit needs to tell latency from rate. A GPU's very first
 * bundle is not fitted: on real hardware it carries the first launch and lazy
 * kernel loading (40 ms on an H200). Profile spans are all first of their
 * size, and on real GPUs each may carry a warm-up (a kernel choice: 3 ms in
 * the stress matrix's `gpu` cells against a 20 us latency), which their
 * pairs cancel in the slope but which stays in the intercept: when doubling
 * the first fitted span barely moved the time (a fixed cost dominates), that
 * span size is run once more, and the repeat gives the latency (the models
 * are told to expect warm-ups: hf_cost_model.warm_fresh); a repeat that
 * stalled (a slow surprise to its model) is run again. A whole profile
 * span slower per unit of work than the one half its size (a stall: an
 * affine device's rate only rises with the span) is not fitted and is run
 * once more, its size marked run (the rerun is a repeat, without the
 * warm-up); a GPU whose profile the round cut off before that rerun takes
 * the model of the GPU most like it by the standalone pass
 * (restart_cut_profile). Then the rest of the pool is split as below. A GPU's
 * first bundle can outlast the pool (a 40 ms first launch at a load the CPU
 * drains in 3 ms): the other devices leave it the chunks of one repeat of that
 * bundle (pool_held), whose size is warmed, so its time is the latency and a
 * little work. A GPU whose model round 0 leaves with one size (that repeat) or
 * none adds the engine's standalone pass on the load, a warm bundle it really
 * ran (seed_standalone): two sizes, a latency and a rate, and a device planned
 * rather than left out. A GPU whose profile model misses that pass by more
 * than twice what it tolerates adds it as well, as the first bundle of its
 * size with the GPU's measured warm-up: 1-16-chunk spans at 5% jitter can
 * fit half the true slope (profile_misses). With `warm_start`, the models
 * saved in the profile (`hass.model` = lat inv inv_bw, or an older lat inv
 * or `hass.rate`) skip profiling.
 *
 * Split (every round). The split makes all devices finish together under the
 * models: the common finish time T solves sum_d max(0, T - lat_d) / inv_d = W
 * (hf_cost_split; a device whose latency alone reaches T gets nothing), a
 * GPU's model there being its peers' median (GPUs alike by the standalone
 * pass) while its own agrees with that within its error: equal GPUs, equal
 * counts (hf__hass_pool_peers; every decision that adds a bundle takes its
 * latency from there too, hf__hass_latency). Chunks
 * are whole, so the continuous shares are floored and each leftover chunk goes
 * to the device that would finish it first; then a device is left out entirely
 * when the split without it finishes sooner (small loads: one or two GPUs, not
 * three devices). A device's time spread counts: the planned finish of a device
 * adds twice its spread times its largest single bundle (a GPU's whole share, a
 * CPU's one chunk), so a CPU whose chunks vary by 20% is not handed the one
 * chunk that would make it the straggler. Buffers are laid out contiguously,
 * GPUs first; where chunks do not cost the same (their `work` differs), the
 * buffers are cut so that each costs its device the planned time, every device
 * pricing a chunk by its own model (issue 18: a GPU pays a cheap chunk's copies,
 * a CPU its start; on a repeating load a chunk's work is the engine's learned
 * estimate, and when those estimates move the models' per-byte terms wait for
 * bundles in the new unit). A GPU gets
 * its buffer as ONE bundle, a CPU drains its buffer one chunk per request -
 * except that a GPU whose share is long against its fixed costs (3 more
 * latencies and two new sizes' warm-up under 1% of its time, both known),
 * beside devices that together run at half its rate or more, runs it as 4
 * pieces (hf__hass_plan_pieces): a piece much slower than its
 * model (a surprise, not a warm-up) releases the rest of its buffer, which
 * its owner runs on from the front only while that ends the round sooner
 * than leaving it, and the other devices steal from the tail as from a CPU's
 * (hass_steal.c). One bundle held a GPU slowed 2x mid-run to twice
 * the round (n32768-fs-j0-slow: 1086 ms against 556; with pieces 619, and
 * HASS's mean from round 2 590 ms against greedy's 601).
 * Devices that declare one shared link (hf_device_info.link: the nodes behind
 * rank 0's link, GPUs behind one PCIe switch) are split with the link in the
 * model (hass_link.c): the link serves them one transfer at a time in index
 * order, so each waits for the bytes of those before it, and their bytes over
 * the link's bandwidth (declared, else learned from their per-byte terms) fit
 * in the round; shares fall along the link and a device whose wait alone
 * fills the round gets nothing. What such a device measured feeds its model
 * less its wait for the link where that wait is known (spans handed out
 * together at one moment with nothing older on the link), and a device of a
 * busy link does not steal (it would wait for the link).
 *
 * Steal (during a round): hass_steal.c. An idle GPU steals from the tail
 * of the CPU buffer with the most work left, a span sized by the rates; an
 * idle CPU team one chunk; a CPU leaves the rest of its buffer when one more
 * chunk would end the round later than the GPUs would; a GPU's released
 * buffer is drained from the front by its owner and from the tail by the
 * others. A reserve of each GPU's share is laid at the CPU buffer's tail
 * for noisy GPUs (twice their measured spread when that exceeds 1% and the
 * noise it absorbs outweighs a GPU's latency, or the `reserve` knob), where
 * the GPUs steal it back by rate at the end.
 *
 * Adapt (round_end). The models are refitted and the next round's split is
 * planned from them. At the end of round 1, the first round whose bundles
 * are full-size, the plan is made again by the models alone: the fresh plan
 * is taken when, by the models without the allowance for spread, it finishes
 * sooner by more than `stable_tol` and pays back its warm-up within 4 rounds
 * (not behind a shared link, where a model is fed its time less an estimated
 * wait: there the round-1 re-plan fed every node in 3 of 64 seeds of
 * test_nodes_shared_link's first cell). Round 0's plan came from the profile
 * spans alone, whose noise on two equal GPUs is as large as their difference
 * (2.4% apart at 2% jitter), and the noise test below, with spreads measured
 * on those few small bundles (4-9%), held it until a later round moved it: a
 * change after the plan should have settled. From round 2 on, the plan in
 * force keeps its exact chunk counts unless the new one finishes sooner,
 * under the models alone, by more than `stable_tol` and more than the models
 * of the devices it moves may be off by (each one's allowance for spread,
 * over the round: twice its spread times its largest bundle, so a CPU's is
 * one chunk's, over the square root of the bundles its model holds; a noisy
 * CPU whose count did not move had held a split of 8 GPUs 10% off for good,
 * and one bundle's spread held them up to 25% apart), ends no later with the
 * allowances, and pays back the
 * warm-up its new bundle sizes cost within 4 rounds (each device's one-off
 * cost of a new size is learned from how far such bundles overshoot its
 * model, and read from the window's first-of-size bundles as soon as the
 * latency is known: hf_cost_warmup; a new size costs real GPUs a kernel
 * choice). A GPU's warm-up is also read without any latency, from the first
 * bundle of a chunk count against its first repeat (learn_warm_cost): at a
 * small load every GPU runs one size per round from its standalone pass on,
 * its model never sees the sizes that tell its latency, and without this the
 * split moved by a chunk or two (6 us of gain in a 0.1 ms round) for a 3 ms
 * warm-up, twice in ten rounds. So the sizes a GPU has warmed are kept until
 * a new split's gain pays for new ones. Behind a shared link neither read is
 * taken by HASS itself: a bundle's time there holds whatever the estimate of
 * its wait for the link missed (up to a round's transfers), which read as a
 * warm-up of 0.1 s and held a plan that fed every node. A settled split thus
 * stops moving - but it is never frozen for good: when a device's times drift
 * (its model restarts after two surprising bundles), the plan moves and is
 * taken.
 * On a load whose chunk costs are learned (an irregular load that repeats:
 * hf_round.cost_moved has been non-zero since hf_round.repeats last read
 * 0), the plan from round 2 on is the
 * thesis's own adaptation instead: each device's time per unit of work is
 * what it took in the round just ended for the learned work it ran (its busy
 * time less its model's latency per bundle), the split makes all finish
 * together on those lines, and the buffers are cut by learned cost
 * (hf__hass_plan_by_rates). The models cannot plan such a load: its unit of
 * work moves every round, so every bundle is a new size to them (a slow one
 * is a warm-up, never fitted), and a region whose learned cost is off by 20%
 * (a region one device runs whole teaches the learning nothing) left a GPU
 * 25% late every round. A device's measured rate carries that error as its
 * device found it, so the split is right where the estimates are not - on
 * the region it ran. A CPU's region moves with the split, and the estimates
 * are off by a factor that changes along the load (the hump's cheap end,
 * priced by the GPUs' copy-bound steals, 1.9x its cost; its middle 0.8x), so
 * a CPU is priced on the run of chunks the new plan gives it instead: each
 * chunk it ran one at a time at the seconds it took (kept while the load
 * repeats), any other at its estimate times the seconds per unit of the
 * nearest chunk it ran, and the split is made again until that settles
 * (hf__hass_plan_by_rates). Priced by the rate of the round before, the CPU
 * of hump-fs-j0-gpu ran 97 chunks in 28 ms, then 48-52 of a buffer of 135 in
 * 60 ms (the GPUs stealing the rest, and its rate measured on the buffer's
 * dear front alone), then 97 again, for the whole run (62-81 ms against
 * static's 60.7). The
 * plan in force is kept unless the new one finishes sooner on those rates by
 * more than `stable_tol` and twice the rates' own noise (how far a device's
 * rate moved between two rounds that gave it the same chunks, and at least a
 * moved GPU's bundle spread), and pays back
 * its new sizes' warm-up within 4 rounds. The cut by learned cost still
 * moved a GPU's count by a few chunks nearly every round as the estimates
 * moved, each a new size (11 of 16 GPU rounds in tail-g2-j0-gpu, seed 4), so
 * a GPU keeps a count it has run where that ends its run at most
 * `stable_tol` of its share past the cut, never short of it, since a CPU
 * after it would pay the difference at 1/35 the rate (keep_known_sizes).
 * On such a load a warm-up is read
 * only from a size's first bundle against its repeat: the models' unit moves
 * every round, so a bundle's overshoot of its model is the model's error (a
 * GPU of hump-g2-j0-gpu learned 5.7-11.4 ms for a 3 ms warm-up, which held a
 * split 1.7% off for good).
 * GPUs alone (no CPU alive) on work that is not exact (hf_round.work_exact
 * unset: a load in units, a graph's edges) are different: each GPU runs one
 * region a round, so what it took is its speed and its region's cost at
 * once. The engine measures each region against the GPU's standalone rate
 * (core/chunk_cost.c), so the estimates themselves move by what a region
 * took, and a rate measured in the old estimates counted a dear region
 * twice (dearer, and its GPU slower): four GPUs on the hump in units
 * overshot round after round. Their next round is planned by rates at its
 * own start instead (plan_in_new_unit), each GPU's work re-expressed in the
 * estimates just folded (results.json's `plan` of a round is then the plan
 * it ran, not the next one's). Until the load is learned, the models plan with
 * each GPU's standalone rate, no latency beyond it and no allowance for its
 * spread (its bundles' spread is its regions'): four equal GPUs on the tail
 * shape got rates 20% apart from their profile spans and one a spread of
 * 43%, left out of the split for good (1.12-1.34x static's even split), and
 * a GPU whose round-0 pieces fitted a new size's warm-up as 4 ms of latency
 * got 118 chunks to its peers' 129-133 for the whole run. A plan by rates
 * there changes only for a gain beyond what the plans missed by
 * (hass_plan.c, hf__hass_plan_by_rates). Nor is a GPU's overshoot
 * of its model on a new size read as a warm-up there (a new size is a new
 * region: 19-129 ms read for a 3 ms warm-up held the split for good), nor a
 * slow piece of its share a reason to release the rest (a dear region, not
 * a slower GPU: its owner waited for GPUs busy with their own). On
 * exact work (matmul) a GPU's own bundles tell its rate, alone or not, and
 * a slowed GPU is believed as anywhere.
 * After a GPU's bundle came in much slower than its model (a surprise, not
 * yet believed), the next round lays half its share at a CPU's tail for
 * whichever GPU is free to steal (hedge_surprises): a one-off costs that
 * round a few more bundles, a real slowdown costs one slow round instead
 * of two (the stress matrix's `slow` cells: 3-8% off HASS's mean makespan).
 * Not under a plan by rates, which takes the rates of the round just ended
 * at once, and whose cut by learned cost would put the hedged share at the
 * front of the CPU's buffer, where the CPU starts on it.
 * A CPU whose chunk came in slower than its model (a surprise, not yet
 * believed) sits the next round out where even one chunk at that pace would
 * end after the planned round (hf__hass_surprise_late; it comes back by the
 * reprobe below): a real CPU's first chunk after rounds idle took 1.5-3 ms
 * in a 0.85 ms round, and a first rule that asked for twice the model's time
 * missed a 1.9x one, which the next round then paid again.
 * A device left out of the split for `reprobe` rounds gets one chunk to
 * re-measure it where that chunk ends within the planned round even at 4x
 * its model's time (a probe must cost nothing, and a device idle for rounds
 * runs its first chunk cold), so a device left out on old evidence can come
 * back.
 * Models are saved in the profile (`hass.model`, and `hass.rate` = 1/inv) at
 * every round_end.
 *
 * Knobs, section [hass]: profile_chunks (1), growth_stop (0.10),
 * stable_tol (0.01), reserve (0), steal (yes), warm_start (yes), reprobe (8);
 * window is read for old configs and ignored (the model keeps HF_COST_WINDOW
 * bundles).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hass.h"

static void hass_destroy(void *state)
{
    struct hass *h = state;
    if (!h)
        return;
    hf__devset_free(&h->devset);
    free(h->model);
    free(h->rate);
    free(h->inv_bw);
    free(h->ratio);
    free(h->plan_n);
    free(h->left_out);
    free(h->last_rate);
    free(h->last_plan);
    free(h->hedge);
    free(h->piece);
    free(h->released);
    free(h->piece_plan);
    free(h->spent);
    free(h->peer_lat);
    free(h->peer_inv);
    free(h->bundles);
    free(h->chunk_s);
    free(h->chunk_dev);
    free(h->ran_by);
    free(h->busy_last);
    free(h->bundles_last);
    free(h->plan_ran);
    free(h->was_alive);
    free(h->link_of);
    free(h->link_bw);
    free(h->wait_s);
    free(h->link_batch);
    free(h->give_epoch);
    free(h->wait_known);
    free(h->link_clean);
    free(h->warm);
    free(h->fed);
    free(h->sizes);
    free(h->nwarm);
    free(h->first_t);
    free(h->first_w);
    free(h->buf);
    free(h->committed);
    free(h->inflight);
    free(h->pspan);
    free(h->prate);
    free(h->pslow);
    free(h->profiled);
    free(h->pdone);
    free(h->prep);
    free(h->pwork);
    free(h->psize);
    free(h->ptime);
    free(h);
}

/* Reads the [hass] knobs. */
static int read_knobs(struct hass *h, hf_config_t cfg)
{
    int rc;
    if ((rc = hf_config_long(cfg, "hass", "profile_chunks", 1, 1, 1L << 30, &h->profile_chunks)) ||
        (rc = hf_config_double(cfg, "hass", "growth_stop", 0.10, 0.0, 10.0, &h->growth_stop)) ||
        (rc = hf_config_double(cfg, "hass", "stable_tol", 0.01, 0.0, 1.0, &h->stable_tol)) ||
        (rc = hf_config_long(cfg, "hass", "window", 4, 1, 64, &h->window)) ||
        (rc = hf_config_long(cfg, "hass", "reprobe", 8, 0, 1L << 20, &h->reprobe)) ||
        (rc = hf_config_double(cfg, "hass", "reserve", 0.0, 0.0, 0.5, &h->reserve)) ||
        (rc = hf_config_bool(cfg, "hass", "steal", 1, &h->steal)) ||
        (rc = hf_config_bool(cfg, "hass", "warm_start", 1, &h->warm_start)))
        return rc;
    return 0;
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
    int rc = read_knobs(h, env->cfg);
    if (rc) {
        free(h);
        return rc;
    }
    size_t n = (size_t)(h->ndev > 0 ? h->ndev : 1);
    h->model = calloc(n, sizeof *h->model);
    h->rate = calloc(n, sizeof *h->rate);
    h->inv_bw = calloc(n, sizeof *h->inv_bw);
    h->ratio = calloc(n, sizeof *h->ratio);
    h->plan_n = calloc(n, sizeof *h->plan_n);
    h->left_out = calloc(n, sizeof *h->left_out);
    h->last_rate = calloc(n, sizeof *h->last_rate);
    h->last_plan = calloc(n, sizeof *h->last_plan);
    h->hedge = calloc(n, sizeof *h->hedge);
    h->piece = calloc(n, sizeof *h->piece);
    h->released = calloc(n, sizeof *h->released);
    h->piece_plan = calloc(n, sizeof *h->piece_plan);
    h->spent = calloc(n, sizeof *h->spent);
    h->peer_lat = calloc(n, sizeof *h->peer_lat);
    h->peer_inv = calloc(n, sizeof *h->peer_inv);
    h->bundles = calloc(n, sizeof *h->bundles);
    h->was_alive = calloc(n, sizeof *h->was_alive);
    h->link_of = calloc(n, sizeof *h->link_of);
    h->link_bw = calloc(n, sizeof *h->link_bw);
    h->wait_s = calloc(n, sizeof *h->wait_s);
    h->link_batch = calloc(n, sizeof *h->link_batch);
    h->give_epoch = calloc(n, sizeof *h->give_epoch);
    h->wait_known = calloc(n, sizeof *h->wait_known);
    h->link_clean = calloc(n, sizeof *h->link_clean);
    h->warm = calloc(n, sizeof *h->warm);
    h->fed = calloc(n, sizeof *h->fed);
    h->sizes = calloc(n * HASS_SIZES, sizeof *h->sizes);
    h->nwarm = calloc(n, sizeof *h->nwarm);
    h->first_t = calloc(n * HASS_SIZES, sizeof *h->first_t);
    h->first_w = calloc(n * HASS_SIZES, sizeof *h->first_w);
    h->buf = calloc(n, sizeof *h->buf);
    h->committed = calloc(n, sizeof *h->committed);
    h->inflight = calloc(n, sizeof *h->inflight);
    h->pspan = calloc(n, sizeof *h->pspan);
    h->prate = calloc(n, sizeof *h->prate);
    h->pslow = calloc(n, sizeof *h->pslow);
    h->profiled = calloc(n, sizeof *h->profiled);
    h->pdone = calloc(n, sizeof *h->pdone);
    h->prep = calloc(n, sizeof *h->prep);
    h->pwork = calloc(n, sizeof *h->pwork);
    h->psize = calloc(n, sizeof *h->psize);
    h->ptime = calloc(n, sizeof *h->ptime);
    h->busy_last = calloc(n, sizeof *h->busy_last);
    h->bundles_last = calloc(n, sizeof *h->bundles_last);
    h->plan_ran = calloc(n, sizeof *h->plan_ran);
    if (!h->model || !h->rate || !h->inv_bw || !h->ratio || !h->plan_n || !h->left_out ||
        !h->was_alive || !h->buf || !h->warm || !h->fed || !h->sizes || !h->nwarm || !h->first_t ||
        !h->first_w || !h->link_of || !h->link_bw || !h->wait_s || !h->link_batch ||
        !h->give_epoch || !h->wait_known || !h->link_clean || !h->committed || !h->inflight ||
        !h->pspan || !h->prate || !h->pslow || !h->profiled || !h->pdone || !h->prep || !h->pwork ||
        !h->psize || !h->ptime || !h->last_rate || !h->last_plan || !h->bundles || !h->hedge ||
        !h->piece || !h->released || !h->spent || !h->peer_lat || !h->peer_inv || !h->piece_plan ||
        !h->busy_last || !h->bundles_last || !h->plan_ran) {
        hass_destroy(h);
        return hf_fail(HF_ENOMEM, "hass: out of memory");
    }
    for (int d = 0; d < h->ndev; d++) {
        hf_cost_init(&h->model[d]);
        h->model[d].warm_fresh = 1;
    }
    hf__hass_links_init(h);
    hf__hass_links_refresh(h);
    if ((rc = hf__devset_init(&h->devset, env))) {
        hass_destroy(h);
        return rc;
    }
    *state = h;
    return 0;
}

/* Whether the model's window holds bundles of one size only (within 2x). */
static int one_size(const struct hf_cost_model *m)
{
    double lo = INFINITY, hi = 0.0;
    for (int i = 0; i < m->n; i++) {
        lo = fmin(lo, m->w[i]);
        hi = fmax(hi, m->w[i]);
    }
    return hi < 2.0 * lo;
}

/* Whether GPU d's profile model misses its standalone pass (`seconds` for
 * the whole load, `work` and `bytes`) by more than twice what it tolerates
 * of a bundle, where its warm-up is measured and small against that pass. A
 * GPU's profile spans are small (1-16 chunks at a small load, mostly latency)
 * and their slope is what 5% jitter makes it: at n1024 on 8 GPUs one fitted
 * 0.20 us a chunk for 0.74 and predicted 74 us for a 211 us pass, got 85
 * chunks of 256 where its equals got 19-35, and ran 83 us in a 40 us round
 * twice (issue 12's held-out matrix, n1024-g8-j0.05-clean, seed 11). Within
 * twice the tolerance the pass is one jittered bundle as much as the model
 * is off: added there, one whole-load bundle 12% fast on an H200 of eight at
 * n16384 moved the split of later rounds (seeds 13 and 14: 6-9% slower). */
static int profile_misses(struct hass *h, int d, double seconds, double work, double bytes)
{
    struct hf_cost_model *m = &h->model[d];
    hf_cost_refit(m);
    double pred = hf_cost_time(m, work, bytes);
    return m->fitted && h->nwarm[d] > 0 && h->warm[d] <= hass_tolerated(h, d) * seconds &&
           fabs(pred / seconds - 1.0) > 2.0 * hass_tolerated(h, d);
}

/* The engine's standalone pass of each device on this load is a bundle it
 * ran: a GPU's whole load as one bundle, a CPU's chunks one at a time (a
 * chunk of the mean work, at the rate the pass measured), and a warm one (a
 * repeat to the model). A model that round 0 left empty starts from it, and
 * a GPU's that holds one size, its profile cut (a first bundle, never
 * fitted, ran while the CPU drained the profiling pool, and at most its
 * repeat after it), adds it: the device is planned by what it did rather
 * than left out, its latency is told from its rate (planned by its
 * standalone rate alone, a GPU of four got a round-1 split 5% short for
 * good), and its first bundle of a new size is judged against it (a warm-up
 * is not taken for its rate). A GPU whose profile model misses the pass
 * (profile_misses) adds it as the first bundle of its size, its time plus
 * the warm-up the GPU was measured to pay for one: the slope then comes
 * from pairs with the profile spans (each a first of its size, each with its
 * warm-up, which cancels), the whole load against 1-16 chunks. Other models
 * keep only their own bundles: on a load whose chunk costs are learned (work
 * not exact), the standalone bundle is in the declared unit of work, and the
 * whole-load bundle's jitter told latencies of 0-63 us for 20
 * (n16384-g8-j0.02-slow). */
static void seed_standalone(struct hass *h, const struct hf_round *r)
{
    if (!r->standalone_rate || r->nchunks == 0)
        return;
    double bytes = 0.0;
    for (size_t i = 0; i < r->nchunks; i++)
        bytes += r->chunks[i].bytes;
    for (int d = 0; d < h->ndev; d++) {
        double rate = r->standalone_rate[d];
        int cut = h->dev[d].is_gpu && !h->profiled[d] && one_size(&h->model[d]);
        double w = h->dev[d].is_gpu ? r->total_work : r->total_work / (double)r->nchunks;
        if (rate > 0.0 && h->dev[d].is_gpu && !cut && r->work_exact &&
            profile_misses(h, d, w / rate, w, bytes)) {
            hf_cost_add_fresh(&h->model[d], w, bytes, w / rate + h->warm[d]);
            continue;
        }
        if (!(rate > 0.0) || (h->model[d].n > 0 && !cut))
            continue;
        hf_cost_seen(&h->model[d], w); /* a warm pass: the best of several on real devices */
        hf_cost_add(&h->model[d], w, h->dev[d].is_gpu ? bytes : 0.0, w / rate);
    }
}

/* Whether GPU d's profile met a stall it was to run again: a slow span, or a
 * repeat that stalled (hass_finished). */
static int profile_stalled(const struct hass *h, int d)
{
    return h->pslow[d] || h->prep[d] == REPEAT_AGAIN;
}

/* GPU d's profiling ended with the round while it was to rerun a span that
 * stalled (not fitted: hass_finished), so its model holds too few spans to
 * tell its latency from its rate (a stalled repeat left it the fresh spans'
 * intercept, a 3 ms warm-up, and a GPU of 8 out for good: issue 12's matrix,
 * n4096-g8-j0.05-gpu, seed 11). It takes the model of the GPU whose
 * standalone rate is nearest its own, within 10%, among those whose profile
 * met no stall (the standalone pass says which devices are alike; that
 * model knows its latency, so the one-off cost of d's next new bundle size
 * is not taken for its rate), else it starts over from its standalone pass like a GPU never
 * measured. Planned from its one 2-chunk span, a GPU of 8 came out 50x
 * slower than its equals and was left out for good (issue 12's matrix,
 * n4096-g8-j0-gpu, seeds 2 and 3). */
static void restart_cut_profile(struct hass *h, const struct hf_round *r, int d)
{
    double own = r->standalone_rate ? r->standalone_rate[d] : 0.0, best = 0.1;
    int like = -1;
    for (int k = 0; k < h->ndev && own > 0.0; k++) {
        double off = fabs(r->standalone_rate[k] / own - 1.0);
        if (k != d && h->dev[k].is_gpu && r->alive[k] && !profile_stalled(h, k) &&
            h->model[k].fitted && off <= best) {
            best = off;
            like = k;
        }
    }
    if (like >= 0) {
        h->model[d] = h->model[like];
        h->warm[d] = h->warm[like];
        return;
    }
    hf_cost_init(&h->model[d]);
    h->model[d].warm_fresh = 1; /* seed_standalone fills it */
}

/* Makes the per-chunk seconds (hass.h, chunk_s) fit round r: they hold
 * while the load repeats, and start over, unknown, when it does not. A failed
 * allocation leaves none (chunk_n 0): the plan by rates then prices every
 * chunk by its device's rate, as without them. */
static void chunk_seconds_begin(struct hass *h, const struct hf_round *r)
{
    if (r->repeats && h->chunk_n == r->nchunks)
        return;
    size_t n = r->nchunks ? r->nchunks : 1;
    double *s = realloc(h->chunk_s, n * sizeof *s);
    if (s)
        h->chunk_s = s;
    int *dv = realloc(h->chunk_dev, n * sizeof *dv);
    if (dv)
        h->chunk_dev = dv;
    int *rb = realloc(h->ran_by, n * sizeof *rb);
    if (rb)
        h->ran_by = rb;
    h->chunk_n = s && dv && rb ? r->nchunks : 0;
    for (size_t i = 0; i < h->chunk_n; i++)
        h->ran_by[i] = -1;
    for (size_t i = 0; i < h->chunk_n; i++)
        h->chunk_dev[i] = -1;
}

static int keep_plan(const struct hass *h, const size_t *counts, size_t n);

/* Plans a round of n chunks (see DESIGN, Adapt): by the rates the devices
 * showed (work, busy: what each did in the round that ran) where `by_rates`
 * and they plan anything, else by the models, keeping the plan in force where
 * changing it would not pay; then the probes of devices left out, and the
 * shares. 0 when nothing could be planned (no device measured). */
static int plan_next(struct hass *h, const double *work, const double *busy, size_t n,
                     int by_rates)
{
    size_t counts[h->ndev];
    if (!(by_rates && hf__hass_plan_by_rates(h, work, busy, n))) {
        h->by_rates = 0;
        if (!hf__hass_plan_counts(h, n, counts))
            return 0;
        if (!keep_plan(h, counts, n)) {
            memcpy(h->plan_n, counts, sizeof counts);
            h->plan_chunks = n;
            h->plan_reserve = hf__hass_reserve_for(h, counts);
        }
    }
    hf__hass_add_probes(h, h->plan_n);
    for (int d = 0; d < h->ndev; d++)
        h->ratio[d] = (double)h->plan_n[d] / (double)n;
    return 1;
}

/* GPUs alone on a learned load (see DESIGN, Adapt): the next round is
 * planned by rates at its start, not at the end of the round that ran, once
 * the estimates have moved by what that round took (with no CPU,
 * chunk_cost.c measures each GPU's region against the GPU's own rate over
 * the whole load): each GPU's work re-expressed in the new estimates of the
 * chunks it ran, against the plan that ran. Planned at the round's end in
 * the old estimates, a dear region counted twice - dearer, and its GPU
 * slower - and the next plan overshot. Not from round 0, whose busy time
 * holds its first launches (40 ms a GPU in the matrix's `gpu` cells). */
static void plan_in_new_unit(struct hass *h, const struct hf_round *r)
{
    size_t n = r->nchunks;
    if (h->chunk_n != n || h->plan_chunks != n)
        return;
    double work[h->ndev];
    long bundles[h->ndev];
    memset(work, 0, sizeof work);
    for (size_t i = 0; i < n; i++)
        if (h->ran_by[i] >= 0)
            work[h->ran_by[i]] += r->chunks[i].work;
    memcpy(h->plan_n, h->plan_ran, (size_t)h->ndev * sizeof *h->plan_n);
    memcpy(bundles, h->bundles, sizeof bundles);
    memcpy(h->bundles, h->bundles_last, sizeof bundles); /* each bundle's latency */
    hf__hass_refresh_rates(h);
    plan_next(h, work, h->busy_last, n, 1);
    memcpy(h->bundles, bundles, sizeof bundles);
}

static int hass_round_begin(void *state, const struct hf_round *r)
{
    struct hass *h = state;
    h->r = r;
    h->mean_bytes = hf__mean_chunk_bytes(r);
    chunk_seconds_begin(h, r);
    /* Re-estimated chunk costs are a new unit of work: the per-byte terms,
     * fitted against the old one, wait for bundles in the new. */
    if (r->cost_moved > 0.02)
        for (int d = 0; d < h->ndev; d++)
            hf_cost_new_unit(&h->model[d]);
    /* A load is learned while it repeats after its costs moved. */
    h->learned = r->repeats && (h->learned || r->cost_moved > 0.0);
    if (hass_gpus_alone(h) && h->learned && (h->plan_due || r->cost_moved > 0.0) && r->round >= 2)
        plan_in_new_unit(h, r);
    h->plan_due = 0;
    for (size_t i = 0; i < h->chunk_n; i++)
        h->ran_by[i] = -1;
    memset(h->bundles, 0, (size_t)h->ndev * sizeof *h->bundles);
    h->split = 0;
    h->pool_next = 0;
    hf__hass_link_tick(h);
    memset(h->buf, 0, (size_t)h->ndev * sizeof *h->buf);
    memset(h->committed, 0, (size_t)h->ndev * sizeof *h->committed);
    memset(h->inflight, 0, (size_t)h->ndev * sizeof *h->inflight);
    memset(h->piece, 0, (size_t)h->ndev * sizeof *h->piece);
    memset(h->released, 0, (size_t)h->ndev * sizeof *h->released);
    memset(h->spent, 0, (size_t)h->ndev * sizeof *h->spent);
    if (r->round == 0 && !h->have_ratio) {
        for (int d = 0; d < h->ndev; d++) {
            h->pspan[d] = (size_t)h->profile_chunks;
            h->prate[d] = 0.0;
            h->pslow[d] = 0;
            h->profiled[d] = 0;
            h->pdone[d] = 0;
            h->prep[d] = REPEAT_NONE_FITTED;
        }
        if (h->warm_start && hf__hass_warm_models(h))
            h->have_ratio = 1;
    }
    h->profiling = !h->have_ratio;
    if (h->profiling) {
        h->r = hf__devset_begin(&h->devset, r, NULL, NULL);
        return 0; /* round 0 profiles from the shared pool */
    }
    /* Which devices take part (device_set.c): the round planned from here on
     * is the set's view, with the devices left out not alive. */
    double lat[h->ndev], inv[h->ndev];
    hf__hass_set_models(h, lat, inv);
    r = h->r = hf__devset_begin(&h->devset, r, lat, inv);
    /* A plan that feeds a device not alive now, or was made while a device
     * alive now sat a round out (hf_load.cpu_only), is made afresh. */
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

static int hass_pick(struct hass *h, int d, struct hf_span *out);

/* Hands out a span and books it for the time estimates. */
static int give(struct hass *h, int d, int got, const struct hf_span *out)
{
    if (got) {
        double bytes = 0.0;
        for (size_t i = out->first; i < out->first + out->count; i++) {
            h->committed[d] += h->r->chunks[i].work;
            bytes += h->r->chunks[i].bytes;
        }
        hf__hass_link_give(h, d, bytes);
        h->inflight[d] = 1;
    }
    return got;
}

static int hass_next(void *state, int d, struct hf_span *out)
{
    struct hass *h = state;
    int got = hass_pick(h, d, out);
    return got > 0 ? give(h, d, got, out) : got;
}

/* Whether the k chunks from `first` have work w (to a relative 1e-9). */
static int same_work(const struct hass *h, size_t first, size_t k, double w)
{
    double x = 0.0;
    for (size_t i = first; i < first + k; i++)
        x += h->r->chunks[i].work;
    return fabs(x - w) <= 1e-9 * w;
}

/* Whether GPU d's next profile span is its repeat (hass.h, enum hass_repeat). */
static int repeat_due(const struct hass *h, int d)
{
    return h->dev[d].is_gpu && !h->profiled[d] &&
           (h->prep[d] == REPEAT_DUE || h->prep[d] == REPEAT_AGAIN);
}

/* The chunks of round 0's pool that device d leaves to other GPUs for a repeat
 * of their first bundle's size, which tells the latency (DESIGN, Profile): to
 * those whose first bundle runs, and those whose first bundle ended and who
 * have not asked since. A GPU due for its own repeat takes it whatever that
 * leaves the others, so some device can always take (those held for are
 * running, or are asked when a bundle ends). A first bundle holds the first
 * launch (40 ms on an H200), and at a small load the CPU drained the pool
 * meanwhile: the GPU was planned from its standalone pass alone, without a
 * latency, and its round-1 split stayed 5% off static's for good, since moving
 * it paid new sizes (issue 12's matrix, n1024-fs-j0-gpu: 0.0975 ms a round
 * against 0.0923). */
static size_t pool_held(const struct hass *h, int d)
{
    size_t held = 0;
    if (repeat_due(h, d))
        return 0;
    for (int g = 0; g < h->ndev; g++) {
        if (g == d || !h->dev[g].is_gpu || !h->r->alive[g] || h->profiled[g])
            continue;
        if (h->fed[g] == 0 && h->inflight[g])
            held += h->pspan[g];
        else if (h->prep[g] == REPEAT_FIRST)
            held += h->psize[g];
    }
    return held;
}

/* Chooses device d's next span: round 0's pool, its own buffer, an orphaned
 * buffer, or a steal. */
static int hass_pick(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    if (!r->alive[d])
        return 0;
    if (!h->split) {
        /* Round 0 before the split: everyone eats from the shared pool, but
         * leaves the other GPUs the repeat that starts their profile. */
        size_t held = pool_held(h, d);
        if (h->dev[d].is_gpu && h->prep[d] == REPEAT_FIRST && !h->profiled[d]) {
            int short_of = h->pool_next + held + h->pspan[d] > r->nchunks;
            h->prep[d] = short_of ? REPEAT_DUE : REPEAT_NONE_FITTED;
            held = pool_held(h, d);
        }
        if (h->pool_next + held >= r->nchunks)
            return 0;
        size_t left = r->nchunks - h->pool_next - held, k = h->dev[d].is_gpu ? h->pspan[d] : 1;
        if (repeat_due(h, d)) {
            /* The repeat of its first bundle or first fitted span - unless
             * its chunks' work differs: its model would take it for a new
             * size (chunks need not cost the same) and learn nothing. */
            size_t again = h->psize[d] < left ? h->psize[d] : left;
            if (same_work(h, h->pool_next, again, h->pwork[d]))
                k = again;
            else
                h->prep[d] = REPEAT_DONE;
        }
        if (k > left)
            k = left;
        out->first = h->pool_next;
        out->count = k;
        out->stolen = 0;
        h->pool_next += k;
        return 1;
    }
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

/* Whether every alive device has a profiled rate. */
static int all_profiled(const struct hass *h)
{
    for (int d = 0; d < h->ndev; d++)
        if (h->r->alive[d] && !h->profiled[d])
            return 0;
    return 1;
}

/* Device d's slot for bundles of `count` chunks in its set of sizes; *seen
 * says whether it ran one before (the slot then remembers it). -1 when the
 * set is full: everything counts as seen. */
static long size_slot(struct hass *h, int d, size_t count, int *seen)
{
    long k = hass_size_find(h, d, count);
    *seen = k < 0 || h->sizes[k] == count + 1;
    if (k >= 0)
        h->sizes[k] = count + 1;
    return k;
}

/* One more measure of device d's warm-up: how much longer a first bundle
 * took than `base`, its time without one. An excess within the noise the
 * model tolerates (max(10%, 3x its spread), as for a surprise) is none. The
 * first measure is taken whole, later ones averaged in (the latest counts
 * half). */
static void warm_learn(struct hass *h, int d, double seconds, double base)
{
    double excess = seconds - base;
    if (!(excess > hass_tolerated(h, d) * base))
        excess = 0.0;
    h->warm[d] = h->nwarm[d]++ ? 0.5 * h->warm[d] + 0.5 * excess : excess;
}

/* Before any measure of a GPU's warm-up, and without a latency to measure it
 * against: how far a first bundle of its size overshot the model, as a
 * guess (not counted: the first measure replaces it). An upper bound - a
 * stall or a model that is off overshoots too - that holds the plan only
 * against gains too small to pay it back: at a small load a GPU planned
 * from its standalone pass never learns its latency, and the round-1 plan
 * moved by one chunk of 238 for 6 us of gain, paying a new size's 3 ms
 * (issue 12's matrix, n1024-g1-j0.05-gpu, seeds 2 and 5). */
static void guess_warm(struct hass *h, int d, double seconds, double base)
{
    double excess = seconds - base;
    if (excess > hass_tolerated(h, d) * base)
        h->warm[d] = fmax(h->warm[d], excess);
}

/* A bundle of a size the device never ran costs it extra once on real GPUs
 * (kernel choice and loading for a new GEMM shape): learn how much, so that
 * a changed split is weighed against what it costs (hass_round_end). Two
 * ways: how far a new size overshoots the model once its latency is known,
 * and, on a GPU, how much slower a size's first bundle was than its first
 * repeat (its time scaled to the first's work, when the two differ by less
 * than 10%). The second needs no latency: a GPU that ran one bundle size per
 * round since its standalone pass never learns its latency, and a split that
 * moves by a chunk or two would pay the warm-up every round it moves.
 * `mark_only`: the bundle's size is warmed, but its time tells no warm-up (a
 * GPU's very first bundle, which holds the first launch; a bundle behind a
 * shared link, which holds an unknown part of its wait). */
static void learn_warm_cost(struct hass *h, int d, size_t count, double work, double bytes,
                            double seconds, int mark_only)
{
    const struct hf_cost_model *m = &h->model[d];
    int seen;
    long k = size_slot(h, d, count, &seen);
    if (k < 0 || mark_only)
        return;
    if (!seen) {
        h->first_t[k] = h->dev[d].is_gpu ? seconds : 0.0;
        h->first_w[k] = work;
        if (h->learned || (h->split && hass_regions_confound(h)))
            return; /* the model's unit moves, or the GPU's new region costs what
                       it costs: its overshoot is no warm-up (DESIGN) */
        if (m->lat_known)
            warm_learn(h, d, seconds, hf_cost_time(m, work, bytes));
        else if (h->dev[d].is_gpu && m->fitted && !h->nwarm[d])
            guess_warm(h, d, seconds, hf_cost_time(m, work, bytes));
        return;
    }
    if (h->first_t[k] > 0.0 && fabs(work / h->first_w[k] - 1.0) < 0.1) {
        /* A repeat slower than its first, beyond the noise, stalled: it is no
         * base to measure a warm-up against, the next repeat is. Taken for
         * one (3 ms first, 5 ms repeat: no warm-up), it made a GPU's new
         * sizes free, and the next round hedged the stall by sending every
         * GPU to new sizes (issue 12's matrix, n1024-g4-j0-gpu, seed 10:
         * 6.15 ms against a 0.07 ms round). */
        double base = seconds * h->first_w[k] / work;
        if (base > (1.0 + hass_tolerated(h, d)) * h->first_t[k])
            return;
        warm_learn(h, d, h->first_t[k], base);
    }
    h->first_t[k] = 0.0; /* one pair per size */
}

/* Every span feeds the device's cost model. In round 0 before the split,
 * profiling also grows a GPU's span until its rate stops rising, counts a
 * CPU's first chunks, and splits the rest of the pool once all are measured. */
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
    double work = 0.0, bytes = 0.0;
    for (size_t i = span->first; i < span->first + span->count; i++) {
        work += h->r->chunks[i].work;
        bytes += h->dev[d].is_gpu ? h->r->chunks[i].bytes : 0.0; /* a CPU copies nothing */
    }
    /* Behind a shared link, the wait for the link is not the device's own. */
    double own = hf__hass_link_own(h, d, bytes, seconds);
    /* A GPU's very first bundle is a warm-up on real hardware (first launch,
     * lazy kernel loading: 40 ms on an H200): profiling starts from the next. */
    int first = h->dev[d].is_gpu && h->fed[d]++ == 0;
    int fit = !first && hf__hass_link_fit(h, d);
    /* A whole profile span (not the pool's remainder) slower per unit of work
     * than the one before it, half its size, is not the device's (an affine
     * device's rate only rises with the span): a stall or a warm-up. It is not
     * fitted, and its size is run once more. Fitted, one 5 ms stall in a
     * GPU's 4-chunk span (0.1 ms without) made that GPU 50x slower for the
     * plan (issue 12's matrix, n4096-g8-j0-gpu, seeds 2 and 3). */
    int slow = fit && h->dev[d].is_gpu && !h->profiled[d] && !h->split && !h->pslow[d] &&
               span->count >= h->pspan[d] && h->prate[d] > 0.0 &&
               work / seconds < (1.0 - h->growth_stop) * h->prate[d];
    if (slow) {
        /* Its size is warmed all the same: the rerun is a repeat, not a new
         * size whose missing warm-up spoils its pairs with the spans that
         * carried one (n4096-fs-j0.05-gpu, seed 5: a 4-chunk rerun at 98 us
         * among 3 ms warm-ups gave an H200 a slope 60% dear, and 0.254 of
         * the load where its equal got 0.398, for the whole run). */
        h->pslow[d] = 1;
        learn_warm_cost(h, d, span->count, work, bytes, own, 1);
        hf_cost_seen(&h->model[d], work);
        return;
    }
    if (first) {
        /* Its size is warmed all the same (the kernel was chosen then), for
         * the model too: a cut profile's 1-chunk span, the model's "first" of
         * that size, gave its window no repeat to pair and left an equal GPU
         * of eight 50% slower for the plan (issue 12's matrix,
         * n4096-g8-j0-gpu, seed 1: 23 chunks to the others' 33). */
        learn_warm_cost(h, d, span->count, work, bytes, own, 1);
        hf_cost_seen(&h->model[d], work);
        if (!h->split && !h->profiled[d]) {
            /* Where the pool left too little for its profile, the repeat of
             * this warmed size tells its latency (pool_held). */
            h->prep[d] = REPEAT_FIRST;
            h->psize[d] = span->count;
            h->pwork[d] = work;
        }
    } else if (fit) {
        /* Behind a shared link, own still holds whatever the wait estimate
         * missed (the link's queue is known only for spans handed out
         * together), as much as a round's transfers: a first-of-size bundle
         * that waited longer than estimated read as a warm-up of 0.1 s, and
         * that kept a plan feeding every node. Its size is marked warmed, but
         * no warm-up is measured there. */
        learn_warm_cost(h, d, span->count, work, bytes, own, h->link_of[d] >= 0);
        hf_cost_add(&h->model[d], work, bytes, own);
    }
    /* A piece of a GPU's own buffer much slower than its model (a surprise,
     * not a new size's warm-up): the rest of the buffer is opened to the
     * other devices (see DESIGN, Split). Not where GPUs run alone on inexact
     * work: there a slow piece is a dear region (on the tail shape the owner
     * left its buffer to GPUs still busy with theirs, 1.5 ms a round idle). */
    const struct hf_cost_model *m = &h->model[d];
    if (fit && h->split && h->piece[d] > 0 && !span->stolen && h->buf[d].lo < h->buf[d].hi &&
        hass_slow_surprise(m) && !m->pfresh && !hass_regions_confound(h))
        h->released[d] = work / own;
    if (h->split)
        return;
    double rate = work / seconds;
    if (fit && repeat_due(h, d)) {
        /* The repeat (below): it tells the intercept, not the growth - unless
         * it stalled (its model holds it as a slow surprise), when it runs
         * once more: else the fresh spans' intercept, a warm-up of 3 ms, was
         * the GPU's latency, it got one chunk of 256 in round 1 and three for
         * good, since moving it paid new sizes (issue 12's matrix,
         * n4096-g4-j0-gpu, seed 11: 1.72 ms a round against 1.32). A second
         * stall in a row restarts the model, which then holds no surprise. */
        h->prep[d] = h->prep[d] == REPEAT_DUE && hass_slow_surprise(&h->model[d]) ? REPEAT_AGAIN
                                                                                  : REPEAT_DONE;
    } else if (h->dev[d].is_gpu && !h->profiled[d]) {
        /* Profile spans are all new sizes, and each may carry a warm-up (3 ms
         * on an H200 against a 20 us latency): the spans give the slope
         * (their warm-ups cancel in pairs) but an intercept that holds the
         * warm-up. When doubling the first fitted span barely moved the time
         * (a fixed cost dominates: a latency or a warm-up, which only a repeat
         * tells apart), that span is run once more; the repeat gives the
         * intercept (cost_model.c takes it from repeats). */
        if (fit && h->prep[d] == REPEAT_NONE_FITTED) {
            h->prep[d] = REPEAT_ONE_FITTED;
            h->psize[d] = span->count;
            h->pwork[d] = work;
            h->ptime[d] = own;
        } else if (fit && h->prep[d] == REPEAT_ONE_FITTED) {
            h->prep[d] = own < 1.5 * h->ptime[d] ? REPEAT_DUE : REPEAT_DONE;
        }
        /* A span at the cap of an eighth of the load is saturated enough. */
        size_t cap = h->r->nchunks / 8 > 0 ? h->r->nchunks / 8 : 1;
        if (h->prate[d] > 0.0 && rate < h->prate[d] * (1.0 + h->growth_stop))
            h->profiled[d] = 1;
        else if (h->pspan[d] * 2 > cap)
            h->profiled[d] = 1;
        else
            h->pspan[d] *= 2;
        h->prate[d] = fmax(h->prate[d], rate);
    } else if (!h->dev[d].is_gpu && ++h->pdone[d] >= h->profile_chunks) {
        h->profiled[d] = 1;
    }
    if (all_profiled(h) && h->pool_next < h->r->nchunks) {
        hf__hass_split_rest(h, h->pool_next);
        h->have_ratio = h->split;
    }
}

/* Saves every fitted model in the profile (hass.model = lat inv inv_bw; hass.rate). */
static void save_models(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        if (!m->fitted || m->n == 0)
            continue;
        double v[3] = {m->lat, m->inv, m->inv_bw}, rate = 1.0 / m->inv;
        hf_profile_set(h->profile, h->dev[d].name, "hass.model", v, 3);
        hf_profile_set(h->profile, h->dev[d].name, "hass.rate", &rate, 1);
    }
}

/* Whether the plan in force is still worth keeping against `counts`, a fresh
 * plan for n chunks: it is, unless the fresh plan finishes sooner by the
 * models alone by more than stable_tol of the round and by more than what the
 * models of the devices whose counts change may be off by (each one's
 * allowance for spread over the square root of the bundles its model holds: a
 * gain inside that is none), is no later with the spreads' allowances, and
 * pays back, within HASS_AMORTISE rounds, the warm-up its new bundle sizes
 * cost the devices whose counts change. A plan for another chunk count, or
 * one that feeds a retired device, is never kept. */
static int keep_plan(const struct hass *h, const size_t *counts, size_t n)
{
    if (!h->have_ratio || h->plan_chunks != n)
        return 0;
    double w = hf__mean_chunk_work(h->r), old_ms = 0.0, new_ms = 0.0, warm = 0.0;
    double old_m = 0.0, new_m = 0.0; /* the same without the spreads' allowance */
    int linked = 0;
    double noise = h->stable_tol;
    for (int d = 0; d < h->ndev; d++) {
        if (h->plan_n[d] > 0 && !h->r->alive[d])
            return 0;
        old_ms = fmax(old_ms, hf__hass_finish_at(h, d, h->plan_n, w));
        new_ms = fmax(new_ms, hf__hass_finish_at(h, d, counts, w));
        old_m = fmax(old_m, hf__hass_finish_model(h, d, h->plan_n, w));
        new_m = fmax(new_m, hf__hass_finish_model(h, d, counts, w));
        linked |= h->link_of[d] >= 0 && (h->plan_n[d] > 0 || counts[d] > 0);
        if (counts[d] != h->plan_n[d] && counts[d] > 0)
            warm = fmax(warm, hass_new_size_cost(h, d));
    }
    /* The gain is the models' alone: both plans pay the same devices' spread,
     * and with the allowances in it the noisiest estimate of a spread (0.025
     * to 0.15 from 3-5 repeats at 5% jitter) set both plans' ends, and hid a
     * GPU 12% over its peers for good (issue 12's matrix,
     * n1024-g8-j0.05-clean, seed 7). What a model may be off by is its
     * spread over the square root of its bundles, not one bundle's spread:
     * that held 8 equal GPUs up to 25% apart when the plan a round's noise
     * had set was off by 10% or less. */
    for (int d = 0; d < h->ndev; d++) {
        size_t c = counts[d] > h->plan_n[d] ? counts[d] : h->plan_n[d];
        if (counts[d] != h->plan_n[d] && old_m > 0.0)
            noise = fmax(noise, hf__hass_allowance(h, d, c, w) / old_m /
                                    sqrt(fmax(1.0, (double)h->model[d].n)));
    }
    for (int d = 0; d < h->ndev; d++) /* a CPU the fresh plan left out for a slow surprise */
        if (counts[d] == 0 && hf__hass_surprise_late(h, d, h->plan_n[d], w, new_m))
            return 0;
    double gain = old_m - new_m;
    /* Round 1's plan is judged without the noise test (DESIGN, Adapt): round
     * 0's came from profile spans, and the spreads those few small bundles
     * show (4-9%) would hold it. Not behind a shared link, where a model is
     * fed its time less an estimated wait. */
    if (h->r->round == 1 && !linked)
        return !(gain > h->stable_tol * old_m && gain * HASS_AMORTISE > warm);
    return !(new_ms < old_ms && gain > noise * old_m && gain * HASS_AMORTISE > warm);
}

/* A GPU whose last bundle was a slow surprise (its model holds it as one,
 * not yet believed: a stall, or the first sign of a slowdown) may repeat it
 * next round, and a GPU's share runs as one bundle that nobody can take
 * back: a GPU slowed 2x from round 4 held the round at twice its length
 * twice before its model restarted. So in the next round half its share is
 * laid at a CPU's tail, where whichever GPU is free steals it by rate: the
 * same round if the surprise was a one-off, about the split that matches if
 * it was not. Only where the surprise's excess is large against what the
 * hedge costs when it was a one-off (its extra bundles' latency, new
 * sizes' warm-up and stall risk): a 5 ms stall in a 0.2 ms round of a GPU whose new sizes
 * cost 3 ms is not hedged. Nor where the other devices together run at less
 * than half its rate: a GPU's only helper a CPU at 1/35 of its rate, the
 * hedged round took 0.6 ms where the slowed GPU alone took 0.4. Nor under a
 * plan by rates, which believes the rates of the round just ended at once (a
 * slowdown moves the next plan), and whose buffers are cut by learned cost:
 * the hedged share lands at the front of the CPU's buffer, and the CPU
 * started on the dear chunks a GPU gave up (hump-fs-j0.02-gpu at seed 5,
 * round 8: 2 chunks of the hump's middle in 84 ms, a 59 ms round before). */
static void hedge_surprises(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        h->hedge[d] = 0.0;
        if (!h->dev[d].is_gpu || !h->steal || h->plan_n[d] < 2 || !hass_slow_surprise(m) ||
            m->pfresh || h->by_rates)
            continue;
        double excess = m->pt[0] - hf_cost_time(m, m->pw[0], m->pb[0]);
        /* The hedged half comes back in power-of-two steals, about
         * 1 + log2(its chunks) bundles more, each a chance of a stall of
         * the device's (hass_stall_risk): a GPU whose slow surprises have
         * been one-offs pays more for the hedge than the next one costs. */
        double more = 1.0 + log2(fmax(1.0, 0.5 * (double)h->plan_n[d]));
        double cost = hf__hass_latency(h, d) + hass_new_size_cost(h, d) +
                      more * hass_stall_risk(h, d);
        if (excess > HASS_HEDGE_PAYS * cost && hass_has_helpers(h, d))
            h->hedge[d] = 0.5;
    }
}

/* The adaptation phase: refit the models, plan the next round's counts for a
 * round of the same size, and keep the plan in force when changing it would
 * not pay (keep_plan; see DESIGN: settled, never frozen). */
static int hass_round_end(void *state, const struct hf_round_report *rep)
{
    struct hass *h = state;
    const struct hf_round *r = h->r;
    for (int d = 0; r && r->round == 0 && h->profiling && d < h->ndev; d++)
        if (h->dev[d].is_gpu && r->alive[d] && !h->profiled[d] && profile_stalled(h, d))
            restart_cut_profile(h, r, d);
    if (r && r->round == 0 && h->warm_start)
        seed_standalone(h, r);
    for (int d = 0; d < h->ndev; d++) { /* a round sat out is not a round left out */
        h->left_out[d] = rep->chunks[d] > 0 ? 0 : h->left_out[d] + (r && r->alive[d]);
        h->was_alive[d] = !r || r->alive[d];
    }
    hf__devset_end(&h->devset, rep);
    hf__hass_refresh_rates(h);
    save_models(h);
    if (!r || r->nchunks == 0)
        return 0;
    memcpy(h->busy_last, rep->busy_s, (size_t)h->ndev * sizeof *h->busy_last);
    memcpy(h->bundles_last, h->bundles, (size_t)h->ndev * sizeof *h->bundles_last);
    memcpy(h->plan_ran, h->plan_n, (size_t)h->ndev * sizeof *h->plan_ran);
    /* A learned load is planned by the rates measured (see DESIGN, Adapt);
     * on GPUs alone, at the next round's start (plan_in_new_unit). */
    h->plan_due = h->learned && r->round >= 1 && hass_gpus_alone(h);
    if (h->plan_due ||
        !plan_next(h, rep->work, rep->busy_s, r->nchunks, h->learned && r->round >= 1))
        return 0;
    hedge_surprises(h);
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
