/*
 * Outputs of `plan` and `explain` (see report.h).
 *
 * The renderers are pure: they read decisions (and, for explain, the activity points the
 * decisions were made from) and append text to a buffer. The explanation recomputes the
 * facts it quotes (how many points were at or above the threshold, where the longest gap
 * was) from the same points decide() saw, so the sentence can be checked against the
 * sparkline printed above it.
 */
#include "report.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dur.h"
#include "expo.h"
#include "rfc3339.h"

/* Longest window drawn in `explain`: 11,001 points is Prometheus' own limit per series. */
#define SPARK_MAX_SLOTS 11001
/*
 * `explain` draws up to SPARK_ONE_ROW points on one line (a 30 m window at 15 s), longer
 * windows in rows of SPARK_ROW so that a 1 h window at 15 s still fits a terminal.
 */
#define SPARK_ONE_ROW 121
#define SPARK_ROW     60

enum slot_state { SLOT_GAP = 0, SLOT_VALUE, SLOT_NAN };

struct slot {
    enum slot_state state;
    double v;
    double t;
};

/* HH:MM:SS in UTC, for points inside a window whose date is printed once above. */
static void format_clock(double t, char *buf, size_t len)
{
    if (!isfinite(t)) {
        snprintf(buf, len, "-");
        return;
    }
    time_t secs = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, len, "%H:%M:%S", &tm);
}

/*
 * Snap points onto the grid anchor + k * step. Two points in one slot keep the larger
 * value (NaN wins), the same conservative merge decide() applies to several series.
 */
static size_t fill_slots(const struct point *p, size_t n, double anchor, double end, double step,
                         struct slot **out)
{
    size_t nslots = 0;
    if (step > 0 && isfinite(anchor) && isfinite(end) && end >= anchor) {
        double k = floor((end - anchor) / step + 1e-9) + 1;
        nslots = k > SPARK_MAX_SLOTS ? SPARK_MAX_SLOTS : (size_t)k;
    }
    struct slot *s = xcalloc(nslots ? nslots : 1, sizeof(*s));
    for (size_t i = 0; i < nslots; i++)
        s[i].t = anchor + (double)i * step;
    for (size_t i = 0; i < n && nslots; i++) {
        double k = round((p[i].t - anchor) / step);
        if (k < 0 || k >= (double)nslots || fabs(p[i].t - (anchor + k * step)) > step / 2)
            continue;
        struct slot *sl = &s[(size_t)k];
        if (!isfinite(p[i].v)) {
            sl->state = SLOT_NAN;
            sl->v = p[i].v;
        } else if (sl->state == SLOT_GAP || (sl->state == SLOT_VALUE && p[i].v > sl->v)) {
            sl->state = SLOT_VALUE;
            sl->v = p[i].v;
        }
    }
    *out = s;
    return nslots;
}

static const char *const spark_levels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

/*
 * `covered` (may be NULL): per slot, whether the raw samples prove the step (decide.c's
 * judgment). With it, "_" marks exactly the steps decide() counts as a gap, so a workload
 * decided idle never shows one; a step without a point that the raw samples still cover
 * (a hole shorter than the tolerated gap) is drawn "·" without a marker. Without it, every
 * step without a point is marked "_".
 */
static void render_slots(const struct slot *s, size_t from, size_t to, double top, double threshold,
                         const bool *covered, struct sbuf *spark, struct sbuf *marker)
{
    for (size_t i = from; i < to; i++) {
        bool gap = covered ? !covered[i] : s[i].state == SLOT_GAP;
        switch (s[i].state) {
        case SLOT_GAP:
            if (spark)
                sbuf_puts(spark, "·");
            if (marker)
                sbuf_putc(marker, gap ? '_' : ' ');
            break;
        case SLOT_NAN:
            if (spark)
                sbuf_puts(spark, "×");
            if (marker)
                sbuf_putc(marker, '!');
            break;
        case SLOT_VALUE: {
            double frac = s[i].v / top;
            int level = frac <= 0 ? 0 : (int)(frac * 8);
            if (level > 7)
                level = 7;
            if (spark)
                sbuf_puts(spark, spark_levels[level]);
            if (marker)
                sbuf_putc(marker, s[i].v * 100 >= threshold ? '^' : gap ? '_' : ' ');
            break;
        }
        }
    }
}

/* Bars are scaled to 100 % unless a value exceeds it (a ratio can pass 1 slightly). */
static double slots_top(const struct slot *s, size_t n)
{
    double top = 1;
    for (size_t i = 0; i < n; i++)
        if (s[i].state == SLOT_VALUE && s[i].v > top)
            top = s[i].v;
    return top;
}

void report_sparkline(const struct point *p, size_t n, double start, double end, double step,
                      double threshold, struct sbuf *spark, struct sbuf *marker)
{
    struct slot *s;
    size_t nslots = fill_slots(p, n, start, end, step, &s);
    render_slots(s, 0, nslots, slots_top(s, nslots), threshold, NULL, spark, marker);
    free(s);
}

/* `namespace="ml",pod="x"`: the identity as `explain --workload` accepts it. */
static char *format_workload(const struct labels *ls)
{
    char *f = labels_format(ls);
    size_t n = strlen(f);
    if (n >= 2 && f[0] == '{' && f[n - 1] == '}') {
        memmove(f, f + 1, n - 2);
        f[n - 2] = '\0';
    }
    return f;
}

static void format_percent(double ratio, char *buf, size_t len)
{
    if (isnan(ratio))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.4g%%", ratio * 100);
}

static void format_number(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    char tmp[40];
    expo_format_value(v, tmp);
    snprintf(buf, len, "%s", tmp);
}

static double idle_for(const struct decision_rec *r)
{
    if (isnan(r->idle_since) || isnan(r->window_end))
        return NAN;
    return r->window_end - r->idle_since;
}

enum {
    COL_RULE,
    COL_WORKLOAD,
    COL_DECISION,
    COL_REASON,
    COL_IDLE,
    COL_ALLOC,
    COL_MAX,
    COL_MEAN,
    NCOLS
};

void report_render_table(const struct decisions *d, struct sbuf *out)
{
    static const char *const heads[NCOLS] = {"RULE",     "WORKLOAD", "DECISION", "REASON",
                                             "IDLE FOR", "ALLOC",    "MAX",      "MEAN"};
    size_t nrows = d->n + 1;
    char **cells = xcalloc(nrows * NCOLS, sizeof(*cells));
    size_t width[NCOLS] = {0};
    for (size_t c = 0; c < NCOLS; c++)
        cells[c] = xstrdup(heads[c]);
    for (size_t i = 0; i < d->n; i++) {
        const struct decision_rec *r = &d->v[i];
        char **row = cells + (i + 1) * NCOLS;
        char b[64];
        row[COL_RULE] = xstrdup(r->rule ? r->rule->name : "-");
        row[COL_WORKLOAD] = format_workload(&r->identity);
        row[COL_DECISION] =
            xasprintf("%s%s", decide_decision_name(r->decision),
                      r->decision == DECISION_RECLAIM && r->dry_run ? " (dry run)" : "");
        row[COL_REASON] = xstrdup(decide_reason_name(r->reason));
        dur_format(b, sizeof(b), idle_for(r));
        row[COL_IDLE] = xstrdup(b);
        format_number(r->allocated, b, sizeof(b));
        row[COL_ALLOC] = xstrdup(b);
        format_percent(r->max, b, sizeof(b));
        row[COL_MAX] = xstrdup(b);
        format_percent(r->mean, b, sizeof(b));
        row[COL_MEAN] = xstrdup(b);
    }
    for (size_t i = 0; i < nrows * NCOLS; i++) {
        size_t w = strlen(cells[i]);
        if (w > width[i % NCOLS])
            width[i % NCOLS] = w;
    }
    for (size_t i = 0; i < nrows; i++) {
        for (size_t c = 0; c < NCOLS; c++) {
            const char *cell = cells[i * NCOLS + c];
            /* Numbers are right-aligned so magnitudes line up. */
            bool right = c >= COL_IDLE;
            if (c == NCOLS - 1 && !right)
                sbuf_puts(out, cell);
            else
                sbuf_printf(out, right ? "%*s" : "%-*s", (int)width[c], cell);
            if (c + 1 < NCOLS)
                sbuf_puts(out, "  ");
        }
        sbuf_putc(out, '\n');
        /* With the Kubernetes API: what the reclaim would do, or why nothing would be. */
        const struct decision_rec *r = i ? &d->v[i - 1] : NULL;
        if (r && (r->target || r->target_kept))
            sbuf_printf(out, "  -> %s\n", r->target ? r->target : r->target_kept);
    }

    size_t reclaim = 0, counts[REASON__COUNT] = {0};
    bool dry = false;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].decision == DECISION_RECLAIM) {
            reclaim++;
            dry |= d->v[i].dry_run;
        } else if ((unsigned)d->v[i].reason < REASON__COUNT) {
            counts[d->v[i].reason]++;
        }
    }
    sbuf_printf(out, "%zu workload%s: %zu reclaim, %zu keep", d->n, d->n == 1 ? "" : "s", reclaim,
                d->n - reclaim);
    const char *sep = " (";
    for (int r = 0; r < REASON__COUNT; r++) {
        if (!counts[r])
            continue;
        sbuf_printf(out, "%s%zu %s", sep, counts[r], decide_reason_name((enum reason)r));
        sep = ", ";
    }
    if (strcmp(sep, ", ") == 0)
        sbuf_putc(out, ')');
    if (dry)
        sbuf_puts(out, "; dry run: reported only");
    sbuf_putc(out, '\n');
    /* What the objects say beyond the data (keep-until, a restart), one line per workload. */
    for (size_t i = 0; i < d->n; i++) {
        if (!d->v[i].note || !d->v[i].note[0])
            continue;
        char *wl = format_workload(&d->v[i].identity);
        sbuf_printf(out, "note: %s, rule '%s': %s\n", wl, d->v[i].rule ? d->v[i].rule->name : "-",
                    d->v[i].note);
        free(wl);
    }

    for (size_t i = 0; i < nrows * NCOLS; i++)
        free(cells[i]);
    free(cells);
}

/* A finite number, or null: JSON has no NaN. */
struct json_object *report_json_number(double v)
{
    if (!isfinite(v))
        return NULL;
    char buf[40];
    expo_format_value(v, buf);
    return json_object_new_double_s(v, buf);
}

struct json_object *report_json_time(double t)
{
    if (!isfinite(t))
        return NULL;
    char buf[48];
    rfc3339_format(buf, sizeof(buf), t, RFC3339_MILLI_FRAC);
    return json_object_new_string(buf);
}

static struct json_object *decision_json(const struct decision_rec *r)
{
    struct json_object *o = json_object_new_object();
    char buf[64];
    json_object_object_add(o, "rule", json_object_new_string(r->rule ? r->rule->name : ""));
    struct json_object *w = json_object_new_object();
    for (size_t i = 0; i < r->identity.n; i++)
        json_object_object_add(w, r->identity.v[i].name,
                               json_object_new_string(r->identity.v[i].value));
    json_object_object_add(o, "workload", w);
    json_object_object_add(o, "decision",
                           json_object_new_string(decide_decision_name(r->decision)));
    json_object_object_add(o, "reason", json_object_new_string(decide_reason_name(r->reason)));
    json_object_object_add(o, "detail", json_object_new_string(r->detail));
    json_object_object_add(o, "idleSince", report_json_time(r->idle_since));
    json_object_object_add(o, "threshold", report_json_number(r->threshold));
    dur_format(buf, sizeof(buf), r->idle_timer);
    json_object_object_add(o, "idleTimer", json_object_new_string(buf));
    struct json_object *win = json_object_new_object();
    json_object_object_add(win, "start", report_json_time(r->window_start));
    json_object_object_add(win, "end", report_json_time(r->window_end));
    json_object_object_add(win, "samples", json_object_new_int64((int64_t)r->samples));
    json_object_object_add(win, "max", report_json_number(r->max));
    json_object_object_add(win, "mean", report_json_number(r->mean));
    json_object_object_add(win, "last", report_json_number(r->last));
    json_object_object_add(o, "window", win);
    json_object_object_add(o, "allocated", report_json_number(r->allocated));
    json_object_object_add(o, "resource",
                           r->resource[0] ? json_object_new_string(r->resource) : NULL);
    json_object_object_add(o, "dryRun", json_object_new_boolean(r->dry_run));
    if (r->target)
        json_object_object_add(o, "target", json_object_new_string(r->target));
    if (r->target_kept)
        json_object_object_add(o, "targetKept", json_object_new_string(r->target_kept));
    if (r->note && r->note[0])
        json_object_object_add(o, "note", json_object_new_string(r->note));
    return o;
}

void report_render_json_line(const struct decision_rec *r, double cycle, struct sbuf *out)
{
    struct json_object *o = decision_json(r);
    json_object_object_add(o, "cycle", report_json_time(cycle));
    sbuf_puts(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    sbuf_putc(out, '\n');
    json_object_put(o);
}

void report_render_json(const struct decisions *d, struct sbuf *out)
{
    /*
     * One object per line, each built and freed on its own: a json-c tree of every decision
     * at once cost about 60 MB for 10,000 workloads.
     */
    sbuf_puts(out, "[");
    for (size_t i = 0; i < d->n; i++) {
        struct json_object *o = decision_json(&d->v[i]);
        sbuf_puts(out, i ? ",\n  " : "\n  ");
        sbuf_puts(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
    }
    sbuf_puts(out, d->n ? "\n]\n" : "]\n");
}

bool report_labels_match(const struct labels *want, const struct labels *have)
{
    for (size_t i = 0; i < want->n; i++) {
        const char *v = labels_get(have, want->v[i].name);
        if (!v || strcmp(v, want->v[i].value) != 0)
            return false;
    }
    return true;
}

static int point_cmp(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/*
 * The workload's activity as decide() judges it: every series of the rule whose identity
 * projection equals the workload's, merged per timestamp the way decide.c does. A value at or
 * above the threshold wins (busy if any part is busy); otherwise a NaN or Inf from any series
 * wins (not a number); otherwise the largest value.
 */
static size_t workload_points(const struct rule_data *rd, const struct decision_rec *r,
                              struct point **out)
{
    struct point *pts = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < rd->activity.n; i++) {
        const struct series *s = &rd->activity.s[i];
        if (!report_labels_match(&r->identity, &s->labels))
            continue;
        for (size_t j = 0; j < s->n; j++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                pts = xrealloc(pts, cap * sizeof(*pts));
            }
            pts[n++] = s->p[j];
        }
    }
    if (n > 1) {
        qsort(pts, n, sizeof(*pts), point_cmp);
        double busy = r->threshold / 100.0;
        size_t w = 0;
        for (size_t i = 0; i < n;) {
            double t = pts[i].t, max = NAN;
            bool nonfinite = false;
            for (; i < n && pts[i].t == t; i++) {
                if (!isfinite(pts[i].v))
                    nonfinite = true;
                else if (isnan(max) || pts[i].v > max)
                    max = pts[i].v;
            }
            pts[w].t = t;
            pts[w].v = !isnan(max) && max >= busy ? max : nonfinite ? NAN : max;
            w++;
        }
        n = w;
    }
    *out = pts;
    return n;
}

/* The coverage series with exactly the labels of `s`, or NULL. */
static const struct series *find_coverage(const struct rule_data *rd, const struct series *s)
{
    for (size_t i = 0; i < rd->coverage.n; i++)
        if (labels_equal(&rd->coverage.s[i].labels, &s->labels))
            return &rd->coverage.s[i];
    return NULL;
}

/* True when `g` has a point within half a step of t, with a value of at least `min` (any
 * value when `min` is NaN). */
static bool has_point(const struct series *g, double t, double step, double min)
{
    size_t lo = 0, hi = g ? g->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->p[mid].t <= t - step / 2)
            lo = mid + 1;
        else
            hi = mid;
    }
    return g && lo < g->n && fabs(g->p[lo].t - t) < step / 2 && (isnan(min) || g->p[lo].v >= min);
}

/*
 * Per slot, whether one series (`only`) or every activity series of the workload proves its
 * step the way decide() judges it: the raw coverage is 1 there (or, for raw samples, covers
 * the part of the step inside the window), or (an expression, without raw coverage) the
 * series has a point there.
 */
static bool *slots_covered(const struct rule_data *rd, const struct decision_rec *r,
                           const struct series *only, const struct slot *sl, size_t nslots,
                           double step)
{
    bool *c = xcalloc(nslots ? nslots : 1, sizeof(*c));
    bool any = false;
    for (size_t i = 0; i < rd->activity.n; i++) {
        const struct series *s = &rd->activity.s[i];
        if (only ? s != only : !report_labels_match(&r->identity, &s->labels))
            continue;
        const struct series *g = rd->raw_coverage ? find_coverage(rd, s) : s;
        double min = rd->raw_coverage ? 1.0 : NAN; /* NaN: any point, even a NaN one */
        for (size_t k = 0; k < nslots; k++) {
            /* Raw coverage of a step that begins before the window start counts from the
               window start on, as decide() judges it (rule_data.coverage_tail). */
            double m = min;
            if (rd->coverage_tail && sl[k].t - step < r->window_start - 1e-6) {
                m = (sl[k].t - r->window_start) / step - 1e-9;
                if (m < 0)
                    m = 0;
            }
            bool ok = has_point(g, sl[k].t, step, m);
            /* Raw samples list only the steps not wholly covered. */
            if (rd->coverage_tail && g && !has_point(g, sl[k].t, step, NAN))
                ok = true;
            c[k] = any ? c[k] && ok : ok;
        }
        any = true;
    }
    return c;
}

/* Facts about the points inside [ws, we] that the explanation quotes. */
struct window_facts {
    size_t total, above, nonnum;
    double min, max, sum, max_t, first_nonnum_t;
    double gap_from, gap_to; /* the longest stretch between two points, bounding points */
    double first_t, last_t;
};

static void window_facts(const struct point *p, size_t n, double ws, double we, double threshold,
                         struct window_facts *f)
{
    *f = (struct window_facts){.min = NAN,
                               .max = NAN,
                               .max_t = NAN,
                               .first_nonnum_t = NAN,
                               .gap_from = NAN,
                               .gap_to = NAN,
                               .first_t = NAN,
                               .last_t = NAN};
    const double eps = 1e-6;
    double prev = NAN; /* the last point at or before the window start counts as a bound */
    for (size_t i = 0; i < n; i++) {
        if (p[i].t > we + eps)
            break;
        if (p[i].t < ws - eps) {
            prev = p[i].t;
            continue;
        }
        if (!isnan(prev) && (isnan(f->gap_from) || p[i].t - prev > f->gap_to - f->gap_from)) {
            f->gap_from = prev;
            f->gap_to = p[i].t;
        }
        prev = p[i].t;
        if (isnan(f->first_t))
            f->first_t = p[i].t;
        f->last_t = p[i].t;
        f->total++;
        double v = p[i].v;
        if (!isfinite(v)) {
            if (!f->nonnum)
                f->first_nonnum_t = p[i].t;
            f->nonnum++;
            continue;
        }
        if (v * 100 >= threshold)
            f->above++;
        if (isnan(f->min) || v < f->min)
            f->min = v;
        if (isnan(f->max) || v > f->max) {
            f->max = v;
            f->max_t = p[i].t;
        }
        f->sum += v;
    }
}

/* What the sentence needs beyond the window facts. */
struct explain_ctx {
    size_t nseries;     /* activity series of the workload */
    size_t holes;       /* steps in the window without a point but covered by raw samples */
    double first_gap_t; /* first step in the window decide() counts as a gap; NaN if none */
    double gap;         /* the rule's tolerated gap */
    bool raw;           /* judged on raw sample coverage (a selector rule) */
};

static void explain_sentence(const struct decision_rec *r, const struct window_facts *f,
                             const struct explain_ctx *x, double step, struct sbuf *out)
{
    char a[48], b[48], dur[32];
    dur_format(dur, sizeof(dur), r->idle_timer);
    if (r->reason == REASON_IDLE) {
        rfc3339_format(a, sizeof(a), r->idle_since, RFC3339_MILLI_FRAC);
        sbuf_printf(out, "reclaim: below %g %% for the whole %s window since %s", r->threshold, dur,
                    a);
        if (x->holes) {
            dur_format(b, sizeof(b), x->gap);
            sbuf_printf(out, " (%zu step%s without a point, raw samples never more than %s apart)",
                        x->holes, x->holes == 1 ? "" : "s", b);
        }
        sbuf_puts(out, r->dry_run ? " (dry run: reported only)" : "");
        return;
    }
    /* The merged points cannot say which series was silent: the detail line names it. */
    if (x->nseries > 1 && (r->reason == REASON_GAP || r->reason == REASON_STALE ||
                           r->reason == REASON_TOO_YOUNG || r->reason == REASON_NOT_A_NUMBER)) {
        sbuf_printf(out, "kept: %s in one of its %zu series (see the detail and its row below)",
                    decide_reason_name(r->reason), x->nseries);
        return;
    }
    switch (r->reason) {
    case REASON_ACTIVE:
        format_clock(f->max_t, a, sizeof(a));
        sbuf_printf(out, "kept: %zu of %zu points at or above %g %% (max %.3g %% at %s)", f->above,
                    f->total, r->threshold, f->max * 100, a);
        return;
    case REASON_GAP:
        if (!isnan(f->gap_from) && f->gap_to - f->gap_from > step) {
            format_clock(f->gap_from, a, sizeof(a));
            format_clock(f->gap_to, b, sizeof(b));
            dur_format(dur, sizeof(dur), f->gap_to - f->gap_from);
            sbuf_printf(out, "kept: no data for %s between %s and %s", dur, a, b);
        } else if (!isnan(x->first_gap_t)) {
            format_clock(x->first_gap_t, a, sizeof(a));
            dur_format(b, sizeof(b), x->gap);
            sbuf_printf(out, "kept: raw samples more than %s apart in the step ending %s", b, a);
        } else {
            sbuf_printf(out, "kept: a gap in the data longer than the tolerated gap");
        }
        return;
    case REASON_TOO_YOUNG:
        format_clock(f->first_t, a, sizeof(a));
        sbuf_printf(out, "kept: data only since %s, less than the %s idle timer", a, dur);
        return;
    case REASON_STALE:
        format_clock(f->last_t, a, sizeof(a));
        if (x->raw) {
            /* The grid's last point covers samples up to a step before it: quote the rule. */
            dur_format(b, sizeof(b), x->gap);
            sbuf_printf(out,
                        "kept: stopped reporting: no raw sample within the tolerated gap (%s) "
                        "before the evaluation time; last point at %s",
                        b, a);
            return;
        }
        dur_format(b, sizeof(b), r->window_end - f->last_t);
        sbuf_printf(out, "kept: no data since %s (%s before the evaluation time)", a, b);
        return;
    case REASON_NOT_A_NUMBER:
        format_clock(f->first_nonnum_t, a, sizeof(a));
        sbuf_printf(out, "kept: %zu of %zu points are NaN or Inf (first at %s)", f->nonnum,
                    f->total, a);
        return;
    case REASON_NO_DATA:
        sbuf_printf(out, "kept: allocated GPUs but no activity series, so not proven idle");
        return;
    case REASON_QUERY_ERROR:
        sbuf_printf(out, "kept: the Prometheus query failed, so nothing is known");
        return;
    default:
        sbuf_printf(out, "%s: %s", r->decision == DECISION_RECLAIM ? "reclaim" : "kept",
                    decide_reason_name(r->reason));
        return;
    }
}

/* Sparkline rows of SPARK_ROW slots (one row up to SPARK_ONE_ROW), each with its marker row. */
static void draw_rows(const struct slot *slots, size_t nslots, double top, double threshold,
                      const bool *covered, struct sbuf *out)
{
    char a[48];
    size_t row = nslots <= SPARK_ONE_ROW ? nslots : SPARK_ROW;
    for (size_t from = 0; from < nslots; from += row) {
        size_t to = from + row < nslots ? from + row : nslots;
        format_clock(slots[from].t, a, sizeof(a));
        sbuf_printf(out, "  %s ", a);
        render_slots(slots, from, to, top, threshold, covered, out, NULL);
        struct sbuf mark = {0};
        sbuf_printf(&mark, "\n  %*s ", (int)strlen(a), "");
        render_slots(slots, from, to, top, threshold, covered, NULL, &mark);
        str_rtrim(mark.buf);
        sbuf_puts(out, mark.buf);
        sbuf_free(&mark);
        sbuf_putc(out, '\n');
    }
}

static void explain_one(const struct rule_data *rd, const struct decision_rec *r, struct sbuf *out)
{
    const struct rule *rule = r->rule;
    char *wl = format_workload(&r->identity);
    char a[48], b[48], c[32], g[32];
    sbuf_printf(out, "workload %s, rule '%s'\n", wl, rule->name);
    free(wl);
    dur_format(a, sizeof(a), r->idle_timer);
    dur_format(c, sizeof(c), rule->step);
    dur_format(g, sizeof(g), rule->tolerated_gap);
    sbuf_printf(out, "  policy %s, threshold %g %%, idle timer %s, step %s, tolerated gap %s%s\n",
                rules_policy_name(rule->policy), r->threshold, a, c, g,
                r->dry_run ? ", dry run" : "");

    struct point *pts = NULL;
    size_t n = rd ? workload_points(rd, r, &pts) : 0;
    double step = rule->step > 0 ? rule->step : 60;
    double ws = r->window_start, we = r->window_end;
    /* Snap the drawing grid to the range query's evaluation points. */
    double anchor = ws;
    if (rd && isfinite(rd->start) && isfinite(ws) && rd->start <= ws)
        anchor = rd->start + ceil((ws - rd->start) / step - 1e-9) * step;

    struct window_facts f;
    window_facts(pts, n, ws, we, r->threshold, &f);
    rfc3339_format(a, sizeof(a), ws, RFC3339_MILLI_FRAC);
    rfc3339_format(b, sizeof(b), we, RFC3339_MILLI_FRAC);
    sbuf_printf(out, "  window %s .. %s: %zu points\n", a, b, f.total);

    struct slot *slots;
    size_t nslots = fill_slots(pts, n, anchor, we, step, &slots);
    double top = slots_top(slots, nslots);
    bool *covered = rd ? slots_covered(rd, r, NULL, slots, nslots, step) : NULL;
    draw_rows(slots, nslots, top, r->threshold, covered, out);

    struct explain_ctx x = {
        .first_gap_t = NAN, .gap = rule->tolerated_gap, .raw = rd && rd->raw_coverage};
    for (size_t k = 0; k < nslots; k++) {
        if (covered && !covered[k] && isnan(x.first_gap_t))
            x.first_gap_t = slots[k].t;
        if (covered && covered[k] && slots[k].state == SLOT_GAP)
            x.holes++;
    }
    free(covered);
    free(slots);
    /* Several series (GPUs, partitions, containers): each on its own row, as judged. */
    for (size_t i = 0; rd && i < rd->activity.n; i++) {
        const struct series *s = &rd->activity.s[i];
        if (!report_labels_match(&r->identity, &s->labels))
            continue;
        x.nseries++;
    }
    for (size_t i = 0; rd && x.nseries > 1 && i < rd->activity.n; i++) {
        const struct series *s = &rd->activity.s[i];
        if (!report_labels_match(&r->identity, &s->labels))
            continue;
        char *l = labels_format(&s->labels);
        sbuf_printf(out, "  series %s\n", l);
        free(l);
        size_t sn = 0;
        while (sn < s->n && s->p[sn].t <= we + 1e-6)
            sn++;
        fill_slots(s->p, sn, anchor, we, step, &slots);
        covered = slots_covered(rd, r, s, slots, nslots, step);
        draw_rows(slots, nslots, top, r->threshold, covered, out);
        free(covered);
        free(slots);
    }
    sbuf_printf(out,
                "  (▁..█ = 0..%g %%, · no point in the step, × NaN/Inf; marker: ^ at or above "
                "threshold, _ gap (raw samples further apart than the tolerated gap), ! "
                "NaN/Inf)\n",
                top * 100);

    char mn[24], mx[24], me[24];
    format_percent(f.min, mn, sizeof(mn));
    format_percent(f.max, mx, sizeof(mx));
    size_t finite = f.total - f.nonnum;
    format_percent(finite ? f.sum / (double)finite : NAN, me, sizeof(me));
    sbuf_printf(out, "  min %s, max %s, mean %s\n", mn, mx, me);

    sbuf_puts(out, "  ");
    explain_sentence(r, &f, &x, step, out);
    sbuf_putc(out, '\n');
    if (r->detail[0])
        sbuf_printf(out, "  detail: %s\n", r->detail);
    if (r->target)
        sbuf_printf(out, "  would: %s\n", r->target);
    else if (r->target_kept)
        sbuf_printf(out, "  would do nothing: %s\n", r->target_kept);
    if (r->note && r->note[0])
        sbuf_printf(out, "  note: %s\n", r->note);
    free(pts);
}

size_t report_render_explain(const struct rule_data *data, size_t ndata, const struct decisions *d,
                             const struct labels *want, const char *rule_name, struct sbuf *out)
{
    size_t shown = 0;
    for (size_t i = 0; i < d->n; i++) {
        const struct decision_rec *r = &d->v[i];
        if (!r->rule || (rule_name && strcmp(r->rule->name, rule_name) != 0))
            continue;
        if (!report_labels_match(want, &r->identity) && !report_labels_match(want, &r->all))
            continue;
        const struct rule_data *rd = NULL;
        for (size_t j = 0; j < ndata; j++)
            if (data[j].rule == r->rule)
                rd = &data[j];
        if (shown)
            sbuf_putc(out, '\n');
        explain_one(rd, r, out);
        shown++;
    }
    return shown;
}
