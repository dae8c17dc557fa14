/*
 * The enforcer's decision function: rules plus the Prometheus data fetched for them, and the
 * time `now`, in; one keep/reclaim decision per workload out. No I/O, no clock, no logging,
 * so that `plan`, `explain` and the table-driven tests see exactly what the loop acts on.
 *
 * A workload is idle only when it is *proven* idle: each of its activity series (one per
 * GPU, partition or container) reaches back to the window start, has no raw samples more
 * than the tolerated gap apart, still reports at `now`, and every point in
 * [now - idleTimer, now] is a number below the threshold. Each series is judged on its own
 * before anything is merged, so a silent device is never hidden by a neighbour. Kaiwo counts
 * missing data as 0 %; a scrape outage would then kill workloads, so here every doubt is a
 * "keep" with a reason. Gaps and staleness come from the raw-coverage series fetch.c fetches
 * (see fetch.h), or for an expression from the step grid, where any missing step is a gap.
 *
 * When several reasons apply, the one reported is the first of:
 *   query_error > rule_disabled > exempt > no_data > active > not_a_number > stale > gap >
 *   too_young > outside_window > (policy: pressure_unknown > no_allocation > no_pressure >
 *   fit_check > not_needed) > cycle_cap
 * so that `explain` names the reason that would still hold if the others went away: a
 * workload that was active does not become reclaimable by fixing a gap.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decide.h"
#include "pressure.h"
#include "dur.h"
#include "exprcov.h"
#include "rfc3339.h"
#include "util.h"

/* Timestamps come from JSON floats; treat points this close as the same instant. */
#define DECIDE_EPS 1e-6
/* Prometheus refuses a range query with more than 11000 points per series. */
#define DECIDE_MAX_POINTS 11000.0

enum entry_kind { ENTRY_ACTIVITY = 0, ENTRY_ALLOCATION, ENTRY_PRIORITY };

/* One input series, keyed by its workload identity, so that sorting groups a workload. */
struct entry {
    struct labels id;
    enum entry_kind kind;
    const struct series *s;
    const struct rule_proof *rp; /* the activity series as a proof (rule_data.has_proofs) */
    size_t idx;
};

/* A merged activity point: `v` is the largest finite value, NaN if none was finite. */
struct wpoint {
    double t, v;
    bool nonfinite; /* some series had NaN or +-Inf here */
};

/* An idle workload competing for reclaim, with its sanitised resource name. */
struct cand {
    struct decision_rec *d;
    char key[96];
};

static const char *const reason_names[REASON__COUNT] = {
    [REASON_IDLE] = "idle",
    [REASON_ACTIVE] = "active",
    [REASON_NO_DATA] = "no_data",
    [REASON_TOO_YOUNG] = "too_young",
    [REASON_GAP] = "gap",
    [REASON_STALE] = "stale",
    [REASON_NOT_A_NUMBER] = "not_a_number",
    [REASON_QUERY_ERROR] = "query_error",
    [REASON_EXEMPT] = "exempt",
    [REASON_RULE_DISABLED] = "rule_disabled",
    [REASON_OUTSIDE_WINDOW] = "outside_window",
    [REASON_NO_PRESSURE] = "no_pressure",
    [REASON_PRESSURE_UNKNOWN] = "pressure_unknown",
    [REASON_FIT_CHECK] = "fit_check",
    [REASON_NOT_NEEDED] = "not_needed",
    [REASON_CYCLE_CAP] = "cycle_cap",
    [REASON_NO_ALLOCATION] = "no_allocation",
};

const char *decide_reason_name(enum reason r)
{
    if ((int)r < 0 || r >= REASON__COUNT)
        return "unknown";
    return reason_names[r];
}

const char *decide_decision_name(enum decision d)
{
    return d == DECISION_RECLAIM ? "reclaim" : "keep";
}

static void set_detail(struct decision_rec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_detail(struct decision_rec *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->detail, sizeof(d->detail), fmt, ap);
    va_end(ap);
}

/*
 * Two identities of one decide_rule (struct entries): the same names at the same places, the
 * rule's strings themselves, so the order labels_compare gives them is that of their values
 * in turn.
 */
static int cmp_identity(const struct labels *x, const struct labels *y)
{
    for (size_t i = 0; i < x->n; i++) {
        int c = strcmp(x->v[i].value, y->v[i].value);
        if (c)
            return c;
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = cmp_identity(&x->id, &y->id);
    if (c)
        return c;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    c = labels_compare(&x->s->labels, &y->s->labels);
    if (c)
        return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * e[0 .. n) in cmp_entry's order. The entries come as a few ascending runs (the activity, the
 * allocation and the priority series, each most often already in label order as the servers
 * hand them out), so the runs are merged: about n comparisons instead of qsort's n log n,
 * which with their label comparisons were a sixth of a backtest judging hundreds of
 * workloads each cycle (callgrind). cmp_entry is a total order (the index breaks the last
 * tie), so the result is the one qsort gives; input in many runs goes to qsort.
 */
static void sort_entries(struct entry *e, size_t n)
{
    size_t rs[65], nr = 0; /* the start of each ascending run, then n */
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && cmp_entry(&e[i - 1], &e[i]) < 0)
            continue;
        if (nr == 64) {
            qsort(e, n, sizeof(*e), cmp_entry);
            return;
        }
        rs[nr++] = i;
    }
    if (nr <= 1)
        return;
    rs[nr] = n;
    struct entry *tmp = xmalloc(n * sizeof(*tmp));
    while (nr > 1) {
        size_t k = 0;
        for (size_t r = 0; r < nr; r += 2) {
            size_t a = rs[r];
            rs[k++] = a;
            if (r + 1 == nr)
                break; /* the odd run out waits for the next pass */
            size_t m = rs[r + 1], b = rs[r + 2], i = a, j = m, o = a;
            while (i < m && j < b)
                tmp[o++] = cmp_entry(&e[j], &e[i]) < 0 ? e[j++] : e[i++];
            while (i < m)
                tmp[o++] = e[i++];
            while (j < b)
                tmp[o++] = e[j++];
            memcpy(e + a, tmp + a, (b - a) * sizeof(*e));
        }
        rs[k] = n;
        nr = k;
    }
    free(tmp);
}

static int cmp_wpoint(const void *a, const void *b)
{
    const struct wpoint *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * The entries of one decide_rule, with their identities. An entry's identity is the
 * projection of its series' labels on the rule's identity names (labels_project: sorted by
 * name, a name listed twice once), borrowed: the names are the rule's, the values the
 * series', and the label arrays of every entry share one block, since they live only as long
 * as the rule's judgement and the series outlive it. decide() projected every series of every
 * cycle into a block of its own (a tenth of a recommend, callgrind); a record's identity is
 * still its own copy (decide_workload).
 */
struct entries {
    struct entry *v;
    size_t n, cap;
    struct label *ids; /* cap x nid labels: entry i's identity at ids + i * nid */
    char *const *names;
    size_t nid; /* the identity's names in label order, each once */
};

static int cmp_name_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Room for `cap` entries of rule r. */
static void entries_init(struct entries *es, const struct rule *r, size_t cap)
{
    *es = (struct entries){.cap = cap ? cap : 1};
    es->v = xmalloc(es->cap * sizeof(*es->v));
    char **names = xmalloc((r->nidentity ? r->nidentity : 1) * sizeof(*names));
    for (size_t i = 0; i < r->nidentity; i++)
        names[i] = r->identity[i];
    qsort(names, r->nidentity, sizeof(*names), cmp_name_ptr);
    size_t k = 0;
    for (size_t i = 0; i < r->nidentity; i++)
        if (k == 0 || strcmp(names[k - 1], names[i]) != 0)
            names[k++] = names[i];
    es->names = names;
    es->nid = k;
    size_t nids = es->cap * k;
    es->ids = xmalloc((nids ? nids : 1) * sizeof(*es->ids));
}

static void entries_free(struct entries *es)
{
    free(es->v);
    free(es->ids);
    free((void *)es->names);
}

/* Add the entry of series s, or not when it lacks an identity label: it cannot be acted on. */
static void entries_add(struct entries *es, const struct series *s, enum entry_kind kind,
                        const struct rule_proof *rp, size_t idx)
{
    if (es->n == es->cap)
        return; /* not reached: the caller counted every series */
    struct label *id = es->ids + es->n * es->nid;
    for (size_t i = 0; i < es->nid; i++) {
        const char *v = labels_get(&s->labels, es->names[i]);
        if (!v || !*v)
            return;
        id[i] = (struct label){es->names[i], (char *)v};
    }
    es->v[es->n++] =
        (struct entry){.id = {.v = id, .n = es->nid}, .kind = kind, .s = s, .rp = rp, .idx = idx};
}

static void add_entries(struct entries *es, const struct matrix *m, enum entry_kind kind)
{
    for (size_t i = 0; i < m->n; i++)
        entries_add(es, &m->s[i], kind, NULL, i);
}

/* The proofs of rule_data with a sample on now's grid, as activity entries. */
static void add_proof_entries(struct entries *es, const struct rule_data *rd, double now)
{
    int64_t now_ms = llround(now * 1000.0);
    for (size_t i = 0; i < rd->nproofs; i++)
        if (rd->proofs[i].p && proof_present(rd->proofs[i].p, &rd->proof_params, now_ms))
            entries_add(es, &rd->proofs[i].s, ENTRY_ACTIVITY, &rd->proofs[i], i);
}

/*
 * Several activity series of one workload (one per GPU, per container, ...) merge by taking
 * the largest value at each timestamp: the workload is active if any part of it is.
 */
static struct wpoint *merge_activity(const struct entry *e, size_t ne, double now, size_t *np)
{
    size_t total = 0;
    for (size_t i = 0; i < ne; i++)
        if (e[i].kind == ENTRY_ACTIVITY)
            total += e[i].s->n;
    struct wpoint *p = xmalloc((total ? total : 1) * sizeof(*p));
    size_t n = 0;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY)
            continue;
        for (size_t j = 0; j < e[i].s->n; j++) {
            const struct point *q = &e[i].s->p[j];
            if (!isfinite(q->t) || q->t > now + DECIDE_EPS)
                continue;
            bool fin = isfinite(q->v);
            p[n++] = (struct wpoint){.t = q->t, .v = fin ? q->v : NAN, .nonfinite = !fin};
        }
    }
    if (n > 1)
        qsort(p, n, sizeof(*p), cmp_wpoint);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && fabs(p[i].t - p[out - 1].t) <= DECIDE_EPS) {
            struct wpoint *m = &p[out - 1];
            if (!isnan(p[i].v) && (isnan(m->v) || p[i].v > m->v))
                m->v = p[i].v;
            m->nonfinite |= p[i].nonfinite;
        } else {
            p[out++] = p[i];
        }
    }
    *np = out;
    return p;
}

/*
 * Allocation per workload: series of the same (sanitised) resource add up, e.g. one per
 * container; with several resources the largest total is the one the workload competes in.
 */
static void pick_allocation(const struct rule *r, const struct entry *e, size_t ne,
                            struct decision_rec *d, const struct series **chosen)
{
    d->allocated = NAN;
    d->resource[0] = '\0';
    *chosen = NULL;
    char best_key[96] = "";
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ALLOCATION || e[i].s->n == 0 || !isfinite(e[i].s->p[0].v) ||
            e[i].s->p[0].v < 0)
            continue;
        const char *res = labels_get(&e[i].s->labels, r->resource_label);
        char key[96];
        pressure_sanitize(res ? res : "", key, sizeof(key));
        double sum = 0;
        for (size_t j = 0; j < ne; j++) {
            if (e[j].kind != ENTRY_ALLOCATION || e[j].s->n == 0 || !isfinite(e[j].s->p[0].v) ||
                e[j].s->p[0].v < 0)
                continue;
            const char *rj = labels_get(&e[j].s->labels, r->resource_label);
            char kj[96];
            pressure_sanitize(rj ? rj : "", kj, sizeof(kj));
            if (strcmp(key, kj) == 0)
                sum += e[j].s->p[0].v;
        }
        if (!*chosen || sum > d->allocated || (sum == d->allocated && strcmp(key, best_key) < 0)) {
            *chosen = e[i].s;
            d->allocated = sum;
            str_copy(best_key, sizeof(best_key), key);
            str_copy(d->resource, sizeof(d->resource), res ? res : "");
        }
    }
}

static double pick_priority(const struct entry *e, size_t ne)
{
    double prio = NAN;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_PRIORITY || e[i].s->n == 0 || !isfinite(e[i].s->p[0].v))
            continue;
        /* Several priorities for one workload: the highest protects it most. */
        if (isnan(prio) || e[i].s->p[0].v > prio)
            prio = e[i].s->p[0].v;
    }
    return isnan(prio) ? 0 : prio;
}

static bool in_scope(const struct rule *r, const struct labels *all)
{
    if (r->nnamespaces) {
        const char *ns = labels_get(all, "namespace");
        bool found = false;
        for (size_t i = 0; ns && i < r->nnamespaces && !found; i++)
            found = strcmp(ns, r->namespaces[i]) == 0;
        if (!found)
            return false;
    }
    return match_all(r->scope.m, r->scope.n, all);
}

/* Effective threshold and idle timer; returns false when an exemption or override says never. */
static bool apply_overrides(const struct rule *r, const struct labels *all, struct decision_rec *d)
{
    d->threshold = r->threshold;
    d->idle_timer = r->idle_timer;
    for (size_t i = 0; i < r->nexemptions; i++) {
        const struct rule_exemption *x = &r->exemptions[i];
        if (match_all(x->match.m, x->match.n, all)) {
            if (x->reason)
                set_detail(d, "exempt: %s", x->reason);
            else
                set_detail(d, "matches exemption %zu", i + 1);
            return false;
        }
    }
    for (size_t i = 0; i < r->noverrides; i++) {
        const struct rule_override *o = &r->overrides[i];
        if (!match_all(o->match.m, o->match.n, all))
            continue;
        if (o->has_threshold)
            d->threshold = o->threshold;
        if (o->has_idle_timer)
            d->idle_timer = o->idle_timer;
        if (o->has_enabled && !o->enabled) {
            set_detail(d, "override %zu has enabled: false", i + 1);
            return false;
        }
        break;
    }
    return true;
}

/* Window statistics over the points in [window_start, now]. */
static void window_stats(const struct wpoint *p, size_t n, struct decision_rec *d)
{
    double sum = 0, max = NAN, last = NAN;
    size_t nfin = 0;
    d->samples = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].t < d->window_start - DECIDE_EPS || p[i].t > d->window_end + DECIDE_EPS)
            continue;
        d->samples++;
        last = p[i].nonfinite ? NAN : p[i].v;
        if (isnan(p[i].v))
            continue;
        nfin++;
        sum += p[i].v;
        if (isnan(max) || p[i].v > max)
            max = p[i].v;
    }
    d->max = max;
    d->mean = nfin ? sum / (double)nfin : NAN;
    d->last = last;
}

/*
 * window_stats for series that are proofs: from each series' statistics of the workload's
 * idle timer (rule_proof.win), display only (decide.h, rule_data.has_proofs).
 */
/* The window statistics of a proof for an idle timer, or NULL when the fetch computed none. */
static const struct rule_winstats *proof_win(const struct rule_proof *rp, double idle_timer)
{
    for (size_t k = 0; rp && k < rp->nwin; k++)
        if (fabs(rp->win[k].idle_timer - idle_timer) < 1e-6)
            return &rp->win[k];
    return NULL;
}

static void proof_window_stats(const struct entry *e, size_t ne, struct decision_rec *d)
{
    double sum = 0, max = NAN, last = NAN, last_t = NAN;
    size_t nfin = 0;
    d->samples = 0;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY || !e[i].rp)
            continue;
        const struct rule_winstats *w = proof_win(e[i].rp, d->idle_timer);
        if (!w || !w->samples)
            continue;
        if (w->samples > d->samples)
            d->samples = w->samples;
        nfin += w->finite;
        sum += w->sum;
        if (!isnan(w->max) && (isnan(max) || w->max > max))
            max = w->max;
        /* The last point: the latest series' value, NaN when any is not finite then. */
        if (isnan(last_t) || w->last_t > last_t + DECIDE_EPS) {
            last_t = w->last_t;
            last = w->last;
        } else if (fabs(w->last_t - last_t) <= DECIDE_EPS && !isnan(last)) {
            last = isnan(w->last) ? NAN : w->last > last ? w->last : last;
        }
    }
    d->max = max;
    d->mean = nfin ? sum / (double)nfin : NAN;
    d->last = last;
}

/* What decide_workload needs to judge one series: the grid and its raw coverage. */
struct judge_ctx {
    const struct rule_data *rd;
    double now, ws, step, gap, threshold;
};

/* A point is "at" grid time t when it lies within half a step of it. */
static bool at_time(double pt, double t, double step)
{
    return fabs(pt - t) < step / 2;
}

/*
 * Whether the raw samples cover the step ending at grid time t: 1 when its coverage point is
 * present and 1 (fetch.h), 0 when it is present and less (or NaN), -1 when it is absent. `*k` walks
 * the coverage points forward, so a scan over ascending times is linear. Without raw
 * coverage (an expression), a step is covered (1) when it has an activity point of its own.
 */
static int step_coverage(const struct judge_ctx *jc, const struct series *s,
                         const struct series *cov, size_t *k, double t)
{
    const struct series *g = jc->rd->raw_coverage ? cov : s;
    if (!g)
        return -1;
    while (*k < g->n && g->p[*k].t < t - jc->step / 2)
        (*k)++;
    /* Raw samples list only the steps not wholly covered (rule_data.coverage_tail). */
    if (jc->rd->coverage_tail && (*k >= g->n || !at_time(g->p[*k].t, t, jc->step)))
        return 1;
    if (*k >= g->n || !at_time(g->p[*k].t, t, jc->step))
        return -1;
    return !jc->rd->raw_coverage || g->p[*k].v >= 1.0 ? 1 : 0;
}

static bool step_covered(const struct judge_ctx *jc, const struct series *s,
                         const struct series *cov, size_t *k, double t)
{
    return step_coverage(jc, s, cov, k, t) == 1;
}

static bool point_below(const struct point *p, double threshold)
{
    return isfinite(p->v) && p->v * 100.0 < threshold;
}

/*
 * Start of the trailing run of points below the threshold that ends at the series' last
 * point, stepping back only over covered steps; it may reach back before the window (the
 * lookback is twice the idle timer) and is what ranks idle workloads against each other.
 */
static double series_idle_start(const struct judge_ctx *jc, const struct series *s,
                                const struct series *cov, size_t n)
{
    if (n == 0 || !point_below(&s->p[n - 1], jc->threshold))
        return NAN;
    const struct series *g = jc->rd->raw_coverage ? cov : s;
    size_t i = n - 1;
    while (i > 0 && point_below(&s->p[i - 1], jc->threshold)) {
        /* Every step after the earlier point up to the later one must be covered. */
        size_t lo = 0, hi = g ? g->n : 0; /* start the walk there: linear overall */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->p[mid].t < s->p[i - 1].t + jc->step / 2)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t k = lo;
        bool ok = true;
        for (double t = s->p[i - 1].t + jc->step; ok && t <= s->p[i].t + jc->step / 2;
             t += jc->step)
            ok = step_covered(jc, s, cov, &k, t);
        if (!ok)
            break;
        i--;
    }
    /*
     * A run that reaches the series' first point reaches the grid start when every step
     * before that point is covered (samples sparser than the step, within the tolerated
     * gap): it is then idle since at least the grid start, not since its first point, which
     * would depend on where the samples fall near the grid start. The proof (proof.c) knows
     * only this, having no samples of that time left.
     */
    if (i == 0 && g && jc->rd->start < s->p[0].t - jc->step / 2) {
        size_t k = 0;
        bool ok = true;
        for (double t = jc->rd->start; ok && t <= s->p[0].t + jc->step / 2; t += jc->step)
            ok = step_covered(jc, s, cov, &k, t);
        if (ok)
            return jc->rd->start;
    }
    return s->p[i].t;
}

/* Number of points of `s` at or before now. */
static size_t points_upto(const struct series *s, double now)
{
    size_t n = s->n;
    while (n > 0 && !(s->p[n - 1].t <= now + DECIDE_EPS))
        n--;
    return n;
}

/*
 * One series on its own: REASON_IDLE when it proves nothing against idleness, else the
 * first of not_a_number > stale > gap > too_young that holds, with a detail. Activity
 * above the threshold is judged over all series of the workload by the caller.
 *
 * Staleness and gaps come from the raw samples (the coverage series): a step whose sub-points
 * were not all within (toleratedGap - resolution) of a raw sample is a gap, so a gap is
 * never under-stated; the grid alone under-states both by up to one step, because
 * max_over_time carries a sample to the next step point.
 */
static enum reason judge_series(const struct judge_ctx *jc, const struct series *s,
                                const struct series *cov, char *detail, size_t dlen)
{
    char t1[32], t2[32], gap[DUR_LEN];
    double ws = jc->ws, step = jc->step;
    dur_format(gap, sizeof(gap), jc->gap);
    size_t n = points_upto(s, jc->now);
    const struct point *p = s->p;

    for (size_t i = 0; i < n; i++) {
        if (p[i].t >= ws - DECIDE_EPS && !isfinite(p[i].v)) {
            rfc3339_format(t1, sizeof(t1), p[i].t, RFC3339_SEC);
            snprintf(detail, dlen, "activity is not a number at %s", t1);
            return REASON_NOT_A_NUMBER;
        }
    }
    if (n == 0) {
        snprintf(detail, dlen, "no activity points up to now");
        return REASON_NO_DATA;
    }
    size_t k = 0;
    bool at_now = p[n - 1].t > jc->now - step / 2;
    if (!at_now && !(jc->rd->raw_coverage && step_covered(jc, s, cov, &k, jc->now))) {
        rfc3339_format(t1, sizeof(t1), p[n - 1].t, RFC3339_SEC);
        if (jc->rd->raw_coverage)
            snprintf(detail, dlen,
                     "last point at %s; no raw sample within the tolerated gap %s before now", t1,
                     gap);
        else
            snprintf(detail, dlen, "last point at %s, %s before now: the last step has no point",
                     t1, dur_format(t2, sizeof(t2), jc->now - p[n - 1].t));
        return REASON_STALE;
    }
    /* Gaps count from the point that covers the window start; before it they do not matter. */
    size_t i0 = 0;
    bool young = !(p[0].t <= ws + DECIDE_EPS);
    for (size_t i = 0; i < n && p[i].t <= ws + DECIDE_EPS; i++)
        i0 = i;
    k = 0;
    size_t j = i0;
    bool first_unproven = false;
    for (double t = p[i0].t; t <= jc->now + step / 2; t += step) {
        if (step_covered(jc, s, cov, &k, t))
            continue;
        /*
         * Raw coverage of a step that begins before the window start: only its instants from
         * the window start on must be covered, and the value says how far back from its end
         * they are (rule_data.coverage_tail).
         */
        if (jc->rd->coverage_tail && t - step < ws - DECIDE_EPS && cov && k < cov->n &&
            at_time(cov->p[k].t, t, step) && cov->p[k].v * step >= t - ws - DECIDE_EPS)
            continue;
        /*
         * The series' first step: its sub-points before the first sample are uncovered by
         * nature, so whether raw samples follow it closely is not proven. The workload
         * keeps as too young (for one more cycle at most, once the window moves on).
         */
        if (i0 == 0 && t == p[0].t) {
            first_unproven = true;
            continue;
        }
        /* The points either side of the uncovered step, for people. */
        while (j + 1 < n && p[j + 1].t < t - step / 2)
            j++;
        size_t next = j + 1;
        while (next < n && p[next].t < t - step / 2)
            next++;
        rfc3339_format(t1, sizeof(t1), p[j].t, RFC3339_SEC);
        if (next < n) {
            rfc3339_format(t2, sizeof(t2), p[next].t, RFC3339_SEC);
            snprintf(detail, dlen,
                     "no data from %s to %s: raw samples more than the tolerated gap %s apart", t1,
                     t2, gap);
        } else {
            snprintf(detail, dlen, "no data after %s: raw samples more than %s apart", t1, gap);
        }
        return REASON_GAP;
    }
    if (young || first_unproven) {
        rfc3339_format(t1, sizeof(t1), p[0].t, RFC3339_SEC);
        rfc3339_format(t2, sizeof(t2), ws, RFC3339_SEC);
        if (young)
            snprintf(detail, dlen, "first point at %s, after window start %s", t1, t2);
        else
            snprintf(detail, dlen,
                     "first point at %s, in the step of window start %s: the raw samples of "
                     "that step are not proven",
                     t1, t2);
        return REASON_TOO_YOUNG;
    }
    return REASON_IDLE;
}

/* Rank of an unproven-series reason: a lower rank wins when several series disagree. */
static int series_rank(enum reason r)
{
    switch (r) {
    case REASON_QUERY_ERROR: /* a proof that could not be judged (proof_judge) */
        return -1;
    case REASON_NOT_A_NUMBER:
        return 0;
    case REASON_NO_DATA:
        return 1;
    case REASON_STALE:
        return 2;
    case REASON_GAP:
        return 3;
    case REASON_TOO_YOUNG:
        return 4;
    default:
        return 5;
    }
}

static int cmp_series_ptr(const void *a, const void *b)
{
    return labels_compare(&(*(const struct series *const *)a)->labels,
                          &(*(const struct series *const *)b)->labels);
}

/* The coverage series with exactly the labels of `s`, or NULL (`idx` sorted by labels). */
static const struct series *find_coverage(const struct series *const *idx, size_t n,
                                          const struct series *s)
{
    const struct series *key = s;
    const struct series *const *hit =
        n ? bsearch(&key, idx, n, sizeof(*idx), cmp_series_ptr) : NULL;
    return hit ? *hit : NULL;
}

/*
 * Fold one series' verdict `r` into the workload's `*worst` (the lowest series_rank wins, with
 * its detail, naming the series when the workload has several). True while every series so
 * far is idle: the caller then folds the series' idle start into the workload's.
 */
static bool judge_series_into(struct decision_rec *d, const struct series *s, enum reason r,
                              const char *detail, enum reason *worst)
{
    if (series_rank(r) < series_rank(*worst)) {
        *worst = r;
        /* Name the series when there are several: "gpu_id=1: last point at ...". */
        if (s->labels.n > d->identity.n) {
            char *l = labels_format(&s->labels);
            set_detail(d, "%s: %s", l, detail);
            free(l);
        } else {
            str_copy(d->detail, sizeof(d->detail), detail);
        }
    }
    return *worst == REASON_IDLE;
}

/*
 * The workload's verdict once every series is folded in: idle since the latest idle start.
 * An idle verdict gets its detail from apply_policy (a reclaim, or why not), which every
 * record of a rule passes, or from what overrides it in decide_workload: no text is written
 * here that nothing could read (at an hourly cap that binds, every candidate of every cycle
 * of a backtest comes here).
 */
static enum reason judge_end(struct decision_rec *d, enum reason worst, double since)
{
    if (worst != REASON_IDLE)
        return worst;
    d->idle_since = since;
    return REASON_IDLE;
}

/*
 * The activity verdict for one workload: busy if any series has a point at or above the
 * threshold in the window (the latest such point is quoted); otherwise the verdict of the
 * worst series, each judged on its own before anything is merged; otherwise idle.
 */
static enum reason judge(const struct judge_ctx *jc, const struct entry *e, size_t ne,
                         const struct series *const *cidx, size_t ncidx, struct decision_rec *d)
{
    char t1[32];
    const struct point *active = NULL;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY)
            continue;
        const struct series *s = e[i].s;
        for (size_t j = 0; j < s->n; j++) {
            const struct point *q = &s->p[j];
            if (q->t < jc->ws - DECIDE_EPS || q->t > jc->now + DECIDE_EPS || !isfinite(q->v) ||
                q->v * 100.0 < jc->threshold)
                continue;
            if (!active || q->t > active->t || (q->t == active->t && q->v > active->v))
                active = q;
        }
    }
    if (active) {
        rfc3339_format(t1, sizeof(t1), active->t, RFC3339_SEC);
        set_detail(d, "activity %g%% at %s >= threshold %g%%", active->v * 100.0, t1,
                   jc->threshold);
        return REASON_ACTIVE;
    }
    enum reason worst = REASON_IDLE;
    double since = NAN;
    char detail[sizeof(d->detail)];
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY)
            continue;
        const struct series *s = e[i].s;
        const struct series *cov = find_coverage(cidx, ncidx, s);
        enum reason r = judge_series(jc, s, cov, detail, sizeof(detail));
        if (judge_series_into(d, s, r, detail, &worst)) {
            double st = series_idle_start(jc, s, cov, points_upto(s, jc->now));
            if (isnan(since) || st > since)
                since = st;
        }
    }
    return judge_end(d, worst, since);
}

/*
 * judge() for a rule whose series are proofs (rule_data.has_proofs): the same verdict from
 * proof_judge per series, combined as judge() combines the grid judge's.
 */
static enum reason judge_proofs(const struct judge_ctx *jc, const struct entry *e, size_t ne,
                                struct decision_rec *d)
{
    int64_t now = llround(jc->now * 1000.0), idle = llround(d->idle_timer * 1000.0);
    struct proof_verdict *v = xmalloc((ne ? ne : 1) * sizeof(*v));
    const struct proof_verdict *active = NULL;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY)
            continue;
        proof_judge(e[i].rp->p, &jc->rd->proof_params, now, idle, jc->threshold, &v[i]);
        /*
         * A proof may miss activity in a window that also holds a non-finite sample (which
         * steps they share depends on where `now` puts the step boundaries, proof.c); the
         * window statistics the fetch folded for this `now` know the largest finite point.
         */
        const struct rule_winstats *w = proof_win(e[i].rp, d->idle_timer);
        if (v[i].reason != REASON_ACTIVE && v[i].reason != REASON_QUERY_ERROR && w &&
            !isnan(w->max) && w->max * 100.0 >= jc->threshold) {
            char t1[32];
            v[i].reason = REASON_ACTIVE;
            v[i].active_at = w->max_t;
            v[i].active_value = w->max;
            rfc3339_format(t1, sizeof(t1), w->max_t, RFC3339_SEC);
            snprintf(v[i].detail, sizeof(v[i].detail), "activity %g%% at %s >= threshold %g%%",
                     w->max * 100.0, t1, jc->threshold);
        }
        if (v[i].reason == REASON_ACTIVE &&
            (!active || v[i].active_at > active->active_at ||
             (v[i].active_at == active->active_at && v[i].active_value > active->active_value)))
            active = &v[i];
    }
    if (active) {
        memcpy(d->detail, active->detail, sizeof(d->detail));
        free(v);
        return REASON_ACTIVE;
    }
    enum reason worst = REASON_IDLE;
    double since = NAN;
    for (size_t i = 0; i < ne; i++) {
        if (e[i].kind != ENTRY_ACTIVITY)
            continue;
        if (judge_series_into(d, e[i].s, (enum reason)v[i].reason, v[i].detail, &worst)) {
            double st = v[i].idle_since;
            if (isnan(since) || st > since)
                since = st;
        }
    }
    free(v);
    return judge_end(d, worst, since);
}

static void push_rec(struct decisions *out, size_t *cap, const struct decision_rec *d)
{
    if (out->n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        out->v = xrealloc(out->v, *cap * sizeof(*out->v));
    }
    out->v[out->n++] = *d;
}

/* Build the record of one workload (entries e[0..ne) share its identity). */
static bool decide_workload(const struct rule_data *rd, const struct entry *e, size_t ne,
                            const struct series *const *cidx, size_t ncidx, double now,
                            bool rule_active, struct decision_rec *d)
{
    const struct rule *r = rd->rule;
    const struct series *first_act = NULL, *alloc = NULL;
    for (size_t i = 0; i < ne && !first_act; i++)
        if (e[i].kind == ENTRY_ACTIVITY)
            first_act = e[i].s;

    memset(d, 0, sizeof(*d));
    pick_allocation(r, e, ne, d, &alloc);
    if (!first_act && !alloc) {
        /* Only a priority series, or only allocation series with unusable values. */
        bool any_alloc = false;
        for (size_t i = 0; i < ne; i++)
            if (e[i].kind == ENTRY_ALLOCATION) {
                alloc = e[i].s;
                any_alloc = true;
                break;
            }
        if (!any_alloc)
            return false;
    }

    /* The activity series' labels, plus labels only the allocation series carries. */
    if (alloc && first_act)
        labels_union(&d->all, &first_act->labels, &alloc->labels);
    else
        labels_copy(&d->all, first_act ? &first_act->labels : &alloc->labels);
    if (!in_scope(r, &d->all)) {
        labels_free(&d->all);
        return false;
    }
    labels_copy(&d->identity, &e[0].id);
    d->rule = r;
    d->dry_run = r->dry_run;
    d->proof = rd->proof;
    d->decision = DECISION_KEEP;
    d->priority = pick_priority(e, ne);
    d->idle_since = NAN;

    bool eligible = apply_overrides(r, &d->all, d);
    char exempt_detail[sizeof(d->detail)];
    memcpy(exempt_detail, d->detail, sizeof(exempt_detail));

    d->window_end = now;
    d->window_start = now - d->idle_timer;
    double gap = r->tolerated_gap;

    size_t np = 0;
    struct wpoint *p = merge_activity(e, ne, now, &np);
    window_stats(p, np, d);
    free(p);
    if (rd->has_proofs)
        proof_window_stats(e, ne, d);
    enum reason verdict;
    if (!first_act) {
        verdict = REASON_NO_DATA;
        set_detail(d, "allocated but no activity series");
    } else {
        struct judge_ctx jc = {.rd = rd,
                               .now = now,
                               .ws = d->window_start,
                               .step = r->step > 0 ? r->step : 60,
                               .gap = gap,
                               .threshold = d->threshold};
        verdict = rd->has_proofs ? judge_proofs(&jc, e, ne, d) : judge(&jc, e, ne, cidx, ncidx, d);
        /* An expression's result bridges raw holes: its selectors' raw samples must prove
           what a selector rule's prove (exprcov.h). */
        if (verdict == REASON_IDLE && rd->inner) {
            verdict = exprcov_judge(rd->inner, &d->identity, d->window_start, d->detail,
                                    sizeof(d->detail));
            if (verdict != REASON_IDLE)
                d->idle_since = NAN;
        }
    }

    d->reason = verdict;
    if (rd->error) {
        d->reason = REASON_QUERY_ERROR;
        set_detail(d, "query failed: %s", rd->errmsg[0] ? rd->errmsg : "unknown error");
    } else if (!r->enabled) {
        d->reason = REASON_RULE_DISABLED;
        set_detail(d, "rule '%s' is disabled", r->name ? r->name : "");
    } else if (!eligible) {
        d->reason = REASON_EXEMPT;
        memcpy(d->detail, exempt_detail, sizeof(d->detail));
    } else if (verdict == REASON_IDLE && !rule_active) {
        d->reason = REASON_OUTSIDE_WINDOW;
        set_detail(d, "idle, but now is outside the rule's active windows");
    }
    return true;
}

/* Reclaim order: lowest priority first, then longest idle, then identity for determinism. */
static int cmp_victim(const struct decision_rec *a, const struct decision_rec *b)
{
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->idle_since != b->idle_since)
        return a->idle_since < b->idle_since ? -1 : 1;
    return labels_compare(&a->identity, &b->identity);
}

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : cmp_victim(x->d, y->d);
}

static int cmp_recp(const void *a, const void *b)
{
    return cmp_victim(*(struct decision_rec *const *)a, *(struct decision_rec *const *)b);
}

static double pending_demand(const struct rule_data *rd, const char *key)
{
    double sum = 0;
    for (size_t i = 0; i < rd->pending.n; i++) {
        const struct series *s = &rd->pending.s[i];
        const char *res = labels_get(&s->labels, rd->rule->resource_label);
        if (!res || !*res || s->n == 0 || !isfinite(s->p[0].v) || s->p[0].v <= 0)
            continue;
        char k[96];
        pressure_sanitize(res, k, sizeof(k));
        if (strcmp(k, key) == 0)
            sum += s->p[0].v;
    }
    return sum;
}

/*
 * Two raw names of one sanitised key among the candidates' allocations and the pending demand
 * (`amd.com/gpu` and `amd_com/gpu`, say): which resource is in demand cannot be told, so
 * nothing of that key is reclaimed. A name already in sanitised form (kube-state-metrics')
 * stands for whichever raw name it meets and is no second resource. True with the two names.
 */
static bool key_collides(const struct rule_data *rd, const struct cand *c, size_t b, size_t e,
                         const char **x, const char **y)
{
    *x = *y = NULL;
    for (size_t i = b; i <= e + rd->pending.n && !*y; i++) {
        const char *name;
        if (i < e) {
            name = c[i].d->resource;
        } else if (i > e) {
            const struct series *s = &rd->pending.s[i - e - 1];
            name = labels_get(&s->labels, rd->rule->resource_label);
            if (!name || !pressure_same(name, c[b].key))
                continue;
        } else {
            continue;
        }
        if (pressure_is_sanitized(name))
            continue;
        if (!*x)
            *x = name;
        else if (strcmp(*x, name) != 0)
            *y = name;
    }
    return *y != NULL;
}

static void mark_reclaim(struct decision_rec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void mark_reclaim(struct decision_rec *d, const char *fmt, ...)
{
    va_list ap;
    d->decision = DECISION_RECLAIM;
    d->reason = REASON_IDLE;
    va_start(ap, fmt);
    vsnprintf(d->detail, sizeof(d->detail), fmt, ap);
    va_end(ap);
}

/*
 * DuringGPUPressure, per resource: reclaim only to cover pending demand, and nothing when all
 * idle candidates together cannot cover it, since killing them would free GPUs nobody can use
 * (Kaiwo's all-or-nothing fit check, docs/decision-semantics.md §2.3).
 */
static void apply_pressure(const struct rule_data *rd, struct decision_rec *v, size_t n)
{
    struct cand *c = xmalloc((n ? n : 1) * sizeof(*c));
    size_t nc = 0;
    char since[32];
    for (size_t i = 0; i < n; i++) {
        struct decision_rec *d = &v[i];
        if (d->reason != REASON_IDLE)
            continue;
        if (rd->pending_error) {
            d->reason = REASON_PRESSURE_UNKNOWN;
            set_detail(d, "idle, but the pending-demand query failed");
        } else if (!isfinite(d->allocated) || d->allocated <= 0 || !d->resource[0]) {
            d->reason = REASON_NO_ALLOCATION;
            set_detail(d, "idle, but its GPU allocation is unknown");
        } else {
            c[nc].d = d;
            pressure_sanitize(d->resource, c[nc].key, sizeof(c[nc].key));
            nc++;
        }
    }
    if (nc > 1)
        qsort(c, nc, sizeof(*c), cmp_cand);
    for (size_t b = 0; b < nc;) {
        size_t e = b;
        double total = 0;
        while (e < nc && strcmp(c[e].key, c[b].key) == 0)
            total += c[e++].d->allocated;
        double demand = pending_demand(rd, c[b].key);
        double freed = 0;
        const char *x, *y;
        bool collides = key_collides(rd, c, b, e, &x, &y);
        for (size_t i = b; i < e; i++) {
            struct decision_rec *d = c[i].d;
            if (collides) {
                d->reason = REASON_PRESSURE_UNKNOWN;
                set_detail(d,
                           "idle, but '%s' and '%s' are one resource once sanitised ('%s'): "
                           "which one is pending is unknown",
                           x, y, c[b].key);
            } else if (demand <= 0) {
                d->reason = REASON_NO_PRESSURE;
                set_detail(d, "idle, but nothing is pending for '%s'", d->resource);
            } else if (total < demand) {
                d->reason = REASON_FIT_CHECK;
                set_detail(d, "idle workloads hold %g '%s', less than the %g pending", total,
                           c[b].key, demand);
            } else if (freed < demand) {
                freed += d->allocated;
                rfc3339_format(since, sizeof(since), d->idle_since, RFC3339_SEC);
                mark_reclaim(d, "idle since %s; frees %g of %g pending '%s'", since, freed, demand,
                             c[b].key);
            } else {
                d->reason = REASON_NOT_NEEDED;
                set_detail(d, "idle, but the %g pending '%s' are covered by others", demand,
                           c[b].key);
            }
        }
        b = e;
    }
    free(c);
}

static void apply_policy(const struct rule_data *rd, struct decision_rec *v, size_t n)
{
    const struct rule *r = rd->rule;
    char since[32];
    if (r->policy == POLICY_ALWAYS) {
        for (size_t i = 0; i < n; i++) {
            if (v[i].reason != REASON_IDLE)
                continue;
            rfc3339_format(since, sizeof(since), v[i].idle_since, RFC3339_SEC);
            if (isnan(v[i].max)) { /* no window statistics (proofs carried by `run`) */
                /* mark_reclaim(&v[i], "idle since %s, below threshold %g%%", ...) without
                   printf: every candidate of every cycle of a backtest comes here. */
                char num[32];
                v[i].decision = DECISION_RECLAIM;
                v[i].reason = REASON_IDLE;
                str_copy(v[i].detail, sizeof(v[i].detail), "idle since ");
                str_append(v[i].detail, sizeof(v[i].detail), since);
                str_append(v[i].detail, sizeof(v[i].detail), ", below threshold ");
                str_append(v[i].detail, sizeof(v[i].detail), str_g(num, v[i].threshold));
                str_append(v[i].detail, sizeof(v[i].detail), "%");
            } else
                mark_reclaim(&v[i], "idle since %s, max %g%% < threshold %g%%", since,
                             v[i].max * 100.0, v[i].threshold);
        }
    } else {
        apply_pressure(rd, v, n);
    }

    /* Cap per cycle in the same order the victims were ranked in. */
    struct decision_rec **rv = xmalloc((n ? n : 1) * sizeof(*rv));
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].decision == DECISION_RECLAIM)
            rv[nr++] = &v[i];
    /* The order only picks which are kept: with no more than the cap, none is (a sort of
       hundreds of candidates a cycle, most tied on priority and idle start and so compared
       by their labels, was a twentieth of a backtest at an hourly cap that binds). */
    if (nr > 1 && nr > r->max_terminations)
        qsort(rv, nr, sizeof(*rv), cmp_recp);
    for (size_t i = r->max_terminations; i < nr; i++) {
        rv[i]->decision = DECISION_KEEP;
        rv[i]->reason = REASON_CYCLE_CAP;
        set_detail(rv[i], "idle, but maxTerminationsPerCycle %u is reached", r->max_terminations);
    }
    free(rv);
}

static void decide_rule(const struct rule_data *rd, double now, struct decisions *out, size_t *cap)
{
    const struct rule *r = rd->rule;
    struct entries es;
    entries_init(&es, r,
                 (rd->has_proofs ? rd->nproofs : rd->activity.n) + rd->allocation.n +
                     rd->priority.n);
    if (rd->has_proofs)
        add_proof_entries(&es, rd, now);
    else
        add_entries(&es, &rd->activity, ENTRY_ACTIVITY);
    add_entries(&es, &rd->allocation, ENTRY_ALLOCATION);
    add_entries(&es, &rd->priority, ENTRY_PRIORITY);
    struct entry *e = es.v;
    size_t ne = es.n;
    sort_entries(e, ne);

    /* Coverage series by labels, to pair each activity series with its own. */
    size_t ncidx = rd->coverage.n;
    const struct series **cidx = xmalloc((ncidx ? ncidx : 1) * sizeof(*cidx));
    for (size_t i = 0; i < ncidx; i++)
        cidx[i] = &rd->coverage.s[i];
    if (ncidx > 1)
        qsort(cidx, ncidx, sizeof(*cidx), cmp_series_ptr);

    bool active = decide_rule_active(r, now);
    size_t first = out->n;
    for (size_t b = 0; b < ne;) {
        size_t end = b + 1;
        while (end < ne && cmp_identity(&e[end].id, &e[b].id) == 0)
            end++;
        struct decision_rec d;
        if (decide_workload(rd, &e[b], end - b, cidx, ncidx, now, active, &d))
            push_rec(out, cap, &d);
        b = end;
    }
    entries_free(&es);
    free(cidx);
    apply_policy(rd, out->v + first, out->n - first);
}

void decide(const struct rule_data *data, size_t ndata, double now, struct decisions *out)
{
    size_t cap = 0;
    out->v = NULL;
    out->n = 0;
    for (size_t i = 0; i < ndata; i++)
        if (data[i].rule)
            decide_rule(&data[i], now, out, &cap);
}

void decisions_free(struct decisions *d)
{
    for (size_t i = 0; i < d->n; i++) {
        labels_free(&d->v[i].identity);
        labels_free(&d->v[i].all);
        free(d->v[i].target);
        free(d->v[i].target_kept);
        free(d->v[i].note);
    }
    free(d->v);
    d->v = NULL;
    d->n = 0;
}

double decide_lookback(const struct rule *r)
{
    double step = r->step > 0 ? r->step : 60;
    double longest = r->idle_timer;
    for (size_t i = 0; i < r->noverrides; i++)
        if (r->overrides[i].has_idle_timer && r->overrides[i].idle_timer > longest)
            longest = r->overrides[i].idle_timer;
    /* Whole steps, so that the last point of the range falls on `now`. */
    double lb = ceil(2 * longest / step) * step;
    if (lb > DECIDE_MAX_POINTS * step)
        lb = DECIDE_MAX_POINTS * step;
    return lb;
}

int decide_proof_params(const struct rule *r, struct proof_params *pp)
{
    double step = r->step > 0 ? r->step : 60;
    double gap = r->tolerated_gap > 0 ? r->tolerated_gap : 2 * step;
    double longest = r->idle_timer, lookback = decide_lookback(r);
    double fit = r->idle_timer <= lookback ? r->idle_timer : 0;
    *pp = (struct proof_params){0};
    pp->thresholds[pp->nthresholds++] = r->threshold;
    for (size_t i = 0; i < r->noverrides; i++) {
        const struct rule_override *o = &r->overrides[i];
        if (o->has_idle_timer && o->idle_timer > longest)
            longest = o->idle_timer;
        if (o->has_idle_timer && o->idle_timer <= lookback && o->idle_timer > fit)
            fit = o->idle_timer;
        if (!o->has_threshold)
            continue;
        bool seen = false;
        for (size_t k = 0; k < pp->nthresholds && !seen; k++)
            seen = pp->thresholds[k] == o->threshold;
        if (seen)
            continue;
        if (pp->nthresholds == PROOF_MAX_THRESHOLDS)
            return -1;
        pp->thresholds[pp->nthresholds++] = o->threshold;
    }
    pp->step_ms = llround(step * 1000.0);
    pp->gap_ms = llround(gap * 1000.0);
    pp->lookback_ms = llround(lookback * 1000.0);
    pp->idle_max_ms = llround(longest * 1000.0);
    /* With none fitting, every window starts before the grid: no silence is needed. */
    pp->idle_fit_ms = fit > 0 ? llround(fit * 1000.0) : pp->lookback_ms;
    proof_params_init(pp);
    return 0;
}

/*
 * A window whose end is not after its start wraps past midnight, and the part after
 * midnight belongs to the day it started on: "Fri 22:00-06:00" is active early Saturday,
 * not early Friday. Windows in a named time zone follow its DST changes; the edge cases
 * (skipped and repeated hours) are decided in tz_window_active.
 */
bool decide_rule_active(const struct rule *r, double now)
{
    if (r->nwindows == 0)
        return true;
    for (size_t i = 0; i < r->nwindows; i++) {
        const struct rule_window *w = &r->windows[i];
        struct tz_zone fixed;
        const struct tz_zone *z = &w->zone;
        if (!w->zone.name) {
            tz_fixed(&fixed, w->utc_offset_min * 60);
            z = &fixed;
        }
        if (tz_window_active(z, w->days, w->start_min, w->end_min, (int64_t)floor(now)))
            return true;
    }
    return false;
}

const char *decide_proof_name(enum decide_proof p)
{
    return p == DECIDE_PROOF_INCREMENTAL ? "incremental" : "full";
}
