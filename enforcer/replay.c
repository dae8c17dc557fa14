/*
 * The bounded range reader (replay.h): called by the backtest (backtest.c's replay source)
 * and the replay tools (tests/fakes/replay_dump.c, bench/replay.sh); it reads each selector's
 * raw samples and the instant series over the whole range once, chunk by chunk in time order,
 * and at every cycle time builds the rule data fetch_rules would fetch at that time, from what
 * it holds. It also owns what `run`'s live reader (replay_live.c) builds on: the plan of how
 * each rule is read, the raw reads and what the selectors hold (replay_p.h).
 *
 * Why the rule data is built from the samples held (and not read again): what fetch.c's fold
 * (proofs or grids, fetch_fold_*) says at `now` depends only on the raw samples in
 * [now - lookback - step - gap, now] (raw.h, proof.h: earlier samples change nothing), so a
 * replay that keeps, per series, the samples from the next cycle's read start on, and hands
 * exactly the samples of [read start, t] to the same fold, gives decide() the same input as
 * `plan --at t`. Memory is the series times the samples of one window plus one chunk,
 * whatever the range.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "log.h"
#include "raw.h"
#include "rawread.h"
#include "replay.h"
#include "replay_p.h"
#include "rfc3339.h"
#include "util.h"

double rp_time(const struct replay *r, size_t k)
{
    return r->cfg.from + (double)k * r->cfg.interval;
}

/*
 * llround(t * 1000), without the library call: the replay converts each sample held at each
 * cycle (a seventh of a backtest's time went to llround, perf). Rounds half away from zero
 * like llround; the two could differ only for a product within an ulp below a half, which a
 * time of whole milliseconds (what the servers store) is not near.
 */
int64_t rp_ms(double t)
{
    double x = t * 1000.0;
    return x >= 0 ? (int64_t)(x + 0.5) : (int64_t)(x - 0.5);
}

/* Where the read of selector `k` starts for the cycle at t: the earliest start of its rules,
   computed as fetch_plan_raw does, so that the same samples are handed over. */
double rp_sel_start(const struct replay *r, size_t k, double t)
{
    double start = INFINITY;
    for (size_t i = 0; i < r->cfg.rs->n; i++) {
        if (r->rules[i].mode != RP_RAW || r->rules[i].sel != k)
            continue;
        struct raw_grid g = fetch_grid(&r->cfg.rs->rules[i], t);
        double s = raw_read_start(&g);
        if (s < start)
            start = s;
    }
    return start;
}

/*
 * Record that `what` could not be read over [a, b]: in *v (when not NULL), which the cycles
 * it covers consult, and in the replay's list for replay_failures, where consecutive failures
 * of one read with one message merge into one line.
 */
static void rp_fail_add(struct replay *r, struct rp_fail **v, size_t *n, double a, double b,
                        const char *what, const char *msg)
{
    if (v) {
        *v = xgrow(*v, *n, sizeof(**v));
        struct rp_fail *f = &(*v)[(*n)++];
        f->a = a;
        f->b = b;
        snprintf(f->msg, sizeof(f->msg), "%s", msg);
    }
    char line[512];
    snprintf(line, sizeof(line), "%s: %s", what, msg);
    if (r->nfails && a - r->fails[r->nfails - 1].b <= r->cfg.interval + 0.001 &&
        strcmp(r->fails[r->nfails - 1].msg, line) == 0) {
        r->fails[r->nfails - 1].b = b;
        return;
    }
    r->fails = xgrow(r->fails, r->nfails, sizeof(*r->fails));
    r->fails[r->nfails++] = (struct rp_fail){.a = a, .b = b};
    snprintf(r->fails[r->nfails - 1].msg, sizeof(r->fails[r->nfails - 1].msg), "%s", line);
    r->st.failed_chunks++;
}

/* ---- raw samples ---------------------------------------------------------------------- */

/*
 * carry: whether two series held differ only in their metric name. `plan` refuses such a read
 * (raw_proofs_end) when both have a sample on now's grid; the carried rules keep while both
 * are held, a superset of those cycles: only ever a keep more.
 */
static void rp_collide_add(struct rp_sel *s, const char *nnkey)
{
    if (strset_put(&s->nnindex, nnkey, strlen(nnkey), s) && !s->collide[0])
        snprintf(s->collide, sizeof(s->collide),
                 "two series differ only in their metric name: %.140s", nnkey);
}

void rp_collisions(struct rp_sel *s)
{
    s->collide[0] = '\0';
    strset_free(&s->nnindex);
    s->nnindex = (struct strset){0};
    for (size_t i = 0; i < s->ns; i++)
        if (s->s[i].nnkey)
            rp_collide_add(s, s->s[i].nnkey);
}

static void rp_index_rebuild(struct rp_sel *s)
{
    strset_free(&s->index);
    s->index = (struct strset){0};
    for (size_t i = 0; i < s->ns; i++)
        strset_put(&s->index, s->s[i].key, strlen(s->s[i].key), (const void *)(uintptr_t)(i + 1));
    rp_collisions(s);
}

/* The stored series with the labels of `in`, added when new. */
static struct rp_series *rp_series_of(struct rp_sel *s, const struct series *in)
{
    char *key = labels_format(&in->labels);
    const void *got = strset_put(&s->index, key, strlen(key), (const void *)(uintptr_t)(s->ns + 1));
    if (got) {
        free(key);
        return &s->s[(uintptr_t)got - 1];
    }
    /* The set holds the key's address: a new series keeps it. */
    s->s = xgrow(s->s, s->ns, sizeof(*s->s));
    struct rp_series *e = &s->s[s->ns++];
    *e = (struct rp_series){.key = key};
    labels_copy(&e->labels, &in->labels);
    labels_stamp(&e->labels);
    if (s->ncrule) {
        raw_drop_name(&e->nn, &in->labels);
        labels_stamp(&e->nn);
        e->nnkey = labels_format(&e->nn);
        e->pf = xcalloc(s->ncrule, sizeof(*e->pf));
        e->pnext = xcalloc(s->ncrule, sizeof(*e->pnext));
        rp_collide_add(s, e->nnkey);
    }
    return e;
}

/* rawread_series_fn: append a series' new samples to what is held of it. */
int rp_on_series(void *arg, const struct series *in, char *err, size_t errlen)
{
    struct rp_sel *s = arg;
    struct rp_series *e = rp_series_of(s, in);
    if (e->epoch != s->epoch) {
        e->epoch = s->epoch;
        e->mark = e->n;
        s->touched = xgrow(s->touched, s->ntouched, sizeof(*s->touched));
        s->touched[s->ntouched++] = (size_t)(e - s->s);
    }
    int64_t last = e->n > e->head ? rp_ms(e->p[e->n - 1].t) : INT64_MIN;
    for (size_t i = 0; i < in->n; i++) {
        int64_t ms = rp_ms(in->p[i].t);
        /* Reads overlap by their boundary instant (a sample there comes twice) and a series
           may come in several parts (VictoriaMetrics): only what is newer is appended. */
        if (ms < s->lo_ms || ms > s->hi_ms || ms <= last)
            continue;
        if (e->n == e->cap) {
            /* Move the samples held to the front while a quarter of the buffer is free
               there, else grow: the buffer stays within 4/3 of what is held, not twice. */
            if (e->head > e->cap / 4) {
                memmove(e->p, e->p + e->head, (e->n - e->head) * sizeof(*e->p));
                e->n -= e->head;
                e->mark = e->mark > e->head ? e->mark - e->head : 0;
                e->head = 0;
            } else {
                e->cap = e->cap ? 2 * e->cap : 64;
                e->p = xrealloc(e->p, e->cap * sizeof(*e->p));
            }
        }
        e->p[e->n++] = in->p[i];
        last = ms;
    }
    e->hold = e->n - e->head;
    (void)err;
    (void)errlen;
    return 0;
}

void rp_series_free(struct rp_series *e, size_t ncrule)
{
    labels_free(&e->labels);
    free(e->key);
    free(e->p);
    labels_free(&e->nn);
    free(e->nnkey);
    for (size_t i = 0; e->pf && i < ncrule; i++)
        free(e->pf[i]);
    free(e->pf);
    free(e->pnext);
}

/* Drop the samples no cycle from t on needs, and the series left without any. */
static void rp_trim(struct replay *r, size_t k, double t)
{
    struct rp_sel *s = &r->sels[k];
    int64_t lo = rp_ms(rp_sel_start(r, k, t));
    size_t kept = 0;
    for (size_t i = 0; i < s->ns; i++) {
        struct rp_series *e = &s->s[i];
        while (e->head < e->n && rp_ms(e->p[e->head].t) < lo)
            e->head++;
        if (e->head == e->n) {
            rp_series_free(e, s->ncrule);
            continue;
        }
        /* A buffer grown for a read larger than the later ones (the first: a whole reach and
           a chunk) shrinks back to what the last read needed, and to no less: shrinking to
           what a cycle holds after its trim would grow it again at the next read, and that
           churn fragmented the heap of a week-long replay (its peak RSS grew with the range). */
        size_t live = e->n - e->head, want = e->hold + e->hold / 3;
        if (want < 64)
            want = 64;
        if (e->cap > want + want / 2 && live <= want) {
            memmove(e->p, e->p + e->head, live * sizeof(*e->p));
            e->n = live;
            e->head = 0;
            e->cap = want;
            e->p = xrealloc(e->p, e->cap * sizeof(*e->p));
        }
        s->s[kept++] = *e;
    }
    if (kept != s->ns) {
        s->ns = kept;
        rp_index_rebuild(s);
    }
    size_t nf = 0;
    for (size_t i = 0; i < s->nfails; i++)
        if (rp_ms(s->fails[i].b) >= lo)
            s->fails[nf++] = s->fails[i];
    s->nfails = nf;
}

/* Undo what the read in progress added: a failed read is never a shorter series. */
static void rp_undo(struct rp_sel *s)
{
    for (size_t i = 0; i < s->ntouched; i++) {
        struct rp_series *e = &s->s[s->touched[i]];
        e->n = e->mark < e->head ? e->head : e->mark;
    }
}

/* Ready selector k for a read over [a, b]: what rp_on_series appends is marked as this read's. */
void rp_read_begin(struct replay *r, size_t k, double a, double b)
{
    struct rp_sel *s = &r->sels[k];
    s->epoch++;
    s->ntouched = 0;
    s->lo_ms = rp_ms(a);
    s->hi_ms = rp_ms(b);
    s->owner = r;
}

/* What the read of selector k over [a, b] that ended with `got` leaves: counted, kept when it
   succeeded, undone when not (a failed read is never a shorter series), the failure noted. */
void rp_read_end(struct replay *r, size_t k, double a, double b, enum rawread_rc got,
                 size_t samples, size_t bytes, const char *err)
{
    struct rp_sel *s = &r->sels[k];
    r->st.requests++;
    r->st.samples += samples;
    r->st.bytes += bytes;
    s->cycle_samples += samples;
    if (got == RAWREAD_OK) {
        s->probe = false;
        for (size_t i = 0; i < s->ntouched; i++) {
            const struct rp_series *e = &s->s[s->touched[i]];
            if (e->n > e->mark && (isnan(r->st.data_start) || e->p[e->mark].t < r->st.data_start))
                r->st.data_start = e->p[e->mark].t;
        }
        return;
    }
    rp_undo(s);
    if (got == RAWREAD_ABSENT) {
        /* The client now knows; every selector meant for remote read takes the PromQL plan,
           as fetch_rules does, through it. */
        for (size_t i = 0; i < r->nsels; i++)
            if (r->sels[i].path == PROMQ_READ_REMOTE_READ)
                r->sels[i].fallback = true;
        return;
    }
    char what[300];
    snprintf(what, sizeof(what), "activity '%.200s' (%s)", s->sel, rawread_path_label(s->path));
    if (s->live) {
        /* run: the cycle's rules keep with the message, the state is dropped and the next
           cycle reads the whole window (logged once by the daemon, per rule). */
        snprintf(s->live_err, sizeof(s->live_err), "%s", err);
        return;
    }
    rp_fail_add(r, &s->fails, &s->nfails, a, b, what, err);
    log_warn("cannot read %s from %.3f to %.3f: %s", what, a, b, err);
}

/* Read selector k over [a, b] into its series; a failure undoes what the read added. */
void rp_read(struct replay *r, size_t k, double a, double b)
{
    struct rp_sel *s = &r->sels[k];
    rp_read_begin(r, k, a, b);
    char err[256] = "";
    struct matrix none = {0};
    size_t samples = 0, bytes = 0;
    enum rawread_rc got = rawread_read(r->cfg.q, s->path, s->probe, s->sel, a, b,
                                       s->live ? lv_on_series : rp_on_series, s, &none, &samples,
                                       &bytes, err, sizeof(err));
    rp_read_end(r, k, a, b, got, samples, bytes, err);
}

/* Read every selector up to time `upto`, in requests of at most one chunk; returns the
   longest stretch of time a selector's reads covered. */
static double rp_read_raw(struct replay *r, double upto)
{
    double span = 0;
    for (size_t k = 0; k < r->nsels; k++) {
        struct rp_sel *s = &r->sels[k];
        double a = isnan(s->read_to) ? rp_sel_start(r, k, rp_time(r, r->loaded)) : s->read_to;
        if (!s->fallback && upto - a > span)
            span = upto - a;
        while (!s->fallback && a < upto) {
            double b = a + r->cfg.chunk < upto ? a + r->cfg.chunk : upto;
            /* The next read starts where this one ended: a sample at b comes twice and is
               kept once (rp_on_series), whether the server's bounds are open or closed. */
            rp_read(r, k, a, b);
            a = b;
        }
        s->read_to = a;
    }
    return span;
}

/* ---- answers sliced per cycle: instant series and the PromQL plan ----------------------- */

void rp_answer_reset(struct rp_answer *ans)
{
    matrix_free(&ans->m);
    free(ans->cur);
    ans->cur = NULL;
    ans->rc = 0;
    ans->err[0] = '\0';
}

/*
 * An answer into *ans (rc, its matrix moved in, err): what the cycles of its chunk slice,
 * a failure recorded for replay_failures.
 */
void rp_answer_take(struct replay *r, struct rp_answer *ans, const char *expr, double a, double b,
                    int rc, struct matrix *m, const char *err)
{
    rp_answer_reset(ans);
    ans->rc = rc;
    ans->m = *m;
    *m = (struct matrix){0};
    str_copy(ans->err, sizeof(ans->err), err);
    r->st.requests++;
    ans->cur = xcalloc(ans->m.n ? ans->m.n : 1, sizeof(*ans->cur));
    /* Held for every cycle of the answer and lent to them: found by id (labels.id). */
    for (size_t j = 0; ans->rc >= 0 && j < ans->m.n; j++)
        labels_stamp(&ans->m.s[j].labels);
    if (ans->rc < 0) {
        char what[300];
        snprintf(what, sizeof(what), "query '%.200s'", expr);
        rp_fail_add(r, NULL, NULL, a, b, what, ans->err);
        log_warn("cannot read %s from %.3f to %.3f: %s", what, a, b, ans->err);
    }
}

/*
 * The range query of `expr` over [a, b] at `step` into *ans (`named`: series keep __name__,
 * promq_range_named), a failure recorded for replay_failures.
 */
static void rp_answer_range(struct replay *r, struct rp_answer *ans, const char *expr, double a,
                            double b, double step, bool named)
{
    struct matrix m = {0};
    char err[256] = "";
    int rc =
        (named ? promq_range_named : promq_range)(r->cfg.q, expr, a, b, step, &m, err, sizeof(err));
    rp_answer_take(r, ans, expr, a, b, rc, &m, err);
}

/*
 * The points of each series of *ans in [lo, hi] (ms) into *out; a series without one is not
 * in it, as a query over [lo, hi] would not list it. Windows must come in time order (the
 * cursors only move forward). 0, or -1 with the answer's error.
 */
/* The points of ans in [lo, hi] per series into out; with `lend` the series' labels are the
   answer's (rule_data.instants_lent), not copies. */
static int rp_answer_slice(struct rp_answer *ans, int64_t lo, int64_t hi, struct matrix *out,
                           bool lend, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    if (ans->rc < 0) {
        snprintf(err, errlen, "%s", ans->err);
        return -1;
    }
    for (size_t j = 0; j < ans->m.n; j++) {
        const struct series *s = &ans->m.s[j];
        size_t c = ans->cur[j];
        while (c < s->n && rp_ms(s->p[c].t) < lo)
            c++;
        ans->cur[j] = c;
        size_t e = c;
        while (e < s->n && rp_ms(s->p[e].t) <= hi)
            e++;
        if (e == c)
            continue;
        /* Room for every series at once: matrix_push grows the array by one. */
        if (!out->s)
            out->s = xmalloc(ans->m.n * sizeof(*out->s));
        struct series *d = &out->s[out->n++];
        *d = (struct series){0};
        if (lend)
            d->labels = s->labels;
        else
            labels_copy(&d->labels, &s->labels);
        d->n = e - c;
        d->p = xmalloc(d->n * sizeof(*d->p));
        memcpy(d->p, s->p + c, d->n * sizeof(*d->p));
    }
    return 0;
}

/* The range answers of every instant expression for cycles [k0, k1). */
static void rp_read_instants(struct replay *r, size_t k0, size_t k1)
{
    for (size_t i = 0; i < r->ninsts && !r->inst_per_cycle; i++)
        rp_answer_range(r, &r->insts[i].ans, r->insts[i].expr, rp_time(r, k0), rp_time(r, k1 - 1),
                        r->cfg.interval, true);
}

/* Instant expression i at cycle time t into *out (one point per series): 0, or -1 with its
   error in err. */
static int rp_instant(struct replay *r, size_t i, double t, struct matrix *out, char *err,
                      size_t errlen)
{
    struct rp_inst *in = &r->insts[i];
    /* Asked at t, shared by the rules of this cycle as fetch.c's query cache shares it. */
    if (r->inst_per_cycle && (!in->ans.cur || in->at != t)) {
        rp_answer_reset(&in->ans);
        in->ans.rc =
            promq_instant(r->cfg.q, in->expr, t, &in->ans.m, in->ans.err, sizeof(in->ans.err));
        in->ans.cur = xcalloc(in->ans.m.n ? in->ans.m.n : 1, sizeof(*in->ans.cur));
        in->at = t;
    }
    /* An instant answer is taken whole, as fetch.c takes it; of a range answer, the point at
       t is the instant query at t. */
    if (r->inst_per_cycle)
        return rp_answer_slice(&in->ans, INT64_MIN, INT64_MAX, out, !r->live, err, errlen);
    return rp_answer_slice(&in->ans, rp_ms(t), rp_ms(t), out, !r->live, err, errlen);
}

static size_t rp_inst_of(struct replay *r, const char *expr)
{
    if (!expr)
        return SIZE_MAX;
    for (size_t i = 0; i < r->ninsts; i++)
        if (strcmp(r->insts[i].expr, expr) == 0)
            return i;
    r->insts = xgrow(r->insts, r->ninsts, sizeof(*r->insts));
    r->insts[r->ninsts] = (struct rp_inst){.expr = expr};
    return r->ninsts++;
}

/* ---- range queries of the PromQL plan ------------------------------------------------ */

static size_t rp_range_of(struct replay *r, const char *expr, double step, double lookback)
{
    for (size_t i = 0; i < r->nranges; i++)
        if (r->ranges[i].step == step && r->ranges[i].lookback == lookback &&
            strcmp(r->ranges[i].expr, expr) == 0)
            return i;
    r->ranges = xgrow(r->ranges, r->nranges, sizeof(*r->ranges));
    r->ranges[r->nranges] =
        (struct rp_range){.expr = xstrdup(expr), .step = step, .lookback = lookback};
    return r->nranges++;
}

/*
 * Every range query for cycles [k0, k1): from the first cycle's window start to the last
 * cycle, at the rule's step. A range query's point at u is its expression evaluated at u,
 * whatever the range (subqueries align to absolute multiples of their resolution), so the
 * points of [t - lookback, t] are those fetch.c's query at t gets.
 */
static void rp_read_ranges(struct replay *r, size_t k0, size_t k1)
{
    for (size_t i = 0; i < r->nranges; i++) {
        struct rp_range *g = &r->ranges[i];
        rp_answer_range(r, &g->ans, g->expr, rp_time(r, k0) - g->lookback, rp_time(r, k1 - 1),
                        g->step, false);
    }
}

/* The points of range i in [t - lookback, t] into *out, as fetch.c's query at t answers. */
static int rp_slice(struct replay *r, size_t i, double t, struct matrix *out, char *err,
                    size_t errlen)
{
    return rp_answer_slice(&r->ranges[i].ans, rp_ms(t - r->ranges[i].lookback), rp_ms(t), out,
                           false, err, errlen);
}

/* The activity and coverage of a RP_SLICED rule at t (fetch_rule's PromQL plan). */
static void rp_sliced(struct replay *r, size_t i, double t, struct rule_data *d)
{
    const struct rp_rule *pr = &r->rules[i];
    char err[256];
    d->read_path = "promql";
    if (rp_slice(r, pr->act, t, &d->activity, err, sizeof(err)) < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query: %s", err);
        d->error = 1;
        return;
    }
    if (pr->cov == SIZE_MAX)
        return;
    struct matrix sub = {0};
    if (rp_slice(r, pr->cov, t, &d->coverage, err, sizeof(err)) < 0 ||
        rp_slice(r, pr->sub, t, &sub, err, sizeof(err)) < 0) {
        if (!d->errmsg[0])
            snprintf(d->errmsg, sizeof(d->errmsg), "coverage query: %s", err);
        d->error = 1;
    } else {
        d->raw_coverage = true;
        fetch_coverage_ratio(&d->coverage, &sub);
    }
    matrix_free(&sub);
}

/* Cycles per chunk: the chunk's length in whole intervals, within a range query's limit. */
static size_t rp_per_chunk(const struct replay *r)
{
    size_t per = (size_t)floor(r->cfg.chunk / r->cfg.interval + 1e-9);
    if (per < 1)
        per = 1;
    return per > REPLAY_MAX_POINTS ? REPLAY_MAX_POINTS : per;
}

/*
 * Set rule i up to be read by sliced range queries when its points at every cycle are those
 * of one query over the chunk: Prometheus, whole milliseconds, the interval a multiple of
 * the step, the chunk's query within the 11,000 points. False otherwise (fetch_rules then).
 */
static bool rp_set_sliced(struct replay *r, size_t i)
{
    const struct rule *ru = &r->cfg.rs->rules[i];
    struct rp_rule *pr = &r->rules[i];
    double step = fetch_grid(ru, 0).step, lb = decide_lookback(ru);
    int64_t step_ms = rp_ms(step), iv_ms = rp_ms(r->cfg.interval);
    if (r->inst_per_cycle || !ru->enabled || !ru->q_activity || !ru->q_allocation || step_ms <= 0 ||
        (double)step_ms != step * 1000.0 || iv_ms % step_ms != 0 || lb / step > FETCH_MAX_STEPS ||
        (lb + (double)(rp_per_chunk(r) - 1) * r->cfg.interval) / step + 1 > REPLAY_MAX_POINTS)
        return false;
    char act[8192], cov[8192], sub[8192];
    int c = fetch_coverage_expr(ru, cov, sizeof(cov));
    if (fetch_activity_expr(ru, act, sizeof(act)) < 0 || c < 0 ||
        (c == 0 && fetch_subpoints_expr(ru, sub, sizeof(sub)) < 0))
        return false;
    pr->mode = RP_SLICED;
    pr->act = rp_range_of(r, act, step, lb);
    pr->cov = c == 0 ? rp_range_of(r, cov, step, lb) : SIZE_MAX;
    pr->sub = c == 0 ? rp_range_of(r, sub, step, lb) : SIZE_MAX;
    return true;
}

/* ---- the replay ----------------------------------------------------------------------- */

static void rp_set_instants(struct replay *r, size_t i)
{
    const struct rule *ru = &r->cfg.rs->rules[i];
    struct rp_rule *pr = &r->rules[i];
    pr->alloc = rp_inst_of(r, ru->q_allocation);
    if (ru->policy == POLICY_DURING_PRESSURE)
        pr->pending = rp_inst_of(r, ru->q_pending);
    pr->prio = rp_inst_of(r, ru->q_priority);
}

/* Plan how each rule of r->cfg.rs is read; r->sels may hold selectors already (run). */
void rp_plan(struct replay *r)
{
    const struct replay_cfg *cfg = &r->cfg;
    char e[256] = "";
    const struct ruleset *rs = cfg->rs;
    r->rules = xcalloc(rs->n ? rs->n : 1, sizeof(*r->rules));
    for (size_t i = 0; i < rs->n; i++) {
        const struct rule *ru = &rs->rules[i];
        struct rp_rule *pr = &r->rules[i];
        pr->mode = RP_FALLBACK;
        pr->alloc = pr->pending = pr->prio = SIZE_MAX;
        pr->act = pr->cov = pr->sub = SIZE_MAX;
        enum promq_read_path path = PROMQ_READ_PROMQL;
        bool probe = false;
        /* A server that cannot be asked: fetch_rules at each cycle says so for the rule. */
        if (ru->enabled && ru->q_activity && ru->q_allocation &&
            fetch_is_selector(ru->q_activity) &&
            rawread_choose(cfg->q, &path, &probe, e, sizeof(e)) < 0)
            continue;
        if (!ru->enabled || !ru->q_activity || !ru->q_allocation ||
            !fetch_is_selector(ru->q_activity) || path == PROMQ_READ_PROMQL) {
            /* An expression's result is proven by its selectors' raw samples at each cycle
               (exprcov.h), which fetch_rules reads (and the activity query's lookback):
               read per cycle, as `plan --at t` does. */
            if (ru->enabled && ru->q_activity && !fetch_is_selector(ru->q_activity))
                continue;
            if (rp_set_sliced(r, i))
                rp_set_instants(r, i);
            continue;
        }
        size_t k = 0;
        while (k < r->nsels && strcmp(r->sels[k].sel, ru->q_activity) != 0)
            k++;
        if (k == r->nsels) {
            r->sels = xgrow(r->sels, r->nsels, sizeof(*r->sels));
            r->sels[r->nsels++] = (struct rp_sel){.sel = ru->q_activity,
                                                  .path = path,
                                                  .probe = probe,
                                                  .read_to = NAN,
                                                  .live = r->live,
                                                  .held_from = NAN,
                                                  .last_full = NAN};
        } else {
            r->sels[k].sel = ru->q_activity; /* the string of the rules in force */
        }
        pr->mode = RP_RAW;
        pr->sel = k;
        rp_set_instants(r, i);
    }
    r->nfallback = 0;
    for (size_t i = 0; i < rs->n; i++)
        r->nfallback += r->rules[i].mode == RP_FALLBACK;
}

struct replay *replay_open(const struct replay_cfg *cfg, char *err, size_t errlen)
{
    if (!isfinite(cfg->from) || !isfinite(cfg->to) || !(cfg->interval > 0) ||
        !isfinite(cfg->interval) || cfg->to < cfg->from) {
        snprintf(err, errlen, "invalid range [%.3f, %.3f] with interval %g", cfg->from, cfg->to,
                 cfg->interval);
        return NULL;
    }
    struct replay *r = xcalloc(1, sizeof(*r));
    r->cfg = *cfg;
    r->adapt = !(r->cfg.chunk > 0);
    if (r->adapt)
        r->cfg.chunk = REPLAY_DEFAULT_CHUNK;
    r->ncycles = (size_t)floor((cfg->to - cfg->from) / cfg->interval + 1e-9) + 1;
    r->st.cycles_total = r->ncycles;
    r->st.data_start = NAN;

    /* A range point is the instant query only at whole milliseconds on Prometheus; anything
       else, and VictoriaMetrics, whose range queries look back otherwise, asks at each t. */
    char e[256] = "";
    int vm = promq_is_victoria(cfg->q, e, sizeof(e));
    r->inst_per_cycle = vm != 0 || rp_ms(cfg->from) != cfg->from * 1000.0 ||
                        rp_ms(cfg->interval) != cfg->interval * 1000.0;
    rp_plan(r);
    /* A sliced rule's range queries were checked against the points limit with this chunk. */
    for (size_t i = 0; i < cfg->rs->n; i++)
        r->adapt &= r->rules[i].mode != RP_SLICED;
    r->last_t = NAN;
    r->carry = xcalloc(cfg->rs->n ? cfg->rs->n : 1, sizeof(*r->carry));
    for (size_t i = 0; cfg->carry && i < cfg->rs->n; i++) {
        struct rp_carry *c = &r->carry[i];
        /* More thresholds than a proof folds: the window folded at each cycle, as `plan`. */
        const struct replay_fold *f = cfg->fold && cfg->fold[i].set ? &cfg->fold[i] : NULL;
        if (r->rules[i].mode != RP_RAW ||
            (!f && decide_proof_params(&cfg->rs->rules[i], &c->pp) < 0))
            continue;
        if (f)
            c->pp = f->pp;
        struct rp_sel *sel = &r->sels[r->rules[i].sel];
        c->on = true;
        c->slot = sel->ncrule;
        sel->crule = xgrow(sel->crule, sel->ncrule, sizeof(*sel->crule));
        sel->crule[sel->ncrule++] = i;
        double idle[RAW_MAX_IDLE];
        c->nidle = f ? f->nidle : fetch_idle_timers(&cfg->rs->rules[i], idle);
        for (size_t j = 0; j < c->nidle; j++)
            c->idle[j] = rp_ms(f ? f->idle[j] : idle[j]);
    }
    return r;
}

/* Read what the cycles [loaded, loaded + one chunk) need. */
static void rp_load(struct replay *r)
{
    size_t per = rp_per_chunk(r);
    size_t k0 = r->loaded, k1 = k0 + per < r->ncycles ? k0 + per : r->ncycles;
    size_t before = r->st.samples;
    double span = 0;
    if (!rp_ahead_raw(r, k1, &span))
        span = rp_read_raw(r, rp_time(r, k1 - 1));
    /*
     * The default chunk grows with what a chunk holds: Prometheus' remote read answers whole
     * XOR chunks (up to 120 samples, half an hour at 15 s), so a request of half an hour makes
     * it encode about twice what is kept, and a week read that way cost it 6.8 times what
     * reading every sample once costs (bench/replay.sh); two hours cost it about half as
     * much. The samples held for a chunk stay within REPLAY_CHUNK_SAMPLES (19 MB), so a
     * replay of 10,000 series at 15 s keeps chunks of half an hour (its memory bound).
     */
    if (r->adapt && span > 0 && r->st.samples > before) {
        double rate = (double)(r->st.samples - before) / span;
        /* And within the answer cap (--prometheus.max-answer-bytes): a parsed sample takes
           16 bytes, its series' share of the labels a few more; half the cap at most. */
        double most = REPLAY_CHUNK_SAMPLES;
        if (r->cfg.q && (double)promq_max_answer(r->cfg.q) / 64.0 < most)
            most = (double)promq_max_answer(r->cfg.q) / 64.0;
        double c = most / rate;
        c = c < REPLAY_DEFAULT_CHUNK ? REPLAY_DEFAULT_CHUNK
            : c > REPLAY_MAX_CHUNK   ? REPLAY_MAX_CHUNK
                                     : c;
        r->cfg.chunk = floor(c / r->cfg.interval) * r->cfg.interval;
        if (!(r->cfg.chunk > 0))
            r->cfg.chunk = REPLAY_DEFAULT_CHUNK;
    }
    /* A selector found to have no raw path on this server turns its rules into fallbacks. */
    for (size_t i = 0; i < r->cfg.rs->n; i++) {
        if (r->rules[i].mode == RP_RAW && r->sels[r->rules[i].sel].fallback) {
            r->rules[i].mode = RP_FALLBACK;
            r->nfallback++;
        }
    }
    if (!rp_ahead_answers(r)) {
        rp_read_instants(r, k0, k1);
        rp_read_ranges(r, k0, k1);
    }
    r->loaded = k1;
    rp_ahead_start(r, rp_per_chunk(r));
}

/* The failure of selector k that overlaps [a, b], or NULL. */
static const struct rp_fail *rp_failed(const struct rp_sel *s, double a, double b)
{
    for (size_t i = 0; i < s->nfails; i++)
        if (rp_ms(s->fails[i].b) >= rp_ms(a) && rp_ms(s->fails[i].a) <= rp_ms(b))
            return &s->fails[i];
    return NULL;
}

/*
 * The first sample of e from index a on after time `hi` (ms): a galloping search from a,
 * then a binary search within the last stride. The answer is most often a cycle's samples
 * past a (the fold's next samples) or a window's (the read start): a binary search over the
 * whole buffer (the samples of the chunk read ahead too) touched cold memory at every probe
 * and was a sixth of a backtest (perf). Held samples strictly ascend (rp_on_series), so the
 * index is the same whichever search finds it.
 */
/* The first index in [lo, up] whose sample is after hi, when all before lo are not and all
   from up on are. */
static size_t rp_bisect(const struct rp_series *e, size_t lo, size_t up, int64_t hi)
{
    while (lo < up) {
        size_t mid = lo + (up - lo) / 2;
        if (rp_ms(e->p[mid].t) <= hi)
            lo = mid + 1;
        else
            up = mid;
    }
    return lo;
}

static size_t rp_upper(const struct rp_series *e, size_t a, int64_t hi)
{
    size_t lo = a, up = e->n, d = 1;
    /* Every sample in [a, lo) is at or before hi; the answer is in [lo, up]. */
    while (lo < e->n) {
        size_t probe = lo + d - 1;
        if (probe >= e->n)
            break;
        if (rp_ms(e->p[probe].t) > hi) {
            up = probe;
            break;
        }
        lo = probe + 1;
        d *= 2;
    }
    return rp_bisect(e, lo, up, hi);
}

/*
 * rp_upper(e, e->head, hi) galloping back from the end: for a bound near the newest samples
 * (the points of the last cycle, replay_points), which the cycle's fold has just read, where
 * galloping from the head touches a cold cache line at every step over the whole window.
 */
static size_t rp_upper_back(const struct rp_series *e, int64_t hi)
{
    size_t lo = e->head, up = e->n, d = 1;
    /* Every sample in [head, lo) is at or before hi, every one in [up, n) after it. */
    while (up > lo) {
        size_t probe = up - lo > d ? up - d : lo;
        if (rp_ms(e->p[probe].t) <= hi) {
            lo = probe + 1;
            break;
        }
        up = probe;
        d *= 2;
    }
    return rp_bisect(e, lo, up, hi);
}

/* rp_upper(e, e->head, hi) when index h is that answer (the index after a proof's last
   sample, noted at the previous cycle: checked, since reads and trims move the buffer). */
static size_t rp_upper_hint(const struct rp_series *e, size_t h, int64_t hi)
{
    if (h >= e->head && h <= e->n && (h == e->head || rp_ms(e->p[h - 1].t) <= hi) &&
        (h == e->n || rp_ms(e->p[h].t) > hi))
        return h;
    return rp_upper(e, e->head, hi);
}

/*
 * Why selector s's samples cannot judge the cycle at t, whose window reads from `start`, into
 * err: this cycle's read failed (run), a part of the window was not read, or two series held
 * differ only in their metric name (`carried`: the windowed fold finds those itself). False
 * when they can.
 */
static bool rp_unjudged(const struct rp_sel *s, double start, double t, bool carried, char *err,
                        size_t errlen)
{
    const struct rp_fail *f = rp_failed(s, start, t);
    if (s->live_err[0]) {
        snprintf(err, errlen, "%s", s->live_err);
    } else if (f) {
        char a[RFC3339_LEN], b[RFC3339_LEN];
        /* The part first: a decision's detail keeps only the start of the message. */
        snprintf(err, errlen, "samples from %s to %s not read: %s",
                 rfc3339_format(a, sizeof(a), f->a, RFC3339_MILLI_FRAC),
                 rfc3339_format(b, sizeof(b), f->b, RFC3339_MILLI_FRAC), f->msg);
    } else if (carried && s->collide[0]) {
        snprintf(err, errlen, "%s", s->collide);
    } else {
        return false;
    }
    return true;
}

/* The activity of rule i at t: its window of samples through fetch_raw's fold (grids or
   proofs, promq_cfg.proofs), as fetch_raw folds a read of that window. */
static void rp_activity(struct replay *r, size_t i, double t, struct rule_data *d)
{
    const struct rule *ru = &r->cfg.rs->rules[i];
    size_t k = r->rules[i].sel;
    struct rp_sel *s = &r->sels[k];
    double start = rp_sel_start(r, k, t);
    d->read_path = rawread_path_label(s->path);
    char err[256] = "";
    int rc = rp_unjudged(s, start, t, false, err, sizeof(err)) ? -1 : 0;
    struct raw_grid g = fetch_grid(ru, t);
    struct fetch_fold fold;
    bool proofs = r->cfg.q && promq_proofs(r->cfg.q);
    if (rc == 0 && fetch_fold_begin(&fold, ru, &g, proofs, err, sizeof(err)) < 0) {
        fetch_fold_discard(&fold);
        rc = -1;
    } else if (rc == 0) {
        int64_t lo = rp_ms(start), hi = rp_ms(t);
        for (size_t j = 0; j < s->ns && rc == 0; j++) {
            const struct rp_series *e = &s->s[j];
            size_t a = e->head, b;
            while (a < e->n && rp_ms(e->p[a].t) < lo)
                a++;
            b = rp_upper(e, a, hi); /* the tail after t is long */
            if (b == a)
                continue;
            struct series view = {.labels = e->labels, .p = e->p + a, .n = b - a};
            if (fetch_fold_series(&fold, &view, err, sizeof(err)) < 0)
                rc = -1;
        }
        if (rc == 0)
            rc = fetch_fold_end(&fold, d, err, sizeof(err));
        fetch_fold_discard(&fold);
    }
    if (rc < 0) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query (%s): %s", d->read_path, err);
        d->error = 1;
        return;
    }
    d->raw_coverage = true;
    d->coverage_tail = true;
}

/* e's samples held in [from, upto] (ms) into the scratch arrays; returns how many. */
static size_t rp_scratch_from(struct replay *r, const struct rp_series *e, size_t a, int64_t upto)
{
    size_t b = rp_upper(e, a, upto);
    if (b - a > r->tcap) {
        r->tcap = b - a;
        r->tms = xrealloc(r->tms, r->tcap * sizeof(*r->tms));
        r->tv = xrealloc(r->tv, r->tcap * sizeof(*r->tv));
    }
    for (size_t j = a; j < b; j++) {
        r->tms[j - a] = rp_ms(e->p[j].t);
        r->tv[j - a] = e->p[j].v;
    }
    return b - a;
}

static size_t rp_scratch(struct replay *r, const struct rp_series *e, int64_t from, int64_t upto)
{
    return rp_scratch_from(r, e, rp_upper(e, e->head, from - 1), upto);
}

/*
 * The activity of carried rule i at t (replay_cfg.carry): each series' proof, kept from the
 * previous cycle, folds the samples after its last one up to t. What the fold says at t
 * depends only on the samples of t's read start on (proof.h), so these are the proofs `plan
 * --at t` builds from its read; the window statistics (display, and the exact "active" of a
 * window that also holds a non-finite sample, decide.c judge_proofs) are computed from the
 * samples held, as raw_proofs computes them, where asked (window_stats) or needed.
 */
static void rp_carried(struct replay *r, size_t i, double t, struct rule_data *d)
{
    const struct rp_carry *c = &r->carry[i];
    size_t k = r->rules[i].sel;
    struct rp_sel *s = &r->sels[k];
    double start = rp_sel_start(r, k, t);
    d->read_path = rawread_path_label(s->path);
    char err[256];
    if (rp_unjudged(s, start, t, true, err, sizeof(err))) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query (%s): %s", d->read_path, err);
        d->error = 1;
        return;
    }
    int64_t tm = rp_ms(t);
    size_t nw = c->nidle;
    /* One block: the array, then the window statistics of each series that gets them. */
    size_t each = sizeof(struct rule_proof) + nw * sizeof(struct rule_winstats);
    char *block = xmalloc((s->ns ? s->ns : 1) * each);
    struct rule_proof *v = (struct rule_proof *)block;
    struct rule_winstats *win =
        (struct rule_winstats *)(block + (s->ns ? s->ns : 1) * sizeof(struct rule_proof));
    size_t n = 0, nwin = 0;
    for (size_t j = 0; j < s->ns; j++) {
        struct rp_series *e = &s->s[j];
        struct proof **pp = &e->pf[c->slot];
        if (!*pp)
            *pp = proof_new(&c->pp);
        int64_t last = proof_last(*pp);
        size_t a = last == PROOF_NONE ? e->head : rp_upper_hint(e, e->pnext[c->slot], last);
        size_t b = rp_upper(e, a, tm);
        e->pnext[c->slot] = b; /* the index after the proof's last sample, once folded */
        /* In order by construction (held samples ascend, and a < b start after `last`). */
        for (size_t x = a; x < b; x++)
            (void)proof_add(*pp, &c->pp, rp_ms(e->p[x].t), e->p[x].v, err, sizeof(err));
        if (!proof_present(*pp, &c->pp, tm))
            continue;
        struct rule_proof *rp = &v[n++];
        *rp = (struct rule_proof){.p = *pp};
        rp->s.labels = e->nn;
        if (nw && (r->cfg.window_stats || proof_needs_window(*pp, &c->pp, tm))) {
            size_t m = rp_scratch(r, e, rp_ms(start), tm);
            rp->win = &win[nwin];
            rp->nwin = nw;
            for (size_t w = 0; w < nw; w++)
                raw_window_stats(r->tms, r->tv, m, &c->pp, tm, c->idle[w], &win[nwin++]);
        }
    }
    d->has_proofs = true;
    d->proofs_lent = true;
    d->proof_params = c->pp;
    d->proofs = v;
    d->nproofs = n;
    d->raw_coverage = true;
    d->coverage_tail = true;
}

/* Rule i's instant series at t, with fetch_rule's errors and messages. */
void rp_instants(struct replay *r, size_t i, double t, struct rule_data *d)
{
    const struct rule *ru = &r->cfg.rs->rules[i];
    const struct rp_rule *pr = &r->rules[i];
    char err[256];
    d->instants_lent = !r->live;
    if (rp_instant(r, pr->alloc, t, &d->allocation, err, sizeof(err)) < 0) {
        if (!d->errmsg[0])
            snprintf(d->errmsg, sizeof(d->errmsg), "allocation query: %s", err);
        d->error = 1;
    }
    if (ru->policy == POLICY_DURING_PRESSURE) {
        if (pr->pending == SIZE_MAX) {
            if (!d->errmsg[0])
                snprintf(d->errmsg, sizeof(d->errmsg), "pending query: not configured");
            d->pending_error = 1;
        } else if (rp_instant(r, pr->pending, t, &d->pending, err, sizeof(err)) < 0) {
            if (!d->errmsg[0])
                snprintf(d->errmsg, sizeof(d->errmsg), "pending query: %s", err);
            d->pending_error = 1;
        }
    }
    if (pr->prio != SIZE_MAX && rp_instant(r, pr->prio, t, &d->priority, err, sizeof(err)) < 0) {
        if (!d->errmsg[0])
            snprintf(d->errmsg, sizeof(d->errmsg), "priority query: %s", err);
        d->error = 1;
    }
}

/* The rules read per cycle: fetch_rules over a ruleset of only them, as `plan --at t`. */
void rp_fallback(struct replay *r, double t, struct rule_data *data)
{
    const struct ruleset *rs = r->cfg.rs;
    struct ruleset sub = *rs;
    sub.rules = xcalloc(r->nfallback ? r->nfallback : 1, sizeof(*sub.rules));
    sub.n = 0;
    size_t *map = xcalloc(r->nfallback ? r->nfallback : 1, sizeof(*map));
    for (size_t i = 0; i < rs->n; i++) {
        if (r->rules[i].mode != RP_FALLBACK)
            continue;
        map[sub.n] = i;
        sub.rules[sub.n++] = rs->rules[i];
    }
    struct rule_data *d = xcalloc(sub.n ? sub.n : 1, sizeof(*d));
    fetch_rules(r->cfg.q, &sub, t, d);
    for (size_t j = 0; j < sub.n; j++) {
        data[map[j]] = d[j];
        data[map[j]].rule = &rs->rules[map[j]];
    }
    free(d);
    free(map);
    free(sub.rules);
}

int replay_next(struct replay *r, double *t, struct rule_data *data)
{
    if (r->next >= r->ncycles)
        return 0;
    /* What no cycle from this one on needs is dropped now, not after the last cycle, whose
       points the caller may still ask for (replay_points). */
    for (size_t k = 0; r->next > 0 && k < r->nsels; k++)
        rp_trim(r, k, rp_time(r, r->next));
    if (r->next >= r->loaded)
        rp_load(r);
    double now = rp_time(r, r->next);
    *t = now;
    const struct ruleset *rs = r->cfg.rs;
    for (size_t i = 0; i < rs->n; i++) {
        if (r->rules[i].mode == RP_FALLBACK)
            continue;
        struct rule_data *d = &data[i];
        *d = (struct rule_data){.rule = &rs->rules[i]};
        d->start = now - decide_lookback(&rs->rules[i]);
        d->end = now;
        if (r->rules[i].mode == RP_RAW && r->carry[i].on)
            rp_carried(r, i, now, d);
        else if (r->rules[i].mode == RP_RAW)
            rp_activity(r, i, now, d);
        else
            rp_sliced(r, i, now, d);
        rp_instants(r, i, now, d);
    }
    if (r->nfallback)
        rp_fallback(r, now, data);
    size_t held = 0;
    r->next++;
    r->last_t = now;
    for (size_t k = 0; k < r->nsels; k++)
        held += r->sels[k].ns;
    if (held > r->st.peak_series)
        r->st.peak_series = held;
    r->st.cycles_done = r->next;
    return 1;
}

bool replay_carried(const struct replay *r, size_t i)
{
    return i < r->cfg.rs->n && r->rules[i].mode == RP_RAW && r->carry[i].on;
}

bool replay_points(struct replay *r, size_t i, double after, bool first_only,
                   bool (*want)(void *arg, const struct labels *l), void *arg, struct matrix *out)
{
    *out = (struct matrix){0};
    if (isnan(r->last_t) || i >= r->cfg.rs->n || r->rules[i].mode != RP_RAW || !r->carry[i].on)
        return false;
    const struct rp_carry *c = &r->carry[i];
    const struct rp_sel *s = &r->sels[r->rules[i].sel];
    int64_t tm = rp_ms(r->last_t);
    int64_t a = isfinite(after) ? rp_ms(after) : tm - c->pp.lookback_ms - 1;
    /* Every grid point in (a, t] is one of the grid's (at or after its start). */
    int64_t from = (a > tm - c->pp.lookback_ms ? a : tm - c->pp.lookback_ms) - c->pp.step_ms;
    out->s = xcalloc(s->ns ? s->ns : 1, sizeof(*out->s));
    for (size_t j = 0; j < s->ns; j++) {
        const struct rp_series *e = &s->s[j];
        if (want && !want(arg, &e->nn))
            continue;
        /* From the end: `from` is a cycle or two before t unless the window is young. */
        size_t m = rp_scratch_from(r, e, rp_upper_back(e, from - 1), tm);
        if (!m)
            continue;
        size_t most = first_only ? 1 : m;
        struct point *p = xmalloc(most * sizeof(*p));
        size_t np = raw_points_between(r->tms, r->tv, m, &c->pp, tm, a, tm, p, most);
        if (!np) {
            free(p);
            continue;
        }
        struct series *se = &out->s[out->n++];
        se->labels = e->nn; /* lent (replay.h) */
        se->p = p;
        se->n = np;
    }
    return true;
}

void replay_stats(const struct replay *r, struct replay_stats *out)
{
    *out = r->st;
    out->fallback_rules = r->nfallback;
}

const char *const *replay_failures(const struct replay *r, size_t *n)
{
    struct replay *w = (struct replay *)r;
    for (size_t i = 0; i < w->nlines; i++)
        free(w->lines[i]);
    free(w->lines);
    w->lines = xcalloc(w->nfails + 1, sizeof(*w->lines));
    for (size_t i = 0; i < w->nfails; i++) {
        char a[RFC3339_LEN], b[RFC3339_LEN];
        w->lines[i] = xasprintf(
            "%s to %s: %s", rfc3339_format(a, sizeof(a), w->fails[i].a, RFC3339_MILLI_FRAC),
            rfc3339_format(b, sizeof(b), w->fails[i].b, RFC3339_MILLI_FRAC), w->fails[i].msg);
    }
    w->nlines = w->nfails;
    if (n)
        *n = w->nlines;
    return (const char *const *)w->lines;
}

void replay_close(struct replay *r)
{
    if (!r)
        return;
    rp_ahead_stop(r);
    for (size_t k = 0; k < r->nsels; k++)
        rp_sel_free(&r->sels[k]);
    free(r->sels);
    lv_free_all(r);
    free(r->carry);
    free(r->tms);
    free(r->tv);
    for (size_t i = 0; i < r->ninsts; i++)
        rp_answer_reset(&r->insts[i].ans);
    free(r->insts);
    for (size_t i = 0; i < r->nranges; i++) {
        rp_answer_reset(&r->ranges[i].ans);
        free(r->ranges[i].expr);
    }
    free(r->ranges);
    for (size_t i = 0; i < r->nlines; i++)
        free(r->lines[i]);
    free(r->lines);
    free(r->fails);
    free(r->rules);
    free(r);
}

/* Drop what selector s holds: the next cycle reads its whole window. */
void rp_sel_drop(struct rp_sel *s)
{
    for (size_t i = 0; i < s->ns; i++)
        rp_series_free(&s->s[i], s->ncrule);
    s->ns = 0;
    strset_free(&s->index);
    s->index = (struct strset){0};
    rp_collisions(s);
    s->held_from = NAN;
    s->read_to = NAN;
}

void rp_sel_free(struct rp_sel *s)
{
    rp_sel_drop(s);
    free(s->s);
    free(s->fails);
    free(s->touched);
    free(s->crule);
    strset_free(&s->nnindex);
}
