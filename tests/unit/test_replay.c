/*
 * Unit tests of the backtest's range reader (enforcer/replay.c): the parts that do not talk
 * to a server (series kept across reads, the boundary sample read twice, a failed read undone,
 * trimming, the window handed to raw_grids_add against raw_to_grid of the same samples,
 * slicing range answers per cycle, failures merged, bad ranges), and of `run`'s carried state
 * (replay_live_*, issue 26): the targeted selector of a re-proof, a fold carried across
 * overlapping reads against one fold of the same samples, late samples told from samples read
 * twice, series with the same labels but another name, trimming, and a cycle against a fake
 * server: the instant queries asked while the raw samples are read, the answers not held
 * past the cycle; and the range reader's read-ahead (replay_ahead.c) against reading each
 * chunk in place. tests/e2e/replay.sh compares
 * whole replays with `plan --at` on real servers, tests/e2e/enforcer_incremental.sh `run`.
 */
#include "replay.c"
#include "replay_live.c"
#include "test.h"

#include "fake.h"
#include "tmptree.h"

static char fake_path[4096], tmpdir[4096];

static struct series mkseries(const char *pod, double t0, double every, size_t n, double v)
{
    struct series s = {0};
    labels_set(&s.labels, "__name__", "busy");
    labels_set(&s.labels, "pod", pod);
    s.p = xcalloc(n ? n : 1, sizeof(*s.p));
    for (size_t i = 0; i < n; i++)
        s.p[s.n++] = (struct point){t0 + (double)i * every, v + 0.001 * (double)(i % 7)};
    return s;
}

/* One read of `in` by selector s over [a, b], as rp_read hands series over. */
static void feed(struct rp_sel *s, const struct series *in, double a, double b)
{
    s->epoch++;
    s->ntouched = 0;
    s->lo_ms = rp_ms(a);
    s->hi_ms = rp_ms(b);
    char err[64];
    TEST_CHECK_INT(rp_on_series(s, in, err, sizeof(err)), 0);
}

static void sel_free(struct rp_sel *s)
{
    for (size_t i = 0; i < s->ns; i++)
        rp_series_free(&s->s[i], s->ncrule);
    free(s->s);
    strset_free(&s->index);
    strset_free(&s->nnindex);
    free(s->touched);
    free(s->fails);
}

TEST(series_across_reads)
{
    struct rp_sel s = {.sel = "busy"};
    struct series a = mkseries("a", 100, 15, 10, 0); /* 100 .. 235 */
    /* First read [100, 190]: 100 .. 190 kept, 205 .. 235 outside the read. */
    feed(&s, &a, 100, 190);
    TEST_CHECK_INT(s.ns, 1);
    TEST_CHECK_INT(s.s[0].n, 7);
    /* Next read [190, 250] shares the boundary instant 190: read twice, kept once. */
    feed(&s, &a, 190, 250);
    TEST_CHECK_INT(s.ns, 1);
    TEST_CHECK_INT(s.s[0].n, 10);
    for (size_t i = 1; i < s.s[0].n; i++)
        TEST_CHECK(s.s[0].p[i].t > s.s[0].p[i - 1].t);
    /* Another pod is another series; the same labels are the same series. */
    struct series b = mkseries("b", 250, 15, 3, 0);
    feed(&s, &b, 250, 300);
    TEST_CHECK_INT(s.ns, 2);
    TEST_CHECK(rp_series_of(&s, &a) == &s.s[0]);
    TEST_CHECK(rp_series_of(&s, &b) == &s.s[1]);
    /* A failed read is undone: the samples it added go, a series it created has none. */
    struct series a2 = mkseries("a", 250, 15, 4, 0), c = mkseries("c", 250, 15, 4, 0);
    s.epoch++;
    s.ntouched = 0;
    s.lo_ms = rp_ms(250);
    s.hi_ms = rp_ms(400);
    char err[64];
    rp_on_series(&s, &a2, err, sizeof(err));
    rp_on_series(&s, &c, err, sizeof(err));
    TEST_CHECK_INT(s.s[0].n, 14);
    rp_undo(&s);
    TEST_CHECK_INT(s.s[0].n, 10);
    TEST_CHECK_INT(s.s[2].n - s.s[2].head, 0);
    series_free(&a);
    series_free(&a2);
    series_free(&b);
    series_free(&c);
    sel_free(&s);
}

/* A replay of one raw selector rule by hand: 15m idle timer, 1m step, 2m tolerated gap. */
struct fixture {
    struct rule rule;
    struct ruleset rs;
    struct rp_rule pr;
    struct replay r;
};

static void fixture_init(struct fixture *f)
{
    *f = (struct fixture){0};
    f->rule = (struct rule){.name = "r",
                            .enabled = true,
                            .policy = POLICY_ALWAYS,
                            .threshold = 10,
                            .idle_timer = 900,
                            .step = 60,
                            .tolerated_gap = 120,
                            .q_activity = "busy",
                            .q_allocation = "devices"};
    f->rs.rules = &f->rule;
    f->rs.n = 1;
    f->pr = (struct rp_rule){.mode = RP_RAW, .sel = 0};
    f->r.cfg = (struct replay_cfg){.rs = &f->rs, .interval = 60, .chunk = 600};
    f->r.rules = &f->pr;
    f->r.sels = xcalloc(1, sizeof(*f->r.sels));
    f->r.sels[0] = (struct rp_sel){.sel = "busy", .path = PROMQ_READ_REMOTE_READ};
    f->r.nsels = 1;
}

static void fixture_free(struct fixture *f)
{
    sel_free(&f->r.sels[0]);
    free(f->r.sels);
    free(f->r.fails);
}

TEST(trim_keeps_the_next_window)
{
    struct fixture f;
    fixture_init(&f);
    struct rp_sel *s = &f.r.sels[0];
    struct series a = mkseries("a", 0, 15, 300, 0);    /* 0 .. 4485 */
    struct series old = mkseries("old", 0, 15, 20, 0); /* 0 .. 285 */
    feed(s, &a, 0, 5000);
    feed(s, &old, 0, 5000);
    /* The cycle at 4000 reads from 4000 - 1800 - 60 - 120 = 2020 (fetch_plan_raw's start). */
    TEST_CHECK_DBL(rp_sel_start(&f.r, 0, 4000), 2020, 1e-9);
    rp_trim(&f.r, 0, 4000);
    TEST_CHECK_INT(s->ns, 1);
    TEST_CHECK(rp_ms(s->s[0].p[s->s[0].head].t) >= 2020000);
    TEST_CHECK(rp_ms(s->s[0].p[s->s[0].head - 1].t) < 2020000);
    /* The index follows the series that are left. */
    TEST_CHECK(rp_series_of(s, &a) == &s->s[0]);
    TEST_CHECK_INT(s->ns, 1);
    series_free(&a);
    series_free(&old);
    fixture_free(&f);
}

static bool same_matrix(const struct matrix *x, const struct matrix *y)
{
    if (x->n != y->n)
        return false;
    for (size_t i = 0; i < x->n; i++) {
        const struct series *a = &x->s[i], *b = NULL;
        for (size_t j = 0; j < y->n && !b; j++)
            if (labels_equal(&a->labels, &y->s[j].labels))
                b = &y->s[j];
        if (!b || a->n != b->n)
            return false;
        for (size_t k = 0; k < a->n; k++)
            if (a->p[k].t != b->p[k].t || memcmp(&a->p[k].v, &b->p[k].v, sizeof(double)) != 0)
                return false;
    }
    return true;
}

TEST(window_as_raw_to_grid)
{
    struct fixture f;
    fixture_init(&f);
    struct rp_sel *s = &f.r.sels[0];
    /* Samples past t must not count: a busy one at 4005 would make the cycle at 4000 active. */
    struct series a = mkseries("a", 1, 15, 300, 0.0);
    struct series b = mkseries("b", 2500, 30, 60, 0.5);
    for (size_t i = 0; i < a.n; i++)
        if (a.p[i].t > 4000)
            a.p[i].v = 0.9;
    a.p[170].v = NAN; /* at 2551, inside the window */
    feed(s, &a, 0, 5000);
    feed(s, &b, 0, 5000);
    for (double t = 3000; t <= 4200; t += 600) {
        struct rule_data d = {.rule = &f.rule};
        rp_activity(&f.r, 0, t, &d);
        TEST_CHECK_INT(d.error, 0);
        TEST_CHECK(d.raw_coverage && d.coverage_tail);
        /* What fetch_raw builds from a read of [start, t]. */
        struct matrix raw = {0};
        const struct series *in[] = {&a, &b};
        for (size_t k = 0; k < 2; k++) {
            struct series *o = matrix_push(&raw);
            labels_copy(&o->labels, &in[k]->labels);
            o->p = xcalloc(in[k]->n, sizeof(*o->p));
            for (size_t i = 0; i < in[k]->n; i++)
                if (in[k]->p[i].t >= rp_sel_start(&f.r, 0, t) && in[k]->p[i].t <= t)
                    o->p[o->n++] = in[k]->p[i];
        }
        struct raw_grid g = fetch_grid(&f.rule, t);
        struct matrix act, cov;
        char err[128];
        TEST_CHECK_INT(raw_to_grid(&raw, &g, &act, &cov, err, sizeof(err)), 0);
        TEST_CHECK(same_matrix(&d.activity, &act));
        TEST_CHECK(same_matrix(&d.coverage, &cov));
        TEST_CHECK(d.activity.n == 2);
        matrix_free(&act);
        matrix_free(&cov);
        fetch_free(&d, 1);
    }
    /* A failed part of the range inside the window: the cycle is an error, naming the part. */
    rp_fail_add(&f.r, &s->fails, &s->nfails, 3500, 3600, "activity 'busy'", "HTTP 503");
    struct rule_data d = {.rule = &f.rule};
    rp_activity(&f.r, 0, 4000, &d);
    TEST_CHECK_INT(d.error, 1);
    TEST_CHECK(strstr(d.errmsg, "samples from 2023") == NULL); /* 1970: the fixture's epoch */
    TEST_CHECK(strstr(d.errmsg, "activity query (remote_read): samples from ") == d.errmsg);
    TEST_CHECK(strstr(d.errmsg, " not read: HTTP 503") != NULL);
    fetch_free(&d, 1);
    /* A cycle whose window is past it is judged again. */
    d = (struct rule_data){.rule = &f.rule};
    rp_activity(&f.r, 0, 3600 + 1800 + 60 + 120 + 60, &d);
    TEST_CHECK_INT(d.error, 0);
    fetch_free(&d, 1);
    series_free(&a);
    series_free(&b);
    fixture_free(&f);
}

/* With proofs (plan's and run's fold), the window's samples make the same proofs as a fold of
   the samples a read of that window gets; a sample after t would break the proof's order. */
TEST(window_as_proofs)
{
    struct fixture f;
    fixture_init(&f);
    struct rp_sel *s = &f.r.sels[0];
    struct series a = mkseries("a", 1, 15, 300, 0.0);
    a.p[250].v = 0.5; /* at 3751: active at 4000, not at 3600 */
    feed(s, &a, 0, 5000);
    /* A client folding into proofs, as plan's (it is not asked anything here). */
    f.r.cfg.q = promq_new(&(struct promq_cfg){.url = "http://127.0.0.1:9", .proofs = true});
    for (double t = 3600; t <= 4200; t += 300) {
        struct rule_data d = {.rule = &f.rule}, want = {.rule = &f.rule};
        rp_activity(&f.r, 0, t, &d);
        TEST_CHECK_INT(d.error, 0);
        TEST_CHECK(d.has_proofs);
        struct series in = {.labels = a.labels, .p = a.p, .n = 0};
        double start = rp_sel_start(&f.r, 0, t);
        while (in.p < a.p + a.n && in.p->t < start)
            in.p++;
        while (in.p + in.n < a.p + a.n && in.p[in.n].t <= t)
            in.n++;
        struct raw_grid g = fetch_grid(&f.rule, t);
        struct fetch_fold fold;
        char err[128];
        TEST_CHECK_INT(fetch_fold_begin(&fold, &f.rule, &g, true, err, sizeof(err)), 0);
        TEST_CHECK_INT(fetch_fold_series(&fold, &in, err, sizeof(err)), 0);
        TEST_CHECK_INT(fetch_fold_end(&fold, &want, err, sizeof(err)), 0);
        fetch_fold_discard(&fold);
        TEST_CHECK_INT(d.nproofs, 1);
        TEST_CHECK_INT(want.nproofs, 1);
        if (d.nproofs == 1 && want.nproofs == 1) {
            TEST_CHECK(labels_equal(&d.proofs[0].s.labels, &want.proofs[0].s.labels));
            TEST_CHECK(memcmp(d.proofs[0].p, want.proofs[0].p, proof_size(&d.proof_params)) == 0);
            TEST_CHECK_INT(proof_last(d.proofs[0].p), llround(in.p[in.n - 1].t * 1000));
        }
        fetch_free(&d, 1);
        fetch_free(&want, 1);
    }
    promq_free(f.r.cfg.q);
    f.r.cfg.q = NULL;
    series_free(&a);
    fixture_free(&f);
}

/* Equal, or both NaN. */
static bool same_since(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* decide()'s records of two rule data, equal field by field (lean: decision, reason, idle
   time only). */
static bool same_records(const struct rule_data *a, const struct rule_data *b, double t, bool lean)
{
    struct decisions x, y;
    decide(a, 1, t, &x);
    decide(b, 1, t, &y);
    bool same = x.n == y.n && x.n > 0;
    for (size_t i = 0; same && i < x.n; i++) {
        const struct decision_rec *p = &x.v[i], *q = &y.v[i];
        same = labels_equal(&p->identity, &q->identity) && p->decision == q->decision &&
               p->reason == q->reason && same_since(p->idle_since, q->idle_since);
        if (!lean)
            same = same && p->samples == q->samples && same_since(p->max, q->max) &&
                   same_since(p->mean, q->mean) && same_since(p->last, q->last) &&
                   strcmp(p->detail, q->detail) == 0;
        if (!same)
            fprintf(stderr, "t=%g: carried %s (%s) %zu / windowed %s (%s) %zu\n", t,
                    decide_reason_name(p->reason), p->detail, p->samples,
                    decide_reason_name(q->reason), q->detail, q->samples);
    }
    decisions_free(&x);
    decisions_free(&y);
    return same;
}

/*
 * The backtest's carried proofs (replay_cfg.carry): at every cycle, decide() says of them
 * what it says of the window folded again (plan's fold), to the last field with window
 * statistics, and decision, reason and idle time without them; a window with a NaN next to a
 * high sample included (proof_needs_window), a series that starts late and one that stops.
 */
TEST(carried_as_windowed)
{
    for (int lean = 0; lean < 2; lean++) {
        struct fixture f;
        fixture_init(&f);
        char *ident[] = {"pod"};
        f.rule.identity = ident;
        f.rule.nidentity = 1;
        f.r.cfg.q = promq_new(&(struct promq_cfg){.url = "http://127.0.0.1:9", .proofs = true});
        f.r.cfg.window_stats = !lean;
        f.r.carry = xcalloc(1, sizeof(*f.r.carry));
        struct rp_carry *c = &f.r.carry[0];
        TEST_CHECK_INT(decide_proof_params(&f.rule, &c->pp), 0);
        c->on = true;
        double idle[RAW_MAX_IDLE];
        c->nidle = fetch_idle_timers(&f.rule, idle);
        for (size_t j = 0; j < c->nidle; j++)
            c->idle[j] = rp_ms(idle[j]);
        struct rp_sel *s = &f.r.sels[0];
        s->crule = xcalloc(1, sizeof(*s->crule));
        s->ncrule = 1;
        struct series a = mkseries("a", 1, 15, 400, 0.0);   /* 1 .. 5986, idle, then busy */
        struct series b = mkseries("b", 2500, 30, 60, 0.5); /* 2500 .. 4270, busy, stops */
        struct series n = mkseries("n", 1, 15, 400, 0.0);   /* a NaN next to a high sample */
        for (size_t i = 0; i < a.n; i++)
            if (a.p[i].t > 5000)
                a.p[i].v = 0.9;
        n.p[200].v = 0.5; /* at 3001 */
        n.p[201].v = NAN; /* at 3016, one step's reach of it */
        feed(s, &a, 0, 6000);
        feed(s, &b, 0, 6000);
        feed(s, &n, 0, 6000);
        size_t cycles = 0, equal = 0, needed = 0;
        for (double t = 2400; t <= 5400; t += 60) {
            struct rule_data dc = {.rule = &f.rule}, dw = {.rule = &f.rule};
            rp_carried(&f.r, 0, t, &dc);
            rp_activity(&f.r, 0, t, &dw);
            TEST_CHECK(dc.has_proofs && dc.proofs_lent && dw.has_proofs && !dw.proofs_lent);
            for (size_t j = 0; j < dc.nproofs; j++)
                needed += dc.proofs[j].nwin > 0;
            cycles++;
            equal += same_records(&dc, &dw, t, lean);
            fetch_free(&dc, 1);
            fetch_free(&dw, 1);
            rp_trim(&f.r, 0, t + 60);
        }
        TEST_CHECK_INT(equal, cycles);
        /* Lean: statistics only where a verdict may need them, and they were needed. */
        if (lean)
            TEST_CHECK(needed > 0 && needed < cycles);
        promq_free(f.r.cfg.q);
        f.r.cfg.q = NULL;
        series_free(&a);
        series_free(&b);
        series_free(&n);
        free(s->crule);
        free(f.r.carry);
        free(f.r.tms);
        free(f.r.tv);
        fixture_free(&f);
    }
}

TEST(slices)
{
    struct replay r = {.cfg = {.interval = 60}};
    r.ranges = xcalloc(1, sizeof(*r.ranges));
    r.nranges = 1;
    struct rp_range *g = &r.ranges[0];
    *g = (struct rp_range){.expr = "x", .step = 60, .lookback = 120};
    struct series *a = matrix_push(&g->ans.m);
    *a = mkseries("a", 0, 60, 11, 0); /* 0 .. 600 */
    struct series *b = matrix_push(&g->ans.m);
    *b = mkseries("b", 0, 60, 1, 0); /* 0 only */
    g->ans.cur = xcalloc(2, sizeof(*g->ans.cur));
    struct matrix m;
    char err[64];
    TEST_CHECK_INT(rp_slice(&r, 0, 300, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 1);
    TEST_CHECK_INT(m.s[0].n, 3);
    TEST_CHECK_DBL(m.s[0].p[0].t, 180, 0);
    TEST_CHECK_DBL(m.s[0].p[2].t, 300, 0);
    matrix_free(&m);
    TEST_CHECK_INT(rp_slice(&r, 0, 420, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.s[0].n, 3);
    TEST_CHECK_DBL(m.s[0].p[0].t, 300, 0);
    matrix_free(&m);
    g->ans.rc = -1;
    snprintf(g->ans.err, sizeof(g->ans.err), "boom");
    TEST_CHECK_INT(rp_slice(&r, 0, 480, &m, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "boom");
    rp_answer_reset(&g->ans);
    free(r.ranges);

    /* Instant series: the range point at t, labels and all, and nothing between points. */
    r.insts = xcalloc(1, sizeof(*r.insts));
    r.ninsts = 1;
    struct rp_inst *in = &r.insts[0];
    struct series *c = matrix_push(&in->ans.m);
    *c = mkseries("c", 0, 60, 3, 1);
    in->ans.cur = xcalloc(1, sizeof(*in->ans.cur));
    TEST_CHECK_INT(rp_instant(&r, 0, 60, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 1);
    TEST_CHECK_INT(m.s[0].n, 1);
    TEST_CHECK_DBL(m.s[0].p[0].t, 60, 0);
    TEST_CHECK_DBL(m.s[0].p[0].v, c->p[1].v, 0);
    TEST_CHECK_STR(labels_get(&m.s[0].labels, "__name__"), "busy");
    /* The backtest's replay lends the labels (rule_data.instants_lent): not copies. */
    TEST_CHECK(m.s[0].labels.v == c->labels.v);
    m.s[0].labels = (struct labels){0};
    matrix_free(&m);
    TEST_CHECK_INT(rp_instant(&r, 0, 90, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 0);
    matrix_free(&m);
    rp_answer_reset(&in->ans);
    free(r.insts);
}

/* The first sample after hi from index a on, by the binary search over all of [a, n) the
   galloping searches replaced. */
static size_t upper_ref(const struct rp_series *e, size_t a, int64_t hi)
{
    return rp_bisect(e, a, e->n, hi);
}

/* The galloping searches (from a start, back from the end) and the noted index (rp_upper_hint)
   give the binary search's answer for every start, bound and hint, a stale hint (after a trim
   or a read moved the buffer) too. */
TEST(upper_as_binary_search)
{
    unsigned long x = 12345;
    for (int round = 0; round < 200; round++) {
        struct rp_series e = {0};
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        e.n = (size_t)(x >> 33) % 300;
        e.p = xcalloc(e.n ? e.n : 1, sizeof(*e.p));
        double t = 1700000000;
        for (size_t i = 0; i < e.n; i++) {
            x = x * 6364136223846793005ul + 1442695040888963407ul;
            t += 0.001 * (double)(1 + (x >> 33) % 30000); /* strictly ascending ms */
            e.p[i].t = t;
        }
        e.head = e.n ? (size_t)(x >> 40) % (e.n + 1) : 0;
        bool ok = true;
        for (int q = 0; q < 100 && ok; q++) {
            x = x * 6364136223846793005ul + 1442695040888963407ul;
            int64_t lo = rp_ms(1700000000) - 1000, span = rp_ms(t) - lo + 2000;
            int64_t hi = lo + (int64_t)((x >> 20) % (uint64_t)(span > 0 ? span : 1));
            /* a bound exactly on a sample, now and then */
            if (e.n && q % 4 == 0)
                hi = rp_ms(e.p[(x >> 45) % e.n].t);
            size_t a = e.head + (e.n > e.head ? (size_t)(x >> 50) % (e.n - e.head + 1) : 0);
            size_t hint = (size_t)(x >> 30) % (e.n + 3);
            if (q % 3 == 0)
                hint = upper_ref(&e, e.head, hi); /* the right answer, as noted */
            ok = rp_upper(&e, a, hi) == upper_ref(&e, a, hi) &&
                 rp_upper_hint(&e, hint, hi) == upper_ref(&e, e.head, hi) &&
                 rp_upper_back(&e, hi) == upper_ref(&e, e.head, hi);
        }
        TEST_CHECK(ok);
        free(e.p);
        if (!ok)
            break;
    }
}

TEST(failures_merge)
{
    struct replay r = {.cfg = {.interval = 60, .chunk = 600}};
    rp_fail_add(&r, NULL, NULL, 1700000000, 1700000600, "activity 'x'", "HTTP 503");
    rp_fail_add(&r, NULL, NULL, 1700000600, 1700001200, "activity 'x'", "HTTP 503");
    rp_fail_add(&r, NULL, NULL, 1700003600, 1700004200, "activity 'x'", "HTTP 503");
    size_t n = 0;
    const char *const *v = replay_failures(&r, &n);
    TEST_CHECK_INT(n, 2);
    TEST_CHECK_STR(v[0], "2023-11-14T22:13:20Z to 2023-11-14T22:33:20Z: activity 'x': HTTP 503");
    TEST_CHECK_INT(r.st.failed_chunks, 2);
    for (size_t i = 0; i < r.nlines; i++)
        free(r.lines[i]);
    free(r.lines);
    free(r.fails);
}

TEST(bad_ranges)
{
    struct ruleset rs = {0};
    struct replay_cfg cfg = {.rs = &rs, .from = 100, .to = 50, .interval = 60};
    char err[128] = "";
    TEST_CHECK(replay_open(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK(strstr(err, "invalid range") != NULL);
    cfg = (struct replay_cfg){.rs = &rs, .from = 0, .to = 50, .interval = 0};
    TEST_CHECK(replay_open(&cfg, err, sizeof(err)) == NULL);
    cfg = (struct replay_cfg){.rs = &rs, .from = NAN, .to = 50, .interval = 60};
    TEST_CHECK(replay_open(&cfg, err, sizeof(err)) == NULL);
}

TEST(live_targeted_selector)
{
    struct labels id = {0};
    labels_set(&id, "namespace", "ml");
    labels_set(&id, "pod", "a\"b");
    char *t = rp_targeted("busy", &id);
    TEST_CHECK_STR(t, "busy{namespace=\"ml\",pod=\"a\\\"b\"}");
    free(t);
    t = rp_targeted("busy{job=\"x\"} ", &id);
    TEST_CHECK_STR(t, "busy{job=\"x\",namespace=\"ml\",pod=\"a\\\"b\"}");
    free(t);
    t = rp_targeted("{__name__=\"busy\"}", &id);
    TEST_CHECK_STR(t, "{__name__=\"busy\",namespace=\"ml\",pod=\"a\\\"b\"}");
    free(t);
    t = rp_targeted("busy{ }", &id);
    TEST_CHECK_STR(t, "busy{namespace=\"ml\",pod=\"a\\\"b\"}");
    free(t);
    labels_free(&id);
    /* Prometheus 3 names (issue 34): a dotted identity label is quoted, a quoted metric name
       kept; written unquoted, Prometheus would refuse the query. */
    struct labels otel = {0};
    labels_set(&otel, "k8s.pod.name", "p\"1");
    labels_set(&otel, "namespace", "ml");
    t = rp_targeted("{\"gpu.busy\"}", &otel);
    TEST_CHECK_STR(t, "{\"gpu.busy\",\"k8s.pod.name\"=\"p\\\"1\",namespace=\"ml\"}");
    free(t);
    labels_free(&otel);
}

static void live_rule(struct lv_rule *l)
{
    struct rule ru = {
        .enabled = true, .threshold = 10, .idle_timer = 600, .step = 60, .tolerated_gap = 120};
    *l = (struct lv_rule){.sel = "busy", .cycle = 1};
    decide_proof_params(&ru, &l->pp);
}

/* The samples of `in` with times in [a, b] (seconds) as one read hands them over. */
static void live_feed(struct lv_rule *l, const struct series *in, double a, double b, size_t *late)
{
    lv_fold(l, in, rp_ms(a), rp_ms(b), late);
}

TEST(live_fold_across_overlapping_reads)
{
    /* One fold of every sample, and the same samples read cycle by cycle with a 30 s
       overlap: the same state, byte for byte, and nothing counted late. */
    struct lv_rule once, inc;
    live_rule(&once);
    live_rule(&inc);
    struct series a = mkseries("a", 1000, 15, 200, 0.01); /* 1000 .. 3985 */
    a.p[77].v = 0.5;                                      /* a busy sample */
    size_t late = 0;
    live_feed(&once, &a, 1000, 4000, &late);
    for (double t = 1060; t <= 4000; t += 60)
        live_feed(&inc, &a, t - 60 - 30, t, &late);
    TEST_CHECK_INT(late, 0);
    TEST_CHECK_INT(inc.n, 1);
    TEST_CHECK(memcmp(once.v[0].rp.p, inc.v[0].rp.p, proof_size(&once.pp)) == 0);
    labels_free(&a.labels);
    free(a.p);
    lv_free(&once);
    lv_free(&inc);
}

TEST(live_late_samples)
{
    struct lv_rule l;
    live_rule(&l);
    struct series a = mkseries("a", 1000, 15, 11, 0.01); /* 1000 .. 1150 */
    size_t late = 0;
    live_feed(&l, &a, 1000, 1150, &late);
    /* Read again by the overlap: not late. */
    live_feed(&l, &a, 1120, 1150, &late);
    TEST_CHECK_INT(late, 0);
    TEST_CHECK_INT(l.nfixes, 0);
    /* A sample between two folded ones arrives now: late, and its series is to be mended,
       once however many late samples it has. */
    struct series b = {0};
    labels_copy(&b.labels, &a.labels);
    b.p = xcalloc(2, sizeof(*b.p));
    b.p[0] = (struct point){1142, 0.9};
    b.p[1] = (struct point){1143, 0.9};
    b.n = 2;
    live_feed(&l, &b, 1120, 1180, &late);
    TEST_CHECK_INT(late, 2);
    TEST_CHECK_INT(l.nfixes, 1);
    TEST_CHECK(proof_last(l.v[0].rp.p) == 1150000);
    /* Before the last samples folded: taken as read before, not late. */
    b.p[0] = (struct point){1000, 0.01};
    b.n = 1;
    live_feed(&l, &b, 990, 1180, &late);
    TEST_CHECK_INT(late, 2);
    /* Another metric name with the same other labels: the rule keeps, as raw_proofs does. */
    labels_set(&b.labels, "__name__", "other");
    live_feed(&l, &b, 990, 1180, &late);
    TEST_CHECK(strstr(l.err, "differ only in their metric name") != NULL);
    labels_free(&a.labels);
    free(a.p);
    labels_free(&b.labels);
    free(b.p);
    lv_free(&l);
}

/* The series of a selector share their metric name: held once per rule, not per series. */
TEST(live_names_held_once)
{
    struct lv_rule l;
    live_rule(&l);
    struct series a = mkseries("a", 1000, 15, 4, 0.01), b = mkseries("b", 1000, 15, 4, 0.01);
    size_t late = 0;
    live_feed(&l, &a, 0, 2000, &late);
    live_feed(&l, &b, 0, 2000, &late);
    TEST_CHECK_INT(l.n, 2);
    TEST_CHECK_INT(l.nnames, 1);
    TEST_CHECK(l.n == 2 && l.v[0].name == l.v[1].name);
    TEST_CHECK_STR(l.v[0].name, "busy");
    /* Another name is held apart; the full labels of a series carry its own. */
    struct series c = mkseries("c", 1000, 15, 4, 0.01);
    labels_set(&c.labels, "__name__", "other");
    live_feed(&l, &c, 0, 2000, &late);
    TEST_CHECK_INT(l.nnames, 2);
    struct labels full;
    lv_full_labels(&l.v[2], &full);
    TEST_CHECK_STR(labels_get(&full, "__name__"), "other");
    labels_free(&full);
    struct series *all[] = {&a, &b, &c};
    for (size_t i = 0; i < 3; i++) {
        labels_free(&all[i]->labels);
        free(all[i]->p);
    }
    lv_free(&l);
}

TEST(live_trim)
{
    struct lv_rule l;
    live_rule(&l);
    struct rule ru = {
        .enabled = true, .threshold = 10, .idle_timer = 600, .step = 60, .tolerated_gap = 120};
    struct series a = mkseries("a", 1000, 15, 11, 0.01);  /* until 1150 */
    struct series b = mkseries("b", 1000, 15, 200, 0.01); /* until 3985 */
    size_t late = 0;
    live_feed(&l, &a, 0, 4000, &late);
    live_feed(&l, &b, 0, 4000, &late);
    TEST_CHECK_INT(l.n, 2);
    /* At 4000 the read starts at 4000 - 1200 - 60 - 120: a's last sample is older. */
    lv_trim(&l, &ru, 4000);
    TEST_CHECK_INT(l.n, 1);
    TEST_CHECK(strstr(l.v[0].key, "\"b\"") != NULL);
    /* The index follows: b is found again, a is new again. */
    live_feed(&l, &b, 3990, 4000, &late);
    TEST_CHECK_INT(l.n, 1);
    live_feed(&l, &a, 0, 4000, &late);
    TEST_CHECK_INT(l.n, 2);
    labels_free(&a.labels);
    free(a.p);
    labels_free(&b.labels);
    free(b.p);
    lv_free(&l);
}

/* The end of tests/fixtures/remoteread/scrape.bin's samples (its scrape.expected). */
#define RR_NOW 1795668540.0

/* The rule of the tests against the capture: its series, a 10m idle timer. */
static const struct rule rr_rule = {.name = "r",
                                    .enabled = true,
                                    .policy = POLICY_ALWAYS,
                                    .threshold = 10,
                                    .idle_timer = 600,
                                    .step = 60,
                                    .q_activity = "{__name__=~\"rr_scrape_.*\"}",
                                    .q_allocation = "gpureclaim:workload_devices:count"};

/* The capture copied into the tree as `name`: the fake then reads it by an absolute path,
   whatever its cwd. Its path; free it. */
static char *rr_capture(const char *name)
{
    size_t caplen = 0;
    char *cap = test_read_file("tests/fixtures/remoteread/scrape.bin", &caplen);
    TEST_CHECK(cap && caplen > 64);
    char *capfile = xasprintf("%s/%s", tmpdir, name);
    FILE *cf = fopen(capfile, "wb");
    TEST_CHECK(cf != NULL);
    if (cf) {
        fwrite(cap ? cap : "", 1, caplen, cf);
        fclose(cf);
    }
    free(cap);
    return capfile;
}

/*
 * A `run` cycle asks its instant query (the allocation) while the raw samples are read, not
 * after: the fake holds the remote read until the instant query has arrived (-H), so a
 * cycle that asks them in turn waits out the hold and the fake says "timed out". The rule
 * data is what a cycle in turn builds: the read's proofs, the allocation answered, asked
 * once; and the answer is not held by the replay once the cycle has handed it over (at a
 * million workloads it is some 250 MB that decide() would find still in use).
 */
TEST(live_instant_queries_with_the_raw_read)
{
    char *instant = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{\"__name__\":\"gpureclaim:workload_devices:count\","
                    "\"pod\":\"p2\",\"resource\":\"amd_com_gpu\"},\"value\":[1795668540,\"1\"]}]}}";
    char *range = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}";
    TEST_CHECK_INT(tmptree_put(tmpdir, "instant.json", instant), 0);
    TEST_CHECK_INT(tmptree_put(tmpdir, "range.json", range), 0);
    char *ifile = xasprintf("%s/instant.json", tmpdir), *rfile = xasprintf("%s/range.json", tmpdir);
    char *capfile = rr_capture("scrape.bin");
    struct fake fk;
    if (fake_start(&fk, fake_path, tmpdir, "-R", capfile, "-H", "10", "0", "ok", rfile, ifile,
                   NULL) < 0) {
        TEST_CHECK(!"fake_prom started");
        free(ifile);
        free(rfile);
        free(capfile);
        return;
    }
    struct rule rules[] = {rr_rule};
    struct ruleset rs = {.rules = rules, .n = 1};
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", fk.port);
    struct promq *q = promq_new(&(struct promq_cfg){.url = url, .timeout = 10});
    struct replay *r =
        replay_live_open(q, &rs, &(struct replay_live_cfg){.overlap = 30, .full_every = 3600});
    struct rule_data d[1];
    double t0 = mono_now();
    TEST_CHECK_INT(replay_live_cycle(r, RR_NOW, d), 0);
    TEST_CHECK(mono_now() - t0 < 9); /* the hold (10 s) was not waited out */
    TEST_CHECK_INT(d[0].error, 0);
    TEST_CHECK_STR(d[0].errmsg, "");
    TEST_CHECK_STR(d[0].read_path, "remote_read");
    TEST_CHECK(d[0].proof == DECIDE_PROOF_FULL);
    TEST_CHECK(d[0].has_proofs && d[0].nproofs > 0);
    TEST_CHECK_INT(d[0].allocation.n, 1);
    if (d[0].allocation.n == 1) {
        TEST_CHECK_STR(labels_get(&d[0].allocation.s[0].labels, "pod"), "p2");
        TEST_CHECK(d[0].allocation.s[0].n == 1 && d[0].allocation.s[0].p[0].v == 1);
    }
    /* Handed over, not held. */
    TEST_CHECK_INT(r->ninsts, 1);
    TEST_CHECK(r->insts[0].ans.m.n == 0 && r->insts[0].ans.cur == NULL);
    replay_live_release(r, d);
    fetch_free(d, 1);
    /* The next cycle asks again (nothing held), and again with its read. */
    TEST_CHECK_INT(replay_live_cycle(r, RR_NOW + 60, d), 0);
    TEST_CHECK_INT(d[0].error, 0);
    TEST_CHECK_INT(d[0].allocation.n, 1);
    TEST_CHECK(d[0].proof == DECIDE_PROOF_INCREMENTAL);
    replay_live_release(r, d);
    fetch_free(d, 1);
    replay_close(r);
    promq_free(q);
    fake_stop(&fk);
    TEST_CHECK_INT(fake_log_count(fk.log, "read held: instant query arrived"), 2);
    TEST_CHECK_INT(fake_log_count(fk.log, "read held: timed out"), 0);
    TEST_CHECK_INT(fake_log_count(fk.log, "request POST /api/v1/read "), 2);
    TEST_CHECK_INT(fake_log_count(fk.log, "request POST /api/v1/query "), 2);
    free(ifile);
    free(rfile);
    free(capfile);
}

/*
 * The read-ahead (replay_ahead.c: the next chunk read by a thread while this one's cycles
 * are judged) hands each cycle what reading the chunk in place does: a range of 13 cycles
 * read in chunks of two, against a fake serving a captured remote-read answer and a range
 * answer of the allocation, once each way. The per-cycle rule data (errors, the proofs' labels
 * and last samples, the allocation's points), the stats and the requests the fake saw are
 * the same; and the thread did run (a chunk being read ahead after the first cycle).
 */
static char *ahead_replay(const char *url, bool sync, size_t *requests, bool *ahead_seen)
{
    struct rule rules[] = {rr_rule};
    struct ruleset rs = {.rules = rules, .n = 1};
    struct promq *q = promq_new(&(struct promq_cfg){.url = url, .timeout = 10, .proofs = true});
    char err[256];
    struct replay *r = replay_open(&(struct replay_cfg){.q = q,
                                                        .rs = &rs,
                                                        .from = RR_NOW,
                                                        .to = RR_NOW + 720,
                                                        .interval = 60,
                                                        .chunk = 120,
                                                        .carry = true,
                                                        .sync_reads = sync},
                                   err, sizeof(err));
    TEST_CHECK(r != NULL);
    struct sbuf out = {0};
    struct rule_data d[1];
    double t;
    while (r && replay_next(r, &t, d) == 1) {
        *ahead_seen |= r->ahead != NULL;
        sbuf_printf(&out, "@%.0f error=%d '%s' proofs=%d:", t, d[0].error, d[0].errmsg,
                    (int)d[0].nproofs);
        for (size_t i = 0; i < d[0].nproofs; i++) {
            char *k = labels_format(&d[0].proofs[i].s.labels);
            sbuf_printf(&out, " %s@%lld", k, (long long)proof_last(d[0].proofs[i].p));
            free(k);
        }
        sbuf_puts(&out, " alloc:");
        for (size_t i = 0; i < d[0].allocation.n; i++)
            for (size_t j = 0; j < d[0].allocation.s[i].n; j++)
                sbuf_printf(&out, " %.3f=%g", d[0].allocation.s[i].p[j].t,
                            d[0].allocation.s[i].p[j].v);
        sbuf_putc(&out, '\n');
        fetch_free(d, 1);
    }
    struct replay_stats st = {0};
    if (r) {
        replay_stats(r, &st);
        sbuf_printf(&out, "samples=%zu requests=%zu failed=%zu data_start=%.3f\n", st.samples,
                    st.requests, st.failed_chunks, st.data_start);
    }
    *requests = st.requests;
    replay_close(r);
    promq_free(q);
    return sbuf_take(&out);
}

TEST(read_ahead_as_in_place)
{
    struct sbuf range = {0};
    sbuf_puts(&range, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
                      "{\"metric\":{\"__name__\":\"gpureclaim:workload_devices:count\","
                      "\"pod\":\"p2\",\"resource\":\"amd_com_gpu\"},\"values\":[");
    for (int k = 0; k <= 12; k++)
        sbuf_printf(&range, "%s[%.0f,\"%d\"]", k ? "," : "", RR_NOW + 60.0 * k, 1 + k % 2);
    sbuf_puts(&range, "]}]}}");
    TEST_CHECK_INT(tmptree_put(tmpdir, "ahead-range.json", range.buf), 0);
    sbuf_free(&range);
    char *capfile = rr_capture("ahead-scrape.bin");
    char *rfile = xasprintf("%s/ahead-range.json", tmpdir);
    char *seen[2] = {NULL, NULL};
    size_t requests[2] = {0, 0}, reads[2] = {0, 0};
    bool ahead[2] = {false, false};
    for (int sync = 0; sync < 2; sync++) {
        struct fake fk;
        if (fake_start(&fk, fake_path, tmpdir, "-R", capfile, "0", "ok", rfile, NULL) < 0) {
            TEST_CHECK(!"fake_prom started");
            break;
        }
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", fk.port);
        seen[sync] = ahead_replay(url, sync, &requests[sync], &ahead[sync]);
        fake_stop(&fk);
        reads[sync] = (size_t)fake_log_count(fk.log, "request POST /api/v1/read ");
    }
    if (seen[0] && seen[1]) {
        TEST_CHECK_STR(seen[0], seen[1]);
        TEST_CHECK(strstr(seen[0], "pod=\"p2\"}@1795668542992") != NULL); /* a later chunk's */
        TEST_CHECK(strstr(seen[0], "=2") != NULL); /* and the allocation's points */
    }
    TEST_CHECK(ahead[0]);  /* read ahead */
    TEST_CHECK(!ahead[1]); /* in place */
    TEST_CHECK(requests[0] == requests[1] && requests[0] >= 7);
    TEST_CHECK(reads[0] == reads[1] && reads[0] >= 7);
    free(seen[0]);
    free(seen[1]);
    free(capfile);
    free(rfile);
}

int main(int argc, char **argv)
{
    fake_bin_path(fake_path, sizeof(fake_path), argv[0], "fake_prom");
    if (tmptree_make(tmpdir, sizeof(tmpdir), "gpureclaim-test_replay") < 0) {
        perror("mkdtemp");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    log_threshold = LOG_ERROR;
    RUN(series_across_reads);
    RUN(trim_keeps_the_next_window);
    RUN(window_as_raw_to_grid);
    RUN(window_as_proofs);
    RUN(carried_as_windowed);
    RUN(slices);
    RUN(upper_as_binary_search);
    RUN(failures_merge);
    RUN(bad_ranges);
    RUN(live_targeted_selector);
    RUN(live_fold_across_overlapping_reads);
    RUN(live_late_samples);
    RUN(live_trim);
    RUN(live_names_held_once);
    RUN(live_instant_queries_with_the_raw_read);
    RUN(read_ahead_as_in_place);
    tmptree_finish(tmpdir);
    return test_done();
}
