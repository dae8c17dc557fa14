/*
 * The idleness proof as a fold (proof.h): what decide() reads of a series' step grid
 * (raw_to_grid, raw.h), kept as a handful of times instead of the grid, so that a series costs
 * the same whatever the idle timer and a verdict can be asked at any later `now`.
 *
 * Why a few times are enough. With raw coverage, decide() judges a series on the grid of
 * `now` (points now - k * step, each the largest sample of [t - step, t]) like this
 * (docs/decision-semantics.md §3.1, "The proof as a fold"); ws = now - idleTimer, g0 the first
 * grid point at or after ws (or the grid start), W the last grid point at or before ws:
 *   present       a non-stale sample in [start - step, now] (else raw_to_grid drops it);
 *   not_a_number  a non-finite sample in [g0 - step, now]: the last one (nan.at) tells;
 *   stale         no sample in [now - step, now], and the stretch the last sample covers
 *                 (span_a .. min(slast + gap, cut)) does not hold [now - step, now];
 *   young         no sample in [start - step, W]: a silence that long holds it, and only the
 *                 few silences longer than max(step, lookback - idle_fit) can (young[]);
 *   gap           an uncovered instant in [ws, now] (in [first point, now] when young): the
 *                 last uncovered instant before now is span_a - 1 or now itself;
 *   active        a sample at or above the threshold in a step of the window with no
 *                 non-finite sample (which makes the point NaN): the last high sample per
 *                 threshold, and the last one known clean for any grid phase;
 *   idle_since    the first grid point with a sample after the last breaker point (high or
 *                 non-finite) and at or after the last uncovered step, whichever is later,
 *                 else the grid start; which point that is needs, after a breaker, only the
 *                 first silence longer than a step that follows it, and after an uncovered
 *                 stretch only the samples either side of it (prev_r, span_a). The silences
 *                 longer than a step (step[]) place the first point of a young series whose
 *                 window starts before the grid.
 * Coverage is computed on doubled milliseconds as raw.c does, so boundaries agree exactly.
 *
 * The bounds (where the state cannot know what the grid would show, and what it says then):
 *   - more than PROOF_SILENCES silences longer than max(step, lookback - idle_fit) since the
 *     window start (only with a lookback clipped at 11,000 steps): the series is taken as
 *     too young, a keep;
 *   - a window longer than the (clipped) lookback is young on the grid and here, but the
 *     first grid point with a sample is known only when few silences longer than a step
 *     followed it (step[]): gap and too_young may change places, a keep either way;
 *   - a window with a non-finite sample and a high sample whose step holds a non-finite one
 *     for some grid phases only: not_a_number where the grid may say active; a keep either way
 *     (plan and run fold the window statistics of their `now` too, from which decide() takes
 *     "active" exactly: raw.c raw_proofs_add).
 * The differential test (tests/unit/test_proof.c) counts each and requires all else equal.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason.h"
#include "dur.h"
#include "proof.h"
#include "series.h"
#include "rfc3339.h"
#include "util.h"

static int proof_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void proof_params_init(struct proof_params *pp)
{
    if (pp->nthresholds > PROOF_MAX_THRESHOLDS)
        pp->nthresholds = PROOF_MAX_THRESHOLDS;
    qsort(pp->thresholds, pp->nthresholds, sizeof(pp->thresholds[0]), proof_cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < pp->nthresholds; i++)
        if (k == 0 || pp->thresholds[i] != pp->thresholds[k - 1])
            pp->thresholds[k++] = pp->thresholds[i];
    pp->nthresholds = k;
}

size_t proof_size(const struct proof_params *pp)
{
    return sizeof(struct proof) + pp->nthresholds * sizeof(struct proof_breaker);
}

static void proof_breaker_init(struct proof_breaker *b)
{
    *b = (struct proof_breaker){.at = PROOF_NONE,
                                .v = NAN,
                                .sil = {PROOF_NONE, PROOF_NONE},
                                .cand = PROOF_NONE,
                                .clean = PROOF_NONE};
}

void proof_init(struct proof *p, const struct proof_params *pp)
{
    memset(p, 0, proof_size(pp));
    p->last = p->first = p->slast = p->cut = p->span_a = p->prev_r = PROOF_NONE;
    p->vlast = NAN;
    proof_breaker_init(&p->nan);
    p->nlevels = (uint32_t)pp->nthresholds;
    for (size_t i = 0; i < pp->nthresholds; i++)
        proof_breaker_init(&p->high[i]);
}

struct proof *proof_new(const struct proof_params *pp)
{
    struct proof *p = xmalloc(proof_size(pp));
    proof_init(p, pp);
    return p;
}

int64_t proof_last(const struct proof *p)
{
    return p->last;
}

/* The silences a young window can lie in are longer than this (proof.c header). */
static int64_t proof_young_len(const struct proof_params *pp)
{
    int64_t l = pp->lookback_ms - (pp->idle_fit_ms > 0 ? pp->idle_fit_ms : pp->idle_max_ms);
    return l > pp->step_ms ? l : pp->step_ms;
}

static void proof_push_silence(struct proof_silence *v, uint8_t *n, bool *lost, int64_t a,
                               int64_t b)
{
    if (*n == PROOF_SILENCES)
        *lost = true;
    else
        (*n)++;
    memmove(v + 1, v, (size_t)(*n - 1) * sizeof(*v));
    v[0] = (struct proof_silence){a, b};
}

/* End (exclusive, doubled ms) of the stretch the last non-stale sample covers. */
static int64_t proof_span_b(const struct proof *p, const struct proof_params *pp)
{
    int64_t b = 2 * (p->slast + pp->gap_ms) + 1;
    if (p->cut != PROOF_NONE && 2 * p->cut < b)
        b = 2 * p->cut;
    return b;
}

/* A non-finite sample at t: the highs within a step before it are no longer clean. */
static void proof_nonfinite(struct proof *p, const struct proof_params *pp, int64_t t, double v)
{
    for (uint32_t i = 0; i < p->nlevels; i++) {
        struct proof_breaker *h = &p->high[i];
        if (h->cand != PROOF_NONE && h->cand < t - pp->step_ms)
            h->clean = h->cand;
        h->cand = PROOF_NONE;
    }
    proof_breaker_init(&p->nan);
    p->nan.at = t;
    p->nan.v = v;
}

/* A finite sample at or above threshold i at t. */
static void proof_high(struct proof *p, const struct proof_params *pp, uint32_t i, int64_t t,
                       double v)
{
    struct proof_breaker *h = &p->high[i];
    int64_t cand = h->cand, clean = h->clean;
    /* No non-finite sample came since cand (it would have cleared it): past a step it is
       clean on both sides. */
    if (cand != PROOF_NONE && cand < t - pp->step_ms)
        clean = cand;
    if (p->nan.at == PROOF_NONE || p->nan.at < t - pp->step_ms)
        cand = t;
    proof_breaker_init(h);
    h->at = t;
    h->v = v;
    h->cand = cand;
    h->clean = clean;
}

int proof_add(struct proof *p, const struct proof_params *pp, int64_t t, double v, char *err,
              size_t errlen)
{
    if (p->last != PROOF_NONE && t <= p->last) {
        snprintf(err, errlen, "sample at %" PRId64 " ms is not after the last one at %" PRId64, t,
                 p->last);
        return -1;
    }
    p->last = t;
    if (series_is_stale(v)) {
        if (p->slast != PROOF_NONE && p->cut == PROOF_NONE)
            p->cut = t;
        return 0;
    }
    if (p->slast == PROOF_NONE) {
        p->first = t;
        p->span_a = 2 * t;
    } else {
        if (proof_span_b(p, pp) < 2 * t) {
            p->prev_r = p->slast;
            p->span_a = 2 * t;
        }
        int64_t d = t - p->slast;
        if (d > pp->step_ms) {
            proof_push_silence(p->step, &p->nstep, &p->step_lost, p->slast, t);
            if (p->nan.at != PROOF_NONE && p->nan.sil.a == PROOF_NONE)
                p->nan.sil = (struct proof_silence){p->slast, t};
            for (uint32_t i = 0; i < p->nlevels; i++)
                if (p->high[i].at != PROOF_NONE && p->high[i].sil.a == PROOF_NONE)
                    p->high[i].sil = (struct proof_silence){p->slast, t};
        }
        if (d > proof_young_len(pp))
            proof_push_silence(p->young, &p->nyoung, &p->young_lost, p->slast, t);
    }
    p->slast = t;
    p->vlast = v;
    p->cut = PROOF_NONE;
    if (!isfinite(v)) {
        proof_nonfinite(p, pp, t, v);
    } else {
        for (uint32_t i = 0; i < p->nlevels; i++)
            if (v * 100.0 >= pp->thresholds[i])
                proof_high(p, pp, i, t, v);
    }
    return 0;
}

bool proof_present(const struct proof *p, const struct proof_params *pp, int64_t now)
{
    return p->slast != PROOF_NONE && p->slast >= now - pp->lookback_ms - pp->step_ms;
}

/* ---- the grid of `now`, in milliseconds -------------------------------------------------- */

struct proof_grid {
    int64_t now, step, start;
};

static int64_t proof_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The smallest grid point at or after x, and the largest at or before x. */
static int64_t grid_ceil(const struct proof_grid *g, int64_t x)
{
    return g->now - proof_floordiv(g->now - x, g->step) * g->step;
}

static int64_t grid_floor(const struct proof_grid *g, int64_t x)
{
    return g->now + proof_floordiv(x - g->now, g->step) * g->step;
}

/* The last grid point (at most now) whose step [t - step, t] holds a sample at x. */
static int64_t grid_last_holding(const struct proof_grid *g, int64_t x)
{
    int64_t t = grid_floor(g, x + g->step);
    return t > g->now ? g->now : t;
}

static double proof_sec(int64_t ms)
{
    return (double)ms / 1000.0;
}

/*
 * The first non-stale sample at or after x, from the silences longer than a step (step[]):
 * with none holding x, a sample follows within a step. *exact false when the silences kept
 * cannot tell (more were dropped); the answer is then x.
 */
static int64_t proof_first_from(const struct proof *p, const struct proof_params *pp, int64_t x,
                                bool *exact)
{
    *exact = true;
    if (p->first >= x)
        return p->first;
    for (uint8_t i = 0; i < p->nstep; i++) {
        const struct proof_silence *s = &p->step[i];
        if (s->b <= x)
            return x + pp->step_ms; /* some sample in (x, x + step]: as good for the grid */
        if (s->a < x)
            return s->b;
    }
    *exact = !p->step_lost;
    return x;
}

/*
 * Young: no sample in [start - step, W]. Returns the first sample after W then (*first), or
 * PROOF_NONE when not young. With the silences kept unable to tell, young (a keep) and
 * *first from proof_first_from. *known (may be NULL) says whether *first is the first sample
 * after W itself: false for a window that starts before the grid and for that fallback.
 */
static bool proof_young(const struct proof *p, const struct proof_params *pp,
                        const struct proof_grid *g, int64_t w, int64_t *first, bool *known)
{
    int64_t lo = g->start - g->step;
    bool exact, k;
    if (!known)
        known = &k;
    *known = false;
    if (w < g->start) {
        *first = proof_first_from(p, pp, lo, &exact);
        return true;
    }
    if (p->first > w) {
        *first = p->first;
        *known = true;
        return true;
    }
    if (p->first >= lo)
        return false;
    for (uint8_t i = 0; i < p->nyoung; i++) {
        const struct proof_silence *s = &p->young[i];
        if (s->b <= w)
            return false;
        if (s->a < lo) {
            *first = s->b;
            *known = true;
            return true;
        }
        if (s->a <= w)
            return false;
    }
    if (!p->young_lost)
        return false;
    *first = proof_first_from(p, pp, lo, &exact);
    return true;
}

bool proof_young_known(const struct proof *p, const struct proof_params *pp, int64_t now,
                       int64_t idle_timer)
{
    if (pp->step_ms <= 0)
        return true;
    struct proof_grid g = {.now = now, .step = pp->step_ms, .start = now - pp->lookback_ms};
    int64_t w = grid_floor(&g, now - idle_timer), lo = g.start - g.step;
    /* proof_young's tests, in its order, up to the one that reads young[] to its end. */
    if (w < g.start || p->first > w || p->first >= lo)
        return true;
    for (uint8_t i = 0; i < p->nyoung; i++) {
        const struct proof_silence *s = &p->young[i];
        if (s->b <= w || s->a < lo || s->a <= w)
            return true;
    }
    return !p->young_lost;
}

/*
 * Whether some step of the window [g0 - step, now] holds a sample at or above the threshold
 * and no non-finite one (the grid point would be NaN): decide()'s "active". *at gets the
 * sample.
 */
static bool proof_active(const struct proof *p, const struct proof_breaker *h,
                         const struct proof_grid *g, int64_t g0, int64_t *at)
{
    int64_t lo = g0 - g->step, n = p->nan.at;
    *at = h->at;
    if (h->at == PROOF_NONE || h->at < lo)
        return false;
    if (n == PROOF_NONE || n < lo)
        return true;
    if (h->at > n) {
        /* After the last non-finite sample: its own step is clean if it starts after it, and a
           high sample on a grid point also lies in the step after it. */
        int64_t c = grid_ceil(g, h->at);
        if (c - g->step > n || (c == h->at && h->at + g->step <= g->now))
            return true;
    }
    int64_t best = h->clean > h->cand ? h->clean : h->cand;
    if (best != PROOF_NONE && best >= lo) {
        *at = best;
        return true;
    }
    return false;
}

/*
 * decide.c series_idle_start on the grid of now: the first grid point with a sample after
 * the last breaker point, at or after the last step with an uncovered instant, and at or
 * after the grid start; NaN when the last point is not below the threshold.
 */
static double proof_idle_since(const struct proof *p, const struct proof_params *pp,
                               const struct proof_breaker *hi, const struct proof_grid *g)
{
    int64_t step = g->step, plast = grid_last_holding(g, p->slast);
    const struct proof_breaker *br = hi;
    if (p->nan.at != PROOF_NONE && (br->at == PROOF_NONE || p->nan.at > br->at))
        br = &p->nan;
    if (br->at != PROOF_NONE && br->at >= plast - step)
        return NAN;
    /* The last uncovered instant up to plast (doubled) and the last step holding it. */
    int64_t u = proof_span_b(p, pp) <= 2 * plast ? 2 * plast : p->span_a - 1;
    int64_t bu = grid_floor(g, proof_floordiv(u + 2 * step, 2));
    if (bu > plast)
        bu = plast;
    /* A breaker point before the grid start is not on the grid: the run reaches the start. */
    int64_t bh = br->at != PROOF_NONE ? grid_last_holding(g, br->at) : INT64_MIN;
    bh = bh >= g->start ? bh + step : INT64_MIN;
    int64_t x;
    if (bu >= bh && bu >= g->start) {
        x = bu;
        if (u == 2 * plast || (p->prev_r != PROOF_NONE && p->prev_r >= x - step) ||
            p->span_a <= 2 * x)
            return proof_sec(x);
        return proof_sec(grid_ceil(g, p->span_a / 2));
    }
    if (bh != INT64_MIN) {
        x = bh;
        if (br->sil.a != PROOF_NONE && br->sil.a < x - step && br->sil.b > x)
            return proof_sec(grid_ceil(g, br->sil.b));
        return proof_sec(x);
    }
    /* Covered and below since before the grid start: idle since at least then (decide.c,
       series_idle_start). */
    return proof_sec(g->start);
}

static void proof_say(struct proof_verdict *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void proof_say(struct proof_verdict *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
    va_end(ap);
}

static int proof_fail(struct proof_verdict *out, const char *msg)
{
    out->reason = REASON_QUERY_ERROR;
    proof_say(out, "%s", msg);
    return -1;
}

int proof_judge(const struct proof *p, const struct proof_params *pp, int64_t now,
                int64_t idle_timer, double threshold, struct proof_verdict *out)
{
    *out = (struct proof_verdict){
        .reason = REASON_NO_DATA, .idle_since = NAN, .active_at = NAN, .active_value = NAN};
    const struct proof_breaker *hi = NULL;
    for (uint32_t i = 0; i < p->nlevels && i < pp->nthresholds && !hi; i++)
        if (pp->thresholds[i] == threshold)
            hi = &p->high[i];
    if (!hi)
        return proof_fail(out, "threshold was not folded");
    if (p->last != PROOF_NONE && now < p->last)
        return proof_fail(out, "judged before its last sample");
    if (pp->step_ms <= 0 || pp->lookback_ms < 0 || pp->lookback_ms % pp->step_ms != 0)
        return proof_fail(out, "invalid step or lookback");

    struct proof_grid g = {.now = now, .step = pp->step_ms, .start = now - pp->lookback_ms};
    int64_t step = g.step, ws = now - idle_timer;
    char t1[32], t2[32], gap[DUR_LEN];

    if (!proof_present(p, pp, now)) {
        proof_say(out, "no activity points up to now");
        return 0;
    }
    out->present = true;
    int64_t g0 = grid_ceil(&g, ws);
    if (g0 < g.start)
        g0 = g.start;

    int64_t at;
    if (proof_active(p, hi, &g, g0, &at)) {
        out->reason = REASON_ACTIVE;
        out->active_at = proof_sec(grid_last_holding(&g, at));
        out->active_value = at == hi->at ? hi->v : threshold / 100.0;
        rfc3339_format(t1, sizeof(t1), out->active_at, RFC3339_SEC);
        /* proof_say(out, "activity %g%% at %s >= threshold %g%%", ...) without printf, as the
           idle verdict's below. */
        char num[32];
        size_t dl = sizeof(out->detail);
        str_copy(out->detail, dl, "activity ");
        str_append(out->detail, dl, str_g(num, out->active_value * 100.0));
        str_append(out->detail, dl, "% at ");
        str_append(out->detail, dl, t1);
        str_append(out->detail, dl, " >= threshold ");
        str_append(out->detail, dl, str_g(num, threshold));
        str_append(out->detail, dl, "%");
        return 0;
    }
    if (p->nan.at != PROOF_NONE && p->nan.at >= g0 - step) {
        out->reason = REASON_NOT_A_NUMBER;
        rfc3339_format(t1, sizeof(t1), proof_sec(grid_last_holding(&g, p->nan.at)), RFC3339_SEC);
        proof_say(out, "activity is not a number at %s", t1);
        return 0;
    }
    int64_t span_b = proof_span_b(p, pp);
    /* The last uncovered instant up to now, doubled. */
    int64_t unc = span_b <= 2 * now ? 2 * now : p->span_a - 1;
    if (p->slast < now - step && !(p->span_a <= 2 * (now - step) && span_b > 2 * now)) {
        out->reason = REASON_STALE;
        rfc3339_format(t1, sizeof(t1), proof_sec(grid_last_holding(&g, p->slast)), RFC3339_SEC);
        dur_format(gap, sizeof(gap), proof_sec(pp->gap_ms));
        proof_say(out, "last point at %s; no raw sample within the tolerated gap %s before now", t1,
                  gap);
        return 0;
    }
    int64_t first = PROOF_NONE;
    bool young = proof_young(p, pp, &g, grid_floor(&g, ws), &first, NULL);
    int64_t from = ws;
    if (young) {
        from = grid_ceil(&g, first);
        if (from < g.start)
            from = g.start;
    }
    /* Young: the first point's own step is not judged (its samples before the first are
       uncovered by nature), only the steps after it. */
    if (unc >= 2 * from && !(young && from >= now)) {
        out->reason = REASON_GAP;
        dur_format(gap, sizeof(gap), proof_sec(pp->gap_ms)); /* here: only these verdicts say it */
        if (unc == 2 * now) {
            rfc3339_format(t1, sizeof(t1), proof_sec(p->slast), RFC3339_SEC);
            proof_say(out, "no data after %s: raw samples more than %s apart", t1, gap);
        } else {
            rfc3339_format(t1, sizeof(t1), proof_sec(p->prev_r), RFC3339_SEC);
            rfc3339_format(t2, sizeof(t2), proof_sec(p->span_a / 2), RFC3339_SEC);
            proof_say(out,
                      "no data from %s to %s: raw samples more than the tolerated gap %s apart", t1,
                      t2, gap);
        }
        return 0;
    }
    if (young) {
        out->reason = REASON_TOO_YOUNG;
        rfc3339_format(t1, sizeof(t1), proof_sec(from), RFC3339_SEC);
        rfc3339_format(t2, sizeof(t2), proof_sec(ws), RFC3339_SEC);
        /* proof_say(out, "first point at %s, after window start %s", t1, t2) without printf:
           every workload younger than a long idle timer is judged here at every cycle, and
           the call was a tenth of a recommend over a few hours (callgrind). */
        str_copy(out->detail, sizeof(out->detail), "first point at ");
        str_append(out->detail, sizeof(out->detail), t1);
        str_append(out->detail, sizeof(out->detail), ", after window start ");
        str_append(out->detail, sizeof(out->detail), t2);
        return 0;
    }
    out->reason = REASON_IDLE;
    out->idle_since = proof_idle_since(p, pp, hi, &g);
    /* proof_say(out, "below threshold %g%%", threshold), without printf: every idle series
       of every cycle of a backtest is judged here. */
    char num[32];
    str_copy(out->detail, sizeof(out->detail), "below threshold ");
    str_append(out->detail, sizeof(out->detail), str_g(num, threshold));
    str_append(out->detail, sizeof(out->detail), "%");
    return 0;
}

int64_t proof_idle_not_before(const struct proof *p, const struct proof_params *pp, int64_t now,
                              int64_t idle_timer, double threshold)
{
    const struct proof_breaker *hi = NULL;
    for (uint32_t i = 0; i < p->nlevels && i < pp->nthresholds && !hi; i++)
        if (pp->thresholds[i] == threshold)
            hi = &p->high[i];
    if (!hi || p->slast == PROOF_NONE || (p->last != PROOF_NONE && now < p->last) ||
        pp->step_ms <= 0 || pp->lookback_ms < 0 || pp->lookback_ms % pp->step_ms != 0 ||
        idle_timer < 0)
        return now;
    /*
     * Each term is a time before which one of proof_judge's tests at T (>= now) fails for
     * every fold of later samples, which can only make the times it reads later: a later
     * high or non-finite sample, a later covered stretch, a later first point.
     *   active, not_a_number: with m = min(idle timer, lookback), the window's earliest step
     *     starts before max(ws, start) = T - m (btdue_active_until): a high sample or a
     *     non-finite one at or after T - m is in it, and either verdict is a keep;
     *   gap: idle needs every instant of [ws, T] covered, so the stretch covering T began at
     *     or before ws: span_a / 2 (the first sample of the stretch of the last sample; a
     *     later sample begins a later one) <= T - idle timer;
     *   young: idle needs a sample in [start - step, W] with W <= ws. When the window is
     *     young at now, the samples folded after W(now) begin at `first` and any later one
     *     is after now, so T - idle timer >= first. Only where proof_young knows `first`
     *     (the window within the grid, the silences kept telling).
     */
    int64_t m = idle_timer < pp->lookback_ms ? idle_timer : pp->lookback_ms, b = now;
    if (hi->at != PROOF_NONE && hi->at + m + 1 > b)
        b = hi->at + m + 1;
    if (p->nan.at != PROOF_NONE && p->nan.at + m + 1 > b)
        b = p->nan.at + m + 1;
    if (p->span_a != PROOF_NONE && -proof_floordiv(-p->span_a, 2) + idle_timer > b)
        b = -proof_floordiv(-p->span_a, 2) + idle_timer;
    struct proof_grid g = {.now = now, .step = pp->step_ms, .start = now - pp->lookback_ms};
    int64_t first = PROOF_NONE;
    bool known = false;
    if (proof_young(p, pp, &g, grid_floor(&g, now - idle_timer), &first, &known) && known &&
        first + idle_timer > b)
        b = first + idle_timer;
    return b;
}

bool proof_needs_window(const struct proof *p, const struct proof_params *pp, int64_t now_ms)
{
    /* proof_active's window is [g0 - step, now] with g0 >= now - idle timer: a margin of a
       step more. The lowest threshold's last high sample is the latest of any threshold's. */
    int64_t lo = now_ms - pp->idle_max_ms - 2 * pp->step_ms;
    return p->nan.at != PROOF_NONE && p->nan.at >= lo && p->nlevels > 0 &&
           p->high[0].at != PROOF_NONE && p->high[0].at >= lo;
}
