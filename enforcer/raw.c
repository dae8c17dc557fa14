/*
 * Raw samples to decide()'s step grid (raw.h). Everything is computed in whole milliseconds,
 * the unit Prometheus and VictoriaMetrics store, so boundaries compare exactly.
 *
 * Coverage works on doubled milliseconds so that closed and open interval ends become
 * half-open ranges [a, b) of integers: a sample at r covers the instants [r, r + gap]
 * (doubled: [2r, 2r + 2gap + 1)), cut short before a staleness marker m after it (doubled:
 * up to 2m, exclusive, since at m the series is gone). Consecutive covers are merged; a step
 * [t - step, t] (doubled: [2(t - step), 2t]) is covered when one merged range holds it
 * whole, and then not listed; otherwise its value is the share of the step, counted back from
 * its end, that one range holds (decide() accepts a step that begins before the window start when
 * that tail reaches back to it). No resolution is involved, so a gap of gap + 1 ms is found and a
 * gap of exactly `gap` is not (docs/decision-semantics.md §3).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"
#include "util.h"

double raw_read_start(const struct raw_grid *g)
{
    return g->start - g->step - g->gap;
}

/* A covered range of doubled milliseconds, [a, b). */
struct raw_span {
    int64_t a, b;
};

static int64_t raw_ms(double t)
{
    return (int64_t)llround(t * 1000.0);
}

/* The merged covered ranges of one series (times in ms, strictly ascending). */
static size_t raw_spans(const int64_t *t, const double *v, size_t n, int64_t gap,
                        struct raw_span *out)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (series_is_stale(v[i]))
            continue;
        int64_t a = 2 * t[i], b = 2 * (t[i] + gap) + 1;
        /* A staleness marker before the cover ends cuts it at the marker. */
        for (size_t j = i + 1; j < n && 2 * t[j] < b; j++) {
            if (series_is_stale(v[j])) {
                b = 2 * t[j];
                break;
            }
        }
        if (ns && out[ns - 1].b >= a) {
            if (b > out[ns - 1].b)
                out[ns - 1].b = b;
        } else {
            out[ns++] = (struct raw_span){a, b};
        }
    }
    return ns;
}

void raw_drop_name(struct labels *dst, const struct labels *src)
{
    struct label small[16] = {{0}}, *v = src->n <= 16 ? small : xmalloc(src->n * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < src->n; i++)
        if (strcmp(src->v[i].name, "__name__") != 0)
            v[k++] = src->v[i];
    labels_from(dst, v, k);
    if (v != small)
        free(v);
}

static int raw_cmp_labels(const void *a, const void *b)
{
    return labels_compare(*(const struct labels *const *)a, *(const struct labels *const *)b);
}

/* 0 when no two of the n label sets (sorted here) are equal, else -1 with a message: two
   series whose names were dropped would be one series to decide(). */
static int raw_unique(const struct labels **idx, size_t n, char *err, size_t errlen)
{
    if (n > 1)
        qsort(idx, n, sizeof(*idx), raw_cmp_labels);
    for (size_t i = 1; i < n; i++) {
        if (labels_equal(idx[i - 1], idx[i])) {
            char *l = labels_format(idx[i]);
            snprintf(err, errlen, "two series differ only in their metric name: %.160s", l);
            free(l);
            return -1;
        }
    }
    return 0;
}

/*
 * The closed step [ts, te] of samples t/v (ascending; *lo walks forward, so a scan over
 * ascending steps is linear): whether it holds a sample other than a staleness marker, its
 * largest finite value and whether one is NaN or +-Inf (the grid point is then NaN).
 */
static bool raw_step(const int64_t *t, const double *v, size_t n, size_t *lo, int64_t ts,
                     int64_t te, double *max, bool *nonfinite)
{
    while (*lo < n && t[*lo] < ts)
        (*lo)++;
    bool any = false;
    *max = 0;
    *nonfinite = false;
    for (size_t j = *lo; j < n && t[j] <= te; j++) {
        if (series_is_stale(v[j]))
            continue;
        if (!isfinite(v[j]))
            *nonfinite = true;
        else if (!any || v[j] > *max)
            *max = v[j];
        any = true;
    }
    return any;
}

/* Convert one series; false with a message when its samples are out of order. */
static bool raw_series(const struct series *s, int64_t start, int64_t step, size_t npts,
                       int64_t gap, struct series *act, struct series *cov, char *err,
                       size_t errlen)
{
    int64_t *t = xmalloc((s->n ? s->n : 1) * sizeof(*t));
    double *v = xmalloc((s->n ? s->n : 1) * sizeof(*v));
    for (size_t i = 0; i < s->n; i++) {
        t[i] = raw_ms(s->p[i].t);
        v[i] = s->p[i].v;
        if (!isfinite(s->p[i].t) || (i > 0 && t[i] <= t[i - 1])) {
            char *l = labels_format(&s->labels);
            snprintf(err, errlen, "raw samples of %.120s out of order at %.3f", l, s->p[i].t);
            free(l);
            free(t);
            free(v);
            return false;
        }
    }
    act->p = xmalloc(npts * sizeof(*act->p));
    cov->p = xmalloc(npts * sizeof(*cov->p));
    struct raw_span *sp = xmalloc((s->n ? s->n : 1) * sizeof(*sp));
    size_t nsp = raw_spans(t, v, s->n, gap, sp);
    size_t lo = 0, k = 0;
    for (size_t i = 0; i < npts; i++) {
        int64_t te = start + (int64_t)i * step, ts = te - step;
        double max;
        bool nonfinite, any = raw_step(t, v, s->n, &lo, ts, te, &max, &nonfinite);
        double when = (double)te / 1000.0;
        if (any)
            act->p[act->n++] = (struct point){when, nonfinite ? NAN : max};
        while (k < nsp && sp[k].b <= 2 * te)
            k++;
        /* The covered tail: the part of the step, up to its end, that one range holds. */
        double share = 0;
        if (k < nsp && sp[k].a <= 2 * te)
            share = sp[k].a <= 2 * ts ? 1.0 : (double)(2 * te - sp[k].a) / (double)(2 * step);
        if (share >= 1.0 && sp[k].a > 2 * ts)
            share = nextafter(1.0, 0.0);
        /* Only the steps not wholly covered are listed (raw.h): most steps are covered. */
        if (share < 1.0)
            cov->p[cov->n++] = (struct point){when, share};
    }
    free(sp);
    free(t);
    free(v);
    return true;
}

int raw_grids_begin(struct raw_grids *b, const struct raw_grid *g, char *err, size_t errlen)
{
    *b = (struct raw_grids){0};
    b->start = raw_ms(g->start);
    b->step = raw_ms(g->step);
    b->gap = raw_ms(g->gap);
    int64_t end = raw_ms(g->end);
    if (!isfinite(g->start) || !isfinite(g->end) || b->step <= 0 || b->gap < 0 || end < b->start ||
        (end - b->start) % b->step != 0) {
        snprintf(err, errlen, "invalid grid [%.3f, %.3f] with step %g", g->start, g->end, g->step);
        b->failed = true;
        return -1;
    }
    b->npts = (size_t)((end - b->start) / b->step) + 1;
    return 0;
}

int raw_grids_add(struct raw_grids *b, const struct series *s, char *err, size_t errlen)
{
    if (b->failed) {
        snprintf(err, errlen, "raw grids already failed");
        return -1;
    }
    if (b->activity.n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->activity.s = xrealloc(b->activity.s, b->cap * sizeof(*b->activity.s));
        b->coverage.s = xrealloc(b->coverage.s, b->cap * sizeof(*b->coverage.s));
    }
    struct series *a = &b->activity.s[b->activity.n], *c = &b->coverage.s[b->coverage.n];
    *a = *c = (struct series){0};
    if (!raw_series(s, b->start, b->step, b->npts, b->gap, a, c, err, errlen)) {
        free(a->p);
        free(c->p);
        *a = *c = (struct series){0};
        raw_grids_discard(b);
        b->failed = true;
        return -1;
    }
    if (a->n == 0) {
        free(a->p);
        free(c->p);
        *a = *c = (struct series){0};
        return 0;
    }
    if (a->n < b->npts)
        a->p = xrealloc(a->p, a->n * sizeof(*a->p));
    if (c->n < b->npts)
        c->p = xrealloc(c->p, (c->n ? c->n : 1) * sizeof(*c->p));
    raw_drop_name(&a->labels, &s->labels);
    labels_copy(&c->labels, &a->labels);
    b->activity.n++;
    b->coverage.n++;
    return 0;
}

int raw_grids_end(struct raw_grids *b, struct matrix *activity, struct matrix *coverage, char *err,
                  size_t errlen)
{
    *activity = (struct matrix){0};
    *coverage = (struct matrix){0};
    if (b->failed) {
        raw_grids_discard(b);
        snprintf(err, errlen, "raw grids already failed");
        return -1;
    }
    const struct labels **idx = xmalloc((b->activity.n ? b->activity.n : 1) * sizeof(*idx));
    for (size_t i = 0; i < b->activity.n; i++)
        idx[i] = &b->activity.s[i].labels;
    int ret = raw_unique(idx, b->activity.n, err, errlen);
    free(idx);
    if (ret < 0) {
        raw_grids_discard(b);
        b->failed = true;
        return -1;
    }
    if (b->activity.n == 0) {
        raw_grids_discard(b);
    } else if (b->activity.n < b->cap) {
        b->activity.s = xrealloc(b->activity.s, b->activity.n * sizeof(*b->activity.s));
        b->coverage.s = xrealloc(b->coverage.s, b->coverage.n * sizeof(*b->coverage.s));
    }
    *activity = b->activity;
    *coverage = b->coverage;
    b->activity = b->coverage = (struct matrix){0};
    b->cap = 0;
    b->failed = true; /* used up */
    return 0;
}

void raw_grids_discard(struct raw_grids *b)
{
    matrix_free(&b->activity);
    matrix_free(&b->coverage);
    b->cap = 0;
}

int raw_to_grid(struct matrix *raw, const struct raw_grid *g, struct matrix *activity,
                struct matrix *coverage, char *err, size_t errlen)
{
    struct raw_grids b;
    int ret = raw_grids_begin(&b, g, err, errlen);
    for (size_t i = 0; i < raw->n; i++) {
        if (ret == 0)
            ret = raw_grids_add(&b, &raw->s[i], err, errlen);
        series_free(&raw->s[i]);
    }
    free(raw->s);
    *raw = (struct matrix){0};
    if (ret == 0)
        return raw_grids_end(&b, activity, coverage, err, errlen);
    raw_grids_discard(&b);
    *activity = (struct matrix){0};
    *coverage = (struct matrix){0};
    return -1;
}

/* ---- raw samples to proofs ---------------------------------------------------------------- */

int raw_proofs_begin(struct raw_proofs *b, const struct proof_params *pp, double now,
                     const double *idle, size_t nidle, char *err, size_t errlen)
{
    *b = (struct raw_proofs){.pp = *pp, .now = raw_ms(now)};
    if (!isfinite(now) || pp->step_ms <= 0 || pp->gap_ms < 0 || pp->lookback_ms < 0 ||
        pp->lookback_ms % pp->step_ms != 0 || nidle > RAW_MAX_IDLE) {
        snprintf(err, errlen, "invalid proof at %.3f with step %" PRId64 " ms", now, pp->step_ms);
        b->failed = true;
        return -1;
    }
    for (size_t i = 0; i < nidle; i++)
        b->idle[i] = raw_ms(idle[i]);
    b->nidle = nidle;
    return 0;
}

void raw_window_stats(const int64_t *t, const double *v, size_t n, const struct proof_params *pp,
                      int64_t now, int64_t idle, struct rule_winstats *w)
{
    int64_t step = pp->step_ms, start = now - pp->lookback_ms;
    int64_t ws = now - idle;
    int64_t g = ws > now ? now + step : now - ((now - ws) / step) * step;
    if (g < start)
        g = start;
    *w = (struct rule_winstats){
        .idle_timer = (double)idle / 1000.0, .max = NAN, .max_t = NAN, .last = NAN, .last_t = NAN};
    size_t lo = 0;
    for (; g <= now; g += step) {
        double max;
        bool nonfinite;
        if (!raw_step(t, v, n, &lo, g - step, g, &max, &nonfinite))
            continue;
        w->samples++;
        w->last_t = (double)g / 1000.0;
        w->last = nonfinite ? NAN : max;
        if (nonfinite)
            continue;
        w->finite++;
        w->sum += max;
        if (isnan(w->max) || max >= w->max) {
            w->max = max;
            w->max_t = (double)g / 1000.0;
        }
    }
}

size_t raw_points_between(const int64_t *t, const double *v, size_t n,
                          const struct proof_params *pp, int64_t now, int64_t a, int64_t b,
                          struct point *out, size_t max)
{
    int64_t step = pp->step_ms, start = now - pp->lookback_ms;
    int64_t lo_t = a + 1 > start ? a + 1 : start;
    if (b > now)
        b = now;
    if (lo_t > b || step <= 0)
        return 0;
    /* The first grid point (now - k * step) at or after lo_t. */
    int64_t g = now - ((now - lo_t) / step) * step;
    size_t lo = 0, k = 0;
    for (; g <= b && k < max; g += step) {
        double m;
        bool nonfinite;
        if (raw_step(t, v, n, &lo, g - step, g, &m, &nonfinite))
            out[k++] = (struct point){(double)g / 1000.0, nonfinite ? NAN : m};
    }
    return k;
}

int raw_proofs_add(struct raw_proofs *b, const struct series *s, char *err, size_t errlen)
{
    if (b->failed) {
        snprintf(err, errlen, "raw proofs already failed");
        return -1;
    }
    struct proof *p = proof_new(&b->pp);
    int64_t *t = xmalloc((s->n ? s->n : 1) * sizeof(*t));
    double *v = xmalloc((s->n ? s->n : 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        char e2[128];
        int64_t ms = raw_ms(s->p[i].t);
        if (!isfinite(s->p[i].t) || ms > b->now ||
            proof_add(p, &b->pp, ms, s->p[i].v, e2, sizeof(e2)) < 0) {
            char *l = labels_format(&s->labels);
            snprintf(err, errlen, "raw samples of %.120s out of order at %.3f", l, s->p[i].t);
            if (ms > b->now)
                snprintf(err, errlen, "raw samples of %.120s after the evaluation time at %.3f", l,
                         s->p[i].t);
            free(l);
            free(p);
            free(t);
            free(v);
            raw_proofs_discard(b);
            b->failed = true;
            return -1;
        }
        t[n] = ms;
        v[n++] = s->p[i].v;
    }
    if (!proof_present(p, &b->pp, b->now)) {
        free(p);
        free(t);
        free(v);
        return 0;
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->v = xrealloc(b->v, b->cap * sizeof(*b->v));
    }
    struct rule_proof *rp = &b->v[b->n++];
    *rp = (struct rule_proof){.p = p, .nwin = b->nidle};
    raw_drop_name(&rp->s.labels, &s->labels);
    if (b->nidle) {
        rp->win = xmalloc(b->nidle * sizeof(*rp->win));
        for (size_t i = 0; i < b->nidle; i++)
            raw_window_stats(t, v, n, &b->pp, b->now, b->idle[i], &rp->win[i]);
    }
    free(t);
    free(v);
    return 0;
}

int raw_proofs_end(struct raw_proofs *b, struct rule_proof **v, size_t *n, char *err, size_t errlen)
{
    *v = NULL;
    *n = 0;
    if (b->failed) {
        raw_proofs_discard(b);
        snprintf(err, errlen, "raw proofs already failed");
        return -1;
    }
    const struct labels **idx = xmalloc((b->n ? b->n : 1) * sizeof(*idx));
    for (size_t i = 0; i < b->n; i++)
        idx[i] = &b->v[i].s.labels;
    int ret = raw_unique(idx, b->n, err, errlen);
    free(idx);
    if (ret < 0) {
        raw_proofs_discard(b);
        b->failed = true;
        return -1;
    }
    if (b->n && b->n < b->cap)
        b->v = xrealloc(b->v, b->n * sizeof(*b->v));
    *v = b->v;
    *n = b->n;
    b->v = NULL;
    b->n = b->cap = 0;
    b->failed = true; /* used up */
    return 0;
}

void raw_proofs_free(struct rule_proof *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        labels_free(&v[i].s.labels);
        free(v[i].p);
        free(v[i].win);
    }
    free(v);
}

void raw_proofs_discard(struct raw_proofs *b)
{
    raw_proofs_free(b->v, b->n);
    b->v = NULL;
    b->n = b->cap = 0;
}

int raw_cover_at(const struct series *s, double at, double gap, struct raw_cover *out, char *err,
                 size_t errlen)
{
    *out = (struct raw_cover){.from = NAN, .before = NAN, .last = NAN, .end = NAN};
    int64_t at_ms = raw_ms(at), gap_ms = raw_ms(gap);
    int64_t *t = xmalloc((s->n ? s->n : 1) * sizeof(*t));
    double *v = xmalloc((s->n ? s->n : 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        int64_t ti = raw_ms(s->p[i].t);
        if (!isfinite(s->p[i].t) || (n > 0 && ti <= t[n - 1])) {
            char *l = labels_format(&s->labels);
            snprintf(err, errlen, "raw samples of %.120s out of order at %.3f", l, s->p[i].t);
            free(l);
            free(t);
            free(v);
            return -1;
        }
        if (ti > at_ms)
            break;
        t[n] = ti;
        v[n++] = s->p[i].v;
    }
    struct raw_span *sp = xmalloc((n ? n : 1) * sizeof(*sp));
    size_t nsp = raw_spans(t, v, n, gap_ms, sp);
    /* The last run that begins at or before `at` (doubled milliseconds, raw_spans). */
    size_t k = nsp;
    while (k > 0 && sp[k - 1].a > 2 * at_ms)
        k--;
    for (size_t i = n; i-- > 0;) {
        if (!series_is_stale(v[i])) {
            out->last = (double)t[i] / 1000.0;
            break;
        }
    }
    if (k > 0) {
        const struct raw_span *r = &sp[k - 1];
        out->end = (double)(r->b - 1) / 2000.0;
        out->covered = 2 * at_ms < r->b;
        if (out->covered) {
            out->from = (double)r->a / 2000.0;
            /* The real sample before the run's first one, if any: the other side of its hole. */
            for (size_t i = 0; i < n && 2 * t[i] < r->a; i++)
                if (!series_is_stale(v[i]))
                    out->before = (double)t[i] / 1000.0;
        }
    }
    free(sp);
    free(t);
    free(v);
    return 0;
}
