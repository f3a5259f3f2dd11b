/* gantt.c - the report's Gantt chart of one run: a lane per device, a bar
 * per bundle.
 *
 * DESIGN
 * ------
 * Bars are drawn in the order of their start time per lane; past
 * HF__REPORT_MAX_BARS a lane merges consecutive bundles into one bar (marked
 * stolen or outlier if any of them was) so a run of a million bundles still
 * makes a page a browser can draw. GPU bars show their copy-in and copy-out
 * at the ends; round boundaries are where each round's first bundle started.
 * The time axis runs to the longest run of the same engine, so schedulers
 * compare by bar length at a glance. In a run across nodes the devices
 * inside a node get lanes right under the node's own (paler, their labels
 * grey), so that their bundles show inside the node's bars. report.c puts the charts on
 * the page.
 */
#include <math.h>
#include <stdlib.h>

#include "hetfarm.h"
#include "report_internal.h"
#include "svg.h"

/* One lane's bars, sorted by start time. Events arrive in the order the
 * engine recorded them (device threads interleave), and merging past the
 * cap must merge neighbours in time, so each lane is sorted first. */
struct lane_ev {
    double start;
    size_t idx;
};

static int by_start(const void *a, const void *b)
{
    const struct lane_ev *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Writes the <title> tooltip of a bar that stands for events [lo, hi) of the lane. */
static void bar_title(struct hf__sb *b, const struct hf__rp_run *r, const struct lane_ev *le,
                      size_t lo, size_t hi, double t0, double t1, int stolen, int outlier)
{
    const struct hf__rp_event *e = &r->ev[le[lo].idx];
    hf__sb_printf(b, "<title>");
    hf__sb_esc(b, r->dev[e->device].name);
    if (hi - lo > 1) {
        hf__sb_printf(b, ": %zu bundles merged, round %d", hi - lo, e->round);
    } else {
        hf__sb_printf(b, ", round %d", e->round);
        if (isfinite(e->first) && isfinite(e->count))
            hf__sb_printf(b, ", chunks %.0f..%.0f", e->first, e->first + e->count - 1);
        if (e->cin > 0 || e->kern > 0 || e->cout > 0)
            hf__sb_printf(b, ", copy-in %.3g s, kernel %.3g s, copy-out %.3g s", e->cin, e->kern,
                          e->cout);
    }
    hf__sb_printf(b, ", %.6g-%.6g s%s%s</title>", t0, t1, stolen ? ", stolen" : "",
                  outlier ? ", outlier (far slower than the device's model)" : "");
}

/* The Gantt chart's geometry, computed once and shared by the pieces that
 * draw it: the chart's size and margins, a lane's height and the gap under
 * it, and the time axis [x0, x1] (ticks every `step`) over the plot width. */
struct gantt_geom {
    double W, L, R, T, LH, GAP;
    double pw, lanes_h, H;
    double x0, x1, step;
};

/* Fits the geometry to run `r` on a time axis of `tspan` seconds. */
static void gantt_geom_init(struct gantt_geom *geo, const struct hf__rp_run *r, double tspan)
{
    *geo = (struct gantt_geom){.W = 1320, .L = 150, .R = 20, .T = 34, .LH = 26, .GAP = 8};
    geo->pw = geo->W - geo->L - geo->R;
    geo->lanes_h = (r->ndev + r->ninner) * (geo->LH + geo->GAP);
    geo->H = geo->T + geo->lanes_h + 44 + 26;
    geo->x0 = 0;
    geo->x1 = tspan > 0 ? tspan : 1;
    geo->step = hf__svg_nice(&geo->x0, &geo->x1, 10, 0);
    geo->x0 = 0; /* the axis starts where the run did, whatever the nice step */
}

/* The x coordinate of time `t`, so that every piece places bars and lines alike. */
static inline double gx(const struct gantt_geom *geo, double t)
{
    return geo->L + (t - geo->x0) / (geo->x1 - geo->x0) * geo->pw;
}

/* The highest round number among the run's events, which sizes the table of round starts. */
static int max_round(const struct hf__rp_run *r)
{
    int maxround = 0;
    for (size_t k = 0; k < r->nev; k++)
        maxround = r->ev[k].round > maxround ? r->ev[k].round : maxround;
    return maxround;
}

/* The heading above the chart names the run (the summary's links point at its id). */
static void gantt_heading(struct hf__sb *b, const struct hf__rp_run *r, int ri)
{
    hf__sb_printf(b, "<h3 id=\"gantt-%d\">", ri);
    hf__sb_esc(b, r->sched);
    hf__sb_printf(b, " &middot; ");
    hf__sb_esc(b, r->engine);
    hf__sb_printf(b, " &middot; ");
    hf__sb_esc(b, r->app);
    if (r->sig[0]) {
        hf__sb_printf(b, " (");
        hf__sb_esc(b, r->sig);
        hf__sb_printf(b, ")");
    }
    hf__report_sim_badge(b, r);
    hf__sb_printf(b, "</h3>\n");
}

/* Opens the <svg> and defines the stolen-bundle hatch; the pattern's id
 * carries the run index because one page holds every run's chart. */
static void gantt_svg_open(struct hf__sb *b, const struct hf__rp_run *r, int ri,
                           const struct gantt_geom *geo)
{
    hf__sb_printf(b, "<svg class=\"chart gantt\" data-run=\"%d\" width=\"%g\" height=\"%g\" "
                     "viewBox=\"0 0 %g %g\" role=\"img\"><title>Gantt chart: ", ri, geo->W, geo->H,
                  geo->W, geo->H);
    hf__sb_esc(b, r->sched);
    hf__sb_printf(b, "</title>\n<defs><pattern id=\"hatch-%d\" width=\"6\" height=\"6\" "
                     "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                     "<rect width=\"6\" height=\"6\" fill=\"none\"/>"
                     "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#111\" "
                     "stroke-width=\"2\" stroke-opacity=\"0.55\"/></pattern></defs>\n", ri);
}

/* The time grid with its ticks and axis label, drawn before the lanes so
 * that the bars cover the grid lines. */
static void gantt_grid(struct hf__sb *b, const struct hf__rp_run *r, const struct gantt_geom *geo)
{
    double T = geo->T, lanes_h = geo->lanes_h, step = geo->step;
    hf__sb_printf(b, "<g class=\"grid\">");
    for (double v = 0; v <= geo->x1 + step * 1e-6; v += step)
        hf__sb_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%g\" y2=\"%g\"/><text class=\"tick\" "
                         "x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%g</text>",
                      gx(geo, v), gx(geo, v), T - 4, T + lanes_h, gx(geo, v), T + lanes_h + 16,
                      fabs(v) < step * 1e-9 ? 0.0 : v);
    hf__sb_printf(b, "</g>\n<text class=\"axislabel\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">"
                     "%s since the start of the run</text>\n",
                  geo->L + geo->pw / 2, T + lanes_h + 36,
                  r->sim ? "virtual seconds (SIMULATED)" : "seconds");
}

/* A GPU bundle's bar at (bx, y), bw wide, shows copy-in at its start and
 * copy-out at its end, the kernel between in the bar's own colour.
 * Overlapped copies (sum > span) are scaled to fit, so the proportions stay
 * readable; a bar too narrow to split stays whole. */
static void gantt_copy_segs(struct hf__sb *b, const struct gantt_geom *geo,
                            const struct hf__rp_event *e, double span, double bx, double y,
                            double bw)
{
    double sum = e->cin + e->kern + e->cout, LH = geo->LH;
    if (!(sum > 0 && span > 0 && bw >= 3))
        return;
    double s = sum > span ? span / sum : 1;
    double wi = e->cin * s / (geo->x1 - geo->x0) * geo->pw;
    double wo = e->cout * s / (geo->x1 - geo->x0) * geo->pw;
    if (wi > 0)
        hf__sb_printf(b, "<rect class=\"seg cin\" x=\"%.2f\" y=\"%g\" width=\"%.2f\" "
                         "height=\"%g\"/>", bx, y + 2, wi, LH - 4);
    if (wo > 0)
        hf__sb_printf(b, "<rect class=\"seg cout\" x=\"%.2f\" y=\"%g\" "
                         "width=\"%.2f\" height=\"%g\"/>", bx + bw - wo, y + 2, wo, LH - 4);
}

/* One bar standing for the lane's sorted events [lo, hi): it spans them
 * all, is marked stolen if any was, and carries a tooltip; `merged` says
 * the lane groups bundles (then no copy segments: they would mislead). */
static void gantt_bar(struct hf__sb *b, const struct hf__rp_run *r, int ri,
                      const struct gantt_geom *geo, const struct lane_ev *le, size_t lo,
                      size_t hi, int merged)
{
    const struct hf__rp_event *e = &r->ev[le[lo].idx];
    int d = e->device;
    double y = geo->T + r->dev[d].row * (geo->LH + geo->GAP), LH = geo->LH;
    double t0 = e->start, t1 = e->end;
    int stolen = 0, outlier = 0;
    for (size_t j = lo; j < hi; j++) {
        const struct hf__rp_event *f = &r->ev[le[j].idx];
        t1 = f->end > t1 ? f->end : t1;
        stolen |= f->stolen;
        outlier |= f->outlier;
    }
    double bx = gx(geo, t0), bw = gx(geo, t1) - bx;
    if (bw >= 4)
        bw -= 1; /* a pixel of lane between neighbours tells bundles apart */
    if (bw < 0.6)
        bw = 0.6; /* a zero-length bundle still shows as a hairline */
    hf__sb_printf(b, "<rect class=\"bar%s%s\" x=\"%.2f\" y=\"%g\" width=\"%.2f\" "
                     "height=\"%g\">", stolen ? " stolen" : "", merged ? " merged" : "",
                  bx, y + 2, bw, LH - 4);
    bar_title(b, r, le, lo, hi, t0, t1, stolen, outlier);
    hf__sb_printf(b, "</rect>");
    if (!merged && r->dev[d].is_gpu)
        gantt_copy_segs(b, geo, e, t1 - t0, bx, y, bw);
    if (outlier) /* a red tick over the bar's start */
        hf__sb_printf(b, "<rect class=\"outlier\" x=\"%.2f\" y=\"%g\" width=\"3\" "
                         "height=\"%g\" fill=\"#d00\"/>", bx, y - 2, LH);
    if (stolen)
        hf__sb_printf(b, "<rect class=\"hatch\" x=\"%.2f\" y=\"%g\" width=\"%.2f\" "
                         "height=\"%g\" fill=\"url(#hatch-%d)\"/>", bx, y + 2, bw, LH - 4,
                      ri);
}

/* Device `d`'s lane: its label, then its bundles in start order, merged
 * into groups past HF__REPORT_MAX_BARS (and said so beside the lane). `le`
 * is scratch room for r->nev entries. Returns whether the lane merged. */
static int gantt_lane(struct hf__sb *b, const struct hf__rp_run *r, int ri,
                      const struct gantt_geom *geo, int d, struct lane_ev *le)
{
    double L = geo->L, LH = geo->LH, y = geo->T + r->dev[d].row * (geo->LH + geo->GAP);
    size_t n = 0;
    for (size_t k = 0; k < r->nev; k++)
        if (r->ev[k].device == d)
            le[n++] = (struct lane_ev){r->ev[k].start, k};
    qsort(le, n, sizeof *le, by_start);
    const char *inner = r->dev[d].node >= 0 ? " inner" : ""; /* a device inside a node */
    hf__sb_printf(b, "<rect class=\"lane%s\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>"
                     "<text class=\"lanelabel%s\" x=\"%g\" y=\"%g\" text-anchor=\"end\">",
                  inner, L, y, geo->pw, LH, inner, L - 8, y + LH / 2 + 4);
    hf__sb_esc(b, r->dev[d].name);
    hf__sb_printf(b, "</text>\n<g class=\"lanebars%s\" data-device=\"%d\" fill=\"%s\">",
                  inner, d, hf__svg_color(d));
    /* Consecutive bundles merge into groups of `g` past the cap. */
    size_t cap = HF__REPORT_MAX_BARS, g = n > cap ? (n + cap - 1) / cap : 1;
    for (size_t lo = 0; lo < n; lo += g)
        gantt_bar(b, r, ri, geo, le, lo, lo + g < n ? lo + g : n, g > 1);
    hf__sb_printf(b, "</g>\n");
    if (g > 1)
        hf__sb_printf(b, "<text class=\"mergenote\" x=\"%g\" y=\"%g\" font-size=\"10\" "
                         "fill=\"#a00\" text-anchor=\"end\">%zu bundles in %zu bars"
                         "</text>\n", L - 8, y + LH + 5, n, (n + g - 1) / g);
    return g > 1;
}

/* Round boundaries: where each round's first bundle started. The engine
 * records no round start of its own, and the gap before the first bundle
 * (the scheduler adapting) belongs to the previous round's tail. `rstart`
 * is scratch room for maxround + 1 entries. */
static void gantt_round_lines(struct hf__sb *b, const struct hf__rp_run *r,
                              const struct gantt_geom *geo, double *rstart, int maxround)
{
    for (int k = 0; k <= maxround; k++)
        rstart[k] = INFINITY;
    for (size_t k = 0; k < r->nev; k++)
        if (r->ev[k].start < rstart[r->ev[k].round])
            rstart[r->ev[k].round] = r->ev[k].start;
    double lastlabel = -1e9;
    hf__sb_printf(b, "<g class=\"rounds\">");
    for (int k = 0; k <= maxround; k++) {
        if (!isfinite(rstart[k]))
            continue;
        double x = gx(geo, rstart[k]);
        hf__sb_printf(b, "<line class=\"roundline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%g\" y2=\"%g\"/>",
                      x, x, geo->T - 12, geo->T + geo->lanes_h);
        if (x - lastlabel >= 22) { /* labels of crowded rounds would overprint */
            hf__sb_printf(b, "<text class=\"roundlabel\" x=\"%.1f\" y=\"%g\">r%d</text>", x + 2,
                          geo->T - 14, k);
            lastlabel = x;
        }
    }
    hf__sb_printf(b, "</g>\n");
}

/* The legend under the axis label explains the marks a bar alone does not:
 * the hatch, the round lines and, where a GPU ran, the copy segments. */
static void gantt_legend(struct hf__sb *b, const struct hf__rp_run *r, int ri,
                         const struct gantt_geom *geo)
{
    double L = geo->L, ly = geo->T + geo->lanes_h + 52;
    hf__sb_printf(b, "<g class=\"glegend\" font-size=\"12\">"
                     "<rect x=\"%g\" y=\"%g\" width=\"22\" height=\"12\" fill=\"#bbb\" "
                     "stroke=\"#111\" stroke-width=\"1.2\"/><rect x=\"%g\" y=\"%g\" width=\"22\" "
                     "height=\"12\" fill=\"url(#hatch-%d)\"/><text x=\"%g\" y=\"%g\">stolen "
                     "bundle</text>"
                     "<line class=\"roundline\" x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\"/>"
                     "<text x=\"%g\" y=\"%g\">round boundary (rN)</text>",
                  L, ly, L, ly, ri, L + 28, ly + 10, L + 150, L + 150, ly - 2, ly + 14, L + 158,
                  ly + 10);
    int anygpu = 0;
    for (int d = 0; d < r->ndev + r->ninner; d++)
        anygpu |= r->dev[d].is_gpu;
    if (anygpu)
        hf__sb_printf(b, "<rect class=\"seg cin\" x=\"%g\" y=\"%g\" width=\"22\" height=\"12\"/>"
                         "<text x=\"%g\" y=\"%g\">GPU copy-in</text><rect class=\"seg cout\" "
                         "x=\"%g\" y=\"%g\" width=\"22\" height=\"12\"/><text x=\"%g\" y=\"%g\">"
                         "GPU copy-out (kernel: device colour)</text>",
                      L + 320, ly, L + 348, ly + 10, L + 460, ly, L + 488, ly + 10);
    hf__sb_printf(b, "</g>\n");
}

/* The notes under the chart: that lanes were merged (so a bar may stand for
 * many bundles), configured GPUs the run did not start, and the run's
 * fault, if it had one. */
static void gantt_notes(struct hf__sb *b, const struct hf__rp_run *r, int merged_any)
{
    if (merged_any)
        hf__sb_printf(b, "<p class=\"note merged\">Lanes with more than %d bundles merge "
                         "consecutive bundles into one bar (marked stolen if any of them was); "
                         "hover a bar for what it covers.</p>\n", HF__REPORT_MAX_BARS);
    if (r->unstarted[0]) {
        hf__sb_printf(b, "<p class=\"note unstarted\">");
        hf__sb_esc(b, r->unstarted);
        hf__sb_printf(b, "</p>\n");
    }
    if (r->fault[0]) {
        hf__sb_printf(b, "<p class=\"banner fault\">Fault: ");
        hf__sb_esc(b, r->fault);
        hf__sb_printf(b, "</p>\n");
    }
}

/* The Gantt chart of run `ri`: a lane per device, a bar per bundle. Its
 * time axis runs to `tspan` seconds, the longest run of the same engine, so
 * that schedulers compare by bar length at a glance. The scratch arrays are
 * taken before anything is written, so a failure leaves no half chart. */
int hf__report_gantt(struct hf__sb *b, const struct hf__rp_run *r, int ri, double tspan)
{
    struct gantt_geom geo;
    int maxround = max_round(r);
    gantt_geom_init(&geo, r, tspan);
    struct lane_ev *le = malloc((r->nev + 1) * sizeof *le);
    double *rstart = malloc(((size_t)maxround + 1) * sizeof *rstart);
    if (!le || !rstart) {
        free(le);
        free(rstart);
        return hf_fail(HF_ENOMEM, "out of memory drawing the Gantt chart");
    }

    gantt_heading(b, r, ri);
    gantt_svg_open(b, r, ri, &geo);
    gantt_grid(b, r, &geo);
    int merged_any = 0, nd = r->ndev + r->ninner;
    for (int row = 0; row < nd; row++) /* top to bottom, so the page reads as it shows */
        for (int d = 0; d < nd; d++)
            if (r->dev[d].row == row)
                merged_any |= gantt_lane(b, r, ri, &geo, d, le);
    gantt_round_lines(b, r, &geo, rstart, maxround);
    gantt_legend(b, r, ri, &geo);
    hf__sb_printf(b, "</svg>\n");
    gantt_notes(b, r, merged_any);
    free(le);
    free(rstart);
    return 0;
}

