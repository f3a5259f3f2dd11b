/* hass_steal.c - what HASS's devices take once their own buffer is empty.
 *
 * DESIGN
 * ------
 * Any idle device may take work another was given and has not started: a CPU
 * team's buffer, a released GPU's (a piece came in far slower than its model)
 * or the unstarted pieces of a GPU busy with one. Owners run from the front,
 * thieves take the tail. An idle GPU steals from the buffer with the most time
 * left at its owner's rate, in work (rates taken at the tail's bytes per
 * work): the x for which the owner's end, busy + (left - x) / its rate, meets
 * the thieves' x / their rate, this GPU taking its part by rate, as a power of
 * two (sizes recur; a new one costs a warm-up), and while the owner runs
 * halved until it ends the round sooner than leaving the tail, with the
 * thief's warm-up and the stall risk of the bundles it adds and spares; a
 * stall-prone GPU leaves it to a safer thief that would end it sooner. An idle
 * CPU team steals one chunk, from a GPU only where it ends before the GPUs
 * would drain that buffer. A victim is busy for what is left of the bundle it
 * runs: that bundle's work at its rate, less the round's clock (hass_clock)
 * since it was handed out, not a whole planned piece (a released GPU runs
 * fractions of its pieces). A CPU stops before a chunk that would end the
 * round later than leaving the rest to the GPUs, either way pricing the GPUs'
 * bundle for what it leaves as one more chance of a stall, at the least stall
 * risk among them (a rare long stall outweighs a short CPU chunk); a released
 * GPU runs on in pieces halved until one ends the round sooner than leaving
 * it, on a clock that is the most seconds of bundles any GPU has finished (it
 * may have sat idle).
 */
#include <math.h>

#include "hass.h"

/* The rate at which victim c runs its own buffer. */
static double victim_rate(const struct hass *h, int c)
{
    return h->dev[c].is_gpu && h->released[c] > 0.0 ? h->released[c] : h->rate[c];
}

/* The bundles victim c still starts for k chunks of its buffer. */
static double victim_bundles(const struct hass *h, int c, size_t k)
{
    size_t p = h->dev[c].is_gpu && h->piece[c] > 0 ? h->piece[c] : 1;
    return (double)((k + p - 1) / p);
}

/* The open buffer with the most time left at its owner's rate; -1 if none. */
static int steal_victim(const struct hass *h, int thief)
{
    int best = -1;
    double best_t = 0.0;
    for (int c = 0; c < h->ndev; c++) {
        int open = !h->dev[c].is_gpu || h->released[c] > 0.0 || /* to thieves: see DESIGN */
                   (h->piece[c] > 0 && h->inflight[c] && !hass_regions_confound(h));
        if (c == thief || !open || h->buf[c].hi <= h->buf[c].lo)
            continue;
        double left = hf__buf_work(h->r, &h->buf[c]), cr = victim_rate(h, c);
        double t = cr > 0.0 ? left / cr : INFINITY;
        if (best < 0 || t > best_t) {
            best = c;
            best_t = t;
        }
    }
    return best;
}

/* GPU g's rate (work/s) on chunks moving rho bytes per unit of work. */
static double gpu_rate_on(const struct hass *h, int g, double rho)
{
    double w = hf__mean_chunk_work(h->r);
    if (!(h->rate[g] > 0.0) || !(h->inv_bw[g] > 0.0) || !(w > 0.0))
        return h->rate[g];
    double inv = 1.0 / h->rate[g] - h->inv_bw[g] * h->mean_bytes / w;
    return 1.0 / (inv + h->inv_bw[g] * rho);
}

/* The seconds victim c is still busy with the bundle it runs (see DESIGN). */
static double victim_busy(const struct hass *h, int c)
{
    double cr = victim_rate(h, c);
    if (!h->inflight[c] || !(cr > 0.0))
        return 0.0;
    return fmax(0.0, h->run_w[c] / cr - (hass_clock(h) - h->run_at[c]));
}

/* CPU c's time for a chunk of `work`, twice its spread added. */
static double cpu_chunk_s(const struct hass *h, int c, double work)
{
    return work / h->rate[c] * (1.0 + 2.0 * h->model[c].spread);
}

/* The rate of the alive GPUs other than c together, at rho bytes/work. */
static double thieves_rate(const struct hass *h, int c, double rho)
{
    double sum = 0.0;
    for (int k = 0; k < h->ndev; k++)
        if (h->dev[k].is_gpu && h->r->alive[k] && k != c)
            sum += gpu_rate_on(h, k, rho);
    return sum;
}

/* When GPU k would end a steal of `work`, by the models: after what is left
 * of the bundle it runs (as a victim's, victim_busy) and of its buffer. */
static double thief_end(const struct hass *h, int k, double work, double rho)
{
    double lat = hf__hass_latency(h, k);
    double rest = victim_busy(h, k) + victim_bundles(h, k, h->buf[k].hi - h->buf[k].lo) * lat +
                  hf__buf_work(h->r, &h->buf[k]) / h->rate[k];
    return rest + lat + work / gpu_rate_on(h, k, rho) + hf_cost_stall_risk(&h->model[k]);
}

/* Whether a less stall-prone thief would end the steal before `end`. */
static int safer_thief(const struct hass *h, int d, int c, double work, double rho, double end)
{
    double risk = hf_cost_stall_risk(&h->model[d]);
    for (int k = 0; risk > 0.0 && k < h->ndev; k++)
        if (k != d && k != c && h->dev[k].is_gpu && h->r->alive[k] && h->rate[k] > 0.0 &&
            hf_cost_stall_risk(&h->model[k]) < risk && hf__hass_link_may_steal(h, k) &&
            thief_end(h, k, work, rho) < end)
            return 1;
    return 0;
}

/* Device d steals from an open buffer's tail (see DESIGN). */
int hf__hass_steal(struct hass *h, int d, struct hf_span *out)
{
    int c = steal_victim(h, d);
    if (c < 0)
        return 0;
    const struct hf_chunk *ch = h->r->chunks;
    size_t lo = h->buf[c].lo, hi = h->buf[c].hi;
    double left = hf__buf_work(h->r, &h->buf[c]), cr = victim_rate(h, c);
    double rho = left > 0.0 ? hf__buf_bytes(h->r, &h->buf[c]) / left : 0.0;
    if (!h->dev[d].is_gpu) {
        if (h->dev[c].is_gpu) {
            double drain = cr + thieves_rate(h, c, rho);
            if (!(h->rate[d] > 0.0) ||
                cpu_chunk_s(h, d, ch[hi - 1].work) >= victim_busy(h, c) + left / drain)
                return 0;
        }
        return hf__take_tail(h->buf, c, 1, out);
    }
    double g = gpu_rate_on(h, d, rho), gsum = thieves_rate(h, c, rho);
    if (!(g > 0.0) || !(cr > 0.0) || !(gsum > 0.0))
        return hf__take_tail(h->buf, c, 1, out);
    double busy = victim_busy(h, c);
    double x = fmin((busy + left / cr) / (1.0 / cr + 1.0 / gsum), left);
    if (x < 0.5 * ch[hi - 1].work && h->inflight[c])
        return 0; /* the running owner ends its buffer sooner than any steal */
    if (h->inflight[c] && hf__hass_latency(h, d) >= busy + left / cr)
        return 0; /* this GPU's latency alone outlasts the owner's buffer */
    double mine = x * g / gsum, acc = 0.0;
    size_t count = 0, k = hi - lo;
    while (lo + count < hi && acc + 0.5 * ch[hi - 1 - count].work <= mine)
        acc += ch[hi - 1 - count++].work;
    size_t pow2 = hf__pow2_floor(count);
    double risk = hf_cost_stall_risk(&h->model[d]), vrisk = hf_cost_stall_risk(&h->model[c]);
    double leave = busy + left / cr + vrisk * victim_bundles(h, c, k);
    int priced = hass_new_size_cost(h, d) > 0.0 || risk > 0.0 || vrisk > 0.0 || h->dev[c].is_gpu;
    for (; pow2 > 0; pow2 /= 2) {
        double s = hf__buf_tail_work(h->r, &h->buf[c], pow2);
        double gpu = hf__hass_latency(h, d) + s / g + hass_size_cost(h, d, pow2) + risk;
        double own = busy + (left - s) / cr + vrisk * victim_bundles(h, c, k - pow2);
        if (!h->inflight[c] || !priced) /* an idle owner: only a safer thief stops the steal */
            return !safer_thief(h, d, c, s, rho, gpu) && hf__take_tail(h->buf, c, pow2, out);
        if (fmax(own, gpu) < leave && !safer_thief(h, d, c, s, rho, gpu))
            break;
    }
    return pow2 > 0 && hf__take_tail(h->buf, c, pow2, out);
}

/* The least warm-up a GPU pays for a steal of a CPU's last k chunks. */
static double tail_warm(const struct hass *h, size_t k)
{
    size_t pow2 = hf__pow2_floor(k);
    double least = INFINITY;
    for (int g = 0; g < h->ndev; g++) {
        if (!h->dev[g].is_gpu || !h->r->alive[g])
            continue;
        least = fmin(least, hass_size_cost(h, g, pow2));
    }
    return isfinite(least) ? least : 0.0;
}

/* Whether CPU c should leave the rest of its buffer to the GPUs (see DESIGN). */
int hf__hass_cpu_should_leave(const struct hass *h, int c)
{
    const struct hf_round *r = h->r;
    if (!h->steal || h->buf[c].hi <= h->buf[c].lo || !(h->rate[c] > 0.0))
        return 0;
    double Gw = 0.0, Gb = 0.0, Wg = 0.0, Yg = 0.0, L = INFINITY, w = hf__mean_chunk_work(r);
    double risk = INFINITY; /* what the GPUs' one more bundle costs in stalls, at the least */
    int waiting = 0;
    for (int g = 0; g < h->ndev; g++) {
        if (!h->dev[g].is_gpu || !r->alive[g] || !(h->rate[g] > 0.0))
            continue;
        double inv = 1.0 / h->rate[g] - (w > 0.0 ? h->inv_bw[g] * h->mean_bytes / w : 0.0);
        Gw += 1.0 / inv;
        Gb += h->inv_bw[g] > 0.0 ? 1.0 / h->inv_bw[g] : INFINITY;
        L = fmin(L, hf__hass_latency(h, g));
        risk = fmin(risk, hf_cost_stall_risk(&h->model[g]));
        Wg += h->committed[g] + hf__buf_work(r, &h->buf[g]);
        Yg += hf__buf_bytes(r, &h->buf[g]);
        waiting = 1;
    }
    if (!waiting || !(Gw > 0.0))
        return 0;
#define GPU_S(x, y) ((x) / Gw + (isfinite(Gb) ? (y) / Gb : 0.0))
    const struct hf_chunk *next = &r->chunks[h->buf[c].lo];
    double Rc = hf__buf_work(r, &h->buf[c]), Yc = hf__buf_bytes(r, &h->buf[c]);
    double cpu = h->committed[c] / h->rate[c], gpus = GPU_S(Wg, Yg) + L;
    size_t k = h->buf[c].hi - h->buf[c].lo;
    double rest =
        k > 1 ? L + tail_warm(h, k - 1) + GPU_S(Rc - next->work, Yc - next->bytes) + risk : 0.0;
    double take = fmax(cpu + cpu_chunk_s(h, c, next->work), gpus + rest);
    double leave = fmax(cpu, gpus + L + tail_warm(h, k) + GPU_S(Rc, Yc) + risk);
#undef GPU_S
    return take > leave;
}

/* GPU d's next piece of its released buffer, halved until it ends the round
 * sooner than leaving it to thieves (see DESIGN). */
int hf__hass_released_piece(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    struct hf__buf *b = &h->buf[d];
    size_t k = b->hi - b->lo < h->piece[d] ? b->hi - b->lo : h->piece[d];
    double G = 0.0, W = 0.0, rest = hf__buf_work(r, b), now = h->spent[d];
    for (int g = 0; g < h->ndev; g++) {
        if (g == d || !h->dev[g].is_gpu || !r->alive[g] || !(h->rate[g] > 0.0))
            continue;
        G += h->rate[g];
        W += h->committed[g] + hf__buf_work(r, &h->buf[g]);
        now = fmax(now, h->spent[g]);
    }
    double leave = G > 0.0 ? fmax(now, (W + rest) / G) : 0.0;
    for (; G > 0.0 && k > 0; k /= 2) {
        double mine = hf__buf_work(r, &(struct hf__buf){b->lo, b->lo + k});
        double more = hf_cost_stall_risk(&h->model[d]) + hass_size_cost(h, d, k);
        if (fmax(now + mine / h->released[d] + more, (W + rest - mine) / G) < leave)
            break;
    }
    int others = 0; /* a device in flight: its end asks the idle again */
    for (int g = 0; g < h->ndev; g++)
        others |= g != d && h->inflight[g];
    return (k > 0 || !others) && hf__take_front(h->buf, d, k, out);
}
