/* svg.h - a growable text buffer with HTML escaping, and small inline-SVG
 * line charts, for the HTML report (report.c).
 *
 * Internal to the framework (hf__ names). Nothing here fetches or references
 * anything outside the document: every chart is inline SVG styled by the
 * page's own CSS classes.
 */
#ifndef HF_SVG_H
#define HF_SVG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A growable NUL-terminated string. Start from {0}. On allocation failure
 * `oom` is set and later appends do nothing, so callers check once at the end. */
struct hf__sb {
    char *p;
    size_t len, cap;
    int oom;
};

/* Appends printf-formatted text as is (the format and the numbers are ours;
 * never pass text read from a file through here unescaped). */
void hf__sb_printf(struct hf__sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends `s` with &, <, >, " and ' written as HTML entities; NULL appends nothing. */
void hf__sb_esc(struct hf__sb *b, const char *s);
/* Frees the buffer and resets it to {0}. */
void hf__sb_free(struct hf__sb *b);

/* "Nice" axis ticks (1, 2 or 5 times a power of ten) covering [lo, hi] with about
 * `want` intervals; with `integers` the step is at least 1. Widens *lo and
 * *hi outward to whole steps and returns the step (> 0). */
double hf__svg_nice(double *lo, double *hi, int want, int integers);

/* Colour number i of a fixed, colour-blind-friendlier palette (cycles). */
const char *hf__svg_color(int i);

/* One line of a line chart: n points (x[i], y[i]); a NaN y breaks the line.
 * `label` (escaped on output) goes in the legend unless NULL. */
struct hf__svg_series {
    const char *label;
    const char *color;
    int dashed;
    int n;
    const double *x, *y;
};

/* A line chart's frame. `cls` is added to the <svg>'s class list ("chart
 * CLS"); `title`, `xlabel` and `ylabel` are escaped. ymin/ymax: NaN = from
 * the data (ymin then starts at 0). `yfmt` formats tick labels ("%g"),
 * `integers_x` makes x ticks whole numbers (rounds). */
struct hf__svg_plot {
    const char *cls, *title, *xlabel, *ylabel, *yfmt;
    int width, height;
    double ymin, ymax;
    int integers_x;
};

/* Writes a complete <svg> line chart with axes, grid, a marker per point
 * (with a <title> tooltip) and a legend. A chart with no finite point says so. */
void hf__svg_lines(struct hf__sb *b, const struct hf__svg_plot *p,
                   const struct hf__svg_series *s, int ns);

#ifdef __cplusplus
}
#endif
#endif
