/*
 * Per-cycle data fetch: turns each rule's sources into Prometheus queries, runs them once
 * per distinct (query, range) and hands every rule its own copy of the results. A result
 * is copied only for the rules that share it: the last rule to use it takes the original
 * (with 10,000 workloads an activity matrix is some 20 MB, and copying it cost a quarter
 * of a cycle).
 *
 * Why max_over_time per step: a range query evaluates its expression only at start,
 * start + step, ...; with a bare selector each point is the newest sample within 5 minutes
 * before it, so a burst between two points is never seen and a gap shorter than 5 minutes is
 * bridged by a repeated value, both making a busy workload look idle. max_over_time(x[STEP])
 * looks at every sample since the previous point and returns nothing where there were none.
 * For an arbitrary expression the same is done with a subquery at a resolution of at most
 * 15 s (a common scrape interval), because a range selector only applies to a selector.
 *
 * Why a second, coverage query: the grid alone cannot show when the raw samples were taken
 * (a sample 1 s after a step point is carried to the next one), so gaps and staleness would
 * be under-stated by up to a step. The coverage query counts, per step, the sub-points (every
 * R seconds) that have a raw sample within G - R before them, and a tiny second query counts
 * the sub-points per step in the same engine (`count_over_time(vector(1)[S:R])`, so the
 * closed ranges of Prometheus 2.x and the left-open ones of 3.x need no guessing); their
 * ratio is 1 exactly when every sub-point is covered. A raw gap (a, b) longer than G always
 * contains a sub-point in (a + G - R, a + G], which has no sample within G - R: the gap is
 * never missed. A gap up to G - R leaves every sub-point covered. Only gaps in (G - R, G] may
 * be over-stated. Range selectors ignore the lookback delta and stale markers. One function
 * per sub-point keeps the cost near that of the activity query itself (an `or` of two
 * present_over_time per sub-point cost ten times more at 10,000 workloads).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exprcov.h"
#include "fetch.h"
#include "log.h"
#include "raw.h"
#include "rawread.h"
#include "util.h"

/* A PromQL duration: whole seconds as "60s", otherwise milliseconds as "1500ms". */
static void fetch_duration(double seconds, char *buf, size_t len)
{
    long long ms = llround(seconds * 1000.0);
    if (ms % 1000 == 0)
        snprintf(buf, len, "%llds", ms / 1000);
    else
        snprintf(buf, len, "%lldms", ms);
}

static bool fetch_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_' || c == ':';
}

static bool fetch_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == ':';
}

/* Skip a quoted PromQL string starting at *p; false when it is not closed. */
static bool fetch_skip_string(const char **p)
{
    char quote = **p;
    const char *s = *p + 1;
    for (; *s && *s != quote; s++)
        if (*s == '\\' && quote != '`' && s[1])
            s++;
    if (*s != quote)
        return false;
    *p = s + 1;
    return true;
}

bool fetch_is_selector(const char *e)
{
    const char *p = e;
    while (isspace((unsigned char)*p))
        p++;
    bool any = false;
    if (fetch_name_start(*p)) {
        const char *name = p;
        while (fetch_name_char(*p))
            p++;
        size_t n = (size_t)(p - name);
        /* These read as number literals, not metric names. */
        if ((n == 3 && (strncasecmp(name, "nan", 3) == 0 || strncasecmp(name, "inf", 3) == 0)))
            return false;
        any = true;
        while (isspace((unsigned char)*p))
            p++;
    }
    if (*p == '{') {
        p++;
        while (*p && *p != '}') {
            if (*p == '"' || *p == '\'' || *p == '`') {
                if (!fetch_skip_string(&p))
                    return false;
            } else if (*p == '{' || *p == '(' || *p == '[') {
                return false;
            } else {
                p++;
            }
        }
        if (*p != '}')
            return false;
        p++;
        any = true;
    }
    while (isspace((unsigned char)*p))
        p++;
    return any && *p == '\0';
}

static double fetch_step(const struct rule *r)
{
    return r->step > 0 ? r->step : 60.0;
}

double fetch_resolution(const struct rule *r)
{
    double res = fetch_step(r);
    if (res > FETCH_MAX_RESOLUTION)
        res = FETCH_MAX_RESOLUTION;
    double gap = r->tolerated_gap > 0 ? r->tolerated_gap : 2 * fetch_step(r);
    if (gap / FETCH_GAP_DIVISOR < res)
        res = gap / FETCH_GAP_DIVISOR;
    /* Whole milliseconds (PromQL's unit), never zero. */
    res = floor(res * 1000.0) / 1000.0;
    return res < 0.001 ? 0.001 : res;
}

/* "X[STEP]" for a selector, "(X)[STEP:RES]" for an expression: what *_over_time applies to. */
static void fetch_range(const struct rule *r, char *buf, size_t len)
{
    char step[32], res[32];
    double s = fetch_step(r);
    fetch_duration(s, step, sizeof(step));
    if (fetch_is_selector(r->q_activity)) {
        snprintf(buf, len, "%s[%s]", r->q_activity, step);
    } else {
        fetch_duration(s < FETCH_MAX_RESOLUTION ? s : FETCH_MAX_RESOLUTION, res, sizeof(res));
        snprintf(buf, len, "(%s)[%s:%s]", r->q_activity, step, res);
    }
}

/*
 * max_over_time returns the largest finite value of a step that also holds a NaN (and the
 * largest of +Inf and -Inf), so a NaN would never reach decide(). sum_over_time is NaN or
 * +-Inf then, 0 times that is NaN, and NaN != 0: the left side holds only the non-finite
 * steps, and `or` takes the right side's point wherever the left has none for the same
 * labels. One request and one pass over the samples instead of two; a join with
 * `+ 0 * sum_over_time(...)` cost four times the activity query itself, while `or` with a
 * nearly empty left side costs little more than max_over_time alone.
 */
int fetch_activity_expr(const struct rule *r, char *buf, size_t len)
{
    size_t need = strlen(r->q_activity) + 64;
    char *range = xmalloc(need);
    fetch_range(r, range, need);
    int n = snprintf(buf, len, "(sum_over_time(%s) * 0 != 0) or max_over_time(%s)", range, range);
    free(range);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int fetch_coverage_expr(const struct rule *r, char *buf, size_t len)
{
    if (!fetch_is_selector(r->q_activity))
        return 1;
    char step[32], res[32], near[32];
    double rs = fetch_resolution(r);
    double gap = r->tolerated_gap > 0 ? r->tolerated_gap : 2 * fetch_step(r);
    fetch_duration(fetch_step(r), step, sizeof(step));
    fetch_duration(rs, res, sizeof(res));
    fetch_duration(gap - rs, near, sizeof(near));
    int n = snprintf(buf, len, "count_over_time(present_over_time(%s[%s])[%s:%s])", r->q_activity,
                     near, step, res);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int fetch_subpoints_expr(const struct rule *r, char *buf, size_t len)
{
    char step[32], res[32];
    fetch_duration(fetch_step(r), step, sizeof(step));
    fetch_duration(fetch_resolution(r), res, sizeof(res));
    int n = snprintf(buf, len, "count_over_time(vector(1)[%s:%s])", step, res);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The sub-point count of the step at t, or 0 when no series of `sub` has one. */
static double fetch_subpoints_at(const struct matrix *sub, size_t *k, double t)
{
    /* Prometheus answers one series; the walk over several is for odd backends. */
    for (size_t i = 0; i < sub->n; i++) {
        const struct series *d = &sub->s[i];
        size_t j = i == 0 ? *k : 0;
        while (j < d->n && d->p[j].t < t - 1e-3)
            j++;
        if (i == 0)
            *k = j;
        if (j < d->n && fabs(d->p[j].t - t) <= 1e-3 && d->p[j].v > 0)
            return d->p[j].v;
    }
    return 0;
}

void fetch_coverage_ratio(struct matrix *cov, const struct matrix *subpoints)
{
    for (size_t i = 0; i < cov->n; i++) {
        struct series *s = &cov->s[i];
        size_t k = 0;
        for (size_t j = 0; j < s->n; j++) {
            /* No count of sub-points for this step: it cannot be proven covered. */
            double den = fetch_subpoints_at(subpoints, &k, s->p[j].t);
            s->p[j].v = den > 0 ? s->p[j].v / den : 0;
        }
    }
}

/* ---- one cycle's query cache ------------------------------------------------------------- */

struct fetch_query {
    bool range;
    char *expr;
    double start, end, step; /* instant: start = end = time, step = 0 */
    double lookback;         /* per-query lookback (promq_range_lookback), 0 for none */
    int rc;
    struct matrix m;
    char err[256];
};

/* One rule's use of a query result, delivered once every query has run. */
struct fetch_use {
    size_t query;
    struct matrix *dst;
};

struct fetch_raw_read;

struct fetch_cache {
    struct fetch_query *v;
    size_t n;
    struct fetch_raw_read *raw; /* the raw reads planned for the cycle (fetch_plan_raw) */
    size_t nraw;
    struct fetch_use *uses;
    size_t nuses;
};

static size_t fetch_run(struct promq *q, struct fetch_cache *c, bool range, const char *expr,
                        double start, double end, double step, double lookback)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct fetch_query *e = &c->v[i];
        if (e->range == range && e->start == start && e->end == end && e->step == step &&
            e->lookback == lookback && strcmp(e->expr, expr) == 0)
            return i;
    }
    c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
    struct fetch_query *e = &c->v[c->n++];
    *e = (struct fetch_query){.range = range,
                              .expr = xstrdup(expr),
                              .start = start,
                              .end = end,
                              .step = step,
                              .lookback = lookback};
    if (range)
        e->rc = promq_range_lookback(q, expr, start, end, step, lookback, &e->m, e->err,
                                     sizeof(e->err));
    else
        e->rc = promq_instant(q, expr, end, &e->m, e->err, sizeof(e->err));
    return c->n - 1;
}

static void fetch_cache_free(struct fetch_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].expr);
        matrix_free(&c->v[i].m);
    }
    free(c->v);
    free(c->uses);
}

static void fetch_matrix_copy(struct matrix *dst, const struct matrix *src)
{
    *dst = (struct matrix){0};
    if (!src->n)
        return;
    dst->s = xcalloc(src->n, sizeof(*dst->s));
    for (size_t i = 0; i < src->n; i++) {
        const struct series *from = &src->s[i];
        struct series *to = &dst->s[dst->n++];
        labels_copy(&to->labels, &from->labels);
        if (from->n) {
            to->p = xmalloc(from->n * sizeof(*to->p));
            memcpy(to->p, from->p, from->n * sizeof(*to->p));
        }
        to->n = from->n;
    }
}

/*
 * Hand out the results: each use gets a copy, except the last use of a query, which takes
 * the matrix itself. Uses are in rule order, so which rule gets the original is fixed.
 */
static void fetch_deliver(struct fetch_cache *c)
{
    for (size_t i = 0; i < c->nuses; i++) {
        struct fetch_query *e = &c->v[c->uses[i].query];
        bool last = true;
        for (size_t j = i + 1; j < c->nuses && last; j++)
            last = c->uses[j].query != c->uses[i].query;
        if (last) {
            *c->uses[i].dst = e->m;
            e->m = (struct matrix){0};
        } else {
            fetch_matrix_copy(c->uses[i].dst, &e->m);
        }
    }
}

/*
 * Run one query for rule data `d`, its result to be delivered to `dst` by fetch_deliver;
 * on failure record "<what> query: <message>".
 */
static int fetch_get_lookback(struct promq *q, struct fetch_cache *c, struct rule_data *d,
                              const char *what, bool range, const char *expr, double start,
                              double end, double step, double lookback, struct matrix *dst)
{
    size_t i = fetch_run(q, c, range, expr, start, end, step, lookback);
    const struct fetch_query *e = &c->v[i];
    if (e->rc == 0) {
        c->uses = xrealloc(c->uses, (c->nuses + 1) * sizeof(*c->uses));
        c->uses[c->nuses++] = (struct fetch_use){.query = i, .dst = dst};
        return 0;
    }
    if (!d->errmsg[0])
        snprintf(d->errmsg, sizeof(d->errmsg), "%s query: %s", what, e->err);
    return -1;
}

static int fetch_get(struct promq *q, struct fetch_cache *c, struct rule_data *d, const char *what,
                     bool range, const char *expr, double start, double end, double step,
                     struct matrix *dst)
{
    return fetch_get_lookback(q, c, d, what, range, expr, start, end, step, 0, dst);
}

/* ---- the raw path: remote read and VictoriaMetrics export (rawread.h) -------------------- */

size_t fetch_idle_timers(const struct rule *r, double idle[RAW_MAX_IDLE])
{
    size_t nidle = 0;
    idle[nidle++] = r->idle_timer;
    for (size_t i = 0; i < r->noverrides && nidle < RAW_MAX_IDLE; i++) {
        const struct rule_override *o = &r->overrides[i];
        bool seen = !o->has_idle_timer;
        for (size_t k = 0; k < nidle && !seen; k++)
            seen = idle[k] == o->idle_timer;
        if (!seen)
            idle[nidle++] = o->idle_timer;
    }
    return nidle;
}

int fetch_fold_begin(struct fetch_fold *f, const struct rule *r, const struct raw_grid *g,
                     bool proofs, char *err, size_t errlen)
{
    struct proof_params pp;
    /* More thresholds than a proof folds (PROOF_MAX_THRESHOLDS): grids, as explain. */
    *f = (struct fetch_fold){.grids = !proofs || decide_proof_params(r, &pp) < 0};
    if (f->grids)
        return raw_grids_begin(&f->g, g, err, errlen);
    /* The window statistics of every idle timer a workload of the rule can have. */
    double idle[RAW_MAX_IDLE];
    size_t nidle = fetch_idle_timers(r, idle);
    return raw_proofs_begin(&f->p, &pp, g->end, idle, nidle, err, errlen);
}

int fetch_fold_series(void *arg, const struct series *s, char *err, size_t errlen)
{
    struct fetch_fold *f = arg;
    return f->grids ? raw_grids_add(&f->g, s, err, errlen) : raw_proofs_add(&f->p, s, err, errlen);
}

int fetch_fold_end(struct fetch_fold *f, struct rule_data *d, char *err, size_t errlen)
{
    if (f->grids)
        return raw_grids_end(&f->g, &d->activity, &d->coverage, err, errlen);
    d->has_proofs = true;
    d->proof_params = f->p.pp;
    return raw_proofs_end(&f->p, &d->proofs, &d->nproofs, err, errlen);
}

void fetch_fold_discard(struct fetch_fold *f)
{
    if (f->grids)
        raw_grids_discard(&f->g);
    else
        raw_proofs_discard(&f->p);
}

/* The raw read rules with the same selector share (fetch_rules plans them). */
struct fetch_raw_read {
    const char *sel;
    double start; /* the earliest read start of the rules that share it */
    size_t uses;  /* rules still to use it */
    bool done;
    enum promq_read_path path;
    int rc;
    char err[256];
    struct matrix m;
};

struct raw_grid fetch_grid(const struct rule *r, double now)
{
    return (struct raw_grid){
        .start = now - decide_lookback(r),
        .end = now,
        .step = fetch_step(r),
        .gap = r->tolerated_gap > 0 ? r->tolerated_gap : 2 * fetch_step(r),
    };
}

/*
 * The activity and exact coverage of a selector rule from its raw samples. One read serves
 * every rule with the same selector (over the widest range they need: earlier samples do not
 * change a grid, raw.h); each rule gets a copy but the last, which takes the samples. A read
 * that serves this rule alone, through remote read, goes straight into its grids series by
 * series (rr_stream_on_series), so that the raw samples of the whole answer are never held at
 * once; its grids are used only when the whole answer was read. Returns
 * 1 when the rule must use the PromQL plan instead (no raw path on this server), 0 on
 * success, -1 with the rule's error set.
 */
static int fetch_raw(struct promq *q, struct fetch_raw_read *reads, size_t nreads,
                     const struct rule *r, struct rule_data *d)
{
    enum promq_read_path path;
    bool probe;
    char err[256] = "";
    if (rawread_choose(q, &path, &probe, err, sizeof(err)) < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query: %s", err);
        d->error = 1;
        return -1;
    }
    if (path == PROMQ_READ_PROMQL)
        return 1;
    struct raw_grid g = fetch_grid(r, d->end);
    struct fetch_raw_read *e = NULL, one = {.sel = r->q_activity, .uses = 1};
    for (size_t i = 0; i < nreads && !e; i++)
        if (strcmp(reads[i].sel, r->q_activity) == 0)
            e = &reads[i];
    if (!e) {
        e = &one;
        e->start = raw_read_start(&g);
    }
    bool stream = (!e->done || e->path != path) && e->uses <= 1 && path == PROMQ_READ_REMOTE_READ;
    struct fetch_fold fold;
    int rc = fetch_fold_begin(&fold, r, &g, promq_proofs(q), err, sizeof(err));
    if (rc < 0) {
        /* an invalid grid: nothing to read into */
    } else if (stream) {
        matrix_free(&e->m);
        enum rawread_rc got =
            rawread_read(q, path, probe, e->sel, e->start, d->end, fetch_fold_series, &fold, &e->m,
                         NULL, NULL, e->err, sizeof(e->err));
        if (got == RAWREAD_ABSENT) {
            fetch_fold_discard(&fold);
            return 1;
        }
        e->done = true;
        e->path = path;
        e->rc = rc = got == RAWREAD_OK ? 0 : -1;
        snprintf(err, sizeof(err), "%s", e->err);
        if (e->uses)
            e->uses--;
        /* A failed answer leaves nothing of what its first series built. */
        if (rc == 0)
            rc = fetch_fold_end(&fold, d, err, sizeof(err));
        fetch_fold_discard(&fold);
    } else {
        if (!e->done || e->path != path) {
            matrix_free(&e->m);
            enum rawread_rc got = rawread_read(q, path, probe, e->sel, e->start, d->end, NULL, NULL,
                                               &e->m, NULL, NULL, e->err, sizeof(e->err));
            if (got == RAWREAD_ABSENT) {
                fetch_fold_discard(&fold);
                return 1;
            }
            e->done = true;
            e->path = path;
            e->rc = got == RAWREAD_OK ? 0 : -1;
        }
        rc = e->rc;
        snprintf(err, sizeof(err), "%s", e->err);
        if (e->uses)
            e->uses--;
        /* The last rule to use the read frees each series once folded, so that a cycle holds
           the raw samples and the fold, not two copies. */
        bool take = e->uses == 0;
        for (size_t i = 0; rc == 0 && i < e->m.n; i++) {
            rc = fetch_fold_series(&fold, &e->m.s[i], err, sizeof(err));
            if (take)
                series_free(&e->m.s[i]);
        }
        if (take)
            matrix_free(&e->m);
        if (rc == 0)
            rc = fetch_fold_end(&fold, d, err, sizeof(err));
        fetch_fold_discard(&fold);
    }
    d->read_path = rawread_path_label(path);
    if (e == &one)
        matrix_free(&one.m);
    if (rc < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query (%s): %s", d->read_path, err);
        d->error = 1;
        return -1;
    }
    d->raw_coverage = true;
    d->coverage_tail = true;
    log_debug("rule '%s': activity of %zu series read through %s (%s)", r->name,
              d->has_proofs ? d->nproofs : d->activity.n, d->read_path,
              d->has_proofs ? "proofs" : "grids");
    return 0;
}

/*
 * Plan the raw reads of a cycle: one per distinct selector of the enabled rules, over the
 * earliest start any of them needs.
 */
static size_t fetch_plan_raw(const struct ruleset *rs, double now, struct fetch_raw_read **out)
{
    struct fetch_raw_read *v = NULL;
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (!r->enabled || !r->q_activity || !r->q_allocation || !fetch_is_selector(r->q_activity))
            continue;
        struct raw_grid g = fetch_grid(r, now);
        double start = raw_read_start(&g);
        size_t k = 0;
        while (k < n && strcmp(v[k].sel, r->q_activity) != 0)
            k++;
        if (k == n) {
            v = xrealloc(v, (n + 1) * sizeof(*v));
            v[n++] = (struct fetch_raw_read){.sel = r->q_activity, .start = start};
        }
        v[k].uses++;
        if (start < v[k].start)
            v[k].start = start;
    }
    *out = v;
    return n;
}

/*
 * The raw samples of every selector of an expression rule's activity (exprcov.h), each over
 * its own reach, through the path a selector rule takes on this server. When the selectors
 * cannot be extracted safely, or the server offers no raw read (remote read or
 * VictoriaMetrics' export), nothing shows when the samples behind the expression were
 * taken: the rule fails and every workload of it keeps, with the reason in its error.
 */
/*
 * The per-query lookback of an expression rule's activity: the tolerated gap, so that on a
 * server that honours it (Prometheus >= 2.43.0, VictoriaMetrics) a raw hole longer than that
 * leaves the result without a point instead of being bridged for 5 minutes. Prometheus 2.42
 * ignores it, which is why the raw samples of the selectors are proven too (fetch_inner).
 * None for a selector rule: its range functions ignore the lookback.
 */
static double fetch_lookback(const struct rule *r)
{
    if (fetch_is_selector(r->q_activity))
        return 0;
    return r->tolerated_gap > 0 ? r->tolerated_gap : 2 * fetch_step(r);
}

/* Where a raw read hands an expression's selector series: straight to their coverage. */
struct fetch_inner_sink {
    struct exprcov *ec;
    size_t sel;
    double now;
};

static int fetch_inner_series(void *arg, const struct series *s, char *err, size_t errlen)
{
    const struct fetch_inner_sink *k = arg;
    return exprcov_add_series(k->ec, k->sel, s, k->now, err, errlen);
}

static int fetch_inner(struct promq *q, const struct rule *r, struct rule_data *d)
{
    char err[256] = "";
    struct exprcov *ec = exprcov_new(r, decide_lookback(r), err, sizeof(err));
    if (!ec) {
        snprintf(d->errmsg, sizeof(d->errmsg),
                 "activity: its raw samples cannot be proven gap-free: %s", err);
        d->error = 1;
        return -1;
    }
    enum promq_read_path path;
    bool probe;
    const char *sel = NULL;
    int rc = rawread_choose(q, &path, &probe, err, sizeof(err));
    for (size_t i = 0; rc == 0 && i < exprcov_count(ec); i++) {
        sel = exprcov_selector(ec, i);
        struct fetch_inner_sink k = {.ec = ec, .sel = i, .now = d->end};
        struct matrix m = {0};
        enum rawread_rc got = RAWREAD_ABSENT;
        /* Each series is reduced to its coverage as it arrives; a failed read drops ec. */
        if (path != PROMQ_READ_PROMQL)
            got = rawread_read(q, path, probe, sel, exprcov_read_start(ec, i, d->end), d->end,
                               fetch_inner_series, &k, &m, NULL, NULL, err, sizeof(err));
        matrix_free(&m);
        probe = false;
        if (got == RAWREAD_ABSENT) {
            snprintf(err, sizeof(err),
                     "the server offers no raw read (remote read or /api/v1/export), so its "
                     "raw samples cannot be proven gap-free");
            rc = -1;
        } else if (got != RAWREAD_OK) {
            rc = -1;
        }
    }
    if (rc < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity selector '%.60s': %s", sel ? sel : "",
                 err);
        d->error = 1;
        exprcov_free(ec);
        return -1;
    }
    /* Indexed against the result once every answer is in (fetch_rules). */
    d->inner = ec;
    log_debug("rule '%s': %zu selectors of its activity expression read through %s", r->name,
              exprcov_count(ec), rawread_path_label(path));
    return 0;
}

/* Per rule, the answers that are folded into its data once every query has run. */
struct fetch_side {
    struct matrix subpoints; /* sub-points per step, to divide the coverage by */
};

static int fetch_rule(struct promq *q, struct fetch_cache *c, const struct rule *r, double now,
                      struct rule_data *d, struct fetch_side *side)
{
    double step = fetch_step(r);
    d->start = now - decide_lookback(r);
    d->end = now;
    if (!r->enabled)
        return 0;

    /* rules.c always fills these; a hand-built rule without them must not crash the cycle. */
    if (!r->q_activity || !r->q_allocation) {
        snprintf(d->errmsg, sizeof(d->errmsg), "rule has no %s query",
                 r->q_activity ? "allocation" : "activity");
        d->error = 1;
        return -1;
    }

    int ret = 0;
    char expr[8192];
    d->read_path = "promql";
    int raw = fetch_is_selector(r->q_activity) ? fetch_raw(q, c->raw, c->nraw, r, d) : 1;
    if (raw <= 0) {
        ret = raw;
    } else if (fetch_activity_expr(r, expr, sizeof(expr)) < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query is longer than %zu bytes",
                 sizeof(expr) - 1);
        d->error = 1;
        ret = -1;
    } else if ((d->end - d->start) / step > FETCH_MAX_STEPS) {
        snprintf(d->errmsg, sizeof(d->errmsg),
                 "activity query: range of %.0f s at step %g s exceeds prometheus' limit of "
                 "%.0f points",
                 d->end - d->start, step, FETCH_MAX_STEPS);
        d->error = 1;
        ret = -1;
    } else if (fetch_get_lookback(q, c, d, "activity", true, expr, d->start, d->end, step,
                                  fetch_lookback(r), &d->activity) < 0) {
        d->error = 1;
        ret = -1;
    } else if (!fetch_is_selector(r->q_activity) && fetch_inner(q, r, d) < 0) {
        ret = -1;
    } else {
        int cov = fetch_coverage_expr(r, expr, sizeof(expr));
        if (cov < 0) {
            snprintf(d->errmsg, sizeof(d->errmsg), "coverage query is longer than %zu bytes",
                     sizeof(expr) - 1);
            d->error = 1;
            ret = -1;
        } else if (cov == 0) {
            if (fetch_get(q, c, d, "coverage", true, expr, d->start, d->end, step, &d->coverage) <
                    0 ||
                fetch_subpoints_expr(r, expr, sizeof(expr)) < 0 ||
                fetch_get(q, c, d, "coverage", true, expr, d->start, d->end, step,
                          &side->subpoints) < 0) {
                d->error = 1;
                ret = -1;
            } else {
                d->raw_coverage = true;
            }
        }
    }

    if (fetch_get(q, c, d, "allocation", false, r->q_allocation, now, now, 0, &d->allocation) < 0) {
        d->error = 1;
        ret = -1;
    }
    if (r->policy == POLICY_DURING_PRESSURE) {
        if (!r->q_pending) {
            if (!d->errmsg[0])
                snprintf(d->errmsg, sizeof(d->errmsg), "pending query: not configured");
            d->pending_error = 1;
            ret = -1;
        } else if (fetch_get(q, c, d, "pending", false, r->q_pending, now, now, 0, &d->pending) <
                   0) {
            d->pending_error = 1;
            ret = -1;
        }
    }
    /* An unknown priority could reorder victims, so it blocks the rule like missing data. */
    if (r->q_priority &&
        fetch_get(q, c, d, "priority", false, r->q_priority, now, now, 0, &d->priority) < 0) {
        d->error = 1;
        ret = -1;
    }
    return ret;
}

int fetch_rules(struct promq *q, const struct ruleset *rs, double now, struct rule_data *out)
{
    struct fetch_cache cache = {0};
    struct fetch_side *side = xcalloc(rs->n ? rs->n : 1, sizeof(*side));
    int ret = 0;
    cache.nraw = fetch_plan_raw(rs, now, &cache.raw);
    for (size_t i = 0; i < rs->n; i++) {
        out[i] = (struct rule_data){.rule = &rs->rules[i]};
        if (fetch_rule(q, &cache, &rs->rules[i], now, &out[i], &side[i]) < 0)
            ret = -1;
    }
    fetch_deliver(&cache);
    for (size_t i = 0; i < rs->n; i++) {
        /* The raw path's coverage is exact already (raw_to_grid). */
        if (out[i].raw_coverage && strcmp(out[i].read_path, "promql") == 0)
            fetch_coverage_ratio(&out[i].coverage, &side[i].subpoints);
        if (out[i].inner)
            exprcov_index(out[i].inner, &out[i].activity);
        matrix_free(&side[i].subpoints);
    }
    free(side);
    log_debug("cycle: %zu rules, %zu queries", rs->n, cache.n);
    for (size_t i = 0; i < cache.nraw; i++)
        matrix_free(&cache.raw[i].m);
    free(cache.raw);
    fetch_cache_free(&cache);
    return ret;
}

void fetch_free(struct rule_data *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i].proofs_lent)
            free(d[i].proofs);
        else
            raw_proofs_free(d[i].proofs, d[i].nproofs);
        d[i].proofs = NULL;
        d[i].proofs_lent = false;
        d[i].nproofs = 0;
        matrix_free(&d[i].activity);
        matrix_free(&d[i].coverage);
        struct matrix *inst[] = {&d[i].allocation, &d[i].pending, &d[i].priority};
        for (size_t k = 0; k < ARRAY_LEN(inst); k++) {
            if (d[i].instants_lent)
                for (size_t j = 0; j < inst[k]->n; j++)
                    inst[k]->s[j].labels = (struct labels){0};
            matrix_free(inst[k]);
        }
        d[i].instants_lent = false;
        exprcov_free(d[i].inner);
        d[i].inner = NULL;
    }
}

int fetch_evaluate(struct promq *q, const struct ruleset *rs, double now, bool dry_run,
                   struct rule_data **data, struct decisions *out, double *fetch_seconds,
                   double *decide_seconds)
{
    size_t n = rs->n;
    *data = xcalloc(n ? n : 1, sizeof(**data));
    double t0 = mono_now();
    int rc = fetch_rules(q, rs, now, *data);
    double t1 = mono_now();
    decide(*data, n, now, out);
    if (fetch_seconds)
        *fetch_seconds = t1 - t0;
    if (decide_seconds)
        *decide_seconds = mono_now() - t1;
    for (size_t i = 0; i < out->n; i++)
        out->v[i].dry_run |= dry_run;
    return rc;
}
