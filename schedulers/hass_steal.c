/* hass_steal.c - HASS during a round: who takes what once its own buffer is
 * empty (hass.c's design paragraph, "Steal").
 *
 * DESIGN
 * ------
 * Any idle device may take work another has been given but not started. A
 * GPU whose buffer is empty steals from the tail of the buffer with the
 * most time left at its owner's rate (a CPU's; a released GPU's: one whose
 * piece came in much slower than its model, hass.c, Split; or the unstarted
 * pieces of a GPU busy with one: a GPU stalled on a piece holds no more
 * than that piece, the others take the rest) a span
 * sized by the rates in work, not chunks (each GPU's rate on the tail's
 * bytes per work: a cheap tail costs a GPU mostly copies; the tail work that
 * makes the later of "the CPU finishes the rest" and "the GPUs finish it"
 * soonest, its part of it by rate when there are several GPUs, as the whole
 * tail chunks nearest it), but not when its latency alone would outlast the
 * CPU's whole buffer, and rounded down to a power of two (sizes that recur:
 * a real GPU pays for the first bundle of every new size); while the CPU
 * runs, halved until the steal ends the round sooner than leaving the tail
 * to the CPU, a size the GPU never ran counted with its warm-up (no steal
 * when none does). Every bundle is a chance of a stall: the steal adds one
 * to the thief and spares the victim some, each priced at its device's
 * stall risk (its model's slow one-offs per bundle times their excess,
 * hf_cost_stall_risk), so a stall-prone GPU takes a tail only where that
 * ends the round sooner even with the stall it may meet, and its unstarted
 * pieces go sooner. A CPU team with nothing left steals one chunk from
 * another CPU team, or from a released GPU's tail where its chunk ends
 * before the GPUs would drain it, that one and the others stealing from it
 * (a 0.4 ms CPU chunk taken at the end of a 0.7 ms round made it 1.1 ms). A
 * CPU does not start one more chunk when, by the models (its chunk time
 * inflated by its spread, the GPUs' latency paid for their bundles and for
 * the steal it would cause, with the warm-up of a steal size no GPU ran),
 * that would end the round later than leaving it to the GPUs
 * (hf__hass_cpu_should_leave). A released GPU runs its buffer on from the
 * front only while that ends the round sooner than leaving it to the others
 * (hf__hass_released_piece).
 */
#include <math.h>

#include "hass.h"

/* The largest power of two not above k (1 for k <= 1): the size of a steal. */
static size_t pow2_floor(size_t k)
{
    size_t p = 1;
    while (p * 2 <= k)
        p *= 2;
    return p;
}

/* The rate at which victim c runs its own buffer: a CPU's planned rate, a
 * released GPU's the rate its slow piece showed, a GPU running pieces its
 * planned rate. */
static double victim_rate(const struct hass *h, int c)
{
    return h->dev[c].is_gpu && h->released[c] > 0.0 ? h->released[c] : h->rate[c];
}

/* Whether device c's buffer holds work others may take: a CPU's (it runs
 * one chunk at a time), a released GPU's, and the unstarted pieces of a GPU
 * busy with one of its pieces (an idle GPU takes its next piece itself) -
 * except where GPUs run alone on inexact work: there each GPU's region is
 * what the engine learns the load's costs from (hass.c, Adapt), as for a
 * released piece, and steals among them cut the regions up. */
static int open_buffer(const struct hass *h, int c)
{
    return !h->dev[c].is_gpu || h->released[c] > 0.0 ||
           (h->piece[c] > 0 && h->inflight[c] && !hass_regions_confound(h));
}

/* The bundles victim c still starts for k chunks of its buffer: a CPU one a
 * chunk, a GPU one a piece; each is a chance of a stall of its own. */
static double victim_bundles(const struct hass *h, int c, size_t k)
{
    size_t p = h->dev[c].is_gpu && h->piece[c] > 0 ? h->piece[c] : 1;
    return (double)((k + p - 1) / p);
}

/* The buffer an idle device should steal from (open_buffer): the one that
 * needs the most time to drain at its owner's rate; -1 if none has chunks
 * left. */
static int steal_victim(const struct hass *h, int thief)
{
    int best = -1;
    double best_t = 0.0;
    for (int c = 0; c < h->ndev; c++) {
        if (c == thief || !open_buffer(h, c) || h->buf[c].hi <= h->buf[c].lo)
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

/* GPU g's rate (work/s) on chunks moving rho bytes per unit of work: its
 * planned rate with the mean chunk's bytes taken out and these put in (the
 * cheap tail of an irregular load costs a GPU mostly copies). */
static double gpu_rate_on(const struct hass *h, int g, double rho)
{
    double w = hf__mean_chunk_work(h->r);
    if (!(h->rate[g] > 0.0) || !(h->inv_bw[g] > 0.0) || !(w > 0.0))
        return h->rate[g];
    double inv = 1.0 / h->rate[g] - h->inv_bw[g] * h->mean_bytes / w;
    return 1.0 / (inv + h->inv_bw[g] * rho);
}

/* The seconds victim c is still busy with the bundle it runs, if any:
 * assumed just started (the scheduler has no clock), a released GPU's piece
 * or a CPU's chunk at the mean chunk's work, at the victim's rate. */
static double victim_busy(const struct hass *h, int c)
{
    double mean = hf__mean_chunk_work(h->r);
    double running = h->dev[c].is_gpu ? (double)h->piece[c] * mean : mean;
    return h->inflight[c] ? running / victim_rate(h, c) : 0.0;
}

/* CPU c's time for a chunk of `work` at its pessimistic pace (its spread
 * added twice): a CPU whose chunks vary a lot must not become the straggler
 * on a lucky estimate. */
static double cpu_chunk_s(const struct hass *h, int c, double work)
{
    return work / h->rate[c] * (1.0 + 2.0 * h->model[c].spread);
}

/* What the alive GPUs other than c run a buffer's tail at, together (each
 * on the tail's bytes per work, rho): the thieves of c's buffer. */
static double thieves_rate(const struct hass *h, int c, double rho)
{
    double sum = 0.0;
    for (int k = 0; k < h->ndev; k++)
        if (h->dev[k].is_gpu && h->r->alive[k] && k != c)
            sum += gpu_rate_on(h, k, rho);
    return sum;
}

/* When GPU k, another thief of victim c's buffer, would end a steal of
 * `work` moving `rho` bytes per work, by the models: after what it still runs
 * (its committed bundles and own buffer at its model, less the seconds it
 * has finished; the scheduler has no clock), its latency, the work at its
 * rate, its stall risk. */
static double thief_end(const struct hass *h, int k, double work, double rho)
{
    double g = gpu_rate_on(h, k, rho), rest = 0.0;
    if (h->inflight[k] || h->buf[k].hi > h->buf[k].lo) {
        double bundles = (double)h->bundles[k] + h->inflight[k];
        rest = bundles * hf__hass_latency(h, k) +
               (h->committed[k] + hf__buf_work(h->r, &h->buf[k])) / h->rate[k];
        rest = fmax(0.0, rest - h->spent[k]);
    }
    return rest + hf__hass_latency(h, k) + work / g + hass_stall_risk(h, k);
}

/* Whether another thief of c's buffer, less stall-prone than GPU d, would
 * end a steal of `work` sooner than d's `end`: d then leaves it (each extra
 * bundle of d is a chance of its stalls, and the other is asked again when
 * any bundle ends). */
static int safer_thief(const struct hass *h, int d, int c, double work, double rho, double end)
{
    double risk = hass_stall_risk(h, d);
    for (int k = 0; risk > 0.0 && k < h->ndev; k++)
        if (k != d && k != c && h->dev[k].is_gpu && h->r->alive[k] && h->rate[k] > 0.0 &&
            hass_stall_risk(h, k) < risk && hf__hass_link_may_steal(h, k) &&
            thief_end(h, k, work, rho) < end)
            return 1;
    return 0;
}

/* An idle device with an empty buffer steals from the tail of an open
 * buffer (a CPU's, a released GPU's, a busy GPU's unstarted pieces: their
 * owner runs them from the front): a GPU the share that makes it finish with
 * the owner, a CPU team one chunk. */
int hf__hass_steal(struct hass *h, int d, struct hf_span *out)
{
    int c = steal_victim(h, d);
    if (c < 0)
        return 0;
    const struct hf_chunk *ch = h->r->chunks;
    size_t lo = h->buf[c].lo, hi = h->buf[c].hi;
    double left = hf__buf_work(h->r, &h->buf[c]), cr = victim_rate(h, c);
    double rho = left > 0.0 ? hf__buf_bytes(h->r, &h->buf[c]) / left : 0.0; /* bytes per work */
    if (!h->dev[d].is_gpu) {
        /* A CPU takes one chunk from a released GPU's tail only where its
         * chunk, at its pessimistic time, ends before the GPUs would drain
         * the buffer (the piece it runs included): a CPU whose own chunk had
         * ended took one from a GPU's tail at 0.72 ms of a round whose GPUs
         * ended at 0.75, and ran it to 1.10 (issue 12's held-out matrix,
         * n4096-g8-j0.05-clean, seed 16); priced against the owner's drain
         * alone, one took a 24 ms chunk of a GPU slowed 2x at 24 ms and held
         * the round to 51.5 ms (n16384-g8-j0.02-slow, seed 1). */
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
    /* In work, not chunks (chunks need not cost the same): the CPU ends its
     * part one chunk at a time, after the chunk it is running (assumed just
     * started: the scheduler has no clock, and its cost the mean's). The GPUs
     * take the tail work x that makes the later of the two finish soonest,
     * busy + (left - x) / cr = x / gsum. With several GPUs this one takes
     * only its part of it, by rate, and comes back for more, so that no GPU
     * walks off with a tail the others need. */
    double busy = victim_busy(h, c);
    double x = fmin((busy + left / cr) / (1.0 / cr + 1.0 / gsum), left);
    double last = ch[hi - 1].work; /* the tail chunk: the least a steal takes */
    if (x < 0.5 * last && h->inflight[c])
        return 0; /* the running CPU finishes its buffer sooner than any steal would */
    if (h->inflight[c] && hf__hass_latency(h, d) >= busy + left / cr)
        return 0; /* this GPU's latency alone outlasts the CPU's whole buffer */
    /* This GPU's part, as whole tail chunks: the count whose work is nearest. */
    double mine = x * g / gsum, acc = 0.0;
    size_t count = 0;
    while (lo + count < hi && acc + 0.5 * ch[hi - 1 - count].work <= mine)
        acc += ch[hi - 1 - count++].work;
    /* Steal sizes are powers of two: a real GPU pays for the first bundle of
     * every new size (a cuBLAS kernel choice), and powers of two recur. */
    size_t pow2 = pow2_floor(count);
    /* A size this GPU never ran costs it its warm-up once: while the CPU
     * runs, the largest size that ends the round sooner than leaving the
     * tail to the CPU, counting that warm-up where the size is new (a 1-chunk
     * steal that cost a 3 ms warm-up in a 0.2 ms round: issue 12's matrix,
     * n1024-g1-j0.05-gpu, seed 5). An idle CPU's tail is always taken. */
    /* Both sides' stall risk counts the same way (hass.h, hass_stall_risk):
     * the steal is one more bundle of the thief, and spares the victim the
     * bundles (chunks, pieces) the stolen chunks would have cost it. A steal
     * from a GPU's pieces is always priced: its owner runs at a GPU's pace,
     * and a steal that does not end the round sooner only adds a bundle. */
    double warm = hass_new_size_cost(h, d), risk = hass_stall_risk(h, d);
    double vrisk = hass_stall_risk(h, c);
    size_t k = hi - lo;
    double leave = busy + left / cr + vrisk * victim_bundles(h, c, k);
    int priced = warm > 0.0 || risk > 0.0 || vrisk > 0.0 || h->dev[c].is_gpu;
    for (; h->inflight[c] && priced && pow2 > 0; pow2 /= 2) {
        double s = 0.0;
        for (size_t i = 0; i < pow2 && lo + i < hi; i++)
            s += ch[hi - 1 - i].work;
        double gpu = hf__hass_latency(h, d) + s / g + (hass_size_known(h, d, pow2) ? 0.0 : warm) +
                     risk;
        double own = busy + (left - s) / cr + vrisk * victim_bundles(h, c, k - pow2);
        if (fmax(own, gpu) < leave && !safer_thief(h, d, c, s, rho, gpu))
            break;
    }
    if (pow2 > 0 && !h->inflight[c] && risk > 0.0) {
        /* An idle victim's tail is always taken, but not by a stall-prone
         * GPU where a safer thief would end it sooner. */
        double s = 0.0;
        for (size_t i = 0; i < pow2 && lo + i < hi; i++)
            s += ch[hi - 1 - i].work;
        double gpu = hf__hass_latency(h, d) + s / g + (hass_size_known(h, d, pow2) ? 0.0 : warm);
        if (safer_thief(h, d, c, s, rho, gpu + risk))
            return 0;
    }
    return pow2 > 0 && hf__take_tail(h->buf, c, pow2, out);
}

/* What a GPU's steal of a CPU's last k chunks costs in warm-up: none when
 * an alive GPU has run the power of two it would take (steal), else the
 * least warm-up among the GPUs. Three chunks a CPU left to a GPU whose new
 * sizes cost 3 ms held a 0.2 ms round 3 ms (issue 12's matrix,
 * n1024-g1-j0.05-gpu, seed 5). */
static double tail_warm(const struct hass *h, size_t k)
{
    size_t pow2 = pow2_floor(k);
    double least = INFINITY;
    for (int g = 0; g < h->ndev; g++) {
        if (!h->dev[g].is_gpu || !h->r->alive[g])
            continue;
        least = fmin(least, hass_size_known(h, g, pow2) ? 0.0 : hass_new_size_cost(h, g));
    }
    return isfinite(least) ? least : 0.0;
}

/* Whether CPU c should leave the rest of its buffer to the GPUs: when starting
 * one more chunk would end the round later, in the models' estimate, than
 * letting the GPUs steal it (a CPU chunk can take longer than the whole tail
 * of a GPU's bundle). Only when a GPU with a known rate is alive: an idle GPU is
 * asked again whenever anything finishes, and steal() always takes from an
 * idle CPU that left work, so what the CPU leaves is never stranded. What is
 * left is priced by its own work and bytes, not by the mean chunk's: a CPU's
 * buffer at the cheap end of a load holds many chunks of little work, each of
 * which costs a GPU mostly its copies. */
int hf__hass_cpu_should_leave(const struct hass *h, int c)
{
    const struct hf_round *r = h->r;
    if (!h->steal || h->buf[c].hi <= h->buf[c].lo || !(h->rate[c] > 0.0))
        return 0;
    double Gw = 0.0, Gb = 0.0, Wg = 0.0, Yg = 0.0, L = INFINITY, w = hf__mean_chunk_work(r);
    int waiting = 0;
    for (int g = 0; g < h->ndev; g++) {
        if (!h->dev[g].is_gpu || !r->alive[g] || !(h->rate[g] > 0.0))
            continue;
        /* The rates as the plan saw them, their bytes taken back out. */
        double inv = 1.0 / h->rate[g] - (w > 0.0 ? h->inv_bw[g] * h->mean_bytes / w : 0.0);
        Gw += 1.0 / inv;
        Gb += h->inv_bw[g] > 0.0 ? 1.0 / h->inv_bw[g] : INFINITY;
        L = fmin(L, hf__hass_latency(h, g));
        Wg += h->committed[g] + hf__buf_work(r, &h->buf[g]);
        Yg += hf__buf_bytes(r, &h->buf[g]);
        waiting = 1; /* an idle GPU is asked again as soon as anything finishes */
    }
    if (!waiting || !(Gw > 0.0))
        return 0;
    /* The GPUs' time for work x moving bytes y, shared among them. */
#define GPU_S(x, y) ((x) / Gw + (isfinite(Gb) ? (y) / Gb : 0.0))
    const struct hf_chunk *next = &r->chunks[h->buf[c].lo];
    double Rc = hf__buf_work(r, &h->buf[c]), Yc = hf__buf_bytes(r, &h->buf[c]),
           Wc = h->committed[c];
    /* The chunk it would start (its own work: chunks need not cost the same),
     * at its pessimistic time. */
    double wn = next->work;
    double chunk_s = cpu_chunk_s(h, c, wn);
    /* The GPUs pay a latency for their own bundles, and what the CPU leaves
     * costs them one more bundle: its latency too. (Wg holds the committed
     * work of bundles already running; their bytes are not counted again.) */
    size_t k = h->buf[c].hi - h->buf[c].lo;
    double gpus = GPU_S(Wg, Yg) + L;
    double take = fmax(Wc / h->rate[c] + chunk_s,
                       gpus + (k > 1 ? L + tail_warm(h, k - 1) + GPU_S(Rc - wn, Yc - next->bytes)
                                     : 0.0));
    double leave = fmax(Wc / h->rate[c], gpus + L + tail_warm(h, k) + GPU_S(Rc, Yc));
#undef GPU_S
    return take > leave;
}

/* GPU d's next piece of its released buffer (see DESIGN, Split), from the
 * front, when running it at the pace its slow piece showed ends the round
 * sooner than leaving it to the other GPUs (their own buffers first, at
 * their planned rates). Once the buffer is empty it steals like any GPU (a
 * CPU may have left its tail to it). */
int hf__hass_released_piece(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    struct hf__buf *b = &h->buf[d];
    size_t k = b->hi - b->lo < h->piece[d] ? b->hi - b->lo : h->piece[d];
    double G = 0.0, W = 0.0, rest = hf__buf_work(r, b), mine = 0.0;
    for (int g = 0; g < h->ndev; g++) {
        if (g == d || !h->dev[g].is_gpu || !r->alive[g] || !(h->rate[g] > 0.0))
            continue;
        G += h->rate[g];
        W += h->committed[g] + hf__buf_work(r, &h->buf[g]);
    }
    for (size_t i = b->lo; i < b->lo + k; i++)
        mine += r->chunks[i].work;
    if (G > 0.0) {
        double take = fmax(h->spent[d] + mine / h->released[d], (W + rest - mine) / G);
        double leave = fmax(h->spent[d], (W + rest) / G);
        if (take >= leave)
            return 0;
    }
    return hf__take_front(h->buf, d, k, out);
}
