/*
 * Unit tests of the backtest's range reader (enforcer/replay.c): the parts that do not talk
 * to a server (series kept across reads, the boundary sample read twice, a failed read undone,
 * trimming, the window handed to raw_grids_add against raw_to_grid of the same samples,
 * slicing range answers per cycle, failures merged, bad ranges). tests/e2e/replay.sh compares
 * whole replays with `plan --at` on real servers.
 */
#include "replay.c"
#include "test.h"

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
        rp_series_free(&s->s[i]);
    free(s->s);
    strset_free(&s->index);
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
        struct raw_grid g = rp_grid(&f.rule, t);
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
    matrix_free(&m);
    TEST_CHECK_INT(rp_instant(&r, 0, 90, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 0);
    matrix_free(&m);
    rp_answer_reset(&in->ans);
    free(r.insts);
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

int main(void)
{
    RUN(series_across_reads);
    RUN(trim_keeps_the_next_window);
    RUN(window_as_raw_to_grid);
    RUN(slices);
    RUN(failures_merge);
    RUN(bad_ranges);
    return test_done();
}
