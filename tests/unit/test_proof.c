/*
 * Tests of proof.c, the idleness proof as a fold. The main test is differential: random raw
 * histories (regular, jittered and sparse scrapes, silences around the tolerated gap, NaN,
 * +-Inf, staleness markers, samples on grid points, young and stopped series, idle timers
 * that are not whole steps, overrides with their own timer and threshold) are judged at many
 * `now`s both ways, by raw_to_grid + decide() on the grid (today's path) and by decide() on
 * the proofs folded from the same samples, and every workload must get the same decision,
 * reason and idle_since. The only differences allowed are the bounds proof.c states, each
 * counted, and each a keep on both sides. A state carried from the history's start must also
 * judge every series as a fold of the cycle's read alone does (samples before the read start
 * never change a verdict), so that run can carry states from cycle to cycle (issue 26).
 */
#include "proof.c"
#include "decide.h"
#include "randhist.h"
#include "raw.h"
#include "test.h"

#define NOW0 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z, ms */

struct hseries {
    char pod[16], gpu[8];
    struct rh_series r;
    size_t next;
    struct proof *p;
};

/* A value: mostly below the thresholds, sometimes at or above, NaN, +-Inf. */
static double hvalue(unsigned busy, unsigned odd)
{
    unsigned k = rh_rng(1000);
    if (k < odd)
        return k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
    if (k < odd + busy)
        return (double)(5 + rh_rng(96)) / 100.0;
    return (double)rh_rng(40) / 1000.0;
}

/* One random history over [from, to] ms for a rule of step `step` and gap `gap`. */
static void hgen(struct hseries *s, int64_t from, int64_t to, int64_t step, int64_t gap)
{
    static const int64_t secs = 1000;
    int64_t every;
    switch (rh_rng(6)) {
    case 0:
        every = step / 4;
        break;
    case 1:
        every = step / 2;
        break;
    case 2:
        every = step;
        break;
    case 3:
        every = step + step / 2; /* sparser than the step */
        break;
    case 4:
        every = gap; /* exactly the tolerated gap */
        break;
    default:
        every = 15 * secs;
        break;
    }
    if (every < 3 * secs)
        every =
            3 * secs; /* a 1 s step (capped lookback) with samples every 3 s: the case, cheaply */
    unsigned jitter = rh_rng(3), busy = rh_rng(3) == 0 ? 5 + rh_rng(40) : rh_rng(4),
             odd = rh_rng(3) ? 0 : 1 + rh_rng(6);
    unsigned silences = rh_rng(4), markers = rh_rng(3) ? 0 : 1 + rh_rng(20);
    int64_t t = from + (int64_t)rh_rng((uint32_t)(step * 3));
    if (rh_rng(4) == 0) /* a young series */
        t = to - (int64_t)rh_rng((uint32_t)((to - from) / 2));
    if (rh_rng(2))
        t -= t % secs; /* whole seconds: often on grid points */
    int64_t end = rh_rng(5) == 0 ? to - (int64_t)rh_rng((uint32_t)((to - from) / 3)) : to;
    while (t <= end) {
        rh_push(&s->r, t, hvalue(busy, odd));
        int64_t d = every;
        if (jitter == 1)
            d += (int64_t)rh_rng((uint32_t)every) - every / 2;
        else if (jitter == 2 && rh_rng(4) == 0)
            d = 1 + (int64_t)rh_rng((uint32_t)(2 * every));
        unsigned k = rh_rng(1000);
        if (k < 8 * silences) {
            /* A silence around the tolerated gap, or longer. */
            switch (rh_rng(5)) {
            case 0:
                d = gap;
                break;
            case 1:
                d = gap + 1;
                break;
            case 2:
                d = gap - 1;
                break;
            case 3:
                d = gap + (int64_t)rh_rng((uint32_t)(4 * step));
                break;
            default:
                d = (int64_t)rh_rng((uint32_t)(to - from) / 4 + 1);
                break;
            }
        } else if (k < 8 * silences + markers) {
            /* A staleness marker, then maybe the series comes back. */
            int64_t m = t + 1 + (int64_t)rh_rng((uint32_t)every);
            rh_push(&s->r, m, rh_stale_nan());
            d = m - t + 1 + (int64_t)rh_rng((uint32_t)(3 * step));
        }
        if (d < 1)
            d = 1;
        /* Bursts on step edges: move to a whole multiple of the step from NOW0. */
        if (rh_rng(20) == 0) {
            int64_t n = t + d;
            n += ((NOW0 - n) % step + step) % step;
            if (n > t)
                d = n - t;
        }
        t += d;
    }
}

/* Differences the bounds allow, counted (proof.c). */
struct dev {
    size_t phase_nan, capped, compared, carried, planned, needed, reasons[REASON__COUNT];
};

static void mk_rule(struct rule *r, char **ident, struct rule_override *ov, struct matcher **om)
{
    static const int64_t steps[] = {15000, 30000, 60000, 60000, 45000};
    memset(r, 0, sizeof(*r));
    r->name = "t";
    r->enabled = true;
    r->policy = rh_rng(4) ? POLICY_ALWAYS : POLICY_DURING_PRESSURE;
    r->step = (double)steps[rh_rng(ARRAY_LEN(steps))] / 1000.0;
    int64_t step = llround(r->step * 1000);
    int64_t gaps[] = {step / 2, step, 2 * step, 2 * step + 1000, 5 * step, step + 7};
    r->tolerated_gap = (double)gaps[rh_rng(ARRAY_LEN(gaps))] / 1000.0;
    r->threshold = 5 + rh_rng(20);
    /* Idle timers that are not whole steps, in whole ms. */
    r->idle_timer =
        (double)(step * (2 + rh_rng(30)) + (rh_rng(2) ? (int64_t)rh_rng((uint32_t)step) : 0)) /
        1000.0;
    if (rh_rng(40) == 0) {
        /* A lookback capped at 11,000 steps: the window may start before the grid. */
        r->step = 1;
        step = 1000;
        r->tolerated_gap = (double)(2 + rh_rng(120));
        r->idle_timer = (double)(5000 + rh_rng(9000));
    }
    r->max_terminations = 1 + rh_rng(5);
    r->resource_label = "resource";
    ident[0] = "namespace";
    ident[1] = "pod";
    r->identity = ident;
    r->nidentity = 2;
    if (rh_rng(3) == 0) {
        char err[128];
        size_t n = 0;
        if (match_parse_selector("{pod=\"p1\"}", om, &n, err, sizeof(err)) < 0 || n != 1) {
            fprintf(stderr, "override matcher: %s\n", err);
            exit(1);
        }
        memset(ov, 0, sizeof(*ov));
        ov->match.m = *om;
        ov->match.n = 1;
        ov->has_threshold = rh_rng(2);
        ov->threshold = 1 + rh_rng(50);
        ov->has_idle_timer = rh_rng(2);
        ov->idle_timer = (double)(step * (1 + rh_rng(40)) + (int64_t)rh_rng(1000) * 7) / 1000.0;
        r->overrides = ov;
        r->noverrides = 1;
    }
}

static void labels_of(struct labels *l, const struct hseries *s, bool name)
{
    struct label v[] = {
        {"__name__", "x"}, {"gpu", (char *)s->gpu}, {"namespace", "ns"}, {"pod", (char *)s->pod}};
    labels_from(l, name ? v : v + 1, name ? 4 : 3);
}

static bool same_since(double a, double b)
{
    return (isnan(a) && isnan(b)) || fabs(a - b) < 1e-6;
}

/* One history judged at `nnow` times both ways. */
static void one_history(struct dev *dv, int verbose)
{
    struct rule r;
    char *ident[2];
    struct rule_override ov;
    struct matcher *om = NULL;
    mk_rule(&r, ident, &ov, &om);
    struct proof_params pp;
    decide_proof_params(&r, &pp);
    int64_t step = pp.step_ms, lb = pp.lookback_ms;
    /* A window longer than the lookback capped at 11,000 steps starts before the grid. */
    bool before_grid = pp.idle_max_ms > lb;
    int64_t from = NOW0 - lb - 3 * step - pp.gap_ms,
            to = NOW0 + (before_grid ? lb / 2 : 4 * pp.idle_max_ms);

    size_t ns = 1 + rh_rng(6);
    struct hseries *hs = xcalloc(ns, sizeof(*hs));
    for (size_t i = 0; i < ns; i++) {
        snprintf(hs[i].pod, sizeof(hs[i].pod), "p%u", rh_rng(3));
        snprintf(hs[i].gpu, sizeof(hs[i].gpu), "%zu", i);
        hgen(&hs[i], from, to, step, pp.gap_ms);
        hs[i].p = proof_new(&pp);
    }

    int64_t now = NOW0 + (int64_t)rh_rng((uint32_t)step), prev = PROOF_NONE;
    for (int k = 0; k < 12 && now <= to; k++) {
        /* Often whole seconds, so that samples fall on grid points; never back in time. */
        if (rh_rng(2) && now - now % 1000 >= prev)
            now -= now % 1000;
        prev = now;
        struct rule_data dg = {.rule = &r}, dp = {.rule = &r};
        dg.start = dp.start = (double)(now - lb) / 1000.0;
        dg.end = dp.end = (double)now / 1000.0;
        struct raw_grid g = {
            .start = dg.start, .end = dg.end, .step = r.step, .gap = (double)pp.gap_ms / 1000.0};
        int64_t rs = llround(raw_read_start(&g) * 1000.0);
        struct matrix raw = {0};
        dp.has_proofs = true;
        dp.proof_params = pp;
        dp.proofs = xcalloc(ns, sizeof(*dp.proofs));
        dp.nproofs = ns;
        for (size_t i = 0; i < ns; i++) {
            struct hseries *s = &hs[i];
            char err[128];
            while (s->next < s->r.n && s->r.t[s->next] <= now) {
                TEST_CHECK(
                    proof_add(s->p, &pp, s->r.t[s->next], s->r.v[s->next], err, sizeof(err)) == 0);
                s->next++;
            }
            struct series *m = matrix_push(&raw);
            labels_of(&m->labels, s, true);
            m->p = xmalloc((s->next ? s->next : 1) * sizeof(*m->p));
            for (size_t j = 0; j < s->next; j++)
                if (s->r.t[j] >= rs)
                    m->p[m->n++] = (struct point){(double)s->r.t[j] / 1000.0, s->r.v[j]};
            labels_of(&dp.proofs[i].s.labels, s, false);
            dp.proofs[i].p = s->p;
            /* The state carried from the history's start says what a fold of this cycle's
               read alone says (a full read after a restart, issue 26). */
            struct proof *fresh = proof_new(&pp);
            for (size_t j = 0; j < s->next; j++)
                if (s->r.t[j] >= rs)
                    TEST_CHECK(proof_add(fresh, &pp, s->r.t[j], s->r.v[j], err, sizeof(err)) == 0);
            struct proof_verdict vc, vf;
            int64_t idle = llround(r.idle_timer * 1000.0);
            proof_judge(s->p, &pp, now, idle, r.threshold, &vc);
            proof_judge(fresh, &pp, now, idle, r.threshold, &vf);
            bool same = vc.reason == vf.reason && vc.present == vf.present &&
                        same_since(vc.idle_since, vf.idle_since);
            /* The bound of a window that starts before the grid: which first point, so gap
               or too young (a keep either way). */
            if (!same && before_grid && vc.reason != REASON_IDLE && vf.reason != REASON_IDLE &&
                vc.reason != REASON_ACTIVE && vf.reason != REASON_ACTIVE)
                dv->capped++;
            else
                TEST_CHECK(same);
            dv->carried++;
            free(fresh);
        }
        /* Every pod holds one device, and something is pending now and then. */
        for (int w = 0; w < 3; w++) {
            char pod[8];
            snprintf(pod, sizeof(pod), "p%d", w);
            struct label l[] = {{"namespace", "ns"}, {"pod", pod}, {"resource", "gpu"}};
            for (int side = 0; side < 2; side++) {
                struct series *a = matrix_push(side ? &dp.allocation : &dg.allocation);
                labels_from(&a->labels, l, 3);
                a->p = xmalloc(sizeof(*a->p));
                a->p[0] = (struct point){dg.end, 1};
                a->n = 1;
            }
        }
        if (rh_rng(2)) {
            struct label l[] = {{"resource", "gpu"}};
            for (int side = 0; side < 2; side++) {
                struct series *a = matrix_push(side ? &dp.pending : &dg.pending);
                labels_from(&a->labels, l, 1);
                a->p = xmalloc(sizeof(*a->p));
                a->p[0] = (struct point){dg.end, 1};
                a->n = 1;
            }
        }
        /* The same read folded as plan and run fold it: proofs with the window statistics
           of every idle timer of the rule (raw_proofs, as fetch.c folds a read). */
        struct rule_data dq = dp;
        double idles[2] = {r.idle_timer, r.noverrides && ov.has_idle_timer ? ov.idle_timer : 0};
        char err[256];
        struct raw_proofs rp;
        TEST_CHECK(
            raw_proofs_begin(&rp, &pp, dg.end, idles, idles[1] > 0 ? 2 : 1, err, sizeof(err)) == 0);
        for (size_t i = 0; i < raw.n; i++)
            TEST_CHECK(raw_proofs_add(&rp, &raw.s[i], err, sizeof(err)) == 0);
        TEST_CHECK(raw_proofs_end(&rp, &dq.proofs, &dq.nproofs, err, sizeof(err)) == 0);
        TEST_CHECK(raw_to_grid(&raw, &g, &dg.activity, &dg.coverage, err, sizeof(err)) == 0);
        dg.raw_coverage = dg.coverage_tail = true;

        struct decisions og, op, oq;
        decide(&dg, 1, dg.end, &og);
        decide(&dp, 1, dp.end, &op);
        decide(&dq, 1, dq.end, &oq);
        TEST_CHECK_INT(og.n, oq.n);
        for (size_t i = 0; i < og.n && i < oq.n; i++) {
            const struct decision_rec *a = &og.v[i], *b = &oq.v[i];
            bool same = labels_equal(&a->identity, &b->identity) && a->decision == b->decision &&
                        a->reason == b->reason && same_since(a->idle_since, b->idle_since);
            /* One series: the window statistics are the grid's too. */
            size_t nser = 0;
            for (size_t q = 0; q < dq.nproofs; q++) {
                struct labels id;
                labels_project(&id, &dq.proofs[q].s.labels, r.identity, r.nidentity);
                nser += labels_equal(&id, &a->identity) && proof_present(dq.proofs[q].p, &pp, now);
                labels_free(&id);
            }
            if (nser == 1)
                same = same && a->samples == b->samples && same_since(a->max, b->max) &&
                       same_since(a->mean, b->mean) && same_since(a->last, b->last);
            if (!same) {
                char *l = labels_format(&a->identity);
                fprintf(stderr, "plan fold: %s: grid %s (%s) %zu %g / proofs %s (%s) %zu %g\n", l,
                        decide_reason_name(a->reason), a->detail, a->samples, a->mean,
                        decide_reason_name(b->reason), b->detail, b->samples, b->mean);
                free(l);
            }
            TEST_CHECK(same);
            dv->planned++;
        }
        /* The backtest's lean proofs (replay.c, carry without window_stats): statistics only
           where proof_needs_window says a verdict may need them, and the same verdicts. */
        size_t *nwin = xcalloc(dq.nproofs ? dq.nproofs : 1, sizeof(*nwin));
        for (size_t q = 0; q < dq.nproofs; q++) {
            nwin[q] = dq.proofs[q].nwin;
            if (!proof_needs_window(dq.proofs[q].p, &pp, now))
                dq.proofs[q].nwin = 0;
            else
                dv->needed++;
        }
        struct decisions ol;
        decide(&dq, 1, dq.end, &ol);
        TEST_CHECK_INT(og.n, ol.n);
        for (size_t i = 0; i < og.n && i < ol.n; i++) {
            const struct decision_rec *a = &og.v[i], *b = &ol.v[i];
            bool same = labels_equal(&a->identity, &b->identity) && a->decision == b->decision &&
                        a->reason == b->reason && same_since(a->idle_since, b->idle_since);
            if (!same)
                fprintf(stderr, "lean proofs: grid %s (%s) / lean %s (%s)\n",
                        decide_reason_name(a->reason), a->detail, decide_reason_name(b->reason),
                        b->detail);
            TEST_CHECK(same);
        }
        for (size_t q = 0; q < dq.nproofs; q++)
            dq.proofs[q].nwin = nwin[q];
        free(nwin);
        decisions_free(&ol);
        decisions_free(&oq);
        raw_proofs_free(dq.proofs, dq.nproofs);
        TEST_CHECK_INT(og.n, op.n);
        for (size_t i = 0; i < og.n && i < op.n; i++) {
            const struct decision_rec *a = &og.v[i], *b = &op.v[i];
            dv->compared++;
            dv->reasons[a->reason]++;
            TEST_CHECK(labels_equal(&a->identity, &b->identity));
            bool same = a->decision == b->decision && a->reason == b->reason &&
                        same_since(a->idle_since, b->idle_since);
            if (same)
                continue;
            if (before_grid && a->decision == DECISION_KEEP && b->decision == DECISION_KEEP &&
                (a->reason == REASON_GAP || a->reason == REASON_TOO_YOUNG) &&
                (b->reason == REASON_GAP || b->reason == REASON_TOO_YOUNG)) {
                dv->capped++;
                continue;
            }
            /* The bound of proof.c: a phase-dependent NaN step (a keep either way). */
            if (a->reason == REASON_ACTIVE && b->reason == REASON_NOT_A_NUMBER) {
                dv->phase_nan++;
                continue;
            }
            char *l = labels_format(&a->identity);
            fprintf(stderr,
                    "now %+.3f s: %s: grid %s %s since %+.3f (%s) / proof %s %s since %+.3f (%s)\n"
                    "  rule step %g gap %g idle %g thr %g lookback %g\n",
                    (double)(now - NOW0) / 1000.0, l, decide_decision_name(a->decision),
                    decide_reason_name(a->reason), a->idle_since - dg.end, a->detail,
                    decide_decision_name(b->decision), decide_reason_name(b->reason),
                    b->idle_since - dg.end, b->detail, r.step, (double)pp.gap_ms / 1000,
                    r.idle_timer, r.threshold, (double)lb / 1000);
            free(l);
            if (verbose) {
                for (size_t j = 0; j < ns; j++) {
                    fprintf(stderr, "  series pod=%s gpu=%s:", hs[j].pod, hs[j].gpu);
                    for (size_t q = 0; q < hs[j].next; q++)
                        if (hs[j].r.t[q] >= rs)
                            fprintf(stderr, " %+.3f=%g", (double)(hs[j].r.t[q] - now) / 1000.0,
                                    series_is_stale(hs[j].r.v[q]) ? -99.0 : hs[j].r.v[q]);
                    fprintf(stderr, "\n");
                }
            }
            TEST_CHECK(same);
        }
        decisions_free(&og);
        decisions_free(&op);
        matrix_free(&dg.activity);
        matrix_free(&dg.coverage);
        matrix_free(&dg.allocation);
        matrix_free(&dg.pending);
        matrix_free(&dp.allocation);
        matrix_free(&dp.pending);
        for (size_t i = 0; i < ns; i++)
            labels_free(&dp.proofs[i].s.labels);
        free(dp.proofs);
        now += 1 + (int64_t)rh_rng((uint32_t)(pp.idle_max_ms / 3 + 1));
    }
    for (size_t i = 0; i < ns; i++) {
        free(hs[i].r.t);
        free(hs[i].r.v);
        free(hs[i].p);
    }
    free(hs);
    if (om)
        match_free_all(om, 1);
}

TEST(test_differential)
{
    struct dev dv = {0};
    const char *seed = getenv("PROOF_SEED");
    if (seed)
        rh_state = strtoull(seed, NULL, 0);
    int n = getenv("PROOF_ITER") ? atoi(getenv("PROOF_ITER")) : 2000;
    for (int i = 0; i < n; i++)
        one_history(&dv, getenv("PROOF_VERBOSE") != NULL);
    fprintf(stderr,
            "proof differential: %zu workload verdicts compared; allowed differences: %zu "
            "phase-dependent NaN steps, %zu gap/too_young with a window before the grid; %zu "
            "carried states equal to a fold of the read alone; "
            "%zu verdicts of plan's fold (with window statistics) all equal, and of the "
            "backtest's (statistics for %zu series that proof_needs_window named)\n",
            dv.compared, dv.phase_nan, dv.capped, dv.carried, dv.planned, dv.needed);
    for (int i = 0; i < REASON__COUNT; i++)
        if (dv.reasons[i])
            fprintf(stderr, "  %s: %zu\n", decide_reason_name(i), dv.reasons[i]);
    /* The generator must reach every verdict of the activity, or the comparison proves little. */
    static const enum reason need[] = {REASON_IDLE,         REASON_ACTIVE,     REASON_NO_DATA,
                                       REASON_TOO_YOUNG,    REASON_GAP,        REASON_STALE,
                                       REASON_NOT_A_NUMBER, REASON_NO_PRESSURE};
    for (size_t i = 0; i < ARRAY_LEN(need); i++)
        TEST_CHECK(dv.reasons[need[i]] > 0);
    /* The allowed differences stay rare, and the lean proofs met the case they cover. */
    TEST_CHECK(dv.phase_nan < dv.compared / 1000);
    TEST_CHECK(dv.phase_nan == 0 || dv.needed > 0);
}

/* A rule of step 30 s, gap 150 s, idle 300 s, threshold 10 % (lookback 600 s). */
static void small_rule(struct rule *r, char **ident)
{
    memset(r, 0, sizeof(*r));
    r->name = "t";
    r->enabled = true;
    r->policy = POLICY_ALWAYS;
    r->step = 30;
    r->tolerated_gap = 150;
    r->threshold = 10;
    r->idle_timer = 300;
    r->max_terminations = 5;
    r->resource_label = "resource";
    ident[0] = "namespace";
    ident[1] = "pod";
    r->identity = ident;
    r->nidentity = 2;
}

/*
 * Samples every 150 s (sparser than the 30 s step, within the tolerated gap), all idle since
 * long before the grid start: idle since the grid start, on the grid as in the proof. The
 * grid used to say "since the first point after the grid start", which depends on where the
 * samples fall near the grid start, a time whose samples a fold no longer has.
 */
TEST(test_sparse_run_reaches_grid_start)
{
    struct rule r;
    char *ident[2];
    small_rule(&r, ident);
    struct proof_params pp;
    decide_proof_params(&r, &pp);
    int64_t now = NOW0, start = now - pp.lookback_ms;
    TEST_CHECK_INT(pp.lookback_ms, 600000);
    struct hseries h = {.pod = "p0", .gpu = "0"};
    for (int64_t t = start - 3 * 150000 + 7000; t <= now; t += 150000)
        rh_push(&h.r, t, 0.01);
    h.p = proof_new(&pp);
    char err[128];
    for (size_t i = 0; i < h.r.n; i++)
        TEST_CHECK(proof_add(h.p, &pp, h.r.t[i], h.r.v[i], err, sizeof(err)) == 0);
    struct proof_verdict v;
    TEST_CHECK(proof_judge(h.p, &pp, now, 300000, 10, &v) == 0);
    TEST_CHECK_INT(v.reason, REASON_IDLE);
    TEST_CHECK_DBL(v.idle_since, (double)start / 1000.0, 1e-9);

    struct rule_data d = {.rule = &r, .start = (double)start / 1000.0, .end = (double)now / 1000.0};
    struct raw_grid g = {.start = d.start, .end = d.end, .step = 30, .gap = 150};
    struct matrix raw = {0};
    struct series *m = matrix_push(&raw);
    labels_of(&m->labels, &h, true);
    m->p = xmalloc(h.r.n * sizeof(*m->p));
    for (size_t i = 0; i < h.r.n; i++)
        m->p[m->n++] = (struct point){(double)h.r.t[i] / 1000.0, h.r.v[i]};
    TEST_CHECK(raw_to_grid(&raw, &g, &d.activity, &d.coverage, err, sizeof(err)) == 0);
    d.raw_coverage = d.coverage_tail = true;
    struct decisions out;
    decide(&d, 1, d.end, &out);
    TEST_CHECK_INT(out.n, 1);
    if (out.n == 1) {
        TEST_CHECK_INT(out.v[0].reason, REASON_IDLE);
        TEST_CHECK_DBL(out.v[0].idle_since, d.start, 1e-9);
    }
    decisions_free(&out);
    matrix_free(&d.activity);
    matrix_free(&d.coverage);
    free(h.r.t);
    free(h.r.v);
    free(h.p);
}

/*
 * proof_idle_not_before is a lower bound on idleness: the fold of a random history up to a
 * random `now` gives a time before which proof_judge says idle at no later time, the rest of
 * the history folded in as it comes (every sample up to each time judged). Rules of several
 * steps, gaps, idle timers (one not a whole number of steps, one past the lookback of a
 * short rule) and thresholds; the bound must also be later than `now` often enough to be
 * worth keeping a record on.
 */
/* Fold the samples of s from *i up to t. */
static void fold_upto(struct proof *p, const struct proof_params *pp, const struct hseries *s,
                      size_t *i, int64_t t)
{
    char err[128];
    for (; *i < s->r.n && s->r.t[*i] <= t; (*i)++)
        TEST_CHECK(proof_add(p, pp, s->r.t[*i], s->r.v[*i], err, sizeof(err)) == 0);
}

TEST(test_idle_not_before)
{
    rh_state = 0x7a3d1c5b9e2f4a61u;
    static const double steps[] = {15, 30, 60}, idles[] = {300, 450, 900, 3600, 1237.5},
                        ths[] = {1, 10, 50};
    size_t judged = 0, later = 0, tight = 0;
    const int n = test_reps(2000, 20);
    for (int h = 0; h < n; h++) {
        struct rule r;
        char *ident[2];
        small_rule(&r, ident);
        r.step = steps[rh_rng(ARRAY_LEN(steps))];
        double gaps[] = {2 * r.step, 2 * r.step + 1, 5 * r.step};
        r.tolerated_gap = gaps[rh_rng(ARRAY_LEN(gaps))];
        r.idle_timer = idles[rh_rng(ARRAY_LEN(idles))];
        r.threshold = ths[rh_rng(ARRAY_LEN(ths))];
        struct proof_params pp;
        TEST_CHECK(decide_proof_params(&r, &pp) == 0);
        int64_t idle = llround(r.idle_timer * 1000.0);
        int64_t from = NOW0 - 4 * 3600000, to = NOW0;
        struct hseries hs = {0};
        hgen(&hs, from, to, pp.step_ms, pp.gap_ms);
        struct proof *p = proof_new(&pp);
        size_t i = 0;
        int64_t now = from + (int64_t)rh_rng((uint32_t)(to - from));
        fold_upto(p, &pp, &hs, &i, now);
        int64_t b = proof_idle_not_before(p, &pp, now, idle, r.threshold);
        TEST_CHECK(b >= now);
        later += b > now + pp.step_ms;
        bool bad = false;
        for (int64_t t = now; t <= to && !bad; t += 1 + (int64_t)rh_rng((uint32_t)pp.step_ms)) {
            if (t >= b) {
                /* One look at the bound itself, as a measure of how tight it is. */
                struct proof_verdict v;
                if (b <= to) {
                    fold_upto(p, &pp, &hs, &i, b);
                    if (proof_judge(p, &pp, b, idle, r.threshold, &v) == 0)
                        tight += v.reason == REASON_IDLE;
                }
                break;
            }
            fold_upto(p, &pp, &hs, &i, t);
            struct proof_verdict v;
            TEST_CHECK(proof_judge(p, &pp, t, idle, r.threshold, &v) == 0);
            judged++;
            bad = v.reason == REASON_IDLE;
            if (bad)
                printf("  history %d: idle at %+" PRId64 " ms from now, bound %+" PRId64
                       " (step %g s, gap %g s, idle %g s, threshold %g)\n",
                       h, t - now, b - now, r.step, r.tolerated_gap, r.idle_timer, r.threshold);
            TEST_CHECK(!bad);
        }
        free(p);
        free(hs.r.t);
        free(hs.r.v);
    }
    printf("  %zu verdicts before the bound, none idle; the bound later than a step after now "
           "in %zu of %d histories, idle at the bound itself in %zu\n",
           judged, later, n, tight);
    TEST_CHECK(later * 3 > (size_t)n);
    TEST_CHECK(judged > (size_t)n);
}

/* Samples out of order are refused and leave the state as it was; an unknown threshold or a
   `now` before the last sample is an error, never a verdict. */
TEST(test_contract)
{
    struct rule r;
    char *ident[2];
    small_rule(&r, ident);
    struct proof_params pp;
    decide_proof_params(&r, &pp);
    struct proof *p = proof_new(&pp);
    char err[128];
    TEST_CHECK(proof_last(p) == PROOF_NONE);
    TEST_CHECK(proof_add(p, &pp, NOW0, 0.01, err, sizeof(err)) == 0);
    TEST_CHECK(proof_add(p, &pp, NOW0, 0.5, err, sizeof(err)) < 0);
    TEST_CHECK(strstr(err, "not after") != NULL);
    TEST_CHECK(proof_add(p, &pp, NOW0 - 1, 0.5, err, sizeof(err)) < 0);
    TEST_CHECK(proof_last(p) == NOW0);
    TEST_CHECK(p->high[0].at == PROOF_NONE);
    struct proof_verdict v;
    TEST_CHECK(proof_judge(p, &pp, NOW0, 300000, 42, &v) < 0);
    TEST_CHECK_INT(v.reason, REASON_QUERY_ERROR);
    TEST_CHECK(proof_judge(p, &pp, NOW0 - 1, 300000, 10, &v) < 0);
    TEST_CHECK_INT(v.reason, REASON_QUERY_ERROR);
    /* One sample is too young for a 300 s window, and its size does not depend on it. */
    TEST_CHECK(proof_judge(p, &pp, NOW0, 300000, 10, &v) == 0);
    TEST_CHECK_INT(v.reason, REASON_TOO_YOUNG);
    TEST_CHECK_INT(proof_size(&pp), sizeof(struct proof) + sizeof(struct proof_breaker));
    free(p);

    /* Thresholds are deduplicated; more than a proof folds and the rule is judged on grids. */
    struct rule_override ov[PROOF_MAX_THRESHOLDS + 1];
    memset(ov, 0, sizeof(ov));
    r.overrides = ov;
    r.noverrides = ARRAY_LEN(ov);
    for (size_t i = 0; i < ARRAY_LEN(ov); i++) {
        ov[i].has_threshold = true;
        ov[i].threshold = 10;
    }
    TEST_CHECK_INT(decide_proof_params(&r, &pp), 0);
    TEST_CHECK_INT(pp.nthresholds, 1);
    for (size_t i = 0; i < ARRAY_LEN(ov); i++)
        ov[i].threshold = 20 + (double)i;
    TEST_CHECK_INT(decide_proof_params(&r, &pp), -1);
    r.noverrides = PROOF_MAX_THRESHOLDS - 1;
    TEST_CHECK_INT(decide_proof_params(&r, &pp), 0);
    TEST_CHECK_INT(pp.nthresholds, PROOF_MAX_THRESHOLDS);
}

/* A raw matrix series {__name__=<name>, pod=<pod>} with samples at the given ms. */
static void raw_series(struct matrix *m, const char *name, const char *pod, const int64_t *t,
                       size_t n)
{
    struct series *s = matrix_push(m);
    struct label l[] = {{"__name__", (char *)name}, {"pod", (char *)pod}};
    labels_from(&s->labels, l, 2);
    s->p = xmalloc((n ? n : 1) * sizeof(*s->p));
    for (size_t i = 0; i < n; i++)
        s->p[s->n++] = (struct point){(double)t[i] / 1000.0, 0.01};
}

/* fetch.c's fold of a read (raw_proofs): what raw_grids refuses it refuses, and a series
   without a sample on the grid of now is dropped as raw_grids drops it. */
TEST(test_raw_proofs)
{
    struct rule r;
    char *ident[2];
    small_rule(&r, ident);
    struct proof_params pp;
    decide_proof_params(&r, &pp);
    double now = (double)NOW0 / 1000.0, idle = 300;
    int64_t ok[] = {NOW0 - 60000, NOW0 - 30000, NOW0}, old[] = {NOW0 - 3600000},
            back[] = {NOW0 - 30000, NOW0 - 60000}, late[] = {NOW0 + 1};
    char err[256];
    struct {
        const char *name2;
        const int64_t *t2;
        size_t n2;
        int rc;
        size_t kept;
        const char *msg;
    } cases[] = {
        {"y", old, 1, 0, 1, NULL},
        {"x", ok, 3, -1, 0, "differ only in their metric name"},
        {"y", back, 2, -1, 0, "out of order"},
        {"y", late, 1, -1, 0, "after the evaluation time"},
    };
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        struct matrix m = {0};
        raw_series(&m, "x", "a", ok, 3);
        raw_series(&m, cases[k].name2, cases[k].name2[0] == 'x' ? "b" : "a", cases[k].t2,
                   cases[k].n2);
        if (cases[k].name2[0] == 'x') /* same labels but the name */
            labels_set(&m.s[1].labels, "pod", "a");
        struct raw_proofs b;
        struct rule_proof *v = (struct rule_proof *)1;
        size_t n = 99;
        int rc = raw_proofs_begin(&b, &pp, now, &idle, 1, err, sizeof(err));
        for (size_t i = 0; rc == 0 && i < m.n; i++)
            rc = raw_proofs_add(&b, &m.s[i], err, sizeof(err));
        if (rc == 0)
            rc = raw_proofs_end(&b, &v, &n, err, sizeof(err));
        else
            raw_proofs_discard(&b);
        TEST_CHECK_INT(rc, cases[k].rc);
        if (rc == 0) {
            TEST_CHECK_INT(n, cases[k].kept);
            TEST_CHECK(labels_get(&v[0].s.labels, "__name__") == NULL);
            TEST_CHECK_INT(v[0].nwin, 1);
            TEST_CHECK_INT(v[0].win[0].samples, 3);
            raw_proofs_free(v, n);
        } else if (cases[k].msg) {
            TEST_CHECK(strstr(err, cases[k].msg) != NULL);
        }
        matrix_free(&m);
    }
}

int main(void)
{
    rh_state = 0x9e3779b97f4a7c15u;
    RUN(test_idle_not_before);
    RUN(test_contract);
    RUN(test_raw_proofs);
    RUN(test_sparse_run_reaches_grid_start);
    RUN(test_differential);
    return test_done();
}
