/*
 * Unit tests of backtest.c and btreport.c: the simulation driven cycle by cycle with
 * hand-made decisions and activity (no Prometheus), through the real action engine: notice
 * period and spare, the hourly cap, a return and the restart it counts as, the end of an
 * allocation, GPU-hours arithmetic, query errors; then the comparison of two results, the
 * CSV and JSON outputs and the agreement with an audit file; and the look-up of workloads as
 * they are now (btlookup.c) through a backend that counts its calls.
 */
#include "backtest.c"
#include "btreport.c"

#include <unistd.h>

#include "log.h"
#include "test.h"

#define T0 1700000000.0

static char *identity_names[] = {"namespace", "pod"};

/* The look-up the next fx_init's simulation gets (NULL: none). */
static struct btl *fx_lookup;

struct fixture {
    struct ruleset rs;
    struct rule rule;
    struct bt_sim *sim;
    struct rule_data data;
};

static void fx_init(struct fixture *f, double notice, unsigned per_hour, double to)
{
    memset(f, 0, sizeof(*f));
    f->rule = (struct rule){.name = "nb",
                            .file = "r.yaml",
                            .enabled = true,
                            .policy = POLICY_ALWAYS,
                            .threshold = 10,
                            .idle_timer = 600,
                            .step = 60,
                            .tolerated_gap = 120,
                            .notice_period = notice,
                            .max_terminations = 100,
                            .action = ACTION_DELETE,
                            .identity = identity_names,
                            .nidentity = 2};
    f->rs = (struct ruleset){.file = "r.yaml", .rules = &f->rule, .n = 1};
    struct bt_cfg cfg = {.from = T0,
                         .to = to,
                         .interval = 300,
                         .return_within = 3600,
                         .max_actions_per_hour = per_hour,
                         .protected_namespaces = "",
                         .lookup = fx_lookup};
    char err[256];
    f->sim = bt_sim_new(&f->rs, &cfg, err, sizeof(err));
    TEST_CHECK(f->sim != NULL);
    f->data.rule = &f->rule;
}

static void fx_free(struct fixture *f)
{
    bt_sim_free(f->sim);
    matrix_free(&f->data.activity);
    matrix_free(&f->data.allocation);
}

/*
 * A decision of workload ml/POD at t: idle since `since` (NaN: active), ALLOC devices, and
 * its allocation series in the cycle's data (none when ALLOC is NaN), as the history shows it.
 */
static void add_decision(struct fixture *f, struct decisions *ds, const char *pod, double t,
                         double since, double alloc)
{
    const struct rule *r = &f->rule;
    if (!isnan(alloc)) {
        struct series *a = matrix_push(&f->data.allocation);
        labels_set(&a->labels, "namespace", "ml");
        labels_set(&a->labels, "pod", pod);
        labels_set(&a->labels, "resource", "amd.com/gpu");
        a->p = xmalloc(sizeof(*a->p));
        a->p[0] = (struct point){t, alloc};
        a->n = 1;
    }
    ds->v = xrealloc(ds->v, (ds->n + 1) * sizeof(*ds->v));
    struct decision_rec *d = &ds->v[ds->n++];
    bool idle = !isnan(since) && since <= t - r->idle_timer;
    *d = (struct decision_rec){.rule = r,
                               .decision = idle ? DECISION_RECLAIM : DECISION_KEEP,
                               .reason = idle ? REASON_IDLE : REASON_ACTIVE,
                               .threshold = r->threshold,
                               .idle_timer = r->idle_timer,
                               .idle_since = since,
                               .window_start = t - r->idle_timer,
                               .window_end = t,
                               .max = NAN,
                               .mean = NAN,
                               .last = NAN,
                               .allocated = alloc};
    labels_set(&d->identity, "namespace", "ml");
    labels_set(&d->identity, "pod", pod);
    labels_copy(&d->all, &d->identity);
}

/* An activity point of ml/POD (its series is created on first use). */
static void add_point(struct rule_data *rd, const char *pod, double t, double v)
{
    struct series *s = NULL;
    for (size_t i = 0; i < rd->activity.n && !s; i++)
        if (strcmp(labels_get(&rd->activity.s[i].labels, "pod"), pod) == 0)
            s = &rd->activity.s[i];
    if (!s) {
        s = matrix_push(&rd->activity);
        labels_set(&s->labels, "namespace", "ml");
        labels_set(&s->labels, "pod", pod);
    }
    s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
    s->p[s->n++] = (struct point){t, v};
}

/* One cycle with `ds` (freed here) and the activity points added so far (then cleared). */
static void step(struct fixture *f, double t, struct decisions *ds)
{
    bt_sim_observe(f->sim, t, &f->data, NULL);
    bt_sim_hide(f->sim, &f->data);
    bt_sim_cycle(f->sim, t, ds);
    decisions_free(ds);
    *ds = (struct decisions){0};
    matrix_free(&f->data.activity);
    matrix_free(&f->data.allocation);
    f->data.activity = f->data.allocation = (struct matrix){0};
}

TEST(cycle_count)
{
    TEST_CHECK_INT(bt_cycles(0, 3600, 300), 13);
    TEST_CHECK_INT(bt_cycles(0, 3599, 300), 12);
    TEST_CHECK_INT(bt_cycles(0, 0, 300), 1);
    TEST_CHECK_INT(bt_cycles(10, 0, 300), 0);
    TEST_CHECK_INT(bt_cycles(0, 0.3 * 10, 0.3), 11); /* 10 x 0.3 is not 3.0 in binary */
}

/* Notice, then active before the notice period ended: spared, never acted on. */
TEST(notice_then_spared)
{
    struct fixture f;
    fx_init(&f, 600, 0, T0 + 3600);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 1);
    step(&f, T0, &ds);
    add_decision(&f, &ds, "a", T0 + 300, NAN, 1);
    step(&f, T0 + 300, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].notices, 1);
    TEST_CHECK_INT(r->rule[0].spared, 1);
    TEST_CHECK_INT(r->rule[0].reclaims, 0);
    TEST_CHECK_INT(r->nev, 1);
    TEST_CHECK(!r->ev[0].action);
    fx_free(&f);
}

/* Idle without a break through the notice period: the action follows at its end, once. */
TEST(notice_period_then_action)
{
    struct fixture f;
    fx_init(&f, 600, 0, T0 + 3600);
    struct decisions ds = {0};
    for (double t = T0; t <= T0 + 900; t += 300) {
        add_decision(&f, &ds, "a", t, T0 - 900, 2);
        step(&f, t, &ds);
    }
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].notices, 1);
    TEST_CHECK_INT(r->rule[0].reclaims, 1);
    TEST_CHECK_INT(r->nrc, 1);
    TEST_CHECK_DBL(r->rc[0].noticed, T0, 0);
    TEST_CHECK_DBL(r->rc[0].at, T0 + 600, 0);
    /* never back, allocated to the end: 2 devices x (to - at) */
    TEST_CHECK_INT(r->rc[0].how, BT_END_RANGE);
    TEST_CHECK_DBL(r->rule[0].gpu_seconds, 2 * 3000.0, 1e-9);
    fx_free(&f);
}

/*
 * A return: the first activity point at or above the threshold after the action ends it,
 * counts as a restart (too young until a whole idle window after it), and is counted within
 * --return-within with its time.
 */
TEST(return_and_restart)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 7200);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 2);
    step(&f, T0, &ds); /* noticed and acted on at once */
    /* A busy point before the proven idle window (the data of a cycle reaches back over
       twice the idle timer) is history, not a return; then below the threshold, then 50 %
       at T0 + 240 and T0 + 270. */
    add_point(&f.data, "a", T0 - 700, 0.9);
    add_point(&f.data, "a", T0 + 60, 0.05);
    add_point(&f.data, "a", T0 + 240, 0.5);
    add_point(&f.data, "a", T0 + 270, 0.5);
    add_decision(&f, &ds, "a", T0 + 300, NAN, 2);
    step(&f, T0 + 300, &ds);
    /* The return is a restart: a window that starts before it (T0 + 200) holds the evidence
       of the reclaimed episode, so even a decision idle over it finds the workload too young
       (as after `restore`), and no second notice goes out. */
    add_decision(&f, &ds, "a", T0 + 800, T0 + 100, 2);
    step(&f, T0 + 800, &ds);
    const struct bt_result *r = bt_sim_result(f.sim);
    TEST_CHECK_INT(r->rule[0].reclaims, 1);
    TEST_CHECK_INT(r->rule[0].notices, 1);
    add_decision(&f, &ds, "a", T0 + 900, T0 + 280, 2); /* window from T0 + 300 */
    step(&f, T0 + 900, &ds);
    r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].reclaims, 2);
    TEST_CHECK_INT(r->nrc, 2);
    TEST_CHECK_INT(r->rc[0].how, BT_END_RETURN);
    TEST_CHECK_DBL(r->rc[0].end, T0 + 240, 0);
    TEST_CHECK_DBL(r->rc[1].at, T0 + 900, 0);
    TEST_CHECK_INT(r->rule[0].returns, 1);
    TEST_CHECK_INT(r->rule[0].returns_within, 1);
    TEST_CHECK_DBL(r->rule[0].median_return, 240, 0);
    /* 2 x 240 s, then 2 x (T0 + 7200 - (T0 + 900)) */
    TEST_CHECK_DBL(r->rule[0].gpu_seconds, 2 * 240.0 + 2 * 6300.0, 1e-9);
    TEST_CHECK_DBL(r->wl[0].gpu_seconds, r->rule[0].gpu_seconds, 1e-9);
    fx_free(&f);
}

/*
 * Once reclaimed, a workload's series leave the simulated world's data until it returns, so
 * that decide() caps and ranks only what runs (after a real reclaim its series end).
 */
TEST(hide_away_workloads)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 3600);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 1);
    add_decision(&f, &ds, "b", T0, NAN, 1);
    step(&f, T0, &ds); /* a reclaimed */
    add_point(&f.data, "a", T0 + 240, 0.01);
    add_point(&f.data, "b", T0 + 240, 0.5);
    add_decision(&f, &ds, "a", T0 + 300, T0 - 900, 1);
    add_decision(&f, &ds, "b", T0 + 300, NAN, 1);
    bt_sim_observe(f.sim, T0 + 300, &f.data, NULL);
    TEST_CHECK(bt_sim_hide(f.sim, &f.data));
    TEST_CHECK_INT(f.data.activity.n, 1);
    TEST_CHECK_STR(labels_get(&f.data.activity.s[0].labels, "pod"), "b");
    TEST_CHECK_INT(f.data.allocation.n, 1);
    TEST_CHECK_STR(labels_get(&f.data.allocation.s[0].labels, "pod"), "b");
    /* nothing away: nothing hidden */
    TEST_CHECK(!bt_sim_hide(f.sim, &f.data));
    step(&f, T0 + 300, &ds);
    /* a's allocation was seen before it was hidden: still away, not gone */
    TEST_CHECK(f.sim->res.wl[0].stopped);
    decisions_free(&ds);
    fx_free(&f);
}

/*
 * DuringGPUPressure: the GPUs a simulated reclaim freed went to the pods waiting for them, so
 * the pending demand the history still shows is less the devices away for that resource.
 */
TEST(pending_less_freed)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 3600);
    f.rule.policy = POLICY_DURING_PRESSURE;
    f.rule.resource_label = "resource";
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 2);
    snprintf(ds.v[0].resource, sizeof(ds.v[0].resource), "amd.com/gpu");
    step(&f, T0, &ds); /* a reclaimed: 2 x amd.com/gpu away */
    const char *res[] = {"amd_com_gpu", "nvidia_com_gpu"};
    for (size_t i = 0; i < 2; i++) {
        struct series *p = matrix_push(&f.data.pending);
        labels_set(&p->labels, "resource", res[i]);
        p->p = xmalloc(sizeof(*p->p));
        p->p[0] = (struct point){T0 + 300, 3};
        p->n = 1;
    }
    add_decision(&f, &ds, "a", T0 + 300, T0 - 900, 2);
    bt_sim_observe(f.sim, T0 + 300, &f.data, NULL);
    TEST_CHECK(bt_sim_hide(f.sim, &f.data));
    TEST_CHECK_DBL(f.data.pending.s[0].p[0].v, 1, 0);
    TEST_CHECK_DBL(f.data.pending.s[1].p[0].v, 3, 0);
    /* not below zero */
    f.data.pending.s[0].p[0].v = 1;
    bt_sim_hide(f.sim, &f.data);
    TEST_CHECK_DBL(f.data.pending.s[0].p[0].v, 0, 0);
    decisions_free(&ds);
    matrix_free(&f.data.pending);
    fx_free(&f);
}

/* A return later than --return-within is a return, not one within; NaN does not return. */
TEST(late_return_and_nan)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 10800);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 1);
    step(&f, T0, &ds);
    for (double t = T0 + 300; t <= T0 + 4200; t += 300) {
        add_point(&f.data, "a", t - 60, NAN); /* not a number: proves nothing */
        if (t == T0 + 4200)
            add_point(&f.data, "a", t - 30, 0.1); /* exactly at the threshold */
        add_decision(&f, &ds, "a", t, NAN, 1);
        step(&f, t, &ds);
    }
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].returns, 1);
    TEST_CHECK_INT(r->rule[0].returns_within, 0);
    TEST_CHECK(isnan(r->rule[0].median_return));
    TEST_CHECK_DBL(r->rc[0].end, T0 + 4170, 0);
    TEST_CHECK_DBL(r->rule[0].gpu_seconds, 4170, 1e-9);
    fx_free(&f);
}

/* The allocation ends in the history: freed up to the last cycle it was seen allocated. */
TEST(allocation_end)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 7200);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 4);
    step(&f, T0, &ds);
    add_decision(&f, &ds, "a", T0 + 300, T0 - 900, 4);
    step(&f, T0 + 300, &ds);
    add_decision(&f, &ds, "a", T0 + 600, T0 - 900, NAN); /* allocation gone */
    step(&f, T0 + 600, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rc[0].how, BT_END_GONE);
    TEST_CHECK_DBL(r->rc[0].end, T0 + 300, 0);
    TEST_CHECK_DBL(r->rule[0].gpu_seconds, 4 * 300.0, 1e-9);
    TEST_CHECK_INT(r->rule[0].reclaims, 1);
    fx_free(&f);
}

/* Unknown allocation: the reclaim counts, its GPU-hours cannot and are said to be unknown. */
TEST(unknown_devices)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 600);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, NAN);
    step(&f, T0, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].reclaims, 1);
    TEST_CHECK_INT(r->rule[0].unknown_devices, 1);
    TEST_CHECK_DBL(r->rule[0].gpu_seconds, 0, 0);
    fx_free(&f);
}

/* --enforce.max-actions-per-hour, counted by the engine's own ledger on simulated time. */
TEST(hourly_cap)
{
    struct fixture f;
    fx_init(&f, 0, 1, T0 + 7200);
    struct decisions ds = {0};
    for (double t = T0; t <= T0 + 3600; t += 300) {
        add_decision(&f, &ds, "a", t, T0 - 900, 1);
        add_decision(&f, &ds, "b", t, T0 - 900, 1);
        step(&f, t, &ds);
        if (t == T0 + 3300)
            TEST_CHECK_INT(bt_sim_result(f.sim)->rule[0].reclaims, 1);
    }
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].reclaims, 2);
    TEST_CHECK_DBL(r->rc[1].at, T0 + 3600, 0);
    TEST_CHECK_INT(r->rule[0].notices, 2);
    fx_free(&f);
}

/* A rule in dryRun or with action report is simulated as acting, and says so. */
TEST(dry_run_rules_act)
{
    struct fixture f;
    memset(&f, 0, sizeof(f));
    fx_init(&f, 0, 0, T0 + 600);
    bt_sim_free(f.sim);
    f.rule.dry_run = true;
    f.rule.action = ACTION_REPORT;
    struct bt_cfg cfg = {.from = T0, .to = T0 + 600, .interval = 300, .return_within = 3600};
    char err[256];
    f.sim = bt_sim_new(&f.rs, &cfg, err, sizeof(err));
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 1);
    step(&f, T0, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].reclaims, 1);
    TEST_CHECK_STR(r->rule[0].simulated_as,
                   "dryRun and action report: simulated as acting (delete)");
    fx_free(&f);
}

/* A failed read: counted as query_error for the workloads running, the part named. */
TEST(query_error_cycles)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 1800);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, NAN, 1);
    add_decision(&f, &ds, "b", T0, NAN, 1);
    step(&f, T0, &ds);
    f.data.error = 1;
    snprintf(f.data.errmsg, sizeof(f.data.errmsg), "boom");
    step(&f, T0 + 300, &ds);
    step(&f, T0 + 600, &ds);
    f.data.error = 0;
    add_decision(&f, &ds, "a", T0 + 900, NAN, 1);
    step(&f, T0 + 900, &ds);
    f.data.error = 1;
    step(&f, T0 + 1200, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->rule[0].error_cycles, 3);
    TEST_CHECK_INT(r->rule[0].kept[REASON_QUERY_ERROR], 2 + 2 + 1);
    TEST_CHECK_INT(r->rule[0].nfail, 2);
    TEST_CHECK_DBL(r->rule[0].fail[0].from, T0 + 300, 0);
    TEST_CHECK_DBL(r->rule[0].fail[0].to, T0 + 600, 0);
    TEST_CHECK_INT(r->rule[0].fail[0].cycles, 2);
    TEST_CHECK_INT(r->rule[0].reclaims, 0);
    struct sbuf b = {0};
    btreport_failures(r, 0, &b);
    TEST_CHECK_STR(b.buf, "2023-11-14T22:18:20Z .. 2023-11-14T22:23:20Z (2 cycles: boom); "
                          "2023-11-14T22:33:20Z .. 2023-11-14T22:33:20Z (1 cycle: boom)");
    sbuf_free(&b);
    fx_free(&f);
}

/* Two results side by side: reclaims only in one (same workload and cycle), CSV, JSON. */
TEST(compare_and_formats)
{
    struct fixture a, b;
    fx_init(&a, 0, 0, T0 + 3600);
    fx_init(&b, 0, 0, T0 + 3600);
    struct decisions ds = {0};
    add_decision(&a, &ds, "x", T0, T0 - 900, 1);
    add_decision(&a, &ds, "y", T0, T0 - 900, 2);
    step(&a, T0, &ds);
    add_decision(&b, &ds, "x", T0, T0 - 900, 1);
    add_decision(&b, &ds, "y", T0, NAN, 2);
    step(&b, T0, &ds);
    add_decision(&b, &ds, "x", T0 + 300, T0 - 900, 1); /* still allocated, away */
    add_decision(&b, &ds, "y", T0 + 300, T0 - 900, 2);
    step(&b, T0 + 300, &ds);
    const struct bt_result *ra = bt_sim_finish(a.sim), *rb = bt_sim_finish(b.sim);
    size_t first[4], nfirst;
    TEST_CHECK_INT(btr_only(ra, rb, first, 4, &nfirst), 1);
    TEST_CHECK_INT(nfirst, 1);
    TEST_CHECK_STR(ra->wl[ra->rc[first[0]].wl].key, "{namespace=\"ml\",pod=\"y\"}");
    TEST_CHECK_INT(btr_only(rb, ra, first, 4, &nfirst), 1);

    struct sbuf out = {0};
    btreport_render(ra, rb, 0, NULL, BTREPORT_CSV, &out);
    TEST_CHECK_STR(out.buf, "rules_file,rule,workloads,notices,reclaims,spared,gpu_hours_freed,"
                            "returns_within,return_share,median_return_seconds,reclaim_decisions,"
                            "keep_decisions,error_cycles\n"
                            "r.yaml,nb,2,2,2,0,3.0000,0,0.0000,,2,0,0\n"
                            "r.yaml,nb,2,2,2,0,2.8333,0,0.0000,,2,1,0\n");
    sbuf_reset(&out);
    btreport_render(ra, rb, 2, NULL, BTREPORT_JSON, &out);
    json_object *o = json_tokener_parse(out.buf), *x, *y;
    TEST_CHECK(o != NULL);
    TEST_CHECK(json_object_object_get_ex(o, "difference", &x));
    TEST_CHECK(json_object_object_get_ex(x, "reclaimsOnlyInA", &y));
    TEST_CHECK_INT(json_object_get_int(y), 1);
    TEST_CHECK(json_object_object_get_ex(x, "gpuHoursFreed", &y));
    TEST_CHECK_DBL(json_object_get_double(y), 2.8333333333333335 - 3, 1e-9);
    TEST_CHECK(json_object_object_get_ex(o, "a", &x));
    TEST_CHECK(json_object_object_get_ex(x, "topGpuHours", &y));
    TEST_CHECK_INT(json_object_array_length(y), 2);
    TEST_CHECK(json_object_object_get_ex(x, "topSoonest", &y));
    TEST_CHECK_INT(json_object_array_length(y), 0); /* nothing came back */
    json_object_put(o);
    sbuf_reset(&out);
    btreport_render(ra, rb, 1, NULL, BTREPORT_TABLE, &out);
    TEST_CHECK(strstr(out.buf, "reclaims only in                  1            1\n"));
    TEST_CHECK(strstr(out.buf, "  only A: nb {namespace=\"ml\",pod=\"y\"} at "
                               "2023-11-14T22:13:20Z\n"));
    TEST_CHECK(strstr(out.buf, "GPU-hours freed                3.00         2.83        -0.17\n"));
    sbuf_free(&out);
    fx_free(&a);
    fx_free(&b);
}

/* btreport_render_to's sink: the pieces, and the largest. */
struct pieces {
    struct sbuf all;
    size_t n, largest;
};

static void collect(void *arg, const char *buf, size_t len)
{
    struct pieces *p = arg;
    sbuf_add(&p->all, buf, len);
    p->n++;
    if (len > p->largest)
        p->largest = len;
}

/*
 * The JSON list of reclaims is rendered one reclaim at a time and handed on in pieces (a
 * week of 10,000 workloads without an hourly cap made a tree of some 200,000 reclaims, most
 * of the command's peak memory): the text is the one json-c prints for the whole document,
 * byte for byte, and no piece holds the whole list.
 */
TEST(json_reclaims_streamed)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 3600);
    f.rule.max_terminations = 5000;
    struct decisions ds = {0};
    char pod[32];
    for (int i = 0; i < 4000; i++) {
        snprintf(pod, sizeof(pod), "p%04d", i);
        add_decision(&f, &ds, pod, T0, T0 - 900, 1 + i % 3);
    }
    step(&f, T0, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(r->nrc, 4000);
    struct sbuf whole = {0}, rest = {0};
    btreport_render(r, NULL, 2, NULL, BTREPORT_JSON, &whole);
    struct pieces p = {0};
    btreport_render_to(r, NULL, 2, NULL, BTREPORT_JSON, &rest, collect, &p);
    TEST_CHECK_INT(rest.len, 0); /* all handed to the sink */
    TEST_CHECK(p.n >= 2);
    TEST_CHECK(p.largest < whole.len);
    TEST_CHECK(p.all.len == whole.len && memcmp(p.all.buf, whole.buf, whole.len) == 0);
    /* json-c's own printing of the document parsed back: the same bytes. */
    json_object *o = json_tokener_parse(whole.buf), *x;
    TEST_CHECK(o != NULL);
    TEST_CHECK(json_object_object_get_ex(o, "reclaims", &x));
    TEST_CHECK_INT(json_object_array_length(x), 4000);
    const char *again = json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    TEST_CHECK(strlen(again) + 1 == whole.len && memcmp(again, whole.buf, whole.len - 1) == 0);
    json_object_put(o);
    /* Beside a second result (compare): both lists in place. */
    sbuf_reset(&whole);
    btreport_render(r, r, 0, NULL, BTREPORT_JSON, &whole);
    o = json_tokener_parse(whole.buf);
    TEST_CHECK(o != NULL);
    again = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                  JSON_C_TO_STRING_NOSLASHESCAPE);
    TEST_CHECK(strlen(again) + 1 == whole.len && memcmp(again, whole.buf, whole.len - 1) == 0);
    TEST_CHECK(!strstr(whole.buf, "gpureclaim-reclaims"));
    json_object_put(o);
    sbuf_free(&whole);
    sbuf_free(&rest);
    sbuf_free(&p.all);
    fx_free(&f);
}

/* --by: one group per (rule, label value), in the table, the CSV and the JSON. */
TEST(by_breakdown)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 3600);
    f.sim->res.cfg.by = "pod";
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 2);
    add_decision(&f, &ds, "b", T0, NAN, 1);
    step(&f, T0, &ds);
    add_point(&f.data, "a", T0 + 120, 0.5); /* back after 2 minutes */
    add_decision(&f, &ds, "a", T0 + 300, NAN, 2);
    add_decision(&f, &ds, "b", T0 + 300, NAN, 1);
    step(&f, T0 + 300, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    struct sbuf out = {0};
    btreport_render(r, NULL, 0, NULL, BTREPORT_CSV, &out);
    TEST_CHECK(strstr(out.buf, "\nrules_file,rule,pod,workloads,reclaims,gpu_hours_freed,"
                               "returns_within\n"
                               "r.yaml,nb,a,1,1,0.0667,1\n" /* 2 devices x 120 s */
                               "r.yaml,nb,b,1,0,0.0000,0\n"));
    sbuf_reset(&out);
    btreport_render(r, NULL, 0, NULL, BTREPORT_TABLE, &out);
    TEST_CHECK(strstr(out.buf, "by pod:\n"));
    TEST_CHECK(strstr(out.buf,
                      "  nb                       a                                1        "
                      "1       0.07          1\n"));
    sbuf_reset(&out);
    btreport_render(r, NULL, 0, NULL, BTREPORT_JSON, &out);
    json_object *o = json_tokener_parse(out.buf), *by, *x;
    TEST_CHECK(o && json_object_object_get_ex(o, "by", &by));
    TEST_CHECK_INT(json_object_array_length(by), 2);
    TEST_CHECK(json_object_object_get_ex(json_object_array_get_idx(by, 0), "pod", &x));
    TEST_CHECK_STR(json_object_get_string(x), "a");
    json_object_put(o);
    sbuf_free(&out);
    fx_free(&f);
}

/* CSV fields with a comma or a quote are quoted (RFC 4180). */
TEST(csv_quoting)
{
    struct sbuf out = {0};
    btr_csv_field(&out, "plain");
    sbuf_putc(&out, ',');
    btr_csv_field(&out, "a,b \"c\"");
    TEST_CHECK_STR(out.buf, "plain,\"a,b \"\"c\"\"\"");
    sbuf_free(&out);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    TEST_CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* The audit comparison: same workload and cycle agree; a dry run's audit on notices only. */
TEST(audit_agreement)
{
    struct fixture f;
    fx_init(&f, 0, 0, T0 + 1800);
    struct decisions ds = {0};
    add_decision(&f, &ds, "a", T0, T0 - 900, 1);
    step(&f, T0, &ds);
    add_decision(&f, &ds, "b", T0 + 300, T0 - 900, 1);
    step(&f, T0 + 300, &ds);
    const struct bt_result *r = bt_sim_finish(f.sim);
    char path[] = "/tmp/test_backtest_audit.XXXXXX";
    int fd = mkstemp(path);
    TEST_CHECK(fd >= 0);
    close(fd);
    /* a: dry_run in the first cycle (a second after its start), b: one cycle late, c: never
       simulated, and lines that are not compared (skipped, outside the range) */
    write_file(path, "{\"time\":\"2023-11-14T22:13:21Z\",\"event\":\"dry_run\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"a\"}}\n"
                     "{\"time\":\"2023-11-14T22:23:20Z\",\"event\":\"dry_run\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"b\"}}\n"
                     "{\"time\":\"2023-11-14T22:13:20Z\",\"event\":\"dry_run\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"c\"}}\n"
                     "{\"time\":\"2023-11-14T22:13:20Z\",\"event\":\"skipped\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"d\"}}\n"
                     "{\"time\":\"2023-11-15T22:13:20Z\",\"event\":\"dry_run\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"e\"}}\n");
    struct bt_audit_cmp c = {0};
    struct sbuf diff = {0};
    c.diff = &diff;
    char err[256];
    TEST_CHECK_INT(bt_audit_compare(r, path, &c, err, sizeof(err)), 0);
    TEST_CHECK(c.dry_run);
    TEST_CHECK_INT(c.matched, 1);
    TEST_CHECK_INT(c.only_audit, 2);
    TEST_CHECK_INT(c.only_sim, 1); /* b's notice; the actions are not compared */
    TEST_CHECK(strstr(diff.buf, "only simulated: notice {namespace=\"ml\",pod=\"b\"} of rule "
                                "'nb' at 2023-11-14T22:18:20Z"));
    sbuf_free(&diff);

    /* A live audit: notices and actions both compared. */
    write_file(path, "{\"time\":\"2023-11-14T22:13:20Z\",\"event\":\"notice\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"a\"}}\n"
                     "{\"time\":\"2023-11-14T22:13:20Z\",\"event\":\"action\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"a\"},\"result\":\"ok\"}\n"
                     "{\"time\":\"2023-11-14T22:18:20Z\",\"event\":\"action\",\"rule\":\"nb\","
                     "\"workload\":{\"namespace\":\"ml\",\"pod\":\"b\"},\"result\":\"retry\"}\n");
    c = (struct bt_audit_cmp){0};
    TEST_CHECK_INT(bt_audit_compare(r, path, &c, err, sizeof(err)), 0);
    TEST_CHECK(!c.dry_run);
    TEST_CHECK_INT(c.matched, 2);
    TEST_CHECK_INT(c.only_sim, 2); /* b's notice and action (its audit action failed) */
    TEST_CHECK_INT(c.only_audit, 0);

    write_file(path, "{\"time\":\"2023-11-14T22:13:20Z\"}\n");
    TEST_CHECK_INT(bt_audit_compare(r, path, &c, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, ":1: not an audit line"));
    unlink(path);
    TEST_CHECK_INT(bt_audit_compare(r, path, &c, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "cannot read audit file"));
    fx_free(&f);
}

/* A backend answering from the pod's name, counting resolves and any other call. */
struct fake_be {
    struct act_backend base;
    int resolves, writes;
};

static enum act_result fake_resolve(struct act_backend *b, const struct decision_rec *d,
                                    struct act_target *t, char *err, size_t errlen)
{
    struct fake_be *fb = (struct fake_be *)b;
    fb->resolves++;
    const char *pod = labels_get(&d->identity, "pod");
    if (strcmp(pod, "gone") == 0) {
        snprintf(err, errlen, "pods \"gone\" not found");
        return ACT_GONE;
    }
    if (strcmp(pod, "err") == 0) {
        snprintf(err, errlen, "HTTP 500");
        return ACT_ERROR;
    }
    if (strcmp(pod, "cron") == 0) {
        snprintf(err, errlen, "no way to delete a CronJob");
        return ACT_UNSUPPORTED;
    }
    memset(t, 0, sizeof(*t));
    t->chain[0] = (struct act_obj){xstrdup("v1"), xstrdup("Pod"), xstrdup("ml"),
                                   xstrdup(pod),  xstrdup("uid"), NULL};
    t->nchain = 1;
    t->exempt = strcmp(pod, "ex") == 0;
    t->running = true;
    t->created = t->restarted = NAN;
    return ACT_OK;
}

static enum act_result fake_notice(struct act_backend *b, const struct act_target *t,
                                   const struct act_notice *n, char *err, size_t errlen)
{
    ((struct fake_be *)b)->writes++;
    return ACT_OK;
}

static void fake_free(struct act_backend *b)
{
    free(b);
}

/*
 * Each workload looked up once, the first time the engine needs its object, however many
 * cycles it stays a candidate (a notice period of 10 minutes: resolved again every cycle);
 * what run would never act on (exempt, a kind without the action's way) is never noticed
 * nor counted; what cannot be looked up (gone now, an API error) stays counted; no call
 * but resolve is made of the backend.
 */
TEST(lookup_once_and_left_out)
{
    struct fake_be *fb = xcalloc(1, sizeof(*fb));
    fb->base = (struct act_backend){
        .name = "fake", .resolve = fake_resolve, .notice = fake_notice, .free = fake_free};
    fx_lookup = btl_new(&fb->base, NULL, "", T0);
    struct fixture f;
    fx_init(&f, 600, 0, T0 + 3600);
    fx_lookup = NULL;
    const char *pods[] = {"ok", "ex", "cron", "gone", "err"};
    struct decisions ds = {0};
    for (double t = T0; t <= T0 + 1800; t += 300) {
        for (size_t i = 0; i < ARRAY_LEN(pods); i++)
            add_decision(&f, &ds, pods[i], t, T0 - 900, 1);
        step(&f, t, &ds);
    }
    const struct bt_result *r = bt_sim_finish(f.sim);
    TEST_CHECK_INT(fb->resolves, 5);
    TEST_CHECK_INT(fb->writes, 0);
    TEST_CHECK_INT(r->rule[0].notices, 3);
    TEST_CHECK_INT(r->rule[0].reclaims, 3);
    for (size_t i = 0; i < r->nwl; i++) {
        const struct bt_workload *w = &r->wl[i];
        const char *pod = labels_get(&w->identity, "pod");
        bool out = strcmp(pod, "ex") == 0 || strcmp(pod, "cron") == 0;
        bool unchecked = strcmp(pod, "gone") == 0 || strcmp(pod, "err") == 0;
        TEST_CHECK(w->lookup != NULL);
        TEST_CHECK_INT(w->lookup->state, out         ? BTL_LEFT_OUT
                                         : unchecked ? BTL_UNCHECKED
                                                     : BTL_COUNTED);
        TEST_CHECK_INT(w->reclaims, out ? 0 : 1);
    }
    struct sbuf b = {0};
    bt_lookup_note(r, "", &b);
    TEST_CHECK(strstr(b.buf, "5 workloads, 2 left out, 2 not checked (counted)") != NULL);
    TEST_CHECK(strstr(b.buf, "  left out: nb {namespace=\"ml\",pod=\"ex\"}: labelled "
                             "gpureclaim.io/exempt=true in its owner chain\n") != NULL);
    TEST_CHECK(strstr(b.buf, "  left out: nb {namespace=\"ml\",pod=\"cron\"}: no way to delete "
                             "a CronJob\n") != NULL);
    TEST_CHECK(strstr(b.buf, "  not checked (counted): nb {namespace=\"ml\",pod=\"gone\"}: not "
                             "found now: pods \"gone\" not found\n") != NULL);
    TEST_CHECK(strstr(b.buf, "pod=\"err\"}: error: HTTP 500\n") != NULL);
    sbuf_free(&b);
    /* Without a look-up: what was not checked, said. */
    struct sbuf n = {0};
    size_t none[2][3] = {{0}};
    btl_note(NULL, true, true, none, &n);
    TEST_CHECK(strstr(n.buf, "not checked without the Kubernetes API") != NULL);
    TEST_CHECK(strstr(n.buf, "; not checked without a container runtime (--runtime.socket)") !=
               NULL);
    sbuf_free(&n);
    struct btl *l = r->cfg.lookup;
    fx_free(&f);
    btl_free(l);
}

int main(void)
{
    log_set_level("error");
    RUN(cycle_count);
    RUN(notice_then_spared);
    RUN(notice_period_then_action);
    RUN(return_and_restart);
    RUN(hide_away_workloads);
    RUN(pending_less_freed);
    RUN(late_return_and_nan);
    RUN(allocation_end);
    RUN(unknown_devices);
    RUN(hourly_cap);
    RUN(dry_run_rules_act);
    RUN(query_error_cycles);
    RUN(compare_and_formats);
    RUN(json_reclaims_streamed);
    RUN(by_breakdown);
    RUN(csv_quoting);
    RUN(audit_agreement);
    RUN(lookup_once_and_left_out);
    return test_done();
}
