/*
 * The HTML page of `recommend --output html` (rechtml.h): a chart per group drawn as inline
 * SVG and the figures under it, from the results cmd_recommend.c computed. Nothing here
 * chooses or simulates; the frontier is recommend.h's.
 *
 * Why inline SVG with no script: the page is an artefact an SRE attaches to a change request
 * or opens from a laptop, so it must show the same thing without network and without a
 * JavaScript charting library (whose version would then be ours to track). Each point's
 * figures are in its data-* attributes, in --output json's number formats, and in a <title>
 * that the browser shows on hover: the chart can be read without a script and checked by a
 * test that reads the DOM (tests/e2e/recommend.sh).
 */
#include "rechtml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"

/* The chart's size in SVG user units and its plot area's margins. */
#define W  760.0
#define H  340.0
#define ML 64.0
#define MR 20.0
#define MT 36.0
#define MB 48.0

void rechtml_escape(struct sbuf *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&':
            sbuf_puts(out, "&amp;");
            break;
        case '<':
            sbuf_puts(out, "&lt;");
            break;
        case '>':
            sbuf_puts(out, "&gt;");
            break;
        case '"':
            sbuf_puts(out, "&quot;");
            break;
        case '\'':
            sbuf_puts(out, "&#39;");
            break;
        default:
            /* C0 controls other than tab and newline are not allowed in HTML text (a parse
               error, shown differently by each browser): the replacement character says a
               byte was there. */
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                sbuf_puts(out, "&#xFFFD;");
            else
                sbuf_putc(out, (char)c);
        }
    }
}

static const char *dur(char *buf, double s)
{
    return dur_format(buf, DUR_LEN, s);
}

static void pct(struct sbuf *b, double share)
{
    if (isnan(share))
        sbuf_putc(b, '-');
    else
        sbuf_printf(b, "%.0f%%", share * 100);
}

/* "2% 2h notice 0s", as the table output writes a setting. */
static void setting(struct sbuf *b, const struct rec_point *p)
{
    char d1[DUR_LEN], d2[DUR_LEN];
    sbuf_printf(b, "%g%% %s notice %s", p->threshold, dur(d1, p->idle_timer), dur(d2, p->notice));
}

/* The point's figures as data-* attributes, in --output json's formats. */
static void data_attrs(struct sbuf *b, const struct rec_point *p)
{
    char d[DUR_LEN];
    double s = rec_share(p);
    sbuf_printf(b, " data-threshold=\"%.15g\" data-idle-timer=\"%s\"", p->threshold,
                dur(d, p->idle_timer));
    sbuf_printf(b, " data-notice-period=\"%s\"", dur(d, p->notice));
    sbuf_printf(b, " data-gpu-hours-freed=\"%.6f\" data-reclaims=\"%zu\"", p->gpu_seconds / 3600,
                p->reclaims);
    sbuf_printf(b, " data-returns-within=\"%zu\"", p->returns_within);
    if (isnan(s))
        sbuf_printf(b, " data-return-share=\"\"");
    else
        sbuf_printf(b, " data-return-share=\"%.6f\"", s);
}

/* A point's <title>: what hovering it shows. */
static void point_title(struct sbuf *b, const char *what, const struct rec_point *p)
{
    struct sbuf t = {0};
    if (what)
        sbuf_printf(&t, "%s: ", what);
    setting(&t, p);
    sbuf_printf(&t, ": %zu reclaims, %.2f GPU-hours freed, %zu returns (", p->reclaims,
                p->gpu_seconds / 3600, p->returns_within);
    pct(&t, rec_share(p));
    sbuf_putc(&t, ')');
    sbuf_puts(b, "<title>");
    rechtml_escape(b, t.buf);
    sbuf_puts(b, "</title>");
    sbuf_free(&t);
}

/* The smallest 1, 2 or 5 x 10^k at or above x (x > 0). */
static double nice_up(double x)
{
    double e = pow(10, floor(log10(x)));
    for (int i = 0; i < 4; i++) {
        static const double m[] = {1, 2, 5, 10};
        if (m[i] * e >= x * (1 - 1e-12))
            return m[i] * e;
    }
    return 10 * e;
}

struct axes {
    double xmax, ymax;
};

static double px(const struct axes *a, double share)
{
    return ML + (isnan(share) ? 0 : share) / a->xmax * (W - ML - MR);
}

static double py(const struct axes *a, double hours)
{
    return H - MB - hours / a->ymax * (H - MT - MB);
}

/* The scales: the share up to past the target and every point, the GPU-hours up to the most. */
static struct axes scales(const struct rechtml_page *pg, const struct rechtml_group *g)
{
    double smax = pg->max_share * 1.5, hmax = g->cur->gpu_seconds / 3600;
    for (size_t k = 0; k <= pg->npts; k++) {
        const struct rec_point *p = k < pg->npts ? &g->pts[k] : g->cur;
        double s = rec_share(p);
        if (!isnan(s) && s > smax)
            smax = s;
        if (p->gpu_seconds / 3600 > hmax)
            hmax = p->gpu_seconds / 3600;
    }
    struct axes a = {.xmax = fmin(1, ceil(fmax(smax, 0.01) * 10 - 1e-9) / 10),
                     .ymax = hmax > 0 ? nice_up(hmax * 1.05) : 1};
    if (a.xmax <= 0)
        a.xmax = 0.1;
    return a;
}

static void chart(struct sbuf *b, const struct rechtml_page *pg, const struct rechtml_group *g)
{
    struct axes a = scales(pg, g);
    bool *on = xcalloc(pg->npts ? pg->npts : 1, sizeof(bool));
    rec_frontier(g->pts, pg->npts, on);
    sbuf_printf(b,
                "<svg class=\"rec-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
                "%.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" data-value=\"",
                W, H, W, H);
    rechtml_escape(b, g->value);
    sbuf_puts(b, "\" data-rule=\"");
    rechtml_escape(b, g->rule);
    sbuf_puts(b, "\"><title>");
    rechtml_escape(b, pg->by);
    sbuf_putc(b, '=');
    rechtml_escape(b, g->value);
    sbuf_puts(b, ": GPU-hours freed against the share of reclaims returned</title>\n");
    /* axes, grid and ticks */
    double x0 = ML, x1 = W - MR, y0 = H - MB, y1 = MT;
    double xstep = a.xmax <= 0.3 ? 0.05 : a.xmax <= 0.6 ? 0.1 : 0.2;
    for (double s = 0; s <= a.xmax + 1e-9; s += xstep) {
        double x = px(&a, s);
        sbuf_printf(b,
                    "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f%%"
                    "</text>\n",
                    x, y0, x, y1, x, y0 + 16, s * 100);
    }
    for (int i = 0; i <= 5; i++) {
        double h = a.ymax * i / 5, y = py(&a, h);
        sbuf_printf(b,
                    "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                    x0, y, x1, y, x0 - 6, y + 4, h);
    }
    sbuf_printf(b,
                "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                x0, y0, x1, y0, x0, y0, x0, y1);
    char d[DUR_LEN];
    sbuf_printf(b,
                "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">share of "
                "reclaims back within %s</text>\n",
                (x0 + x1) / 2, H - 10, dur(d, pg->return_within));
    sbuf_printf(b,
                "<text class=\"label\" transform=\"translate(16 %.1f) rotate(-90)\" "
                "text-anchor=\"middle\">GPU-hours freed</text>\n",
                (y0 + y1) / 2);
    /* the target */
    double tx = px(&a, fmin(pg->max_share, a.xmax));
    sbuf_printf(b,
                "<line class=\"target\" data-share=\"%.6f\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\"><title>target: at most ",
                pg->max_share, tx, y0, tx, y1 - 4);
    pct(b, pg->max_share);
    sbuf_printf(b,
                " returned</title></line><text class=\"target-label\" x=\"%.1f\" y=\"%.1f\">"
                "target ",
                tx + 4, y1 + 8);
    pct(b, pg->max_share);
    sbuf_puts(b, "</text>\n");
    /* the frontier, joined from the gentlest share up */
    size_t *ord = xcalloc(pg->npts ? pg->npts : 1, sizeof(size_t));
    size_t nf = 0;
    for (size_t k = 0; k < pg->npts; k++) {
        if (!on[k])
            continue;
        size_t j = nf++;
        for (; j > 0 && g->pts[ord[j - 1]].gpu_seconds > g->pts[k].gpu_seconds; j--)
            ord[j] = ord[j - 1];
        ord[j] = k;
    }
    if (nf > 1) {
        sbuf_puts(b, "<polyline class=\"frontier\" points=\"");
        for (size_t j = 0; j < nf; j++) {
            const struct rec_point *p = &g->pts[ord[j]];
            sbuf_printf(b, "%s%.1f,%.1f", j ? " " : "", px(&a, rec_share(p)),
                        py(&a, p->gpu_seconds / 3600));
        }
        sbuf_puts(b, "\"/>\n");
    }
    free(ord);
    /* every grid point; a point without reclaims has no share: drawn hollow at 0 */
    for (size_t k = 0; k < pg->npts; k++) {
        const struct rec_point *p = &g->pts[k];
        sbuf_printf(b, "<circle class=\"point%s%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"",
                    on[k] ? " on-frontier" : "", p->reclaims ? "" : " no-reclaims",
                    px(&a, rec_share(p)), py(&a, p->gpu_seconds / 3600));
        data_attrs(b, p);
        sbuf_puts(b, ">");
        point_title(b, on[k] ? "on the frontier" : NULL, p);
        sbuf_puts(b, "</circle>\n");
    }
    /* the current setting: a square; the recommended one: a ring around its point */
    const struct rec_point *c = g->cur;
    double cx = px(&a, rec_share(c)), cy = py(&a, c->gpu_seconds / 3600);
    sbuf_printf(b,
                "<rect class=\"current\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
                "transform=\"rotate(45 %.1f %.1f)\"",
                cx - 6, cy - 6, cx, cy);
    data_attrs(b, c);
    sbuf_puts(b, ">");
    point_title(b, "current (the rules file)", c);
    sbuf_puts(b, "</rect>\n");
    if (g->chosen >= 0) {
        const struct rec_point *p = &g->pts[g->chosen];
        sbuf_printf(b, "<circle class=\"recommended\" cx=\"%.1f\" cy=\"%.1f\" r=\"9\"",
                    px(&a, rec_share(p)), py(&a, p->gpu_seconds / 3600));
        data_attrs(b, p);
        sbuf_puts(b, ">");
        point_title(b, "recommended", p);
        sbuf_puts(b, "</circle>\n");
    }
    /* the legend, in the top margin: inside the plot it would hide points */
    double ly = 16;
    sbuf_printf(b,
                "<g class=\"legend\">"
                "<circle class=\"point on-frontier\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">grid setting (on the frontier: joined)</text>"
                "<rect class=\"current\" x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
                "transform=\"rotate(45 %.1f %.1f)\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">current (the rules file)</text>"
                "<circle class=\"recommended\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">recommended</text></g>\n",
                x0 + 6, ly, x0 + 16, ly + 4, x0 + 260 - 4.5, ly - 4.5, x0 + 260, ly, x0 + 272,
                ly + 4, x0 + 446, ly, x0 + 458, ly + 4);
    sbuf_puts(b, "</svg>\n");
    free(on);
}

/* One row of the figures table. */
static void fig_row(struct sbuf *b, const char *cls, const char *what, const struct rec_point *p,
                    bool settings, const char *extra)
{
    char d[DUR_LEN];
    double lo, hi;
    rec_wilson(p->returns_within, p->reclaims, &lo, &hi);
    sbuf_printf(b, "<tr class=\"%s\"><th>%s</th><td>", cls, what);
    if (settings)
        setting(b, p);
    sbuf_printf(b,
                "</td><td class=\"n\">%zu</td><td class=\"n\">%.2f</td><td class=\"n\">%zu</td>"
                "<td class=\"n\">",
                p->reclaims, p->gpu_seconds / 3600, p->returns_within);
    pct(b, rec_share(p));
    sbuf_puts(b, "</td><td class=\"n\">");
    if (isnan(lo))
        sbuf_putc(b, '-');
    else
        sbuf_printf(b, "%.0f-%.0f%%", lo * 100, hi * 100);
    sbuf_printf(b, "</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
                isnan(p->median_return) ? "-" : dur(d, round(p->median_return)), extra);
}

static bool same(const struct rec_point *a, const struct rec_point *b)
{
    return a->reclaims == b->reclaims && fabs(a->gpu_seconds - b->gpu_seconds) <= 1e-6 &&
           a->returns_within == b->returns_within;
}

static void group(struct sbuf *b, const struct rechtml_page *pg, const struct rechtml_group *g,
                  size_t i)
{
    char d[DUR_LEN];
    sbuf_printf(b, "<section class=\"group\" id=\"group-%zu\" data-rule=\"", i + 1);
    rechtml_escape(b, g->rule);
    sbuf_puts(b, "\" data-value=\"");
    rechtml_escape(b, g->value);
    sbuf_puts(b, "\" data-name=\"");
    rechtml_escape(b, g->name);
    sbuf_puts(b, "\">\n<h2>");
    rechtml_escape(b, g->rule);
    sbuf_puts(b, " <span class=\"by\">");
    rechtml_escape(b, pg->by);
    sbuf_putc(b, '=');
    rechtml_escape(b, g->value);
    sbuf_printf(b, "</span> <small>(%zu workloads)</small></h2>\n<p class=\"verdict\">",
                g->workloads);
    setting(b, g->cur);
    sbuf_puts(b, " &rarr; ");
    if (g->chosen >= 0) {
        sbuf_puts(b, "<strong>");
        setting(b, &g->pts[g->chosen]);
        sbuf_puts(b, "</strong>");
    } else {
        sbuf_puts(b, "<strong>(none)</strong>: <span class=\"reason\">");
        rechtml_escape(b, g->reason);
        sbuf_puts(b, "</span>");
    }
    sbuf_puts(b, "</p>\n");
    chart(b, pg, g);
    sbuf_printf(b,
                "<table class=\"figures\">\n<tr><th></th><th>setting</th><th>reclaims</th>"
                "<th>GPU-hours freed</th><th>returns within %s</th><th>share</th>"
                "<th>95%% interval</th><th>median return</th><th></th></tr>\n",
                dur(d, pg->return_within));
    fig_row(b, "current", "current", g->cur, true, "");
    if (g->chosen >= 0) {
        const struct rec_point *p = &g->pts[g->chosen];
        fig_row(b, "recommended", "recommended", p, true, "");
        if (g->conf && !same(g->conf, p))
            fig_row(b, "confirmed", "with others", g->conf, false,
                    "the rules file's backtest: caps shared");
        if (g->held)
            fig_row(b, "held-out", "held out", g->held, false,
                    g->above_target ? "<strong class=\"above\">ABOVE TARGET</strong>: the "
                                      "setting did not generalise"
                                    : "");
    }
    sbuf_puts(b, "</table>\n");
    bool *on = xcalloc(pg->npts ? pg->npts : 1, sizeof(bool));
    size_t *ord = xcalloc(pg->npts ? pg->npts : 1, sizeof(size_t));
    rec_frontier(g->pts, pg->npts, on);
    /* most GPU-hours first, as the table output lists it */
    for (size_t k = 0; k < pg->npts; k++) {
        size_t j = k;
        for (; j > 0 && g->pts[ord[j - 1]].gpu_seconds < g->pts[k].gpu_seconds; j--)
            ord[j] = ord[j - 1];
        ord[j] = k;
    }
    sbuf_printf(b, "<table class=\"frontier\">\n<caption>the frontier: the settings no other "
                   "beats on both GPU-hours and returns</caption>\n<tr><th>share</th>"
                   "<th>reclaims</th><th>GPU-hours freed</th><th>returns within</th>"
                   "<th>setting</th><th></th></tr>\n");
    for (size_t m = 0; m < pg->npts; m++) {
        size_t k = ord[m];
        if (!on[k])
            continue;
        const struct rec_point *p = &g->pts[k];
        bool c = (long)k == g->chosen;
        sbuf_printf(b, "<tr%s><td class=\"n\">", c ? " class=\"recommended\"" : "");
        pct(b, rec_share(p));
        sbuf_printf(b,
                    "</td><td class=\"n\">%zu</td><td class=\"n\">%.2f</td>"
                    "<td class=\"n\">%zu</td><td>",
                    p->reclaims, p->gpu_seconds / 3600, p->returns_within);
        setting(b, p);
        sbuf_printf(b, "</td><td>%s</td></tr>\n", c ? "&larr; recommended" : "");
    }
    sbuf_puts(b, "</table>\n</section>\n");
    free(ord);
    free(on);
}

static const char style[] =
    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:960px}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:32px;border-top:1px solid #ccc;"
    "padding-top:12px}.by{font-family:monospace}"
    "table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 8px;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.recommended{background:#fff3d6}caption{text-align:left;color:#555}"
    ".above{color:#b00}.reason{color:#555}"
    "svg{display:block;max-width:100%;height:auto}"
    ".grid{stroke:#eee}.axis{stroke:#555}.tick{font-size:11px;fill:#555}"
    ".label{font-size:12px;fill:#333}"
    ".target{stroke:#c62828;stroke-dasharray:6 4;stroke-width:1.5}"
    ".target-label{font-size:11px;fill:#c62828}"
    ".frontier{fill:none;stroke:#1565c0;stroke-width:1.5}"
    "circle.point{fill:#9e9e9e;fill-opacity:.7}circle.point.on-frontier{fill:#1565c0}"
    "circle.point.no-reclaims{fill:none;stroke:#9e9e9e}"
    "circle.recommended{fill:none;stroke:#ef6c00;stroke-width:3}"
    "rect.current{fill:#2e7d32;fill-opacity:.85}"
    ".legend text{font-size:11px}";

void rechtml_render(const struct rechtml_page *pg, struct sbuf *b)
{
    char d[DUR_LEN];
    sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 /* nothing from the network, no script: even an escape gone wrong cannot run */
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "style-src 'unsafe-inline'\">\n<title>gpureclaim recommend: ");
    rechtml_escape(b, pg->rules_file);
    sbuf_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>recommend: ", style);
    rechtml_escape(b, pg->rules_file);
    sbuf_puts(b, "</h1>\n<p class=\"range\">Chosen on ");
    rechtml_escape(b, pg->chosen_from);
    sbuf_puts(b, " .. ");
    rechtml_escape(b, pg->chosen_to);
    sbuf_printf(b, ", every %s", dur(d, pg->interval));
    if (pg->held_from) {
        sbuf_puts(b, "; scored on ");
        rechtml_escape(b, pg->held_from);
        sbuf_puts(b, " .. ");
        rechtml_escape(b, pg->held_to);
    }
    sbuf_puts(b, ". Target: at most ");
    pct(b, pg->max_share);
    sbuf_printf(b, " of the reclaims back within %s; %zu grid points per group, ",
                dur(d, pg->return_within), pg->npts);
    sbuf_printf(b, "%zu groups by <span class=\"by\">", pg->ng);
    rechtml_escape(b, pg->by);
    sbuf_puts(b, "</span>. Each chart shows every grid setting (GPU-hours freed against the "
                 "share of its reclaims that came back), the frontier joined, the current "
                 "setting as a diamond and the recommended one ringed.</p>\n");
    for (size_t i = 0; i < pg->ng; i++)
        group(b, pg, &pg->g[i], i);
    if (pg->note) {
        sbuf_puts(b, "<p class=\"note\">");
        rechtml_escape(b, pg->note);
        sbuf_puts(b, "</p>\n");
    }
    sbuf_puts(b, "</body>\n</html>\n");
}
