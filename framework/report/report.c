/* report.c - `hetfarm report`: one self-contained HTML page from a results.json.
 *
 * DESIGN
 * ------
 * People compare schedulers by looking at them, so the report draws what
 * ViTE or Nsight Systems users expect: a Gantt chart per run (a lane per
 * device, a bar per bundle, stolen bundles hatched and outlined, round
 * boundaries, GPU bars split into copy-in / kernel / copy-out), each
 * device's share of the work per round (the thesis's Fig. 3.7), makespan
 * against the ideal and efficiency per round (Figs. 3.6 and 3.8), a summary
 * table, and the machine and config the numbers came from (devices that
 * share one GPU, cuda = 0,0, badged SHARED GPU). A run across
 * nodes shows the devices inside its nodes like its own (node1:cpu under
 * node1): in the summary's device list, as Gantt lanes under their node and
 * as dashed lines of the shares chart.
 *
 * The page is one file with inline SVG and CSS and nothing else: no script,
 * font or image is fetched (a Content-Security-Policy of default-src 'none'
 * makes the browser enforce that), so it can be mailed, archived and opened
 * offline. Hover tooltips are SVG <title> elements, which need no script.
 *
 * The input is validated completely into plain structs before a byte of
 * HTML is produced: a missing or mistyped field fails with the file and the
 * JSON path of the field, and nothing is written. Rendering then works on
 * trusted numbers. All text from the file is HTML-escaped (svg.c). Lanes
 * with more than HF__REPORT_MAX_BARS bundles merge consecutive bundles into
 * one bar, and the chart says so: a browser chokes on a million rects and a
 * screen has only ~1300 pixel columns anyway.
 */
#include "report.h"

#include "io/files.h"
#include "hetfarm.h"
#include "report_internal.h"
#include "svg.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Numbers derived for the table.                                             */

/* The round from which the scheduler's plan stopped moving (the rule the CLI
 * table uses too); -1 when it never settled or the run has no plans. */
static int converge_round(const struct hf__rp_run *r)
{
    const double **plans = calloc((size_t)r->nrounds + 1, sizeof *plans);
    int *rounds = calloc((size_t)r->nrounds + 1, sizeof *rounds);
    int stable = -1;
    if (plans && rounds) {
        for (int i = 0; i < r->nrounds; i++) {
            plans[i] = r->rd[i].plan;
            rounds[i] = r->rd[i].round;
        }
        stable = hf_plan_stable_round(plans, rounds, r->nrounds, r->ndev);
    }
    free(plans);
    free(rounds);
    return stable < 0 ? -1 : stable;
}

/* Chunks that moved to another device after the plan handed them out: the
 * rounds' per-device counts (events mark stolen bundles, which may hold
 * several chunks, so counting events would undercount). */
static double chunks_stolen(const struct hf__rp_run *r)
{
    double s = 0;
    for (int i = 0; i < r->nrounds; i++)
        s += r->rd[i].stolen;
    return s;
}

/* Writes a number, or "-" for NaN (a round that recorded none). */
static void num(struct hf__sb *b, const char *fmt, double v)
{
    if (isfinite(v))
        hf__sb_printf(b, fmt, v);
    else
        hf__sb_printf(b, "-");
}

/* Modelled seconds must never pass for measurements: every place that names
 * a simulated run (table row, chart title, Gantt heading) carries this badge. */
void hf__report_sim_badge(struct hf__sb *b, const struct hf__rp_run *r)
{
    if (r->sim)
        hf__sb_printf(b, " <span class=\"sim\">SIMULATED</span>");
}

/* The devices that took part in each round, where the scheduler chose a set
 * (schedulers/device_set.c): one table per run that chose one, a row per
 * round, its predicted round against the full set's. Nothing when no run
 * chose. */
static void device_sets(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    int any = 0;
    for (int i = 0; i < doc->nruns; i++)
        for (int k = 0; k < doc->runs[i].nrounds; k++)
            any |= doc->runs[i].rd[k].has_set;
    if (!any)
        return;
    hf__sb_printf(b, "<h2 id=\"devsets\">Devices that took part</h2>\n<p class=\"note\">Where a "
                     "scheduler chose which devices take part in a round: the set, its "
                     "predicted round and the full set's (both with what taking part costs "
                     "past the bundles: part), and whether the full set ran as a probe of the "
                     "devices left out.</p>\n");
    for (int i = 0; i < doc->nruns; i++) {
        const struct hf__rp_run *r = &doc->runs[i];
        int has = 0;
        for (int k = 0; k < r->nrounds; k++)
            has |= r->rd[k].has_set;
        if (!has)
            continue;
        hf__sb_printf(b, "<h3>");
        hf__sb_esc(b, r->sched);
        hf__report_sim_badge(b, r);
        hf__sb_printf(b, "</h3>\n<table class=\"devsets\"><thead><tr><th>round</th><th>devices"
                         "</th><th>predicted (s)</th><th>full set predicted (s)</th><th>part "
                         "(s)</th><th>probe</th></tr></thead><tbody>\n");
        for (int k = 0; k < r->nrounds; k++) {
            const struct hf__rp_round *rd = &r->rd[k];
            if (!rd->has_set)
                continue;
            hf__sb_printf(b, "<tr><td>%d</td><td>", rd->round);
            for (int d = 0, n = 0; d < r->ndev; d++)
                if (!rd->left_out || !rd->left_out[d]) {
                    hf__sb_printf(b, "%s", n++ ? ", " : "");
                    hf__sb_esc(b, r->dev[d].name);
                }
            if (rd->left_out)
                hf__sb_printf(b, " (others left out)");
            hf__sb_printf(b, "</td><td>");
            num(b, "%.4g", rd->set_pred);
            hf__sb_printf(b, "</td><td>");
            num(b, "%.4g", rd->set_full);
            hf__sb_printf(b, "</td><td>");
            num(b, "%.4g", rd->set_part);
            hf__sb_printf(b, "</td><td>%s</td></tr>\n", rd->probe ? "yes" : "");
        }
        hf__sb_printf(b, "</tbody></table>\n");
    }
}

/* ------------------------------------------------------------------------ */
/* The page.                                                                  */

/* The page's only styling. System fonts only: a web font would be a fetch.
 * Chart colours are attributes (per device or scheduler); the classes here
 * give the marks their shape, so that the tests can count them by class. */
static const char page_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;"
    "margin:24px auto;max-width:1360px;padding:0 16px;background:#fff}\n"
    "h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 10px;"
    "border-bottom:2px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}\n"
    ".sub{color:#666}.note{color:#555;font-size:13px;margin:4px 0}\n"
    ".sim{display:inline-block;background:#8a2be2;color:#fff;font-weight:600;font-size:11px;"
    "padding:1px 6px;border-radius:3px;letter-spacing:.5px;vertical-align:middle}\n"
    ".gshare{display:inline-block;background:#b35900;color:#fff;font-weight:600;"
    "font-size:11px;padding:1px 6px;border-radius:3px;vertical-align:middle}\n"
    ".banner{padding:8px 12px;border-radius:4px;margin:12px 0}"
    ".banner.simb{background:#f3eafd;border:1px solid #c9a7f2}"
    ".banner.fault{background:#fdecea;border:1px solid #f0a8a0}"
    ".banner.gshareb{background:#fdf1e6;border:1px solid #f0c08a}\n"
    "table{border-collapse:collapse;margin:6px 0}th,td{padding:4px 10px;border-bottom:1px solid "
    "#e4e4e4;text-align:left;vertical-align:top}th{background:#f5f5f5;font-weight:600}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.eng{white-space:nowrap}td.devs{font-size:12px;color:#444}\n"
    "pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:10px;overflow:auto;font-size:12px}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:12px 24px}\n"
    "svg.chart{display:block;max-width:100%;height:auto;font-size:12px;background:#fff}\n"
    "svg .ctitle{font-size:13px;font-weight:600;fill:#222}svg .tick{fill:#555;font-size:11px}\n"
    "svg .axislabel{fill:#333;font-size:12px}svg .nodata{fill:#999;text-anchor:middle}\n"
    "svg .grid line{stroke:#ececec;stroke-width:1}svg .frame{fill:none;stroke:#999}\n"
    "svg .line{fill:none;stroke-width:2}svg .line.dashed{stroke-dasharray:6 4;stroke-width:1.5}\n"
    "svg .pt.hollow{fill:#fff;stroke-width:1.5}svg .legend text{fill:#333}\n"
    "svg .lane{fill:#f6f6f6}svg .lanelabel{fill:#222;font-size:12px}\n"
    "svg .lane.inner{fill:#fbfbfb}svg .lanelabel.inner{fill:#666;font-size:11px}\n"
    "svg .bar{stroke:none}svg .bar.stolen{stroke:#111;stroke-width:1.2}\n"
    "svg .bar.merged{opacity:.85}svg .seg.cin{fill:#2f6f3f}svg .seg.cout{fill:#b5651d}\n"
    "svg .roundline{stroke:#444;stroke-width:1;stroke-dasharray:3 3}"
    "svg .roundlabel{fill:#444;font-size:10px}\n";

/* The summary table: one row per run. */
static void summary(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    hf__sb_printf(b, "<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\"><thead><tr>"
                     "<th>scheduler</th><th>app</th><th>engine</th><th>devices</th>"
                     "<th>rounds</th><th>final makespan (s)</th><th>bound (s)</th>"
                     "<th>ideal (s)</th><th>efficiency</th><th>rounds to converge</th>"
                     "<th>chunks stolen</th><th>outliers</th><th>wall (s)</th></tr></thead>"
                     "<tbody>\n");
    for (int i = 0; i < doc->nruns; i++) {
        const struct hf__rp_run *r = &doc->runs[i];
        const struct hf__rp_round *last = r->nrounds ? &r->rd[r->nrounds - 1] : NULL;
        hf__sb_printf(b, "<tr class=\"run\"><td>");
        hf__sb_esc(b, r->sched);
        hf__sb_printf(b, "</td><td>");
        hf__sb_esc(b, r->app);
        hf__sb_printf(b, "</td><td class=\"eng\">");
        hf__sb_esc(b, r->engine);
        hf__report_sim_badge(b, r);
        hf__sb_printf(b, "</td><td class=\"devs\">");
        for (int d = 0; d < r->ndev; d++) {
            hf__sb_printf(b, "%s", d ? ", " : "");
            hf__sb_esc(b, r->dev[d].name);
            if (r->dev[d].shares_gpu > 1)
                hf__sb_printf(b, " <span class=\"gshare\" title=\"one GPU serving as %d "
                                 "devices\">SHARED GPU</span>", r->dev[d].shares_gpu);
            int n = 0; /* a node's own devices, in brackets after it */
            for (int k = r->ndev; k < r->ndev + r->ninner; k++)
                if (r->dev[k].node == d) {
                    hf__sb_printf(b, "%s", n++ ? ", " : " [");
                    hf__sb_esc(b, r->dev[k].name);
                }
            hf__sb_printf(b, "%s", n ? "]" : "");
        }
        hf__sb_printf(b, "</td><td class=\"n\">%d</td><td class=\"n\">", r->nrounds);
        num(b, "%.4g", last ? last->makespan : NAN);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.4g", last ? last->bound : NAN);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.4g", last ? last->ideal : NAN);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.3f", last ? last->eff : NAN);
        int c = converge_round(r);
        if (c >= 0)
            hf__sb_printf(b, "</td><td class=\"n conv\">%d", c);
        else
            hf__sb_printf(b, "</td><td class=\"n conv\">-");
        double outliers = 0;
        for (int k = 0; k < r->nrounds; k++)
            outliers += r->rd[k].outliers;
        hf__sb_printf(b, "</td><td class=\"n stolen\">%.0f</td><td class=\"n outliers\">%.0f"
                         "</td><td class=\"n\">", chunks_stolen(r), outliers);
        num(b, "%.3g", r->wall_s);
        hf__sb_printf(b, "</td></tr>\n");
    }
    hf__sb_printf(b, "</tbody></table>\n<p class=\"note\">Final makespan, bound, ideal and "
                     "efficiency (bound / makespan, at most 1) are those of the last round. Bound: "
                     "the best makespan any split could reach under the devices' fitted "
                     "T(w) = latency + w / rate; ideal: work / sum of standalone rates (older, "
                     "not a bound). Outliers: bundles far slower than their device's model "
                     "(red ticks on the Gantt bars). Rounds to converge: the "
                     "round from which the scheduler's planned shares stay within 1%% of the "
                     "previous round's (\"-\": never, or a policy without a plan).</p>\n");
}

/* A run's mean makespan from round 2 (its last round's when it has none) and
 * its mean efficiency there (NaN when none). */
static double mean_from_round2(const struct hf__rp_run *r, double *eff)
{
    double ms = 0.0, ef = 0.0;
    int n = 0;
    for (int k = 0; k < r->nrounds; k++)
        if (r->rd[k].round >= 2) {
            ms += r->rd[k].makespan;
            ef += r->rd[k].eff;
            n++;
        }
    *eff = n ? ef / n : NAN;
    return n ? ms / n : r->nrounds ? r->rd[r->nrounds - 1].makespan : NAN;
}

/* Runs of [compare] passes: one row per scheduler and engine over its
 * passes, as the command's table sums them up (hf_pass_groups). */
static void passes_summary(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    int any = 0, nr = doc->nruns;
    for (int i = 0; i < nr; i++)
        any |= doc->runs[i].pass > 0;
    struct hf_pass_run *pr = any ? calloc((size_t)nr, sizeof *pr) : NULL;
    struct hf_pass_group *g = any ? calloc((size_t)nr, sizeof *g) : NULL;
    if (!pr || !g) {
        free(pr);
        free(g);
        return;
    }
    for (int i = 0; i < nr; i++) {
        pr[i].name = doc->runs[i].name;
        pr[i].engine = doc->runs[i].engine;
        pr[i].mean = mean_from_round2(&doc->runs[i], &pr[i].eff);
    }
    int ng = hf_pass_groups(pr, nr, g);
    hf__sb_printf(b, "<h2 id=\"passes\">Over the passes</h2>\n<table class=\"summary passes\">"
                     "<thead><tr><th>scheduler</th><th>engine</th><th>passes</th>"
                     "<th>mean makespan from round 2 (s)</th><th>least</th><th>most</th>"
                     "<th>efficiency from round 2</th></tr></thead><tbody>\n");
    for (int k = 0; k < ng; k++) {
        const struct hf__rp_run *r = &doc->runs[g[k].first];
        hf__sb_printf(b, "<tr class=\"pass\"><td>");
        hf__sb_esc(b, r->name);
        hf__sb_printf(b, "</td><td class=\"eng\">");
        hf__sb_esc(b, r->engine);
        hf__report_sim_badge(b, r);
        hf__sb_printf(b, "</td><td class=\"n\">%d</td><td class=\"n\">", g[k].n);
        num(b, "%.4g", g[k].mean);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.4g", g[k].least);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.4g", g[k].most);
        hf__sb_printf(b, "</td><td class=\"n\">");
        num(b, "%.3f", g[k].eff);
        hf__sb_printf(b, "</td></tr>\n");
    }
    free(pr);
    free(g);
    hf__sb_printf(b, "</tbody></table>\n<p class=\"note\">[compare] passes ran the list in "
                     "varied orders (each scheduler in every place, after every other); where "
                     "the least and the most of a scheduler's passes span more than the gap "
                     "between two schedulers, their order in one pass is luck.</p>\n");
}

/* Each device's share of the work per round, one chart per run (Fig. 3.7);
 * the devices inside a node (a run across nodes) dashed, in shares of the
 * whole round, so that a node's line is the sum of its devices' lines. */
static int shares(struct hf__sb *b, const struct hf__rp_run *r, int ri)
{
    int nd = r->ndev + r->ninner;
    double *x = malloc(((size_t)r->nrounds + 1) * sizeof *x);
    double *y = malloc(((size_t)r->nrounds + 1) * (size_t)nd * sizeof *y);
    struct hf__svg_series *s = calloc((size_t)nd, sizeof *s);
    if (!x || !y || !s) {
        free(x);
        free(y);
        free(s);
        return hf_fail(HF_ENOMEM, "out of memory drawing shares");
    }
    for (int d = 0; d < nd; d++) {
        for (int i = 0; i < r->nrounds; i++) {
            x[i] = r->rd[i].round;
            y[(size_t)d * r->nrounds + i] = r->rd[i].share[d] * 100;
        }
        s[d] = (struct hf__svg_series){r->dev[d].name, hf__svg_color(d), d >= r->ndev,
                                       r->nrounds, x, y + (size_t)d * r->nrounds};
    }
    char title[160];
    snprintf(title, sizeof title, "%s (%s%s): share of the work per round", r->sched, r->engine,
             r->sim ? ", SIMULATED" : "");
    struct hf__svg_plot p = {.cls = "shares", .title = title, .xlabel = "round",
                             .ylabel = "share of the work (%)", .yfmt = "%g", .width = 640,
                             .height = 300, .ymin = 0, .ymax = 100, .integers_x = 1};
    (void)ri;
    hf__svg_lines(b, &p, s, nd);
    free(x);
    free(y);
    free(s);
    return 0;
}

/* Makespan against the ideal, and efficiency, per round: one pair of charts
 * per engine, since simulated and measured seconds must not share an axis. */
static int makespans(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    for (int i = 0; i < doc->nruns; i++) {
        const char *eng = doc->runs[i].engine;
        int first = 1, n = 0, sim = 0;
        for (int k = 0; k < doc->nruns; k++)
            if (strcmp(doc->runs[k].engine, eng) == 0) {
                first &= k >= i;
                n++;
                sim |= doc->runs[k].sim;
            }
        if (!first)
            continue; /* this engine's charts are drawn already */
        struct hf__svg_series *ms = calloc((size_t)n * 2 + 1, sizeof *ms);
        struct hf__svg_series *es = calloc((size_t)n, sizeof *es);
        double **bufs = calloc((size_t)n, sizeof *bufs);
        int ok = ms && es && bufs, j = 0;
        for (int k = i; k < doc->nruns && ok; k++) {
            const struct hf__rp_run *r = &doc->runs[k];
            if (strcmp(r->engine, eng) != 0)
                continue;
            double *v = bufs[j] = malloc(((size_t)r->nrounds + 1) * 4 * sizeof *v);
            if (!v) {
                ok = 0;
                break;
            }
            double *x = v, *m = v + r->nrounds, *id = m + r->nrounds, *ef = id + r->nrounds;
            for (int q = 0; q < r->nrounds; q++) {
                x[q] = r->rd[q].round;
                m[q] = r->rd[q].makespan;
                id[q] = isnan(r->rd[q].bound) ? r->rd[q].ideal : r->rd[q].bound;
                ef[q] = r->rd[q].eff;
            }
            const char *c = hf__svg_color(j);
            ms[2 * j] = (struct hf__svg_series){r->sched, c, 0, r->nrounds, x, m};
            ms[2 * j + 1] = (struct hf__svg_series){NULL, c, 1, r->nrounds, x, id};
            es[j] = (struct hf__svg_series){r->sched, c, 0, r->nrounds, x, ef};
            j++;
        }
        if (ok) {
            /* A legend-only entry explains the dashed lines once. */
            static const double none = NAN;
            ms[2 * n] = (struct hf__svg_series){"bound (dashed, same colour)", "#777", 1, 1,
                                                &none, &none};
            char t1[160], t2[160];
            snprintf(t1, sizeof t1, "Makespan per round vs bound: engine %s%s", eng,
                     sim ? " (SIMULATED)" : "");
            snprintf(t2, sizeof t2, "Efficiency (bound / makespan) per round: engine %s%s", eng,
                     sim ? " (SIMULATED)" : "");
            double emax = 1;
            for (int q = 0; q < n; q++)
                for (int z = 0; z < es[q].n; z++)
                    if (isfinite(es[q].y[z]) && es[q].y[z] > emax)
                        emax = es[q].y[z];
            struct hf__svg_plot pm = {.cls = "makespan", .title = t1, .xlabel = "round",
                                      .ylabel = sim ? "virtual seconds" : "seconds",
                                      .yfmt = "%g", .width = 640, .height = 320, .ymin = 0,
                                      .ymax = NAN, .integers_x = 1};
            struct hf__svg_plot pe = {.cls = "efficiency", .title = t2, .xlabel = "round",
                                      .ylabel = "efficiency", .yfmt = "%.1f", .width = 640,
                                      .height = 320, .ymin = 0, .ymax = emax, .integers_x = 1};
            hf__sb_printf(b, "<div class=\"charts\">\n");
            hf__svg_lines(b, &pm, ms, 2 * n + 1);
            hf__svg_lines(b, &pe, es, n);
            hf__sb_printf(b, "</div>\n");
        }
        for (int q = 0; bufs && q < n; q++)
            free(bufs[q]);
        free(bufs);
        free(ms);
        free(es);
        if (!ok)
            return hf_fail(HF_ENOMEM, "out of memory drawing makespans");
    }
    return 0;
}

/* A machine field as text, or "unknown". */
static void machine_field(struct hf__sb *b, const cJSON *m, const char *key)
{
    const cJSON *it = m ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
    if (cJSON_IsString(it))
        hf__sb_esc(b, it->valuestring);
    else if (cJSON_IsNumber(it))
        hf__sb_printf(b, "%g", it->valuedouble);
    else
        hf__sb_printf(b, "unknown");
}

/* The machine the numbers came from, and the config (its text when readable:
 * as given, else next to the results file, since paths in results.json are
 * relative to wherever hetfarm ran). */
static void machine(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    const cJSON *m = doc->machine;
    hf__sb_printf(b, "<h2 id=\"machine\">Machine and config</h2>\n<table class=\"machine\">"
                     "<tr><th>host</th><td>");
    machine_field(b, m, "host");
    hf__sb_printf(b, "</td></tr><tr><th>CPU</th><td>");
    machine_field(b, m, "cpu_model");
    hf__sb_printf(b, ", ");
    machine_field(b, m, "cores");
    hf__sb_printf(b, " cores, ");
    machine_field(b, m, "numa_nodes");
    hf__sb_printf(b, " NUMA node(s)</td></tr><tr><th>BLAS</th><td>");
    machine_field(b, m, "blas");
    hf__sb_printf(b, "</td></tr><tr><th>GPUs</th><td>");
    const cJSON *gpus = m ? cJSON_GetObjectItemCaseSensitive(m, "gpus") : NULL, *g;
    int ng = 0;
    if (!cJSON_IsArray(gpus))
        gpus = NULL;
    cJSON_ArrayForEach(g, gpus)
    {
        hf__sb_printf(b, "%s", ng++ ? "<br>" : "");
        machine_field(b, g, "ordinal");
        hf__sb_printf(b, ": ");
        machine_field(b, g, "name");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(g, "memory_bytes");
        if (cJSON_IsNumber(mem))
            hf__sb_printf(b, ", %.1f GiB", mem->valuedouble / (1024.0 * 1024 * 1024));
        hf__sb_printf(b, ", PCI ");
        machine_field(b, g, "pci_bus_id");
    }
    if (!ng && cJSON_IsString(m ? cJSON_GetObjectItemCaseSensitive(m, "gpus") : NULL))
        machine_field(b, m, "gpus");
    else if (!ng)
        hf__sb_printf(b, "none");
    else if (m && cJSON_GetObjectItemCaseSensitive(m, "gpu_driver")) {
        hf__sb_printf(b, "<br>driver ");
        machine_field(b, m, "gpu_driver");
    }
    hf__sb_printf(b, "</td></tr><tr><th>hetfarm</th><td>");
    hf__sb_esc(b, doc->version);
    hf__sb_printf(b, "</td></tr><tr><th>results</th><td>");
    hf__sb_esc(b, doc->file);
    hf__sb_printf(b, "</td></tr><tr><th>config</th><td>");
    hf__sb_esc(b, doc->config ? doc->config : "(none recorded)");
    hf__sb_printf(b, "</td></tr></table>\n");
    if (!doc->config)
        return;
    size_t len = 0;
    char *text = hf__report_slurp(doc->config, HF__REPORT_MAX_CONFIG, &len);
    if (!text && doc->config[0] != '/' && strrchr(doc->file, '/')) {
        char alt[4096];
        int dl = (int)(strrchr(doc->file, '/') - doc->file);
        if (snprintf(alt, sizeof alt, "%.*s/%s", dl, doc->file, doc->config) < (int)sizeof alt)
            text = hf__report_slurp(alt, HF__REPORT_MAX_CONFIG, &len);
    }
    if (!text) {
        hf__sb_printf(b, "<p class=\"note\">The config file could not be read here; only its "
                         "path is shown.</p>\n");
        return;
    }
    hf__sb_printf(b, "<pre class=\"config\">");
    hf__sb_esc(b, text);
    hf__sb_printf(b, "%s</pre>\n", len >= HF__REPORT_MAX_CONFIG ? "\n[... cut]" : "");
    free(text);
}

/* The latest bundle end over the runs of engine `eng` (virtual and measured
 * seconds never share an axis). */
static double engine_span(const struct hf__rp_doc *doc, const char *eng)
{
    double t = 0;
    for (int i = 0; i < doc->nruns; i++)
        if (strcmp(doc->runs[i].engine, eng) == 0)
            for (size_t k = 0; k < doc->runs[i].nev; k++)
                t = doc->runs[i].ev[k].end > t ? doc->runs[i].ev[k].end : t;
    return t;
}

/* The whole page into `b`. */
static int render(struct hf__sb *b, const struct hf__rp_doc *doc)
{
    int anysim = 0, anyfault = 0, anyshared = 0, rc = 0;
    for (int i = 0; i < doc->nruns; i++) {
        anysim |= doc->runs[i].sim;
        anyfault |= doc->runs[i].fault[0] != '\0';
        for (int d = 0; d < doc->runs[i].ndev; d++)
            anyshared |= doc->runs[i].dev[d].shares_gpu > 1;
    }
    /* The Content-Security-Policy makes the browser refuse (and log) any
     * fetch, so an accidental external reference fails the browser test
     * instead of silently working online and breaking offline. */
    hf__sb_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" "
                     "content=\"width=device-width\">\n<title>hetfarm report: ");
    hf__sb_esc(b, doc->file);
    hf__sb_printf(b, "</title>\n<style>\n%s</style></head><body>\n<h1>hetfarm report</h1>\n"
                     "<p class=\"sub\">", page_css);
    hf__sb_esc(b, doc->file);
    hf__sb_printf(b, " &middot; %d run(s)", doc->nruns);
    if (doc->config) {
        hf__sb_printf(b, " &middot; config ");
        hf__sb_esc(b, doc->config);
    }
    hf__sb_printf(b, "</p>\n");
    if (anysim)
        hf__sb_printf(b, "<p class=\"banner simb\"><span class=\"sim\">SIMULATED</span> Runs "
                         "marked SIMULATED ran on the sim engine: their seconds are virtual, "
                         "from the device models, not measurements on this machine.</p>\n");
    if (anyshared)
        hf__sb_printf(b, "<p class=\"banner gshareb\"><span class=\"gshare\">SHARED GPU</span> "
                         "Devices marked SHARED GPU are one GPU serving as several devices "
                         "([devices] cuda repeats an ordinal): a correctness mode; their seconds "
                         "are not several GPUs'.</p>\n");
    if (anyfault)
        hf__sb_printf(b, "<p class=\"banner fault\">Some runs recorded a device fault; see "
                         "their Gantt charts.</p>\n");
    if (doc->failed) { /* results.partial.json: only the rounds that finished */
        hf__sb_printf(b, "<p class=\"banner fault failed\">The run failed; these are the "
                         "rounds that finished. ");
        hf__sb_esc(b, doc->failed);
        hf__sb_printf(b, "</p>\n");
    }
    summary(b, doc);
    passes_summary(b, doc);
    hf__sb_printf(b, "<h2 id=\"makespan\">Makespan and efficiency per round</h2>\n");
    if ((rc = makespans(b, doc)) != 0)
        return rc;
    hf__sb_printf(b, "<h2 id=\"shares\">Share of the work per device and round</h2>\n"
                     "<div class=\"charts\">\n");
    for (int i = 0; i < doc->nruns && !rc; i++)
        rc = shares(b, &doc->runs[i], i);
    hf__sb_printf(b, "</div>\n");
    device_sets(b, doc);
    hf__sb_printf(b, "<h2 id=\"gantt\">Schedules</h2>\n<p class=\"note\">One lane per "
                     "device, one bar per bundle; hover a bar for its chunks and times. Runs of "
                     "the same engine share a time axis.</p>\n");
    for (int i = 0; i < doc->nruns && !rc; i++)
        rc = hf__report_gantt(b, &doc->runs[i], i, engine_span(doc, doc->runs[i].engine));
    if (rc)
        return rc;
    machine(b, doc);
    hf__sb_printf(b, "</body></html>\n");
    return 0;
}

int hf__report_render(const struct hf__rp_doc *doc, char **html, size_t *len)
{
    struct hf__sb b = {0};
    int rc = render(&b, doc);
    if (!rc && b.oom)
        rc = hf_fail(HF_ENOMEM, "out of memory drawing the report of %s", doc->file);
    if (rc) {
        hf__sb_free(&b);
        return rc;
    }
    *html = b.p;
    *len = b.len;
    return 0;
}

int hf_report_write(const char *results_json_path, const char *html_path)
{
    HF_ASSERT_MSG(results_json_path && html_path, "hf_report_write: NULL path");
    /* `-o results.json` by mistake would replace the data with its picture. */
    if (strcmp(results_json_path, html_path) == 0)
        return hf_fail(HF_EINVAL, "%s: the report would overwrite the results it is drawn from",
                       html_path);
    struct hf__rp_doc doc;
    int rc = hf__report_load(results_json_path, &doc);
    struct hf__sb b = {0};
    /* The whole page is built in memory first: a failure halfway leaves no
     * half page behind, and the write itself is atomic. */
    if (!rc)
        rc = render(&b, &doc);
    if (!rc && b.oom)
        rc = hf_fail(HF_ENOMEM, "out of memory writing report %s", html_path);
    if (!rc)
        rc = hf__write_atomic(html_path, b.p, b.len, "report");
    hf__sb_free(&b);
    hf__report_free(&doc);
    return rc;
}

int hf_report_default_path(const char *results_json_path, char *buf, size_t size)
{
    HF_ASSERT_MSG(results_json_path && buf, "hf_report_default_path: NULL argument");
    const char *slash = strrchr(results_json_path, '/');
    int dl = slash ? (int)(slash - results_json_path) + 1 : 0;
    int n = snprintf(buf, size, "%.*sreport.html", dl, results_json_path);
    if (n < 0 || (size_t)n >= size)
        return hf_fail(HF_EINVAL, "%s: path too long for the report next to it",
                       results_json_path);
    return 0;
}
