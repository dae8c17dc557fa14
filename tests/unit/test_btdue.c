/*
 * Tests of btdue.c, the backtest's event-driven decide() (issue 31). Two differential tests
 * on random raw histories (jittered and sparse scrapes, busy and idle stretches, NaN and
 * +-Inf, staleness markers, silences around the tolerated gap, young and stopped series,
 * steps of 15 to 60 s, idle timers that are not whole steps, overrides with their own timer
 * and threshold):
 *   - the due time: wherever btdue_active_until gives one, proof_judge says `active` at every
 *     time up to it with no further sample, and no longer a step after it (so the due time is
 *     exact to a step, not merely safe); and it is given for most `active` verdicts;
 *   - the cache: at every cycle, btdue_decide's records are decide()'s of the same data,
 *     workload for workload (decision, reason, idle start, threshold, idle timer, allocation,
 *     resource, priority), with allocations and priorities that change, series that come
 *     and go, the DuringGPUPressure policy and the per-cycle cap; and most workload-cycles
 *     were carried, not judged;
 * and the identity key btdue and recfast share (labels_key, series.h).
 */
#include "btdue.c"

#include <inttypes.h>
#include <stdio.h>

#include "fetch.h"
#include "match.h"
#include "randhist.h"
#include "test.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z, ms */

struct hs {
    struct rh_series r;
    size_t next;
    struct proof *p;
    struct rule_proof rp;
};

/* Stretches of 3 to 42 minutes; more odd values, bursts, silences, markers than recfast's. */
static const struct rh_params gen = {.young = 4,
                                     .ending = 5,
                                     .odd = 8,
                                     .stretch = 40,
                                     .bursts = 3,
                                     .gaps = 4,
                                     .silences = 2,
                                     .markers = 2};

static void mk_rule(struct rule *r, char **ident, struct rule_override *ov, struct matcher **om)
{
    static const double steps[] = {15, 30, 60, 60};
    memset(r, 0, sizeof(*r));
    r->name = "t";
    r->enabled = true;
    r->policy = rh_rng(3) ? POLICY_ALWAYS : POLICY_DURING_PRESSURE;
    r->step = steps[rh_rng(ARRAY_LEN(steps))];
    double gaps[] = {r->step, 2 * r->step, 2 * r->step + 1, 5 * r->step};
    r->tolerated_gap = gaps[rh_rng(ARRAY_LEN(gaps))];
    r->threshold = 5 + rh_rng(20);
    r->idle_timer =
        r->step * (double)(4 + rh_rng(20)) + (rh_rng(2) ? (double)rh_rng(7000) / 1000.0 : 0);
    r->max_terminations = 1 + rh_rng(4);
    r->resource_label = "resource";
    ident[0] = "namespace";
    ident[1] = "pod";
    r->identity = ident;
    r->nidentity = 2;
    if (rh_rng(2)) {
        char err[128];
        size_t n = 0;
        if (match_parse_selector("{pod=~\"p1.*\"}", om, &n, err, sizeof(err)) < 0 || n != 1) {
            fprintf(stderr, "override matcher: %s\n", err);
            exit(1);
        }
        memset(ov, 0, sizeof(*ov));
        ov->match.m = *om;
        ov->match.n = 1;
        ov->has_threshold = rh_rng(2);
        ov->threshold = 1 + rh_rng(50);
        ov->has_idle_timer = rh_rng(2);
        ov->idle_timer = r->step * (double)(1 + rh_rng(40)) + (double)rh_rng(1000) * 0.007;
        r->overrides = ov;
        r->noverrides = 1;
    }
}

/* Fold the samples of s up to now_ms. */
static void fold_upto(struct hs *s, const struct proof_params *pp, int64_t now)
{
    char err[128];
    while (s->next < s->r.n && s->r.t[s->next] <= now) {
        TEST_CHECK(proof_add(s->p, pp, s->r.t[s->next], s->r.v[s->next], err, sizeof(err)) == 0);
        s->next++;
    }
}

static bool judged_active(const struct proof *p, const struct proof_params *pp, int64_t t,
                          int64_t idle, double thr)
{
    struct proof_verdict v;
    return proof_judge(p, pp, t, idle, thr, &v) == 0 && v.reason == REASON_ACTIVE;
}

TEST(test_active_until)
{
    size_t asked = 0, active = 0, given = 0;
    for (int h = 0; h < 300; h++) {
        struct rule r;
        char *ident[2];
        struct rule_override ov;
        struct matcher *om = NULL;
        mk_rule(&r, ident, &ov, &om);
        struct proof_params pp;
        TEST_CHECK(decide_proof_params(&r, &pp) == 0);
        int64_t idles[2] = {llround(r.idle_timer * 1000), r.noverrides && ov.has_idle_timer
                                                              ? llround(ov.idle_timer * 1000)
                                                              : llround(r.idle_timer * 1000)};
        struct hs s = {0};
        int64_t from = T0, to = T0 + 4 * 3600000;
        rh_gen(&s.r, &gen, from, to, llround(r.tolerated_gap * 1000));
        s.p = proof_new(&pp);
        int64_t every = rh_rng(2) ? 60000 : 45000 + (int64_t)rh_rng(30000);
        for (int64_t now = from + 1800000; now <= to; now += every) {
            fold_upto(&s, &pp, now);
            for (size_t k = 0; k < pp.nthresholds; k++) {
                int64_t idle = idles[rh_rng(2)];
                double thr = pp.thresholds[k];
                asked++;
                bool act = judged_active(s.p, &pp, now, idle, thr);
                active += act;
                int64_t u = btdue_active_until(s.p, &pp, now, idle, thr);
                if (u == PROOF_NONE)
                    continue;
                given++;
                /* Never given for a verdict that is not `active`: a skipped judgement. */
                TEST_CHECK(act);
                TEST_CHECK(u >= now);
                int64_t mid = now + (int64_t)rh_rng((uint32_t)(u - now + 1));
                TEST_CHECK(judged_active(s.p, &pp, mid, idle, thr));
                TEST_CHECK(judged_active(s.p, &pp, u, idle, thr));
                /* Exact to a step: with no sample since, not active a step after the due time. */
                TEST_CHECK(!judged_active(s.p, &pp, u + pp.step_ms + 1, idle, thr));
            }
        }
        free(s.p);
        free(s.r.t);
        free(s.r.v);
        if (om)
            match_free_all(om, 1);
    }
    TEST_CHECK(asked > 10000);
    /* Given for most active verdicts (the others hold a non-finite sample near the window). */
    TEST_CHECK(given * 10 > active * 7);
    printf("  active_until: %zu asked, %zu active, %zu given\n", asked, active, given);
}

/* The fields of a record the simulation reads, and its identity. */
static bool same_rec(const struct decision_rec *a, const struct decision_rec *b)
{
    bool since = (isnan(a->idle_since) && isnan(b->idle_since)) || a->idle_since == b->idle_since;
    bool alloc = (isnan(a->allocated) && isnan(b->allocated)) || a->allocated == b->allocated;
    return labels_equal(&a->identity, &b->identity) && labels_equal(&a->all, &b->all) &&
           a->decision == b->decision && a->reason == b->reason && since && alloc &&
           strcmp(a->resource, b->resource) == 0 && a->threshold == b->threshold &&
           a->idle_timer == b->idle_timer && a->priority == b->priority &&
           a->window_end == b->window_end && a->window_start == b->window_start;
}

static int cmp_id(const void *a, const void *b)
{
    return labels_compare(&((const struct decision_rec *)a)->identity,
                          &((const struct decision_rec *)b)->identity);
}

static void instant(struct series *se, const char *pod, const char *extra_name, const char *extra,
                    double t, double v)
{
    struct label l[3] = {
        {"namespace", "ns"}, {"pod", (char *)pod}, {(char *)extra_name, (char *)extra}};
    labels_from(&se->labels, l, extra_name ? 3 : 2);
    se->p = xmalloc(sizeof(*se->p));
    se->p[0] = (struct point){t, v};
    se->n = 1;
}

TEST(test_decide_same)
{
    unsigned long judged = 0, carried = 0, compared = 0, reclaims = 0;
    for (int h = 0; h < 40; h++) {
        struct rule r;
        char *ident[2];
        struct rule_override ov;
        struct matcher *om = NULL;
        mk_rule(&r, ident, &ov, &om);
        struct ruleset rs = {.rules = &r, .n = 1};
        struct proof_params pp;
        TEST_CHECK(decide_proof_params(&r, &pp) == 0);
        size_t nw = 5 + rh_rng(30), ns = 0;
        struct hs *s = xcalloc(nw * 2, sizeof(*s));
        char(*pod)[16] = xcalloc(nw, sizeof(*pod));
        size_t *owner = xcalloc(nw * 2, sizeof(*owner));
        double *alloc = xcalloc(nw, sizeof(*alloc)), *prio = xcalloc(nw, sizeof(*prio));
        int64_t from = T0, to = T0 + 3 * 3600000;
        for (size_t w = 0; w < nw; w++) {
            snprintf(pod[w], sizeof(pod[w]), "p%zu", w);
            alloc[w] = 1 + rh_rng(2);
            prio[w] = rh_rng(3);
            for (size_t c = 0; c < (rh_rng(4) ? 1u : 2u); c++) {
                struct hs *x = &s[ns];
                owner[ns++] = w;
                rh_gen(&x->r, &gen, from, to, llround(r.tolerated_gap * 1000));
                x->p = proof_new(&pp);
                char gpu[8];
                snprintf(gpu, sizeof(gpu), "%zu", c);
                struct label l[3] = {{"gpu", gpu}, {"namespace", "ns"}, {"pod", pod[w]}};
                labels_from(&x->rp.s.labels, l, 3);
                x->rp.p = x->p;
            }
        }
        struct btdue *b = btdue_new(&rs);
        bool prios = rh_rng(2);
        int64_t every = rh_rng(2) ? 60000 : 45000;
        for (int64_t now = from + 2400000; now <= to; now += every) {
            double t = (double)now / 1000.0;
            struct rule_data rd = {.rule = &r,
                                   .has_proofs = true,
                                   .proofs_lent = true,
                                   .proof_params = pp,
                                   .start = t - decide_lookback(&r),
                                   .end = t,
                                   .raw_coverage = true,
                                   .coverage_tail = true};
            rd.proofs = xcalloc(ns, sizeof(*rd.proofs));
            rd.allocation.s = xcalloc(nw, sizeof(struct series));
            rd.priority.s = xcalloc(nw, sizeof(struct series));
            rd.pending.s = xcalloc(1, sizeof(struct series));
            for (size_t i = 0; i < ns; i++) {
                fold_upto(&s[i], &pp, now);
                /* A series leaves the data a while (as a stopped workload's does). */
                if (rh_rng(50) != 0)
                    rd.proofs[rd.nproofs++] = s[i].rp;
            }
            for (size_t w = 0; w < nw; w++) {
                if (rh_rng(40) == 0)
                    alloc[w] = rh_rng(3); /* 0: no allocation */
                if (rh_rng(60) == 0)
                    prio[w] = rh_rng(3);
                if (alloc[w] > 0)
                    instant(&rd.allocation.s[rd.allocation.n++], pod[w], "resource",
                            rh_rng(30) ? "amd_com_gpu" : "nvidia_com_gpu", t, alloc[w]);
                if (prios)
                    instant(&rd.priority.s[rd.priority.n++], pod[w], NULL, NULL, t, prio[w]);
            }
            struct label pl[] = {{"resource", "amd_com_gpu"}};
            labels_from(&rd.pending.s[0].labels, pl, 1);
            rd.pending.s[0].p = xmalloc(sizeof(struct point));
            rd.pending.s[0].p[0] = (struct point){t, (double)rh_rng(4)};
            rd.pending.s[0].n = 1;
            rd.pending.n = 1;

            struct decisions full = {0};
            decide(&rd, 1, t, &full);
            const struct decisions *got = btdue_decide(b, &rd, 1, t);
            TEST_CHECK_INT(got->n, full.n);
            struct decision_rec *g = xmalloc((got->n ? got->n : 1) * sizeof(*g));
            memcpy(g, got->v, got->n * sizeof(*g));
            qsort(g, got->n, sizeof(*g), cmp_id);
            for (size_t i = 0; i < full.n && i < got->n; i++) {
                compared++;
                reclaims += full.v[i].decision == DECISION_RECLAIM;
                bool same = same_rec(&full.v[i], &g[i]);
                TEST_CHECK(same);
                if (!same)
                    printf("  history %d at %" PRId64 ": %s: %s/%s, carried or judged %s/%s\n", h,
                           now, labels_get(&full.v[i].identity, "pod"),
                           decide_decision_name(full.v[i].decision),
                           decide_reason_name(full.v[i].reason),
                           decide_decision_name(g[i].decision), decide_reason_name(g[i].reason));
            }
            free(g);
            decisions_free(&full);
            fetch_free(&rd, 1);
        }
        struct btdue_stats st;
        btdue_stats(b, &st);
        judged += st.judged;
        carried += st.carried;
        btdue_free(b);
        for (size_t i = 0; i < ns; i++) {
            free(s[i].p);
            free(s[i].r.t);
            free(s[i].r.v);
            labels_free(&s[i].rp.s.labels);
        }
        free(s);
        free(pod);
        free(owner);
        free(alloc);
        free(prio);
        if (om)
            match_free_all(om, 1);
    }
    TEST_CHECK(compared > 10000);
    TEST_CHECK(reclaims > 0);
    TEST_CHECK(carried > judged / 2);
    printf("  decide: %lu records compared (%lu reclaims), %lu judged, %lu carried\n", compared,
           reclaims, judged, carried);
}

/* The identity key (labels_key, series.h) btdue and recfast share: values framed by their
   lengths, so ("ab", "c") and ("a", "bc") are two workloads; an absent or empty value none. */
TEST(test_identity_key)
{
    char *names[] = {"namespace", "pod"};
    struct labels a = {0}, b = {0}, c = {0};
    labels_set(&a, "namespace", "ab");
    labels_set(&a, "pod", "c");
    labels_set(&a, "gpu", "0");
    labels_set(&b, "namespace", "a");
    labels_set(&b, "pod", "bc");
    labels_set(&c, "namespace", "ab");
    struct sbuf ka = {0}, kb = {0};
    TEST_CHECK(labels_key(&ka, &a, names, 2));
    TEST_CHECK(labels_key(&kb, &b, names, 2));
    TEST_CHECK(ka.len == kb.len && memcmp(ka.buf, kb.buf, ka.len) != 0);
    sbuf_reset(&kb);
    TEST_CHECK(labels_key(&kb, &a, names, 2)); /* the other labels do not count */
    TEST_CHECK(ka.len == kb.len && memcmp(ka.buf, kb.buf, ka.len) == 0);
    sbuf_reset(&kb);
    TEST_CHECK(!labels_key(&kb, &c, names, 2));
    labels_set(&c, "pod", "");
    sbuf_reset(&kb);
    TEST_CHECK(!labels_key(&kb, &c, names, 2));
    sbuf_free(&ka);
    sbuf_free(&kb);
    labels_free(&a);
    labels_free(&b);
    labels_free(&c);
}

/*
 * labels.id: a stamped set and its copies compare equal by number; a set changed or built
 * anew has none and is compared by its strings; and labels_project builds what labels_set
 * of each name in turn would (sorted, a name named twice once).
 */
TEST(test_label_ids)
{
    struct labels a = {0}, b = {0}, c = {0}, p = {0}, q = {0};
    labels_set(&a, "pod", "x");
    labels_set(&a, "namespace", "ml");
    TEST_CHECK(a.id == 0);
    labels_stamp(&a);
    TEST_CHECK(a.id != 0);
    labels_copy(&b, &a);
    TEST_CHECK(b.id == a.id && labels_equal(&a, &b));
    labels_copy(&c, &a);
    labels_set(&c, "pod", "y"); /* changed: no id, and not equal */
    TEST_CHECK(c.id == 0 && !labels_equal(&a, &c) && labels_compare(&a, &c) < 0);
    labels_set(&c, "pod", "x"); /* equal again, by its strings */
    TEST_CHECK(c.id == 0 && labels_equal(&a, &c));
    labels_stamp(&c);
    TEST_CHECK(c.id != a.id && labels_equal(&a, &c)); /* two ids, one content */
    char *names[] = {"pod", "gpu", "namespace", "pod", "absent"};
    labels_set(&a, "gpu", "3");
    labels_project(&p, &a, names, 5);
    for (size_t i = 0; i < 5; i++)
        if (labels_get(&a, names[i]))
            labels_set(&q, names[i], labels_get(&a, names[i]));
    TEST_CHECK(p.n == 3 && labels_equal(&p, &q));
    char *s = labels_format(&p);
    TEST_CHECK_STR(s, "{gpu=\"3\",namespace=\"ml\",pod=\"x\"}");
    free(s);
    /* labels_union: a's labels, then b's whose names a lacks, as labels_set would add them. */
    struct labels u = {0}, w = {0}, bb = {0};
    labels_set(&bb, "gpu", "9");
    labels_set(&bb, "resource", "amd.com/gpu");
    labels_set(&bb, "a", "first");
    labels_union(&u, &a, &bb);
    labels_copy(&w, &a);
    for (size_t i = 0; i < bb.n; i++)
        if (!labels_get(&w, bb.v[i].name))
            labels_set(&w, bb.v[i].name, bb.v[i].value);
    TEST_CHECK(u.n == 5 && labels_equal(&u, &w) && u.id == 0);
    TEST_CHECK_STR(labels_get(&u, "gpu"), "3"); /* a's value where both have the name */
    labels_free(&u);
    labels_free(&w);
    labels_free(&bb);
    labels_free(&a);
    TEST_CHECK(a.id == 0);
    labels_free(&b);
    labels_free(&c);
    labels_free(&p);
    labels_free(&q);
}

/*
 * The memo by position and by id (btdue_memo): a series found where it was by its id, or by
 * its strings (then the entry takes its id); one that moved found by its id at its new place;
 * a set without an id that moved is not found (the caller then builds its key); and the
 * table of ids, refilled when it outgrows its bound, never answers for another series.
 */
TEST(test_memo_ids)
{
    struct btdue_memo m = {0};
    struct labels l[3] = {{0}};
    const char *pods[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        labels_set(&l[i], "pod", pods[i]);
        labels_stamp(&l[i]);
        btdue_memo_set(&m, (size_t)i, &l[i], (size_t)i + 10);
    }
    TEST_CHECK_INT(btdue_memo_get(&m, 1, &l[1]), 11);
    TEST_CHECK_INT(btdue_memo_get(&m, 0, &l[2]), 12); /* moved: by its id */
    TEST_CHECK_INT(btdue_memo_get(&m, 0, &l[2]), 12); /* now noted there */
    struct labels fresh = {0};
    labels_set(&fresh, "pod", "b");
    TEST_CHECK_INT(btdue_memo_get(&m, 1, &fresh), 11); /* by its strings */
    TEST_CHECK_INT(btdue_memo_get(&m, 2, &fresh), 0);  /* no id, elsewhere: not found */
    labels_stamp(&fresh);
    TEST_CHECK_INT(btdue_memo_get(&m, 1, &fresh), 11); /* the entry takes the new id */
    TEST_CHECK(m.e[1].l.id == fresh.id);
    /* Many ids noted at one position: the table starts again past its bound, and an id it
       no longer holds is not found; one it holds is. */
    struct labels x = {0};
    labels_set(&x, "pod", "z");
    for (int i = 0; i < 10000; i++) {
        labels_stamp(&x);
        btdue_memo_set(&m, 5, &x, 99);
    }
    TEST_CHECK(m.hn <= 8 * m.n + 4096);
    TEST_CHECK_INT(btdue_memo_get(&m, 7, &x), 99);
    struct labels gone = {0};
    labels_set(&gone, "pod", "c");
    labels_stamp(&gone);
    TEST_CHECK_INT(btdue_memo_get(&m, 7, &gone), 0);
    for (int i = 0; i < 3; i++)
        labels_free(&l[i]);
    labels_free(&fresh);
    labels_free(&x);
    labels_free(&gone);
    btdue_memo_free(&m);
}

int main(void)
{
    rh_state = 0x2545f4914f6cdd1du;
    RUN(test_identity_key);
    RUN(test_label_ids);
    RUN(test_memo_ids);
    RUN(test_active_until);
    RUN(test_decide_same);
    return test_done();
}
