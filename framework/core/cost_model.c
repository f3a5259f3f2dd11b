/* cost_model.c - the affine per-device cost model T(w) = lat + w * inv and the
 * "everyone finishes together" split under it (declared in sched.h, used by
 * the engine for bound_s and by HASS for its split).
 *
 * DESIGN
 * ------
 * A device's bundle time is modelled as a fixed cost per bundle plus a cost per
 * unit of work. Both are fitted from the last HF_COST_WINDOW bundles the device
 * ran, by a Theil-Sen line: the slope is the median of the slopes between pairs
 * of bundles whose sizes differ by at least 20% (pairs of nearly equal bundles
 * say nothing about the slope but a lot about their noise), the intercept the
 * median of t - slope * w. Medians make one wild bundle harmless: on a real H200
 * one first bundle of a new size took 40.9 ms where the model said 0.7 ms, and a
 * plain average of rates turned that into a rate 60x too low. When the window
 * holds bundles of one size only (a CPU runs one chunk at a time; a GPU runs the
 * same bundle every round once its split is settled) the latency cannot be
 * seen, so the last one fitted is kept and only the slope is re-fitted.
 *
 * Each new bundle is first compared with the fit. Slower than 1.5x the
 * prediction is an outlier: counted, returned to the caller (the engine records
 * it in results.json) and not fitted. Any bundle off the prediction by more
 * than max(10%, 3x the spread seen so far) is a surprise; two surprises in a row
 * in the same direction are taken as a real change (thermal throttling, another
 * process on the GPU, a recovered fault), and the window restarts from those two
 * bundles. That is the whole "never freeze" rule: one stall is ignored, a
 * persistent change is believed after two bundles. Fitting is lazy (every 32
 * accepted bundles, or on hf_cost_refit) because a CPU reports every chunk and
 * some loads have 200000 of them per round.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define COST_OUTLIER 0.5  /* slower than (1 + this) x the fit: an outlier */
#define COST_SURPRISE 0.1 /* least relative deviation that counts toward a drift */
#define COST_PAIR_GAP 1.2 /* pairs of bundles used for a slope differ this much in size */
#define COST_LAZY 32      /* accepted bundles between automatic refits */

void hf_cost_init(struct hf_cost_model *m)
{
    memset(m, 0, sizeof *m);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1] (reorders v); 0 for n = 0. */
static double median(double *v, int n)
{
    if (n == 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Fits lat and inv from the window (see DESIGN), then the spread: the median
 * absolute relative residual scaled to a standard deviation (x 1.4826). */
void hf_cost_refit(struct hf_cost_model *m)
{
    if (m->n == 0 || (m->fitted && m->stale == 0))
        return;
    double slopes[HF_COST_WINDOW * (HF_COST_WINDOW - 1) / 2], v[HF_COST_WINDOW];
    int ns = 0;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            if (m->w[j] > COST_PAIR_GAP * m->w[i])
                slopes[ns++] = (m->t[j] - m->t[i]) / (m->w[j] - m->w[i]);
    double inv = ns ? median(slopes, ns) : 0.0, lat = m->lat;
    if (ns && inv > 0.0) {
        for (int i = 0; i < m->n; i++)
            v[i] = m->t[i] - inv * m->w[i];
        lat = median(v, m->n);
        m->lat_known = 1;
    }
    if (!(ns && inv > 0.0) || lat < 0.0) {
        /* One size only, or a line through the noise with a negative slope or
         * intercept: keep the latency we had (never more than the fastest
         * bundle's time) and fit the slope alone. */
        lat = ns && inv > 0.0 ? 0.0 : m->lat;
        for (int i = 0; i < m->n; i++)
            lat = fmin(lat, 0.9 * m->t[i]);
        for (int i = 0; i < m->n; i++)
            v[i] = (m->t[i] - lat) / m->w[i];
        inv = median(v, m->n);
    }
    m->lat = lat > 0.0 ? lat : 0.0;
    m->inv = inv;
    for (int i = 0; i < m->n; i++)
        v[i] = fabs(m->t[i] / (m->lat + m->inv * m->w[i]) - 1.0);
    m->spread = m->n >= 3 ? 1.4826 * median(v, m->n) : 0.0;
    m->fitted = m->inv > 0.0;
    m->stale = 0;
}

/* Puts a bundle into the window, evicting the oldest when it is full. */
static void accept(struct hf_cost_model *m, double w, double t)
{
    m->w[m->head] = w;
    m->t[m->head] = t;
    m->head = (m->head + 1) % HF_COST_WINDOW;
    if (m->n < HF_COST_WINDOW)
        m->n++;
    m->stale++;
    if (!m->fitted || m->stale >= COST_LAZY || m->n < 4)
        hf_cost_refit(m);
}

int hf_cost_add(struct hf_cost_model *m, double work, double seconds)
{
    if (!(work > 0.0) || !(seconds > 0.0) || !isfinite(work) || !isfinite(seconds))
        return 0;
    /* Until the latency has been seen, a bundle clearly smaller than every
     * bundle in the window cannot be judged: the fit has no idea of its
     * fixed cost. */
    int smaller = !m->lat_known;
    for (int i = 0; i < m->n && smaller; i++)
        smaller = COST_PAIR_GAP * work < m->w[i];
    if (!m->fitted || smaller) {
        m->run = 0;
        accept(m, work, seconds);
        return 0;
    }
    double dev = seconds / hf_cost_time(m, work) - 1.0;
    int outlier = dev > COST_OUTLIER;
    double tol = fmax(COST_SURPRISE, 3.0 * m->spread);
    int sign = dev > tol ? 1 : dev < -tol ? -1 : 0;
    if (sign == 0) {
        m->run = 0;
        accept(m, work, seconds);
        return 0;
    }
    if (m->run > 0 && sign == m->run_sign) {
        /* A second surprise in the same direction: the device changed. Restart
         * the window from the two bundles; the latency stays as fitted. */
        m->n = m->head = 0;
        m->run = 0;
        m->stale = 1;
        m->fitted = 0;
        accept(m, m->pw[0], m->pt[0]);
        accept(m, work, seconds);
        hf_cost_refit(m);
        m->outliers += outlier;
        return outlier;
    }
    m->run = 1;
    m->run_sign = sign;
    m->pw[0] = work;
    m->pt[0] = seconds;
    if (!outlier)
        accept(m, work, seconds);
    m->outliers += outlier;
    return outlier;
}

double hf_cost_time(const struct hf_cost_model *m, double work)
{
    return m->fitted ? m->lat + m->inv * work : 0.0;
}

double hf_cost_split(const double *lat, const double *inv, const int *use, int n, double work,
                     double *x)
{
    /* Water-filling: visit the usable devices by increasing latency; with the
     * first k of them finishing together, T = (work + sum lat/inv) / sum 1/inv.
     * The answer is the first k whose T does not reach the next device's
     * latency (that device could not start before everyone is done). */
    int order[n], k = 0;
    for (int d = 0; d < n; d++) {
        x[d] = 0.0;
        if ((!use || use[d]) && inv[d] > 0.0 && isfinite(inv[d]) && lat[d] >= 0.0) {
            int at = k++;
            while (at > 0 && lat[order[at - 1]] > lat[d]) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = d;
        }
    }
    if (k == 0)
        return INFINITY;
    double sinv = 0.0, slat = 0.0, T = INFINITY;
    int used = 0;
    for (int i = 0; i < k; i++) {
        int d = order[i];
        sinv += 1.0 / inv[d];
        slat += lat[d] / inv[d];
        T = (work + slat) / sinv;
        used = i + 1;
        if (i + 1 == k || T <= lat[order[i + 1]])
            break;
    }
    for (int i = 0; i < used; i++) {
        int d = order[i];
        x[d] = fmax(0.0, (T - lat[d]) / inv[d]);
    }
    return T;
}
