/*
 * Tests of raw.c: raw samples to decide()'s grid. Each case builds one series by hand and
 * checks the activity points (max per closed step, NaN for a non-finite sample, none for an
 * empty step) and the exact coverage (a gap of gap + 1 ms found, exactly gap not; a
 * staleness marker ends the series), plus the failures: samples out of order, two series
 * that differ only by name.
 */
#include "raw.c"
#include "test.h"

static double stale_nan(void)
{
    uint64_t bits = RAW_STALE_NAN_BITS;
    double v;
    memcpy(&v, &bits, sizeof(v));
    return v;
}

/* A one-series raw matrix {__name__="x", pod=<pod>} with the given points. */
static void mk(struct matrix *m, const char *pod, const struct point *p, size_t n)
{
    struct series *s = matrix_push(m);
    struct label l[] = {{"__name__", "x"}, {"pod", (char *)pod}};
    labels_from(&s->labels, l, 2);
    s->p = xmalloc((n ? n : 1) * sizeof(*s->p));
    memcpy(s->p, p, n * sizeof(*p));
    s->n = n;
}

/* grid 1000..1240 step 60 (5 points), gap 60 */
static const struct raw_grid G = {.start = 1000, .end = 1240, .step = 60, .gap = 60};

/* The coverage of grid point i of G: the listed value, 1 when the step is not listed. */
static double cov_at(const struct matrix *c, size_t i)
{
    if (!c->n)
        return -1;
    for (size_t j = 0; j < c->s[0].n; j++)
        if (fabs(c->s[0].p[j].t - (G.start + (double)i * G.step)) < 1e-6)
            return c->s[0].p[j].v;
    return 1;
}

TEST(test_max_per_closed_step)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    /* every 15 s from 925 to 1240; 0.5 at 1060 (a boundary: counts in steps 1060 and 1120) */
    struct point p[32];
    size_t n = 0;
    for (double t = 925; t <= 1240; t += 15)
        p[n++] = (struct point){t, t == 1060 ? 0.5 : 0.01};
    mk(&raw, "a", p, n);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_INT(raw.n, 0);
    TEST_CHECK_INT(act.n, 1);
    TEST_CHECK(labels_get(&act.s[0].labels, "__name__") == NULL);
    TEST_CHECK_STR(labels_get(&act.s[0].labels, "pod"), "a");
    TEST_CHECK_INT(act.s[0].n, 5);
    TEST_CHECK_DBL(act.s[0].p[0].v, 0.01, 1e-12);
    TEST_CHECK_DBL(act.s[0].p[1].v, 0.5, 1e-12);
    TEST_CHECK_DBL(act.s[0].p[2].v, 0.5, 1e-12);
    TEST_CHECK_DBL(act.s[0].p[3].v, 0.01, 1e-12);
    TEST_CHECK_DBL(act.s[0].p[4].t, 1240, 1e-9);
    for (size_t i = 0; i < 5; i++)
        TEST_CHECK_DBL(cov_at(&cov, i), 1, 0);
    /* every step covered: a coverage series with the same labels that lists none */
    TEST_CHECK_INT(cov.n, 1);
    TEST_CHECK_INT(cov.s[0].n, 0);
    TEST_CHECK(labels_equal(&cov.s[0].labels, &act.s[0].labels));
    matrix_free(&act);
    matrix_free(&cov);
}

TEST(test_nonfinite_and_empty_step)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    struct point p[] = {{930, 0},         {990, 0},    {1050, NAN}, {1100, 0.1},
                        {1170, INFINITY}, {1171, 0.2}, {1240, 0}};
    mk(&raw, "a", p, sizeof(p) / sizeof(p[0]));
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_INT(act.s[0].n, 5);
    TEST_CHECK(isnan(act.s[0].p[1].v)); /* (1000,1060] holds the NaN */
    TEST_CHECK_DBL(act.s[0].p[2].v, 0.1, 1e-12);
    TEST_CHECK(isnan(act.s[0].p[3].v)); /* +Inf at 1170 with 0.2 */
    TEST_CHECK_DBL(act.s[0].p[4].v, 0, 0);
    matrix_free(&act);
    matrix_free(&cov);

    /* no sample in [1060, 1120] nor [1120, 1180]: those steps have no point */
    struct point q[] = {{940, 0}, {1000, 0}, {1059, 0}, {1181, 0}, {1240, 0}};
    mk(&raw, "a", q, 5);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_INT(act.s[0].n, 3);
    TEST_CHECK_DBL(act.s[0].p[2].t, 1240, 1e-9);
    matrix_free(&act);
    matrix_free(&cov);
}

/* Samples every 60 s (= gap), then one hole of `hole_s` s after 1090. */
static void gap_case(double hole_s, double want_cov_at_1180)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    struct point p[16];
    size_t n = 0;
    for (double t = 910; t <= 1090; t += 60)
        p[n++] = (struct point){t, 0};
    for (double t = 1090 + hole_s; t <= 1240; t += 30)
        p[n++] = (struct point){t, 0};
    mk(&raw, "a", p, n);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_DBL(cov_at(&cov, 0), 1, 0);
    TEST_CHECK_DBL(cov_at(&cov, 1), 1, 0);
    TEST_CHECK_DBL(cov_at(&cov, 2), 1, 0);
    /* [1120, 1180] holds the end of the hole: covered from the next sample on */
    TEST_CHECK_DBL(cov_at(&cov, 3), want_cov_at_1180, 1e-9);
    TEST_CHECK_DBL(cov_at(&cov, 4), 1, 0);
    matrix_free(&act);
    matrix_free(&cov);
}

TEST(test_exact_gap)
{
    gap_case(60.0, 1); /* exactly the tolerated gap: covered */
    /* one millisecond more: the step [1120, 1180] is covered only from 1150.001 on */
    gap_case(60.001, (1180 - 1150.001) / 60);
}

TEST(test_staleness_marker_ends_series)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    /* samples every 15 s; a marker at 1130 instead of 1135; the series is back at 1150 */
    struct point p[32];
    size_t n = 0;
    for (double t = 925; t <= 1240; t += 15)
        p[n++] = (struct point){t, 0.01};
    p[14] = (struct point){1130, stale_nan()};
    mk(&raw, "a", p, n);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    /* the marker is not a value: step (1120, 1180] is finite */
    TEST_CHECK(isfinite(act.s[0].p[3].v));
    TEST_CHECK_DBL(cov_at(&cov, 2), 1, 0);
    /* 1130 .. 1150 the series did not exist: [1120, 1180] is covered from 1150 on */
    TEST_CHECK_DBL(cov_at(&cov, 3), 0.5, 1e-12);
    TEST_CHECK_DBL(cov_at(&cov, 4), 1, 0);
    matrix_free(&act);
    matrix_free(&cov);

    /* a marker as the last sample: not covered at the end (stale), although the last real
       sample is only 20 s old */
    struct point q[] = {{930, 0}, {990, 0}, {1050, 0}, {1110, 0}, {1170, 0}, {1220, 0}, {1230, 0}};
    q[6].v = stale_nan();
    mk(&raw, "a", q, 7);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_DBL(cov_at(&cov, 3), 1, 0);
    TEST_CHECK_DBL(cov_at(&cov, 4), 0, 0); /* not even its end: nothing covered */
    matrix_free(&act);
    matrix_free(&cov);
}

TEST(test_first_step_unproven)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    struct point p[] = {{1001, 0}, {1030, 0}, {1060, 0}, {1090, 0}, {1120, 0},
                        {1150, 0}, {1180, 0}, {1210, 0}, {1240, 0}};
    mk(&raw, "a", p, 9);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    /* the step at 1060 starts at 1000, before the first sample: covered from 1001 on */
    TEST_CHECK_DBL(cov_at(&cov, 1), 59.0 / 60, 1e-12);
    TEST_CHECK(cov_at(&cov, 1) < 1);
    TEST_CHECK_DBL(cov_at(&cov, 2), 1, 0);
    TEST_CHECK_INT(act.s[0].n, 4);
    matrix_free(&act);
    matrix_free(&cov);
}

TEST(test_failures)
{
    struct matrix raw = {0}, act, cov;
    char err[256] = "";
    struct point p[] = {{1000, 0}, {1060, 0}, {1060, 0}};
    mk(&raw, "a", p, 3);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "out of order") != NULL);
    TEST_CHECK_INT(act.n, 0);
    TEST_CHECK_INT(raw.n, 0);

    /* same labels but for the name */
    struct point q[] = {{1000, 0}, {1060, 0}};
    mk(&raw, "a", q, 2);
    mk(&raw, "a", q, 2);
    labels_free(&raw.s[1].labels); /* rename the second: __name__="y" */
    struct label l[] = {{"__name__", "y"}, {"pod", "a"}};
    labels_from(&raw.s[1].labels, l, 2);
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "differ only in their metric name") != NULL);

    /* an invalid grid */
    struct raw_grid bad = {.start = 1000, .end = 1090, .step = 60, .gap = 60};
    mk(&raw, "a", q, 2);
    TEST_CHECK_INT(raw_to_grid(&raw, &bad, &act, &cov, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "invalid grid") != NULL);
    TEST_CHECK_DBL(raw_read_start(&G), 880, 0);
}

/* One series at a time (raw_grids_*): the grids of raw_to_grid, and nothing after a failure. */
TEST(test_series_by_series)
{
    struct matrix raw = {0}, act, cov, act2, cov2;
    struct raw_grids b;
    char err[256] = "";
    struct point p[32], gap[] = {{1000, 0.01}, {1200, 0.01}, {1240, 0.02}};
    size_t n = 0;
    for (double t = 925; t <= 1240; t += 15)
        p[n++] = (struct point){t, t == 1060 ? 0.5 : 0.01};
    mk(&raw, "a", p, n);
    mk(&raw, "b", gap, 3);
    mk(&raw, "c", p, 0); /* no sample: no series */
    TEST_CHECK_INT(raw_grids_begin(&b, &G, err, sizeof(err)), 0);
    for (size_t i = 0; i < raw.n; i++)
        TEST_CHECK_INT(raw_grids_add(&b, &raw.s[i], err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_end(&b, &act2, &cov2, err, sizeof(err)), 0);
    raw_grids_discard(&b); /* a no-op once handed over */
    TEST_CHECK_INT(raw_to_grid(&raw, &G, &act, &cov, err, sizeof(err)), 0);
    TEST_CHECK_INT(act.n, 2);
    TEST_CHECK_INT(act2.n, act.n);
    TEST_CHECK_INT(cov2.n, cov.n);
    for (size_t i = 0; i < act.n && i < act2.n; i++) {
        TEST_CHECK(labels_equal(&act.s[i].labels, &act2.s[i].labels));
        TEST_CHECK_INT(act2.s[i].n, act.s[i].n);
        TEST_CHECK(memcmp(act.s[i].p, act2.s[i].p, act.s[i].n * sizeof(struct point)) == 0);
        TEST_CHECK_INT(cov2.s[i].n, cov.s[i].n);
        TEST_CHECK(memcmp(cov.s[i].p, cov2.s[i].p, cov.s[i].n * sizeof(struct point)) == 0);
    }
    matrix_free(&act);
    matrix_free(&cov);
    matrix_free(&act2);
    matrix_free(&cov2);

    /* A bad series after good ones: the whole build fails and holds nothing. */
    struct point bad[] = {{1000, 0}, {1060, 0}, {1060, 0}};
    mk(&raw, "a", p, n);
    mk(&raw, "b", bad, 3);
    mk(&raw, "c", p, n);
    TEST_CHECK_INT(raw_grids_begin(&b, &G, err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[0], err, sizeof(err)), 0);
    TEST_CHECK_INT(b.activity.n, 1);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[1], err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "out of order") != NULL);
    TEST_CHECK_INT(b.activity.n, 0);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[2], err, sizeof(err)), -1);
    TEST_CHECK_INT(raw_grids_end(&b, &act, &cov, err, sizeof(err)), -1);
    TEST_CHECK_INT(act.n, 0);
    TEST_CHECK_INT(cov.n, 0);
    matrix_free(&raw);

    /* The answer failed after some series were added: the caller discards them. */
    mk(&raw, "a", p, n);
    TEST_CHECK_INT(raw_grids_begin(&b, &G, err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[0], err, sizeof(err)), 0);
    raw_grids_discard(&b);
    TEST_CHECK_INT(b.activity.n, 0);
    TEST_CHECK(b.activity.s == NULL);
    matrix_free(&raw);

    /* Two series that differ only by name, added one by one: found at the end. */
    mk(&raw, "a", p, n);
    mk(&raw, "a", p, n);
    labels_free(&raw.s[1].labels);
    struct label l[] = {{"__name__", "y"}, {"pod", "a"}};
    labels_from(&raw.s[1].labels, l, 2);
    TEST_CHECK_INT(raw_grids_begin(&b, &G, err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[0], err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_add(&b, &raw.s[1], err, sizeof(err)), 0);
    TEST_CHECK_INT(raw_grids_end(&b, &act, &cov, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "differ only in their metric name") != NULL);
    TEST_CHECK_INT(act.n, 0);
    TEST_CHECK_INT(b.activity.n, 0);
    matrix_free(&raw);

    /* An invalid grid fails at the start. */
    struct raw_grid inval = {.start = 1000, .end = 1090, .step = 60, .gap = 60};
    TEST_CHECK_INT(raw_grids_begin(&b, &inval, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "invalid grid") != NULL);
    raw_grids_discard(&b);
}

/*
 * raw_cover_at: the same coverage at one instant. A hole of exactly the gap is covered, one
 * millisecond more is not; a staleness marker ends the cover; samples after the instant do
 * not count; the run's first sample and the one before its hole are reported.
 */
TEST(test_cover_at)
{
    struct matrix m = {0};
    struct raw_cover c;
    char err[128];
    /* 1000, 1060, then 1180 (exactly 120 later), 1300.001 (120.001 later). */
    struct point p[] = {{1000, 1}, {1060, 1}, {1180, 1}, {1300.001, 1}, {1400, 1}};
    mk(&m, "a", p, 5);
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1250, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(c.covered);
    TEST_CHECK_DBL(c.from, 1000, 1e-9);
    TEST_CHECK(isnan(c.before));
    TEST_CHECK_DBL(c.last, 1180, 1e-9);
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1400, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(c.covered);
    TEST_CHECK_DBL(c.from, 1300.001, 1e-9);
    TEST_CHECK_DBL(c.before, 1180, 1e-9);
    /* With a gap 1 ms longer the hole is tolerated: one run from the first sample. */
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1400, 120.001, &c, err, sizeof(err)), 0);
    TEST_CHECK(c.covered);
    TEST_CHECK_DBL(c.from, 1000, 1e-9);
    TEST_CHECK_DBL(c.end, 1520.001, 1e-6);
    /* Long after the last sample: stale. */
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1600, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(!c.covered);
    TEST_CHECK_DBL(c.last, 1400, 1e-9);
    /* Before the first sample: nothing. */
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 900, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(!c.covered && isnan(c.last));
    matrix_free(&m);

    /* A marker 30 s after the last sample ends its cover there. */
    struct point q[] = {{1000, 1}, {1060, 1}, {1090, stale_nan()}};
    mk(&m, "b", q, 3);
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1089, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(c.covered);
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1090, 120, &c, err, sizeof(err)), 0);
    TEST_CHECK(!c.covered);
    TEST_CHECK_DBL(c.last, 1060, 1e-9);
    matrix_free(&m);

    struct point r[] = {{1000, 1}, {1000, 2}};
    mk(&m, "c", r, 2);
    TEST_CHECK_INT(raw_cover_at(&m.s[0], 1100, 120, &c, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "out of order");
    matrix_free(&m);
}

int main(void)
{
    RUN(test_max_per_closed_step);
    RUN(test_nonfinite_and_empty_step);
    RUN(test_exact_gap);
    RUN(test_staleness_marker_ends_series);
    RUN(test_first_step_unproven);
    RUN(test_failures);
    RUN(test_series_by_series);
    RUN(test_cover_at);
    return test_done();
}
