/* hass_link.c - shared links in HASS's split (hass.c's design paragraph,
 * "Split", and hass_plan.c).
 *
 * DESIGN
 * ------
 * Devices may declare that they sit behind one shared link (struct
 * hf_device_info: link > 0, and link_bandwidth in the bundles' own bytes per
 * second when it is known): the nodes of a run behind rank 0's network link,
 * GPUs behind one PCIe switch. The link moves one transfer at a time, first
 * come first served in the order bundles are handed out; at a round's start
 * that is the devices' index order (every engine offers idle devices work in
 * that order). A device's own model (lat + w inv, its bytes folded into inv)
 * covers its bundle once its transfer starts; what it cannot see is the wait
 * for the transfers before it, which depends on the other devices' shares.
 * So the split models the link itself. For a round of finish time T, device k
 * of a link (in index order, after devices j < k whose shares x_j put
 * S_k = a * sum_{j<k} x_j seconds on the link, a = the link's seconds per unit
 * of work at the mean chunk's bytes) can take
 *     x_k = max(0, min((T - lat_k - S_k) / inv_k, (T - S_k) / a)),
 * i.e. it waits for the link, then runs its bundle, and the link's bytes over
 * its bandwidth never exceed T. The devices behind no link take
 * max(0, T - lat) / inv as before, and the smallest T whose capacity covers
 * the work is found by bisection (capacity grows with T). Shares decrease
 * along the link, and a device whose wait alone reaches T gets nothing: where
 * the link is the whole story (a search whose text is sent from rank 0), one
 * or two nodes take what the link can carry and the rest are left out.
 * The same wait is added to a device's planned finish when whole chunks are
 * placed and plans compared (hf__hass_finish_at), and a leftover chunk given
 * to a device behind a link is weighed by what it does to the devices served
 * after it too (hf__hass_link_finish_plus). It is also taken out of
 * what a device behind a link measured, so that a device's model stays its
 * own and the plan does not count the wait twice: `finished` feeds its model
 * the seconds less its wait (never less than its own transfer), the wait
 * being the link time of the bytes of that link's spans handed out before it
 * at the same moment - since the last `finished` of any device, for a
 * scheduler has no clock: the spans of a round's start, which is where a
 * plan's bundles go out, queue for the link exactly so. A span handed out
 * later is taken to wait for nothing (the link may still be busy). Its wait
 * is known only when no span handed out earlier was still running on the
 * link; a device's model takes the spans of unknown wait only until it has
 * one of known wait, and that first one restarts it (the waits in the older
 * ones are not the device's and would hold back the plan for rounds); until
 * then it is planned as the slowest device of its link that has one (its
 * model and spread), or it would be left out on its waits and never measured
 * again. A device of a link steals only while no other span of that link is
 * running (a steal would wait for the link, and a device the plan left out
 * for its wait would take back the link time the plan kept from it). A link
 * whose bandwidth is not declared is given the fastest bytes rate any of its
 * devices' per-byte terms shows (1 / inv_bw: its waits only slow a device
 * down, so that is the link at least); while no device shows one (bytes
 * proportional to work, where a per-byte term is not told apart from the cost
 * per unit of work) the link adds no constraint and no wait.
 */
#include <math.h>
#include <stdlib.h>

#include "hass.h"

/* Numbers the distinct link ids of the devices: link_of[d] = index or -1. */
int hf__hass_links_init(struct hass *h)
{
    h->nlinks = 0;
    for (int d = 0; d < h->ndev; d++) {
        h->link_of[d] = -1;
        if (h->dev[d].link <= 0)
            continue;
        for (int k = 0; k < d && h->link_of[d] < 0; k++)
            if (h->dev[k].link == h->dev[d].link)
                h->link_of[d] = h->link_of[k];
        if (h->link_of[d] < 0)
            h->link_of[d] = h->nlinks++;
    }
    return h->nlinks;
}

/* Every link's bandwidth: declared, else learned from its devices' models. */
void hf__hass_links_refresh(struct hass *h)
{
    for (int g = 0; g < h->nlinks; g++)
        h->link_bw[g] = 0.0;
    for (int d = 0; d < h->ndev; d++) {
        int g = h->link_of[d];
        if (g < 0)
            continue;
        const struct hf_cost_model *m = &h->model[d];
        double bw = h->dev[d].link_bandwidth;
        if (!(bw > 0.0) && m->fitted && m->inv_bw > 0.0)
            bw = 1.0 / m->inv_bw;
        if (h->dev[d].link_bandwidth > 0.0)
            h->link_bw[g] = bw; /* declared: it holds */
        else if (bw > h->link_bw[g])
            h->link_bw[g] = bw;
    }
}

/* Seconds on link g per unit of work at rho bytes per unit; 0: no constraint. */
static double link_a(const struct hass *h, int g, double rho)
{
    return g >= 0 && h->link_bw[g] > 0.0 && rho > 0.0 ? rho / h->link_bw[g] : 0.0;
}

/* The work the devices can take by time T (see DESIGN); x (may be NULL) gets
 * each device's share. */
static double capacity(const struct hass *h, const double *lat, const double *inv, const int *use,
                       double rho, double T, double *x)
{
    int n = h->ndev;
    double S[h->nlinks > 0 ? h->nlinks : 1], sum = 0.0;
    for (int g = 0; g < h->nlinks; g++)
        S[g] = 0.0;
    for (int d = 0; d < n; d++) {
        double xd = 0.0;
        if ((!use || use[d]) && inv[d] > 0.0) {
            int g = h->link_of[d];
            double a = link_a(h, g, rho);
            if (a > 0.0) {
                xd = fmax(0.0, fmin((T - lat[d] - S[g]) / inv[d], (T - S[g]) / a));
                S[g] += xd * a;
            } else {
                xd = fmax(0.0, (T - lat[d]) / inv[d]);
            }
        }
        if (x)
            x[d] = xd;
        sum += xd;
    }
    return sum;
}

/* What hf__hass_link_split's search asks at each T. */
struct link_fit {
    const struct hass *h;
    const double *lat, *inv;
    const int *use;
    double rho, work;
};

static int link_fits(void *arg, double T)
{
    const struct link_fit *f = arg;
    return capacity(f->h, f->lat, f->inv, f->use, f->rho, T, NULL) >= f->work;
}

double hf__hass_link_split(const struct hass *h, const double *lat, const double *inv,
                           const int *use, double work, double rho, double *x)
{
    double T = hf_cost_split(lat, inv, use, h->ndev, work, x);
    int any = 0;
    for (int d = 0; d < h->ndev; d++)
        any |= (!use || use[d]) && link_a(h, h->link_of[d], rho) > 0.0;
    if (!any || !isfinite(T) || !(work > 0.0))
        return T;
    /* No link constraint: T. The links only take capacity away, so the
     * answer lies above it. */
    struct link_fit f = {h, lat, inv, use, rho, work};
    double hi = hf_cost_least_time(link_fits, &f, T, NULL);
    double cap = capacity(h, lat, inv, use, rho, hi, x);
    for (int d = 0; cap > 0.0 && d < h->ndev; d++)
        x[d] *= work / cap;
    return hi;
}

/* The planned wait of device d for its link: the link time of the bytes of
 * the devices before it on the link that have chunks in `counts` (of the
 * mean chunk). */
double hf__hass_link_wait(const struct hass *h, int d, const size_t *counts)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0) || counts[d] == 0)
        return 0.0;
    double bytes = 0.0;
    for (int j = 0; j < d; j++)
        if (h->link_of[j] == g)
            bytes += (double)counts[j] * h->mean_bytes;
    return bytes / h->link_bw[g];
}

/* Something finished, or a round begins: time has moved, and what the links
 * carried before may be done. */
void hf__hass_link_tick(struct hass *h)
{
    for (int g = 0; g < h->nlinks; g++)
        h->link_batch[g] = 0.0;
    h->link_epoch++;
}

/* The latest planned finish among d and the devices after it on its link
 * once d has one chunk more than in `counts`: a chunk more for d is a wait
 * more for every device its link serves after it. */
double hf__hass_link_finish_plus(const struct hass *h, int d, size_t *counts, double w)
{
    counts[d]++;
    double t = hf__hass_finish_at(h, d, counts, w);
    int g = h->link_of[d];
    if (g >= 0 && h->link_bw[g] > 0.0) {
        double bytes = 0.0;
        for (int j = 0; j < h->ndev; j++) {
            if (h->link_of[j] != g)
                continue;
            if (j > d && counts[j] > 0)
                t = fmax(t, hf__hass_finish(h, j, counts[j], w) + bytes / h->link_bw[g]);
            bytes += (double)counts[j] * h->mean_bytes;
        }
    }
    counts[d]--;
    return t;
}

/* Device d is handed a span moving `bytes`: its wait is the link time of the
 * bytes of its link's spans handed out since time last moved (see DESIGN). */
void hf__hass_link_give(struct hass *h, int d, double bytes)
{
    int g = h->link_of[d];
    h->wait_s[d] = 0.0;
    h->wait_known[d] = 1;
    h->give_epoch[d] = h->link_epoch;
    if (g < 0 || !(h->link_bw[g] > 0.0))
        return;
    h->wait_s[d] = h->link_batch[g] / h->link_bw[g];
    h->link_batch[g] += bytes;
    /* Known when nothing handed out earlier is still on the link. */
    for (int j = 0; j < h->ndev; j++)
        if (j != d && h->link_of[j] == g && h->inflight[j] && h->give_epoch[j] != h->link_epoch)
            h->wait_known[d] = 0;
}

/* Whether device d may steal now: off a link, or behind one whose bandwidth
 * is known, when no other span of its link is running (a steal then waits
 * for nothing and costs what d's model says; while the link is busy it would
 * wait for it, and a device the plan left out for its wait would steal the
 * very link time the plan kept from it). */
int hf__hass_link_may_steal(const struct hass *h, int d)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0))
        return 1;
    for (int j = 0; j < h->ndev; j++)
        if (j != d && h->link_of[j] == g && h->inflight[j])
            return 0;
    return 1;
}

/* A device behind a link whose model has seen no span of known wait is
 * planned as the slowest device of its link that has (its own model holds
 * waits: it would be left out on them and never measured again); its next
 * span of known wait replaces the guess. */
void hf__hass_link_guess(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        int g = h->link_of[d], from = -1;
        if (g < 0 || !(h->link_bw[g] > 0.0) || h->link_clean[d])
            continue;
        for (int k = 0; k < h->ndev; k++)
            if (h->link_of[k] == g && h->link_clean[k] && h->model[k].fitted &&
                h->model[k].inv > 0.0 && (from < 0 || h->model[k].inv > h->model[from].inv))
                from = k;
        if (from < 0)
            continue;
        h->model[d].lat = h->model[from].lat;
        h->model[d].inv = h->model[from].inv;
        h->model[d].inv_bw = h->model[from].inv_bw;
        h->model[d].spread = h->model[from].spread; /* its own is the waits' */
        h->model[d].fitted = 1;
    }
}

/* Whether d's finished span goes into its model: always off a link; behind
 * one, a span whose wait was known always (the first such restarts the
 * model, which held the waits it could not tell apart), any other only until
 * the device has had one. */
int hf__hass_link_fit(struct hass *h, int d)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0))
        return 1;
    if (!h->wait_known[d])
        return !h->link_clean[d];
    if (!h->link_clean[d]) {
        hf_cost_init(&h->model[d]);
        h->model[d].warm_fresh = 1;
        h->link_clean[d] = 1;
    }
    return 1;
}

/* The seconds of d's finished span that were its own: less the wait
 * estimated when it was handed out, never less than its own transfer. */
double hf__hass_link_own(const struct hass *h, int d, double bytes, double seconds)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0) || !(h->wait_s[d] > 0.0))
        return seconds;
    double own = fmin(seconds, bytes / h->link_bw[g]);
    return fmax(seconds - h->wait_s[d], own);
}
