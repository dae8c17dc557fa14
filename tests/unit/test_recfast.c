/*
 * Tests of recfast.c, `recommend`'s fast pass (issue 32). A differential test on random raw
 * histories (busy and idle stretches, jittered scrapes, NaN and +-Inf, staleness markers,
 * silences around the tolerated gap, young and ending series, workloads of one or two GPUs,
 * allocations that change or end), over several seeds: for every grid point (threshold x
 * idle timer x notice period) the fast pass's figures (reclaims, GPU-hours freed, returns
 * within --return-within, median time to return) are those of the backtest's own run
 * (bt_run: the event-driven decide() and the action engine) of that point's rule alone, fed
 * by a source that folds each series with that rule's own params, as the replay does. With
 * and without the couplings the engine behind the fast pass steps (the hourly cap,
 * maxTerminationsPerCycle). A point the fast pass marks inexact (recfast_exact) is left out
 * of the comparison and counted; they must be few.
 *
 * And the monotonicity of the figures in the idle timer: without caps, reclaims and freed
 * GPU-hours never increase with the idle timer (at the same threshold and notice period);
 * with caps, violations are counted and printed (a cap that binds can hold back, under a
 * shorter timer, a workload a longer timer reclaims: not a property the semantics give).
 *
 * And memory flat in the range (bt_cfg.figures_only): over four days of a few workloads,
 * each reclaimed dozens of times, what each point's engine holds at once (its ledger's
 * entries and its open reclaims, bt_result.held_peak) stays within a bound of the
 * workloads, where the engine of a plain backtest holds an entry per reclaim; the figures
 * the same as that backtest's.
 *
 * And the backtest's start of the data (bt_result.data_start, the earliest activity point
 * any cycle saw) asked of the source once, not at every cycle of a lookback, when the cycles
 * are whole steps apart; at every cycle when they are not; the same time either way as
 * asking at every cycle gives.
 */
#include "recfast.c"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "fetch.h"
#include "log.h"
#include "randhist.h"
#include "raw.h"
#include "test.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z, ms */

/* ---- random histories --------------------------------------------------------------------- */

struct hser {
    struct labels l; /* namespace, pod, gpu */
    struct rh_series r;
};

struct hist {
    struct hser *s;
    size_t ns, nw;
    char (*pod)[16];
    double *alloc; /* per workload and cycle: devices, 0 = no allocation series */
    struct labels *alabels;
    size_t ncycles;
    double from, interval;
};

/* Stretches of 3 to 60 minutes; few odd values, bursts, silences and markers. */
static const struct rh_params gen = {.young = 5,
                                     .ending = 6,
                                     .odd = 4,
                                     .stretch = 58,
                                     .bursts = 2,
                                     .gaps = 3,
                                     .silences = 1,
                                     .markers = 1};

/* nw workloads (0: 6 to 19, drawn). */
static void hist_make(struct hist *h, const struct rule *r, double from, double to, double interval,
                      size_t nw)
{
    memset(h, 0, sizeof(*h));
    h->from = from;
    h->interval = interval;
    h->ncycles = bt_cycles(from, to, interval);
    h->nw = nw ? nw : 6 + rh_rng(14);
    h->pod = xcalloc(h->nw, sizeof(*h->pod));
    h->s = xcalloc(2 * h->nw, sizeof(*h->s));
    h->alloc = xcalloc(h->nw * h->ncycles, sizeof(double));
    h->alabels = xcalloc(h->nw, sizeof(*h->alabels));
    /* The history starts two hours before the range: the windows of the first cycles. */
    int64_t a = llround(from * 1000) - 7200000, b = llround(to * 1000);
    for (size_t w = 0; w < h->nw; w++) {
        snprintf(h->pod[w], sizeof(h->pod[w]), "p%zu", w);
        for (size_t c = 0; c < (rh_rng(4) ? 1u : 2u); c++) {
            struct hser *s = &h->s[h->ns++];
            char gpu[8];
            snprintf(gpu, sizeof(gpu), "%zu", c);
            struct label l[3] = {{"gpu", gpu}, {"namespace", "ns"}, {"pod", h->pod[w]}};
            labels_from(&s->l, l, 3);
            rh_gen(&s->r, &gen, a, b, llround(r->tolerated_gap * 1000));
        }
        struct label al[3] = {{"namespace", "ns"}, {"pod", h->pod[w]}, {"resource", "amd_com_gpu"}};
        labels_from(&h->alabels[w], al, 3);
        double d = 1 + rh_rng(2);
        for (size_t k = 0; k < h->ncycles; k++) {
            if (rh_rng(300) == 0)
                d = rh_rng(3); /* 0: the allocation ends (for a while) */
            h->alloc[w * h->ncycles + k] = d;
        }
    }
}

static void hist_free(struct hist *h)
{
    for (size_t i = 0; i < h->ns; i++) {
        labels_free(&h->s[i].l);
        free(h->s[i].r.t);
        free(h->s[i].r.v);
    }
    for (size_t w = 0; w < h->nw; w++)
        labels_free(&h->alabels[w]);
    free(h->s);
    free(h->pod);
    free(h->alloc);
    free(h->alabels);
}

/* ---- a source folding the history as the replay does -------------------------------------- */

struct tsrc {
    struct bt_source base;
    const struct hist *h;
    const struct rule *r;
    struct proof_params pp;
    int64_t idle[RAW_MAX_IDLE];
    size_t nidle;
    struct proof **p;
    size_t *next;
    struct rule_winstats *win; /* this cycle's, lent to the rule data */
    int64_t tm;
};

static int tsrc_next(struct bt_source *bs, double *t, struct rule_data *data)
{
    struct tsrc *s = (struct tsrc *)bs;
    if (bs->done >= bs->total)
        return 0;
    size_t k = bs->done++;
    *t = s->h->from + (double)k * s->h->interval;
    int64_t tm = llround(*t * 1000);
    s->tm = tm;
    free(s->win);
    s->win = xcalloc(s->h->ns * (s->nidle ? s->nidle : 1), sizeof(*s->win));
    struct rule_data *d = &data[0];
    *d = (struct rule_data){.rule = s->r,
                            .has_proofs = true,
                            .proofs_lent = true,
                            .instants_lent = true,
                            .proof_params = s->pp,
                            .start = *t - decide_lookback(s->r),
                            .end = *t,
                            .raw_coverage = true,
                            .coverage_tail = true};
    d->proofs = xcalloc(s->h->ns ? s->h->ns : 1, sizeof(*d->proofs));
    char err[128];
    size_t nwin = 0;
    for (size_t i = 0; i < s->h->ns; i++) {
        const struct hser *x = &s->h->s[i];
        while (s->next[i] < x->r.n && x->r.t[s->next[i]] <= tm) {
            (void)proof_add(s->p[i], &s->pp, x->r.t[s->next[i]], x->r.v[s->next[i]], err,
                            sizeof(err));
            s->next[i]++;
        }
        if (!proof_present(s->p[i], &s->pp, tm))
            continue;
        struct rule_proof *rp = &d->proofs[d->nproofs++];
        *rp = (struct rule_proof){.p = s->p[i]};
        rp->s.labels = x->l;
        /* As rp_carried: the window statistics where the fold alone may not tell. */
        if (s->nidle && proof_needs_window(s->p[i], &s->pp, tm)) {
            rp->win = &s->win[nwin];
            rp->nwin = s->nidle;
            for (size_t w = 0; w < s->nidle; w++)
                raw_window_stats(x->r.t, x->r.v, s->next[i], &s->pp, tm, s->idle[w],
                                 &s->win[nwin++]);
        }
    }
    d->allocation.s = xcalloc(s->h->nw, sizeof(struct series));
    for (size_t w = 0; w < s->h->nw; w++) {
        double v = s->h->alloc[w * s->h->ncycles + k];
        if (!(v > 0))
            continue;
        struct series *se = &d->allocation.s[d->allocation.n++];
        se->labels = s->h->alabels[w];
        se->p = xmalloc(sizeof(*se->p));
        se->p[0] = (struct point){*t, v};
        se->n = 1;
    }
    return 1;
}

static bool tsrc_points(struct bt_source *bs, size_t rule, double after, bool first_only,
                        bool (*want)(void *arg, const struct labels *l), void *arg,
                        struct matrix *out)
{
    struct tsrc *s = (struct tsrc *)bs;
    (void)rule;
    *out = (struct matrix){0};
    int64_t tm = s->tm;
    int64_t a = isfinite(after) ? llround(after * 1000) : tm - s->pp.lookback_ms - 1;
    int64_t from = (a > tm - s->pp.lookback_ms ? a : tm - s->pp.lookback_ms) - s->pp.step_ms;
    out->s = xcalloc(s->h->ns ? s->h->ns : 1, sizeof(*out->s));
    for (size_t i = 0; i < s->h->ns; i++) {
        const struct hser *x = &s->h->s[i];
        if (want && !want(arg, &x->l))
            continue;
        size_t lo = 0;
        while (lo < s->next[i] && x->r.t[lo] < from)
            lo++;
        size_t m = s->next[i] - lo;
        if (!m)
            continue;
        struct point *p = xmalloc((first_only ? 1 : m) * sizeof(*p));
        size_t np = raw_points_between(x->r.t + lo, x->r.v + lo, m, &s->pp, tm, a, tm, p,
                                       first_only ? 1 : m);
        if (!np) {
            free(p);
            continue;
        }
        struct series *se = &out->s[out->n++];
        se->labels = x->l; /* lent, as replay_points lends them */
        se->p = p;
        se->n = np;
    }
    return true;
}

static void tsrc_free(struct bt_source *bs)
{
    struct tsrc *s = (struct tsrc *)bs;
    for (size_t i = 0; i < s->h->ns; i++)
        free(s->p[i]);
    free(s->p);
    free(s->next);
    free(s->win);
    free(s);
}

/* A source of rule r's data folded with pp and window statistics for idle[0 .. nidle). */
static struct bt_source *tsrc_new(const struct hist *h, const struct rule *r,
                                  const struct proof_params *pp, const double *idle, size_t nidle)
{
    struct tsrc *s = xcalloc(1, sizeof(*s));
    s->base.next = tsrc_next;
    s->base.points = tsrc_points;
    s->base.free = tsrc_free;
    s->base.total = h->ncycles;
    s->h = h;
    s->r = r;
    s->pp = *pp;
    s->nidle = nidle;
    for (size_t i = 0; i < nidle; i++)
        s->idle[i] = llround(idle[i] * 1000);
    s->p = xcalloc(h->ns ? h->ns : 1, sizeof(*s->p));
    s->next = xcalloc(h->ns ? h->ns : 1, sizeof(*s->next));
    for (size_t i = 0; i < h->ns; i++)
        s->p[i] = proof_new(pp);
    return &s->base;
}

/* ---- the comparison ------------------------------------------------------------------------ */

struct fig {
    size_t reclaims, returns_within;
    double gpu_seconds, median;
};

static struct fig fig_of(const struct bt_result *r)
{
    return (struct fig){r->rule[0].reclaims, r->rule[0].returns_within, r->rule[0].gpu_seconds,
                        r->rule[0].median_return};
}

static bool fig_same(const struct fig *a, const struct fig *b)
{
    return a->reclaims == b->reclaims && a->returns_within == b->returns_within &&
           fabs(a->gpu_seconds - b->gpu_seconds) <= 1e-6 * (1 + fabs(a->gpu_seconds)) &&
           ((isnan(a->median) && isnan(b->median)) || a->median == b->median);
}

static const double TH[] = {3, 10, 25};
static const double IT[] = {300, 600, 1200, 2700};
static const double NO[] = {0, 300};
#define NPTS (ARRAY_LEN(TH) * ARRAY_LEN(IT) * ARRAY_LEN(NO))

static unsigned long compared, reclaims_seen, inexact, mono_checked, mono_capped_broken;
static unsigned long fast_judged, fast_carried, fast_looked, fast_kept;

/* One backtest of rule r by the engine over the test history hs. */
static struct bt_sim *engine_run(struct hist *hs, struct rule *r, const struct bt_cfg *cfg,
                                 char *err, size_t errlen)
{
    struct ruleset rs = {.rules = r, .n = 1};
    struct proof_params pp;
    TEST_CHECK(decide_proof_params(r, &pp) == 0);
    double idle[RAW_MAX_IDLE];
    size_t nidle = fetch_idle_timers(r, idle);
    struct bt_source *es = tsrc_new(hs, r, &pp, idle, nidle);
    return bt_run(&rs, cfg, es, NULL, NULL, "engine", err, errlen);
}

/* The rule every test here varies: delete, Always, identity namespace/pod. */
static struct rule test_rule(double step, double tolerated_gap, unsigned max_terminations)
{
    static char *ident[] = {"namespace", "pod"};
    return (struct rule){.name = "t",
                         .enabled = true,
                         .policy = POLICY_ALWAYS,
                         .action = ACTION_DELETE,
                         .resource_label = "resource",
                         .identity = ident,
                         .nidentity = 2,
                         .step = step,
                         .tolerated_gap = tolerated_gap,
                         .max_terminations = max_terminations};
}

static void one_history(int h)
{
    static const double steps[] = {30, 60, 60};
    struct rule base = test_rule(steps[rh_rng(ARRAY_LEN(steps))], 0, 0);
    double gaps[] = {2 * base.step, 2 * base.step + 1, 5 * base.step};
    base.tolerated_gap = gaps[rh_rng(ARRAY_LEN(gaps))];
    bool capped = rh_rng(2);
    base.max_terminations = capped && rh_rng(2) ? 1 + rh_rng(3) : 100000;
    struct bt_cfg cfg = {.interval = rh_rng(3) ? 60 : 120,
                         .return_within = 3600,
                         .max_actions_per_hour = capped ? 4 + rh_rng(8) : 0,
                         .protected_namespaces = ""};
    cfg.from = (double)T0 / 1000.0;
    cfg.to = cfg.from + 3600.0 * (8 + rh_rng(8));
    struct hist hs;
    hist_make(&hs, &base, cfg.from, cfg.to, cfg.interval, 0);

    struct rule *vs = xcalloc(NPTS, sizeof(*vs));
    struct rule *vs_engine = xcalloc(NPTS, sizeof(*vs_engine));
    size_t k = 0;
    for (size_t a = 0; a < ARRAY_LEN(TH); a++)
        for (size_t b = 0; b < ARRAY_LEN(IT); b++)
            for (size_t c = 0; c < ARRAY_LEN(NO); c++, k++) {
                vs[k] = base;
                vs[k].threshold = TH[a];
                vs[k].idle_timer = IT[b];
                vs[k].notice_period = NO[c];
                vs_engine[k] = vs[k];
            }
    /* The fast pass, fed by one fold of each series. */
    struct replay_fold fold;
    TEST_CHECK(recfast_fold(vs, NPTS, &fold) == 0);
    char err[256];
    struct recfast *f = recfast_new(vs, NPTS, &cfg, &fold, err, sizeof(err));
    TEST_CHECK(f != NULL);
    if (!f) {
        printf("  recfast_new: %s\n", err);
        exit(1);
    }
    const struct rule *probe = &vs[recfast_probe(vs, NPTS)];
    struct bt_source *src = tsrc_new(&hs, probe, &fold.pp, fold.idle, fold.nidle);
    struct rule_data data = {0};
    double t;
    while (src->next(src, &t, &data) == 1) {
        recfast_cycle(f, t, &data, src, 0);
        fetch_free(&data, 1);
    }
    src->free(src);
    recfast_finish(f);

    /* The engine, one backtest per point, each with its own fold. */
    struct fig eng[NPTS];
    for (size_t v = 0; v < NPTS; v++) {
        struct bt_sim *sim = engine_run(&hs, &vs_engine[v], &cfg, err, sizeof(err));
        TEST_CHECK(sim != NULL);
        eng[v] = fig_of(bt_sim_result(sim));
        bt_sim_free(sim);
        if (!recfast_exact(f, v)) {
            inexact++;
            continue;
        }
        struct fig got = fig_of(recfast_result(f, v));
        compared++;
        reclaims_seen += eng[v].reclaims;
        bool same = fig_same(&got, &eng[v]);
        TEST_CHECK(same);
        if (!same)
            printf("  history %d, point %g%% %gs notice %gs: fast %zu reclaims %.1f GPU-s %zu "
                   "returns, engine %zu reclaims %.1f GPU-s %zu returns\n",
                   h, vs[v].threshold, vs[v].idle_timer, vs[v].notice_period, got.reclaims,
                   got.gpu_seconds, got.returns_within, eng[v].reclaims, eng[v].gpu_seconds,
                   eng[v].returns_within);
    }
    /* Monotone in the idle timer, at the same threshold and notice period. */
    for (size_t a = 0; a < ARRAY_LEN(TH); a++)
        for (size_t c = 0; c < ARRAY_LEN(NO); c++)
            for (size_t b = 1; b < ARRAY_LEN(IT); b++) {
                const struct fig *x = &eng[(a * ARRAY_LEN(IT) + b - 1) * ARRAY_LEN(NO) + c];
                const struct fig *y = &eng[(a * ARRAY_LEN(IT) + b) * ARRAY_LEN(NO) + c];
                bool ok = y->reclaims <= x->reclaims && y->gpu_seconds <= x->gpu_seconds + 1e-6;
                mono_checked++;
                if (capped) {
                    mono_capped_broken += !ok;
                    continue;
                }
                TEST_CHECK(ok);
                if (!ok)
                    printf("  history %d, %g%% notice %gs: %gs -> %gs: reclaims %zu -> %zu, GPU-s "
                           "%.1f -> %.1f\n",
                           h, TH[a], NO[c], IT[b - 1], IT[b], x->reclaims, y->reclaims,
                           x->gpu_seconds, y->gpu_seconds);
            }
    struct recfast_stats st;
    recfast_stats(f, &st);
    fast_judged += st.judged;
    fast_carried += st.carried;
    fast_looked += st.looked;
    fast_kept += st.kept;
    recfast_free(f);
    free(vs);
    free(vs_engine);
    hist_free(&hs);
}

TEST(test_fast_equals_engine)
{
    static const uint64_t seeds[] = {0x2545f4914f6cdd1du, 0x9e3779b97f4a7c15u, 0xd1b54a32d192ed03u};
    /* 3 seeds x 8 histories; under memcheck 1 x 2 (test_reps): 274 s there for all 24 */
    const int per_seed = test_reps(8, 3), nseeds = test_reps(3, 3), ran = per_seed * nseeds;
    for (int s = 0; s < nseeds; s++) {
        rh_state = seeds[s];
        for (int h = 0; h < per_seed; h++)
            one_history(s * 100 + h);
    }
    TEST_CHECK(compared * 24 > 400u * (unsigned)ran); /* about 24 grid points a history */
    TEST_CHECK(reclaims_seen * 24 > 1000u * (unsigned)ran);
    TEST_CHECK(inexact * 20 <= compared);
    TEST_CHECK(fast_carried > fast_judged);
    /* Carried without a look (rf_gather): more than half of what is carried here, where
       every workload was looked at every cycle before (the history's churn keeps it far
       from the 99 % of a fleet's week, bench/recommend.sh). */
    TEST_CHECK(fast_looked >= fast_judged);
    TEST_CHECK((fast_looked - fast_judged) * 2 < fast_carried);
    /* Keeps other than `active` stand too (rf_set_keep): the young windows of every history's
       first hours and of every workload back, for the long idle timers. */
    TEST_CHECK(fast_kept * 100 > fast_judged);
    printf("  %lu keeps set to stand\n", fast_kept);
    printf("  looked at %lu workload-cycles of %lu\n", fast_looked, fast_judged + fast_carried);
    printf("  fast pass: %lu grid points compared with the engine (%lu reclaims), %lu left to "
           "the engine as inexact; %lu workload-cycles judged, %lu carried; monotone in the "
           "idle timer: %lu pairs, %lu broken under caps\n",
           compared, reclaims_seen, inexact, fast_judged, fast_carried, mono_checked,
           mono_capped_broken);
}

TEST(test_flat_in_range)
{
    static const double th[] = {10, 25}, it[] = {300, 900}, no[] = {0, 120};
    rh_state = 0x853c49e6748fea9bu;
    struct rule base = test_rule(60, 120, 100000);
    struct bt_cfg cfg = {.interval = 60, .return_within = 3600, .protected_namespaces = ""};
    cfg.from = (double)T0 / 1000.0;
    cfg.to = cfg.from + 4 * 86400.0;
    const size_t nw = 6;
    struct hist hs;
    hist_make(&hs, &base, cfg.from, cfg.to, cfg.interval, nw);
    enum { N = 8 };
    struct rule vs[N], ve[N];
    for (size_t k = 0; k < N; k++) {
        vs[k] = base;
        vs[k].threshold = th[k / 4];
        vs[k].idle_timer = it[k / 2 % 2];
        vs[k].notice_period = no[k % 2];
        ve[k] = vs[k];
    }
    struct replay_fold fold;
    TEST_CHECK(recfast_fold(vs, N, &fold) == 0);
    char err[256];
    struct recfast *f = recfast_new(vs, N, &cfg, &fold, err, sizeof(err));
    TEST_CHECK(f != NULL);
    if (!f)
        exit(1);
    struct bt_source *src =
        tsrc_new(&hs, &vs[recfast_probe(vs, N)], &fold.pp, fold.idle, fold.nidle);
    struct rule_data data = {0};
    double t;
    while (src->next(src, &t, &data) == 1) {
        recfast_cycle(f, t, &data, src, 0);
        fetch_free(&data, 1);
    }
    src->free(src);
    recfast_finish(f);
    /* At most, per workload: a pending notice, an acted entry not restarted yet and the
       newest restarted one; doubled before each compaction (plus its slack), and the open
       reclaims. */
    const size_t bound = 2 * 3 * nw + 16 + nw;
    size_t most = 0, most_engine = 0;
    for (size_t v = 0; v < N; v++) {
        struct bt_sim *sim = engine_run(&hs, &ve[v], &cfg, err, sizeof(err));
        TEST_CHECK(sim != NULL);
        struct fig eng = fig_of(bt_sim_result(sim));
        const struct bt_result *got = recfast_result(f, v);
        if (recfast_exact(f, v)) {
            struct fig fast = fig_of(got);
            TEST_CHECK(fig_same(&fast, &eng));
        }
        TEST_CHECK(got->held_peak <= bound);
        if (got->held_peak > bound)
            printf("  point %zu: %zu entries and reclaims held at once (bound %zu), %zu reclaims\n",
                   v, got->held_peak, bound, eng.reclaims);
        most = got->held_peak > most ? got->held_peak : most;
        most_engine = bt_sim_result(sim)->held_peak > most_engine ? bt_sim_result(sim)->held_peak
                                                                  : most_engine;
        TEST_CHECK(eng.reclaims >= 3 * bound); /* else the bound would prove nothing */
        bt_sim_free(sim);
    }
    TEST_CHECK(most_engine >= 3 * bound); /* a plain backtest's: an entry per reclaim */
    printf("  flat: %zu workloads over 4 days, at most %zu ledger entries and reclaims held by "
           "a point (bound %zu), %zu by a plain backtest's engine\n",
           nw, most, bound, most_engine);
    recfast_free(f);
    hist_free(&hs);
}

/* tsrc, counting the first points asked for, and finding the earliest at every cycle. */
struct csrc {
    struct tsrc *in;
    struct bt_source base;
    size_t asked;
    double earliest;
};

static int csrc_next(struct bt_source *bs, double *t, struct rule_data *data)
{
    struct csrc *c = (struct csrc *)((char *)bs - offsetof(struct csrc, base));
    int rc = c->in->base.next(&c->in->base, t, data);
    bs->done = c->in->base.done;
    struct matrix m = {0};
    if (rc == 1 && tsrc_points(&c->in->base, 0, -INFINITY, true, NULL, NULL, &m))
        for (size_t i = 0; i < m.n; i++)
            if (m.s[i].n && !(m.s[i].p[0].t >= c->earliest))
                c->earliest = m.s[i].p[0].t;
    matrix_free_lent(&m);
    return rc;
}

static bool csrc_points(struct bt_source *bs, size_t rule, double after, bool first_only,
                        bool (*want)(void *arg, const struct labels *l), void *arg,
                        struct matrix *out)
{
    struct csrc *c = (struct csrc *)((char *)bs - offsetof(struct csrc, base));
    c->asked += first_only;
    return tsrc_points(&c->in->base, rule, after, first_only, want, arg, out);
}

/* bt_run takes the source over: what it counted, kept when it is freed. */
static size_t first_asked;
static double first_earliest;

static void csrc_free(struct bt_source *bs)
{
    struct csrc *c = (struct csrc *)((char *)bs - offsetof(struct csrc, base));
    first_asked = c->asked;
    first_earliest = c->earliest;
    tsrc_free(&c->in->base);
    free(c);
}

TEST(test_first_point_once)
{
    rh_state = 0x5851f42d4c957f2du;
    for (int aligned = 1; aligned >= 0; aligned--) {
        struct rule r = test_rule(60, 120, 100000);
        r.threshold = 10;
        r.idle_timer = 6 * 3600.0;
        struct bt_cfg cfg = {
            .interval = aligned ? 60 : 90, .return_within = 3600, .protected_namespaces = ""};
        cfg.from = (double)T0 / 1000.0;
        cfg.to = cfg.from + 12 * 3600.0;
        struct hist hs;
        hist_make(&hs, &r, cfg.from, cfg.to, cfg.interval, 6);
        struct proof_params pp;
        TEST_CHECK(decide_proof_params(&r, &pp) == 0);
        double idle[RAW_MAX_IDLE];
        size_t nidle = fetch_idle_timers(&r, idle);
        struct csrc *c = xcalloc(1, sizeof(*c));
        c->in = (struct tsrc *)tsrc_new(&hs, &r, &pp, idle, nidle);
        c->base = c->in->base;
        c->base.next = csrc_next;
        c->base.points = csrc_points;
        c->base.free = csrc_free;
        c->earliest = NAN;
        struct ruleset rs = {.rules = &r, .n = 1};
        char err[256];
        struct bt_sim *sim = bt_run(&rs, &cfg, &c->base, NULL, NULL, "first", err, sizeof(err));
        TEST_CHECK(sim != NULL);
        size_t asked = first_asked;
        double earliest = first_earliest;
        const struct bt_result *res = bt_sim_result(sim);
        TEST_CHECK(res->data_start == earliest);
        if (aligned)
            TEST_CHECK(asked == 1);
        else
            TEST_CHECK(asked > 100); /* another grid each cycle: asked while in the window */
        printf("  first points: interval %gs, step 60s: asked %zu times over %zu cycles\n",
               cfg.interval, asked, res->cycles);
        bt_sim_free(sim);
        hist_free(&hs);
    }
}

int main(void)
{
    log_set_level("error"); /* the engine's notices and actions, thousands of them */
    RUN(test_fast_equals_engine);
    RUN(test_flat_in_range);
    RUN(test_first_point_once);
    return test_done();
}
