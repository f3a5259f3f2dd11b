/* hass_link.c - shared links in HASS's split and in what its models are fed.
 *
 * DESIGN
 * ------
 * Devices may sit behind one shared link (hf_device_info.link > 0,
 * link_bandwidth in bytes/s when known): nodes behind rank 0's network link,
 * GPUs behind one PCIe switch. The link moves one transfer at a time in the
 * order bundles are handed out, at a round's start the devices' index order,
 * so a device waits for the bytes before it. With a = the link's seconds per
 * unit of work and S_k = a * sum_{j<k} x_j, a round of finish time T lets
 * device k take x_k = max(0, min((T - lat_k - S_k) / inv_k, (T - S_k) / a)),
 * and bisection finds the least T whose capacity covers the work: shares fall
 * along the link, and a device whose wait fills the round gets nothing.
 * Measured seconds feed a model less the wait, the link time of the bytes
 * handed out before it since time last moved; that wait is known only where
 * nothing older was still on the link, and a model takes spans of unknown
 * wait only until one of known wait restarts it (meanwhile it is planned as
 * the slowest of its link). A device of a link steals only while its link is
 * idle. An undeclared bandwidth is the fastest bytes rate its devices'
 * per-byte terms show; while none shows one, the link adds no constraint.
 */
#include <math.h>

#include "hass.h"

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
        if (h->dev[d].link_bandwidth > 0.0)
            h->link_bw[g] = h->dev[d].link_bandwidth;
        else if (m->fitted && m->inv_bw > 0.0 && 1.0 / m->inv_bw > h->link_bw[g])
            h->link_bw[g] = 1.0 / m->inv_bw;
    }
}

/* Seconds on link g per unit of work at rho bytes per unit (0: none). */
static double link_a(const struct hass *h, int g, double rho)
{
    return g >= 0 && h->link_bw[g] > 0.0 && rho > 0.0 ? rho / h->link_bw[g] : 0.0;
}

/* The work the devices can take by time T, shares in x (may be NULL). */
static double capacity(const struct hass *h, const double *lat, const double *inv, const int *use,
                       double rho, double T, double *x)
{
    double S[h->nlinks > 0 ? h->nlinks : 1], sum = 0.0;
    for (int g = 0; g < h->nlinks; g++)
        S[g] = 0.0;
    for (int d = 0; d < h->ndev; d++) {
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

/* The split of `work` with the links: its finish time, shares in x. */
double hf__hass_link_split(const struct hass *h, const double *lat, const double *inv,
                           const int *use, double work, double rho, double *x)
{
    double T = hf_cost_split(lat, inv, use, h->ndev, work, x);
    int any = 0;
    for (int d = 0; d < h->ndev; d++)
        any |= (!use || use[d]) && link_a(h, h->link_of[d], rho) > 0.0;
    if (!any || !isfinite(T) || !(work > 0.0))
        return T;
    struct link_fit f = {h, lat, inv, use, rho, work};
    double hi = hf_cost_least_time(link_fits, &f, T, NULL);
    double cap = capacity(h, lat, inv, use, rho, hi, x);
    for (int d = 0; cap > 0.0 && d < h->ndev; d++)
        x[d] *= work / cap;
    return hi;
}

/* Device d's planned wait for the bytes before it on its link. */
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

/* Something finished, or a round begins: time has moved. */
void hf__hass_link_tick(struct hass *h)
{
    for (int g = 0; g < h->nlinks; g++)
        h->link_batch[g] = 0.0;
    h->link_epoch++;
}

/* The latest finish on d's link once d has one chunk more: the devices after
 * d on it wait for its extra bytes. */
double hf__hass_link_finish_plus(const struct hass *h, int d, size_t *counts, double w)
{
    counts[d]++;
    double t = hf__hass_finish(h, d, counts, w, 1);
    int g = h->link_of[d];
    for (int j = d + 1; g >= 0 && h->link_bw[g] > 0.0 && j < h->ndev; j++)
        if (h->link_of[j] == g && counts[j] > 0)
            t = fmax(t, hf__hass_finish(h, j, counts, w, 1));
    counts[d]--;
    return t;
}

/* Device d is handed `bytes`: its wait, and whether that is known. */
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
    for (int j = 0; j < h->ndev; j++)
        if (j != d && h->link_of[j] == g && h->inflight[j] && h->give_epoch[j] != h->link_epoch)
            h->wait_known[d] = 0;
}

/* Whether d may steal: off a link, or while its link is idle. */
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

/* Plans a device with no span of known wait as its link's slowest. */
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
        const struct hf_cost_model *m = &h->model[from];
        hass_model_set(&h->model[d], m->lat, m->inv, m->inv_bw);
        h->model[d].spread = m->spread;
    }
}

/* Whether d's finished span feeds its model (see DESIGN). */
int hf__hass_link_fit(struct hass *h, int d)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0))
        return 1;
    if (!h->wait_known[d])
        return !h->link_clean[d];
    if (!h->link_clean[d]) {
        hass_model_reset(h, d);
        h->link_clean[d] = 1;
    }
    return 1;
}

/* The seconds of d's finished span that were its own. */
double hf__hass_link_own(const struct hass *h, int d, double bytes, double seconds)
{
    int g = h->link_of[d];
    if (g < 0 || !(h->link_bw[g] > 0.0) || !(h->wait_s[d] > 0.0))
        return seconds;
    double own = fmin(seconds, bytes / h->link_bw[g]);
    return fmax(seconds - h->wait_s[d], own);
}
