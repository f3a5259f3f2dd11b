/* svg.c - text buffer, HTML escaping and inline-SVG line charts for report.c.
 *
 * DESIGN
 * ------
 * The report is one self-contained HTML file, so charts are written as inline
 * SVG text rather than drawn by a script: the file opens in any browser,
 * offline, with scripts disabled, and a test can count its elements. The
 * buffer records an allocation failure once (`oom`) instead of making every
 * append return a code, which keeps the chart code readable; the report
 * checks the flag before writing anything.
 *
 * Every piece of text that comes from outside (device names, scheduler names,
 * the config file) goes through hf__sb_esc(); formats and numbers are ours.
 * Axis ticks are "nice" numbers (1, 2, 5 x 10^k) so that the labels read as
 * a person would draw them.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `extra` more bytes plus the NUL; doubles to keep appends O(1). */
static int sb_reserve(struct hf__sb *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void hf__sb_printf(struct hf__sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sb_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void hf__sb_esc(struct hf__sb *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        }
        size_t n = rep ? strlen(rep) : 1;
        if (sb_reserve(b, n) != 0)
            return;
        memcpy(b->p + b->len, rep ? rep : s, n);
        b->len += n;
        b->p[b->len] = '\0';
    }
}

void hf__sb_free(struct hf__sb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

double hf__svg_nice(double *lo, double *hi, int want, int integers)
{
    if (!isfinite(*lo) || !isfinite(*hi)) {
        *lo = 0;
        *hi = 1;
    }
    if (*hi <= *lo)
        *hi = *lo + (*lo != 0 ? fabs(*lo) * 0.1 : 1);
    double raw = (*hi - *lo) / (want > 0 ? want : 5);
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag, step = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    step *= mag;
    if (integers && step < 1)
        step = 1;
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
    if (*hi <= *lo)
        *hi = *lo + step;
    return step;
}

const char *hf__svg_color(int i)
{
    /* Tableau 10: distinct hues that survive most colour-vision deficiencies. */
    static const char *const pal[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};
    return pal[(i < 0 ? -i : i) % 10];
}

/* The data's range over every finite point; returns 0 when there is none. */
static int data_range(const struct hf__svg_series *s, int ns, double *x0, double *x1,
                      double *y0, double *y1)
{
    int any = 0;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            double x = s[k].x[i], y = s[k].y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            if (!any || x < *x0)
                *x0 = x;
            if (!any || x > *x1)
                *x1 = x;
            if (!any || y < *y0)
                *y0 = y;
            if (!any || y > *y1)
                *y1 = y;
            any = 1;
        }
    return any;
}

/* Legend entries per row under a line chart. */
enum { LEGEND_PER_ROW = 4 };

/* A line chart's layout and axes, shared by the pieces that draw it: the
 * margins, the whole image (W x H), the plot area (pw x ph) and the axis
 * ranges with their tick steps. */
struct svg_frame {
    double L, R, T, B;
    double W, H, pw, ph;
    double x0, x1, y0, y1, xstep, ystep;
};

/* The x coordinate of data value `v`, so that grid, lines and markers agree. */
static inline double px(const struct svg_frame *f, double v)
{
    return f->L + (v - f->x0) / (f->x1 - f->x0) * f->pw;
}

/* The y coordinate of data value `v` (SVG's y grows downwards). */
static inline double py(const struct svg_frame *f, double v)
{
    return f->T + f->ph - (v - f->y0) / (f->y1 - f->y0) * f->ph;
}

/* Sizes the chart: the plot keeps the height asked for, and the image grows
 * by a row per LEGEND_PER_ROW labelled series so the legend never covers it. */
static void frame_init(struct svg_frame *f, const struct hf__svg_plot *p,
                       const struct hf__svg_series *s, int ns)
{
    /* Margins leave room for tick labels (left, bottom) and the legend (below). */
    *f = (struct svg_frame){.L = 64, .R = 16, .T = 30, .B = 48};
    int nlegend = 0;
    for (int k = 0; k < ns; k++)
        nlegend += s[k].label != NULL;
    double legend_h = nlegend ? 20.0 * ((nlegend + LEGEND_PER_ROW - 1) / LEGEND_PER_ROW) + 4 : 0;
    f->W = p->width;
    f->H = p->height + legend_h;
    f->pw = f->W - f->L - f->R;
    f->ph = p->height - f->T - f->B;
}

/* Fits the axes to the data with nice ticks; returns 0 when no point is
 * finite (the axes then stay zero and must not be drawn). */
static int fit_axes(struct svg_frame *f, const struct hf__svg_plot *p,
                    const struct hf__svg_series *s, int ns)
{
    double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    if (!data_range(s, ns, &x0, &x1, &y0, &y1))
        return 0;
    /* Value axes start at zero unless told otherwise: a makespan chart whose
     * axis starts at 0.9 s exaggerates a 5% difference into a cliff. */
    y0 = isnan(p->ymin) ? (y0 < 0 ? y0 : 0) : p->ymin;
    y1 = isnan(p->ymax) ? y1 : p->ymax;
    f->ystep = hf__svg_nice(&y0, &y1, 5, 0);
    if (x1 <= x0)
        x1 = x0 + 1;
    f->xstep = hf__svg_nice(&x0, &x1, 10, p->integers_x);
    f->x0 = x0;
    f->x1 = x1;
    f->y0 = y0;
    f->y1 = y1;
    return 1;
}

/* The grid with its tick labels, drawn first so that the lines cover it. */
static void grid(struct hf__sb *b, const struct hf__svg_plot *p, const struct svg_frame *f)
{
    double L = f->L, T = f->T, pw = f->pw, ph = f->ph, xstep = f->xstep, ystep = f->ystep;
    hf__sb_printf(b, "<g class=\"grid\">");
    for (double v = f->y0; v <= f->y1 + ystep * 1e-6; v += ystep) {
        hf__sb_printf(b, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\"/>", L, L + pw,
                      py(f, v), py(f, v));
        hf__sb_printf(b, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">", L - 6,
                      py(f, v) + 4);
        hf__sb_printf(b, p->yfmt ? p->yfmt : "%g", fabs(v) < ystep * 1e-9 ? 0.0 : v);
        hf__sb_printf(b, "</text>");
    }
    for (double v = f->x0; v <= f->x1 + xstep * 1e-6; v += xstep) {
        hf__sb_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%g\" y2=\"%g\"/>", px(f, v),
                      px(f, v), T, T + ph);
        hf__sb_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%g"
                         "</text>", px(f, v), T + ph + 16, fabs(v) < xstep * 1e-9 ? 0.0 : v);
    }
    hf__sb_printf(b, "</g>\n");
}

/* The plot's frame and the two axis labels, which come from the caller and are escaped. */
static void axis_labels(struct hf__sb *b, const struct hf__svg_plot *p, const struct svg_frame *f)
{
    double L = f->L, T = f->T, pw = f->pw, ph = f->ph;
    hf__sb_printf(b, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>\n", L,
                  T, pw, ph);
    hf__sb_printf(b, "<text class=\"axislabel\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">",
                  L + pw / 2, T + ph + 36);
    hf__sb_esc(b, p->xlabel);
    hf__sb_printf(b, "</text><text class=\"axislabel\" transform=\"translate(14,%g) rotate(-90)\" "
                     "text-anchor=\"middle\">", T + ph / 2);
    hf__sb_esc(b, p->ylabel);
    hf__sb_printf(b, "</text>\n");
}

/* One series: a polyline per unbroken stretch (a non-finite point breaks
 * the line rather than drawing it to zero), then a marker with a tooltip
 * per point. */
static void series(struct hf__sb *b, const struct svg_frame *f, const struct hf__svg_series *c)
{
    hf__sb_printf(b, "<g class=\"series\" stroke=\"%s\" fill=\"%s\">", c->color, c->color);
    int open = 0;
    for (int i = 0; i <= c->n; i++) {
        int ok = i < c->n && isfinite(c->x[i]) && isfinite(c->y[i]);
        if (ok && !open) {
            hf__sb_printf(b, "<polyline class=\"line%s\" points=\"", c->dashed ? " dashed" : "");
            open = 1;
        }
        if (ok)
            hf__sb_printf(b, "%.1f,%.1f ", px(f, c->x[i]), py(f, c->y[i]));
        if (!ok && open) {
            hf__sb_printf(b, "\"/>");
            open = 0;
        }
    }
    for (int i = 0; i < c->n; i++) {
        if (!isfinite(c->x[i]) || !isfinite(c->y[i]))
            continue;
        hf__sb_printf(b, "<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%g\"><title>",
                      c->dashed ? " hollow" : "", px(f, c->x[i]), py(f, c->y[i]),
                      c->n > 60 ? 1.5 : 3.0);
        hf__sb_esc(b, c->label ? c->label : "");
        hf__sb_printf(b, " %g: %.4g</title></circle>", c->x[i], c->y[i]);
    }
    hf__sb_printf(b, "</g>\n");
}

/* The legend, in rows of LEGEND_PER_ROW entries under the x-axis label, in
 * the room frame_init() added; unlabelled series have no entry. */
static void legend(struct hf__sb *b, const struct hf__svg_plot *p, const struct svg_frame *f,
                   const struct hf__svg_series *s, int ns)
{
    int j = 0;
    for (int k = 0; k < ns; k++) {
        if (!s[k].label)
            continue;
        double lx = f->L + (j % LEGEND_PER_ROW) * (f->pw / LEGEND_PER_ROW);
        double ly = p->height + 20.0 * (j / LEGEND_PER_ROW) + 6;
        hf__sb_printf(b, "<g class=\"legend\"><line class=\"line%s\" x1=\"%g\" x2=\"%g\" "
                         "y1=\"%g\" y2=\"%g\" stroke=\"%s\"/><text x=\"%g\" y=\"%g\">",
                      s[k].dashed ? " dashed" : "", lx, lx + 22, ly, ly, s[k].color, lx + 28,
                      ly + 4);
        hf__sb_esc(b, s[k].label);
        hf__sb_printf(b, "</text></g>\n");
        j++;
    }
}

/* Draws back to front (grid, frame, series, legend) so that data is never
 * hidden under the scaffolding; a chart with no finite point says so. */
void hf__svg_lines(struct hf__sb *b, const struct hf__svg_plot *p,
                   const struct hf__svg_series *s, int ns)
{
    struct svg_frame f;
    frame_init(&f, p, s, ns);
    hf__sb_printf(b, "<svg class=\"chart %s\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
                     "role=\"img\"><title>", p->cls, f.W, f.H, f.W, f.H);
    hf__sb_esc(b, p->title);
    hf__sb_printf(b, "</title>\n<text class=\"ctitle\" x=\"%g\" y=\"18\">", f.L);
    hf__sb_esc(b, p->title);
    hf__sb_printf(b, "</text>\n");
    if (!fit_axes(&f, p, s, ns)) {
        hf__sb_printf(b, "<text class=\"nodata\" x=\"%g\" y=\"%g\">no data</text></svg>\n",
                      f.L + f.pw / 2, f.T + f.ph / 2);
        return;
    }
    grid(b, p, &f);
    axis_labels(b, p, &f);
    for (int k = 0; k < ns; k++)
        series(b, &f, &s[k]);
    legend(b, p, &f, s, ns);
    hf__sb_printf(b, "</svg>\n");
}
