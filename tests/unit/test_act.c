/*
 * Tests of the action engine with a fake backend that records every call: notice then act
 * after the notice period, spared when active again, no action on query_error/no_data, dry
 * run never mutates, protected namespaces, exemption labels, per-cycle and per-hour caps
 * (the latter across a reload of the ledger), retry after RETRY_LATER without duplicates,
 * CONFLICT never retried, a restart in the middle never acts twice, audit lines are JSON
 * with the documented fields, and the metrics pass `promtool check metrics`.
 */
#include "act.c"
/* The ledger's static fsync hook, to inject a failed fsync of the state directory. */
#include "ledger.c"

#include <unistd.h>

#include "test.h"

/* ---- fake backend ----------------------------------------------------------------------- */

struct fake_obj {
    const char *pod, *ns, *uid;
    bool running, terminating, exempt;
    enum act_result resolve_res;
    double created;          /* 0: long ago */
    char notice[512];        /* the notice annotation on its root owner, as the API would keep it */
    const char *keep_until;  /* gpureclaim.io/keep-until on the root owner, or NULL */
    double restarted;        /* gpureclaim.io/restored-at on the root owner; 0: none */
    const char *resolve_msg; /* what a failing resolve says (NULL: "fake resolve RESULT") */
};

struct fake {
    struct act_backend base;
    struct fake_obj objs[8];
    size_t nobjs;
    enum act_result act_res[8]; /* results of successive act() calls (then ACT_OK) */
    size_t nact_res;
    unsigned resolves, notices, withdraws, acts;
    char last_acted[64];
    char last_annotation[512];
    char last_message[1024];
    char last_why[256];
    volatile sig_atomic_t *stop_on_act; /* set during act(): SIGTERM while a call is in flight */
    enum act_back back_res;             /* what back() says of an acted object */
    double back_when;                   /* and the restored-at it reports (NaN: none) */
    unsigned backs;
};

static struct fake *fake_of(struct act_backend *b)
{
    return (struct fake *)b;
}

static enum act_result fake_resolve(struct act_backend *b, const struct decision_rec *d,
                                    struct act_target *t, char *err, size_t errlen)
{
    struct fake *f = fake_of(b);
    f->resolves++;
    const char *pod = labels_get(&d->identity, "pod");
    for (size_t i = 0; i < f->nobjs; i++) {
        struct fake_obj *o = &f->objs[i];
        if (!pod || strcmp(o->pod, pod) != 0)
            continue;
        if (o->resolve_res != ACT_OK) {
            if (o->resolve_msg)
                snprintf(err, errlen, "%s", o->resolve_msg);
            else
                snprintf(err, errlen, "fake resolve %s", act_result_name(o->resolve_res));
            return o->resolve_res;
        }
        memset(t, 0, sizeof(*t));
        t->chain[0] = (struct act_obj){xstrdup("v1"),   xstrdup("Pod"),  xstrdup(o->ns),
                                       xstrdup(o->pod), xstrdup(o->uid), NULL};
        t->chain[1] =
            (struct act_obj){xstrdup("apps/v1"),
                             xstrdup("Deployment"),
                             xstrdup(o->ns),
                             xasprintf("%s-deploy", o->pod),
                             xasprintf("root-%s", o->pod), /* one Deployment per pod name */
                             o->keep_until ? xstrdup(o->keep_until) : NULL};
        t->restarted = o->restarted;
        t->restore_hint =
            xasprintf("to bring it back: restore %s/Deployment/%s-deploy", o->ns, o->pod);
        t->nchain = 2;
        t->running = o->running;
        t->terminating = o->terminating;
        t->exempt = o->exempt;
        t->created = o->created;
        t->notice = o->notice[0] ? xstrdup(o->notice) : NULL;
        return ACT_OK;
    }
    snprintf(err, errlen, "pod '%s' not found", pod ? pod : "");
    return ACT_GONE;
}

static enum act_result fake_notice(struct act_backend *b, const struct act_target *t,
                                   const struct act_notice *n, char *err, size_t errlen)
{
    struct fake *f = fake_of(b);
    f->notices++;
    str_copy(f->last_annotation, sizeof(f->last_annotation), n->annotation);
    str_copy(f->last_message, sizeof(f->last_message), n->message);
    for (size_t i = 0; i < f->nobjs; i++)
        if (strcmp(f->objs[i].uid, t->chain[0].uid) == 0)
            str_copy(f->objs[i].notice, sizeof(f->objs[i].notice), n->annotation);
    return ACT_OK;
}

static enum act_result fake_withdraw(struct act_backend *b, const struct ledger_entry *e,
                                     const char *why, char *err, size_t errlen)
{
    struct fake *f = fake_of(b);
    f->withdraws++;
    str_copy(f->last_why, sizeof(f->last_why), why ? why : "");
    for (size_t i = 0; i < f->nobjs; i++)
        if (strcmp(f->objs[i].uid, e->uid) == 0)
            f->objs[i].notice[0] = '\0';
    return ACT_OK;
}

static enum act_result fake_act(struct act_backend *b, const struct act_target *t,
                                enum rule_action action, long *status, char *err, size_t errlen)
{
    struct fake *f = fake_of(b);
    enum act_result r = f->acts < f->nact_res ? f->act_res[f->acts] : ACT_OK;
    f->acts++;
    if (f->stop_on_act)
        *f->stop_on_act = 1;
    str_copy(f->last_acted, sizeof(f->last_acted), t->chain[0].name);
    *status = r == ACT_OK ? 200 : r == ACT_RETRY ? 429 : r == ACT_CONFLICT ? 409 : 500;
    if (r != ACT_OK)
        snprintf(err, errlen, "fake %s", act_result_name(r));
    return r;
}

static void fake_target_free(struct act_backend *b, struct act_target *t)
{
    for (size_t i = 0; i < t->nchain; i++) {
        free(t->chain[i].api_version);
        free(t->chain[i].kind);
        free(t->chain[i].ns);
        free(t->chain[i].name);
        free(t->chain[i].uid);
        free(t->chain[i].keep_until);
    }
    free(t->notice);
    t->notice = NULL;
    free(t->restore_hint);
    t->restore_hint = NULL;
}

static enum act_back fake_back(struct act_backend *b, const struct ledger_entry *e, double *when,
                               char *err, size_t errlen)
{
    struct fake *f = fake_of(b);
    f->backs++;
    *when = f->back_when;
    if (f->back_res == ACT_BACK_UNKNOWN)
        snprintf(err, errlen, "fake: cannot read");
    return f->back_res;
}

/* The engine frees the backend; the test keeps a pointer, so free is a no-op here. */
static void fake_free(struct act_backend *b)
{
}

static void fake_init(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->base = (struct act_backend){.name = "fake",
                                   .resolve = fake_resolve,
                                   .notice = fake_notice,
                                   .withdraw = fake_withdraw,
                                   .act = fake_act,
                                   .target_free = fake_target_free,
                                   .back = fake_back,
                                   .free = fake_free};
    f->back_when = NAN;
}

static void fake_add(struct fake *f, const char *pod, const char *ns, const char *uid)
{
    f->objs[f->nobjs++] =
        (struct fake_obj){.pod = pod, .ns = ns, .uid = uid, .running = true, .resolve_res = ACT_OK};
}

/* ---- decisions -------------------------------------------------------------------------- */

static struct rule rule_with(const char *name, enum rule_action action, double notice, unsigned max)
{
    struct rule r = {0};
    r.name = (char *)name;
    r.action = action;
    r.notice_period = notice;
    r.max_terminations = max;
    r.threshold = 10;
    r.idle_timer = 900;
    return r;
}

/* Start of the idle run of new decisions; 0 is older than anything in these tests. */
static double test_idle_since;

static struct decisions ds_new(void)
{
    return (struct decisions){0};
}

static struct decision_rec *ds_add(struct decisions *ds, const struct rule *r, const char *ns,
                                   const char *pod, enum decision dec, enum reason why)
{
    ds->v = xrealloc(ds->v, (ds->n + 1) * sizeof(*ds->v));
    struct decision_rec *d = &ds->v[ds->n++];
    memset(d, 0, sizeof(*d));
    labels_set(&d->identity, "namespace", ns);
    labels_set(&d->identity, "pod", pod);
    labels_copy(&d->all, &d->identity);
    d->rule = r;
    d->decision = dec;
    d->reason = why;
    d->threshold = r->threshold;
    d->idle_timer = r->idle_timer;
    d->idle_since = test_idle_since;
    d->window_start = 1000;
    d->window_end = 1900;
    d->samples = 61;
    d->max = 0.02;
    d->mean = 0.01;
    d->last = 0;
    d->allocated = 1;
    return d;
}

static void ds_free(struct decisions *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        labels_free(&ds->v[i].identity);
        labels_free(&ds->v[i].all);
    }
    free(ds->v);
    *ds = (struct decisions){0};
}

/* One cycle with one decision. */
static void cycle1(struct act *a, const struct rule *r, const char *ns, const char *pod,
                   enum decision dec, enum reason why, bool dry, double now)
{
    struct decisions ds = ds_new();
    struct decision_rec *d = ds_add(&ds, r, ns, pod, dec, why);
    d->dry_run = dry;
    act_cycle(a, &ds, now);
    ds_free(&ds);
}

static char tmpdir[128];

static void tmp_setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpureclaim-test-act.XXXXXX");
    if (!mkdtemp(tmpdir))
        tmpdir[0] = '\0';
}

static char *tmp_path(const char *name)
{
    return xasprintf("%s/%s", tmpdir, name);
}

static struct act *act_mk(const char *state, const char *audit, unsigned per_hour, struct fake *f)
{
    struct act_cfg cfg = {
        .state_file = state, .audit_file = audit, .max_actions_per_hour = per_hour};
    char err[512] = "";
    struct act *a = act_new(&cfg, err, sizeof(err));
    if (!a) {
        fprintf(stderr, "act_new: %s\n", err);
        return NULL;
    }
    if (f)
        act_set_kube(a, &f->base);
    return a;
}

static size_t count_state(const struct act *a, enum ledger_state st)
{
    size_t n = 0;
    for (size_t i = 0; i < act_ledger(a)->n; i++)
        n += act_ledger(a)->v[i].state == st;
    return n;
}

/* Lines of the audit file whose "event" (and "result" when non-NULL) match. */
static size_t audit_count(const char *path, const char *event, const char *result)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[8192];
    size_t n = 0;
    while (fgets(line, sizeof(line), f)) {
        json_object *o = json_tokener_parse(line);
        json_object *ev, *res;
        if (o && json_object_object_get_ex(o, "event", &ev) &&
            strcmp(json_object_get_string(ev), event) == 0 &&
            (!result || (json_object_object_get_ex(o, "result", &res) &&
                         strcmp(json_object_get_string(res), result) == 0)))
            n++;
        json_object_put(o);
    }
    fclose(f);
    return n;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* The notice's message and annotation threshold are the bytes of the printf formats they
   were written with before (act_build_notice joins them by hand), on random decisions. */
TEST(notice_texts_as_printf)
{
    unsigned long x = 12345;
    static const double ths[] = {10, 1, 0.5, 12.25, 1e6, 1234567, 0, 99.999999};
    static const double vals[] = {NAN, 0, 0.0312, 0.5, 1, 1e-9, 123.456, 0.99951};
    static const char *const hints[] = {NULL, "",
                                        "bring it back with gpureclaim-enforcer "
                                        "restore"};
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        struct rule r = {.name = "rule-a", .action = (enum rule_action)((x >> 33) % 4)};
        r.max_keep_until = (x >> 40) % 2 ? 0 : 86400;
        struct decision_rec d = {.rule = &r,
                                 .threshold = ths[(x >> 20) % ARRAY_LEN(ths)],
                                 .idle_timer = 60.0 * (double)(1 + (x >> 44) % 1440),
                                 .max = vals[(x >> 24) % ARRAY_LEN(vals)],
                                 .mean = vals[(x >> 28) % ARRAY_LEN(vals)],
                                 .samples = (size_t)((x >> 12) % 100000),
                                 .idle_since = 1700000000 - (double)((x >> 8) % 99999)};
        const char *hint = hints[(x >> 50) % ARRAY_LEN(hints)];
        double noticed = 1700000000 + (double)((x >> 16) % 86400), act_after = noticed + 900;
        struct act_notice n = {0};
        act_build_notice(&d, noticed, act_after, "uid-1", NAN, hint, &n, NULL, NULL);
        char at[40], win[32], keep[200] = "";
        rfc3339_format(at, sizeof(at), act_after, RFC3339_SEC);
        dur_format(win, sizeof(win), d.idle_timer);
        if (r.max_keep_until > 0) {
            char until[40], limit[32];
            dur_format(limit, sizeof(limit), r.max_keep_until);
            rfc3339_format(until, sizeof(until), noticed + r.max_keep_until, RFC3339_SEC);
            snprintf(keep, sizeof(keep),
                     "; to postpone it, annotate the workload %s=<RFC 3339 time> (at most %s "
                     "after this notice, %s)",
                     ANNOT_KEEP_UNTIL, limit, until);
        }
        char *want = xasprintf(
            "GPU activity below %g%% for %s (max %.3g%%, mean %.3g%% over %zu samples); %s "
            "planned at %s by rule '%s'%s%s%s",
            d.threshold, win, isnan(d.max) ? 0.0 : d.max * 100.0,
            isnan(d.mean) ? 0.0 : d.mean * 100.0, d.samples, rules_action_name(r.action), at,
            r.name, keep, hint && *hint ? "; " : "", hint && *hint ? hint : "");
        char thr[64];
        snprintf(thr, sizeof(thr), "\"threshold\":\"%g%%\"", d.threshold);
        bool same = strcmp(n.message, want) == 0 && strstr(n.annotation, thr) != NULL;
        if (!same) {
            TEST_CHECK_STR(n.message, want);
            TEST_CHECK_CONTAINS(n.annotation, thr);
        }
        free(want);
        free((char *)n.message);
        free((char *)n.annotation);
        if (!same)
            break;
    }
}

TEST(notice_then_act)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("notice.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);

    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    TEST_CHECK_CONTAINS(f.last_annotation, "\"actAt\":\"1970-01-01T00:21:40Z\"");
    TEST_CHECK_CONTAINS(f.last_annotation, "\"rule\":\"r1\"");
    TEST_CHECK_CONTAINS(f.last_annotation, "\"threshold\":\"10%\"");
    TEST_CHECK_CONTAINS(f.last_annotation, "\"window\":\"15m\"");

    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1200); /* still waiting */
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(f.notices, 1);

    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1300); /* due */
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(count_state(a, LEDGER_ACTED), 1);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 0);

    for (double t = 1400; t < 2000; t += 100) /* the stale series says reclaim again */
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(audit_count(audit, "notice", "ok"), 1);
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    act_free(a);
    free(audit);
}

TEST(notice_zero_acts_same_cycle)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    struct act *a = act_mk(NULL, NULL, 10, &f);
    struct rule r = rule_with("r0", ACTION_EVICT, 0, 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(count_state(a, LEDGER_ACTED), 1);
    act_free(a);
}

TEST(spared_when_active)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("spared.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_SCALE_TO_ZERO, 300, 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    cycle1(a, &r, "ml", "p1", DECISION_KEEP, REASON_ACTIVE, false, 1100);
    TEST_CHECK_INT(f.withdraws, 1);
    TEST_CHECK_INT(act_ledger(a)->n, 0);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1400);
    TEST_CHECK_INT(f.acts, 0); /* a fresh notice, not an action */
    TEST_CHECK_INT(f.notices, 2);
    TEST_CHECK_INT(audit_count(audit, "spared", "ok"), 1);

    /* every definite keep reason spares, the others do not */
    static const struct {
        enum reason why;
        bool spares;
    } tab[] = {
        {REASON_ACTIVE, true},     {REASON_GAP, true},          {REASON_STALE, true},
        {REASON_TOO_YOUNG, true},  {REASON_NOT_A_NUMBER, true}, {REASON_EXEMPT, true},
        {REASON_NO_DATA, false},   {REASON_QUERY_ERROR, false}, {REASON_NO_PRESSURE, false},
        {REASON_CYCLE_CAP, false}, {REASON_FIT_CHECK, false},   {REASON_PRESSURE_UNKNOWN, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(tab); i++) {
        TEST_CHECK_INT(act_definite_keep(tab[i].why), tab[i].spares);
    }
    act_free(a);
    free(audit);
}

TEST(no_action_without_proof)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    struct act *a = act_mk(NULL, NULL, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    cycle1(a, &r, "ml", "p1", DECISION_KEEP, REASON_QUERY_ERROR, false, 1400);
    cycle1(a, &r, "ml", "p1", DECISION_KEEP, REASON_NO_DATA, false, 1500);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(f.withdraws, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    /* absent from the decisions: nothing either */
    struct decisions empty = ds_new();
    act_cycle(a, &empty, 1600);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    /* proven idle again: act */
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1700);
    TEST_CHECK_INT(f.acts, 1);
    /* a pending notice absent for more than 24 h after its time expires */
    f.objs[0].uid = "uid-2"; /* a replacement, idle for a whole window since */
    test_idle_since = 50000;
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 100000);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    act_cycle(a, &empty, 100000 + 300 + ACT_PENDING_TTL + 1);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 0);
    TEST_CHECK_INT(f.withdraws, 1);
    TEST_CHECK_INT(f.acts, 1);
    test_idle_since = 0;
    act_free(a);
}

TEST(dry_run_never_mutates)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("dry.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 5);
    for (double t = 1000; t < 1500; t += 60)
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, true, t);
    struct rule rd = rule_with("rd", ACTION_DELETE, 0, 5);
    rd.dry_run = true;
    for (double t = 1000; t < 1500; t += 60)
        cycle1(a, &rd, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(f.withdraws, 0);
    TEST_CHECK_INT(audit_count(audit, "dry_run", NULL), 2); /* once per rule and workload */
    /* active again, then idle again: reported again */
    cycle1(a, &r, "ml", "p1", DECISION_KEEP, REASON_ACTIVE, true, 2000);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, true, 2100);
    TEST_CHECK_INT(audit_count(audit, "dry_run", NULL), 3);
    TEST_CHECK_INT(f.withdraws, 0);
    /* no backend at all: still a dry-run report, no crash */
    struct act *b = act_mk(NULL, audit, 10, NULL);
    cycle1(b, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, true, 1000);
    TEST_CHECK_INT(audit_count(audit, "dry_run", NULL), 4);
    act_free(b);
    act_free(a);
    free(audit);
}

/*
 * The same state file from a dry run into a live one (the demo-kube timeline, and an SRE's
 * first --no-dry-run): the dry-run report does not stand for a notice (none is on the object),
 * so the live run gives its own; and the report must not stay behind beside it, to be
 * "spared, notice withdrawn" after the live action (it was, before: a second entry).
 */
TEST(dry_run_report_superseded_by_live_notice)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("dry-live.jsonl");
    char *state = tmp_path("dry-live.json");
    struct act *a = act_mk(state, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 5);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, true, 1000);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, true, 1060);
    TEST_CHECK_INT(audit_count(audit, "dry_run", NULL), 1);
    TEST_CHECK_INT(count_state(a, LEDGER_DRY_RUN), 1);
    act_free(a);

    a = act_mk(state, audit, 10, &f); /* restarted live on the same state file */
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1100);
    TEST_CHECK_INT(f.notices, 1); /* a notice of its own: the report was never on the object */
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    TEST_CHECK_INT(count_state(a, LEDGER_DRY_RUN), 0);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1400); /* due */
    TEST_CHECK_INT(f.acts, 1);
    struct decisions none = ds_new(); /* the workload is gone */
    for (double t = 1460; t < 1800; t += 60)
        act_cycle(a, &none, t);
    ds_free(&none);
    cycle1(a, &r, "ml", "p1", DECISION_KEEP, REASON_NO_DATA, false, 1900);
    TEST_CHECK_INT(audit_count(audit, "spared", NULL), 0);
    TEST_CHECK_INT(f.withdraws, 0);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);
    free(state);
    free(audit);
}

TEST(protected_and_exempt)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "sys", "kube-system", "uid-s");
    fake_add(&f, "ex", "ml", "uid-e");
    f.objs[1].exempt = true;
    fake_add(&f, "own", "ml", "uid-o");
    char *audit = tmp_path("prot.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 10);
    for (double t = 1000; t < 1300; t += 100) {
        struct decisions ds = ds_new();
        ds_add(&ds, &r, "kube-system", "sys", DECISION_RECLAIM, REASON_IDLE);
        ds_add(&ds, &r, "ml", "ex", DECISION_RECLAIM, REASON_IDLE);
        /* labelled ml but the live object sits in a protected namespace */
        ds_add(&ds, &r, "ml", "own", DECISION_RECLAIM, REASON_IDLE);
        f.objs[2].ns = "gpureclaim";
        act_cycle(a, &ds, t);
        ds_free(&ds);
    }
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(audit_count(audit, "skipped", "protected"), 2);
    TEST_CHECK_INT(audit_count(audit, "skipped", "exempt"), 1);
    TEST_CHECK(act_ns_in_list(" a, kube-system ,b", "kube-system"));
    TEST_CHECK(!act_ns_in_list("kube-system", "kube"));
    TEST_CHECK(!act_ns_in_list("", "ml"));
    act_free(a);
    free(audit);
}

/* The set of protected namespaces the engine parses once keeps the list's semantics
   (act_ns_in_list: entries split at commas, spaces trimmed, empty ones ignored), on random
   lists of a few short names, spaces and empty entries, through act_describe's verdict. */
TEST(protected_set_as_list)
{
    static const char *const names[] = {"a", "ab", "kube", "kube-system", "ml", "b a", ""};
    static const char *const seps[] = {",", " ,", ", ", ",,", " , "};
    unsigned long x = 987654321;
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    int disagree = 0, protected = 0;
    for (int i = 0; i < 4000 && !disagree; i++) {
        char list[256] = "";
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        for (unsigned k = 0, n = (unsigned)((x >> 40) % 5); k < n; k++) {
            x = x * 6364136223846793005ul + 1442695040888963407ul;
            if (k)
                str_append(list, sizeof(list), seps[(x >> 20) % ARRAY_LEN(seps)]);
            str_append(list, sizeof(list), (x >> 50) % 3 ? "" : " ");
            str_append(list, sizeof(list), names[(x >> 30) % ARRAY_LEN(names)]);
        }
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        const char *ns = names[(x >> 33) % (ARRAY_LEN(names) - 1)];
        struct decisions ds = {0};
        struct decision_rec *d = ds_add(&ds, &r, ns, "p", DECISION_RECLAIM, REASON_IDLE);
        char *how = NULL, err[256] = "";
        act_describe(NULL, d, list, 1700000000, &how, NULL, 0, NULL, err, sizeof(err));
        bool said = strstr(err, "is protected") != NULL, want = act_ns_in_list(list, ns);
        protected += want;
        if (said != want) {
            disagree++;
            fprintf(stderr, "list '%s', namespace '%s': describe says %s\n", list, ns, err);
        }
        free(how);
        ds_free(&ds);
    }
    TEST_CHECK_INT(disagree, 0);
    /* both answers were met, so the agreement above covers each */
    TEST_CHECK(protected > 100);
    TEST_CHECK(protected < 3900);
}

TEST(cycle_cap)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    fake_add(&f, "p3", "ml", "u3");
    struct act *a = act_mk(NULL, NULL, 0, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 2);
    for (int c = 0; c < 2; c++) {
        struct decisions ds = ds_new();
        ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
        ds_add(&ds, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE);
        ds_add(&ds, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE);
        act_cycle(a, &ds, 1000 + 60 * c);
        ds_free(&ds);
        TEST_CHECK_INT(f.acts, c == 0 ? 2 : 3);
    }
    TEST_CHECK_INT(count_state(a, LEDGER_ACTED), 3);
    act_free(a);
}

TEST(hourly_cap_survives_restart)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    fake_add(&f, "p3", "ml", "u3");
    char *state = tmp_path("hour.json");
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 10);
    struct act *a = act_mk(state, NULL, 2, &f);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    ds_add(&ds, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.acts, 2);
    act_free(a);

    a = act_mk(state, NULL, 2, &f);
    ds_add(&ds, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 2000);
    TEST_CHECK_INT(f.acts, 2); /* capped: two in the last hour, read back from the file */
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    struct expo *e = expo_new();
    act_metrics(a, e);
    struct sbuf out = {0};
    expo_render(e, &out);
    TEST_CHECK_CONTAINS(out.buf, "gpureclaim_enforcer_actions_last_hour 2");
    sbuf_free(&out);
    expo_free(e);
    act_cycle(a, &ds, 4601);
    TEST_CHECK_INT(f.acts, 3);
    TEST_CHECK_STR(f.last_acted, "p3");
    act_free(a);
    ds_free(&ds);
    free(state);
}

TEST(retry_later_then_ok)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    f.act_res[0] = ACT_RETRY;
    f.act_res[1] = ACT_ERROR;
    f.nact_res = 2;
    char *audit = tmp_path("retry.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_EVICT, 60, 1);
    for (double t = 1000; t <= 1300; t += 60)
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(f.acts, 3);
    TEST_CHECK_INT(count_state(a, LEDGER_ACTED), 1);
    TEST_CHECK_INT(act_ledger(a)->n, 1);
    if (act_ledger(a)->n == 1)
        TEST_CHECK_INT(act_ledger(a)->v[0].attempts, 3);
    TEST_CHECK_INT(audit_count(audit, "action", "retry"), 1);
    TEST_CHECK_INT(audit_count(audit, "action", "error"), 1);
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    act_free(a);
    free(audit);
}

TEST(conflict_never_retried)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    f.act_res[0] = ACT_CONFLICT;
    f.nact_res = 1;
    char *audit = tmp_path("conflict.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 60, 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1100);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(count_state(a, LEDGER_DONE), 1);
    for (double t = 1200; t < 2000; t += 100)
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.acts, 1);

    /* replaced between notice and action: uid differs -> closed, no call */
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 3000);
    f.objs[1].uid = "u2-new";
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 3100);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(audit_count(audit, "action", "conflict"), 2);
    /* the replacement is not noticed on the old object's idle evidence */
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 3200);
    TEST_CHECK_INT(f.notices, 2);
    TEST_CHECK_INT(audit_count(audit, "skipped", "replaced"), 1);
    /* gone before the action: closed without a call */
    f.objs[0].resolve_res = ACT_GONE;
    act_free(a);
    free(audit);
}

/* What the state file on disk says while the backend's act() runs (write_ahead_on_disk). */
static const char *wa_state;
static unsigned wa_attempts;
static size_t wa_actions;
static bool wa_loaded;

static enum act_result wa_act(struct act_backend *b, const struct act_target *t,
                              enum rule_action action, long *status, char *err, size_t errlen)
{
    struct ledger l;
    char why[256];
    wa_loaded = ledger_load(&l, wa_state, why, sizeof(why)) == 0 && l.n == 1;
    wa_attempts = wa_loaded ? l.v[0].attempts : 0;
    wa_actions = wa_loaded ? l.nactions : 0;
    if (wa_loaded)
        ledger_free(&l);
    return fake_act(b, t, action, status, err, errlen);
}

TEST(write_ahead_on_disk_before_the_call)
{
    /* The lifecycle orders write_ahead before act (test_lifecycle); here the driver: when
       the mutating call starts, the attempt and its time are already in the file, so a
       crash during the call neither forgets it nor escapes the hourly cap. */
    struct fake f;
    fake_init(&f);
    f.base.act = wa_act;
    fake_add(&f, "p1", "ml", "u1");
    char *state = tmp_path("wa.json"), *audit = tmp_path("wa.jsonl");
    wa_state = state;
    struct act *a = act_mk(state, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK(wa_loaded);
    TEST_CHECK_INT(wa_attempts, 1);
    TEST_CHECK_INT(wa_actions, 1);
    act_free(a);
    ds_free(&ds);
    free(state);
    free(audit);
}

TEST(restart_never_acts_twice)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    char *state = tmp_path("restart.json");
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    struct act *a = act_mk(state, NULL, 10, &f);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    act_free(a);
    TEST_CHECK_INT(f.notices, 1);

    a = act_mk(state, NULL, 10, &f); /* restart during the notice period */
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1100);
    TEST_CHECK_INT(f.notices, 1); /* not noticed twice */
    TEST_CHECK_INT(f.acts, 0);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1300);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);

    for (int i = 0; i < 2; i++) {
        a = act_mk(state, NULL, 10, &f);
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1400 + i);
        act_free(a);
    }
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(f.notices, 1);

    /* a corrupt state file refuses to start */
    FILE *fp = fopen(state, "w");
    fputs("{\"version\":1,\"entries\":[{\"rule\":1}]", fp);
    fclose(fp);
    struct act_cfg cfg = {.state_file = state};
    char err[512] = "";
    TEST_CHECK(act_new(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "is corrupt");
    free(state);
}

TEST(audit_lines_are_json)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p\"1", "ml", "u1");
    char *audit = tmp_path("json.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 1);
    cycle1(a, &r, "ml", "p\"1", DECISION_RECLAIM, REASON_IDLE, false, 1700000000);
    act_free(a);
    FILE *fp = fopen(audit, "r");
    TEST_CHECK(fp != NULL);
    char line[8192];
    size_t n = 0;
    static const char *const keys[] = {
        "time",       "event",  "rule",  "workload", "owner_chain", "window", "threshold_percent",
        "idle_since", "action", "result"};
    while (fp && fgets(line, sizeof(line), fp)) {
        json_object *o = json_tokener_parse(line);
        TEST_CHECK(o != NULL);
        for (size_t k = 0; o && k < ARRAY_LEN(keys); k++)
            TEST_CHECK(json_object_object_get_ex(o, keys[k], NULL));
        json_object *v, *w;
        if (o && json_object_object_get_ex(o, "time", &v))
            TEST_CHECK_STR(json_object_get_string(v), "2023-11-14T22:13:20Z");
        if (o && json_object_object_get_ex(o, "workload", &v) &&
            json_object_object_get_ex(v, "pod", &w))
            TEST_CHECK_STR(json_object_get_string(w), "p\"1");
        if (o && json_object_object_get_ex(o, "owner_chain", &v)) {
            TEST_CHECK_INT(json_object_array_length(v), 2);
            json_object *root = json_object_array_get_idx(v, 1), *k;
            if (root && json_object_object_get_ex(root, "kind", &k))
                TEST_CHECK_STR(json_object_get_string(k), "Deployment");
        }
        if (o && json_object_object_get_ex(o, "window", &v) &&
            json_object_object_get_ex(v, "samples", &w))
            TEST_CHECK_INT(json_object_get_int(w), 61);
        json_object_put(o);
        n++;
    }
    if (fp)
        fclose(fp);
    TEST_CHECK_INT(n, 2); /* notice + action */
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    free(audit);
}

TEST(metrics_promtool)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    f.act_res[0] = ACT_RETRY;
    f.nact_res = 1;
    struct act *a = act_mk(NULL, NULL, 10, &f);
    struct rule r = rule_with("r\"1", ACTION_EVICT, 0, 5);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    cycle1(a, &r, "kube-system", "p3", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    struct expo *e = expo_new();
    act_metrics(a, e);
    struct sbuf out = {0};
    expo_render(e, &out);
    TEST_CHECK_CONTAINS(out.buf,
                        "gpureclaim_enforcer_actions_total{rule=\"r\\\"1\",action=\"evict\","
                        "result=\"retry\"} 1");
    TEST_CHECK_CONTAINS(out.buf, "gpureclaim_enforcer_notices_total{rule=\"r\\\"1\"} 2");
    TEST_CHECK_CONTAINS(out.buf, "gpureclaim_enforcer_pending_notices 1");
    TEST_CHECK_CONTAINS(out.buf, "reason=\"protected\"");
    if (system("command -v promtool >/dev/null 2>&1") == 0) {
        char *path = tmp_path("metrics.prom");
        FILE *fp = fopen(path, "w");
        fputs(out.buf, fp);
        fclose(fp);
        char *cmd = xasprintf("promtool check metrics < '%s'", path);
        TEST_CHECK_INT(system(cmd), 0);
        free(cmd);
        free(path);
    } else {
        fprintf(stderr, "promtool not installed\n");
        TEST_CHECK(0);
    }
    sbuf_free(&out);
    expo_free(e);
    act_free(a);
}

/*
 * 11.5: a pod re-created under the same name continues its predecessor's series, so the idle
 * window can predate it. It is kept as too_young (audited once, no notice, no action) until
 * its own window is complete; checked again before acting; an unreadable time is young too.
 */
TEST(too_young_object)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "nb-0", "ml", "uid-new");
    f.objs[0].created = 1500; /* the decisions' window starts at 1000 */
    char *audit = tmp_path("young.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    for (double t = 1900; t < 2300; t += 100)
        cycle1(a, &r, "ml", "nb-0", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(audit_count(audit, "skipped", "too_young"), 1);
    TEST_CHECK_INT(act_ledger(a)->n, 0);

    /* its own window complete: noticed; created after the window start at act time: no act */
    struct decisions ds = ds_new();
    struct decision_rec *d = ds_add(&ds, &r, "ml", "nb-0", DECISION_RECLAIM, REASON_IDLE);
    d->window_start = 1500;
    act_cycle(a, &ds, 2400);
    TEST_CHECK_INT(f.notices, 1);
    d->window_start = 1400;
    act_cycle(a, &ds, 2700);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    d->window_start = 1800;
    act_cycle(a, &ds, 2760);
    TEST_CHECK_INT(f.acts, 1);
    ds_free(&ds);

    /* unknown creation time: not proven, kept */
    fake_add(&f, "nb-1", "ml", "uid-x");
    f.objs[1].created = NAN;
    cycle1(a, &r, "ml", "nb-1", DECISION_RECLAIM, REASON_IDLE, false, 3000);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(audit_count(audit, "skipped", "too_young"), 2);
    act_free(a);
    free(audit);
}

/*
 * 11.6: a workload busy during the notice period, unseen by any cycle, is idle again for a
 * whole idle timer when the action is due. Its idle run starts after the notice, so it is
 * spared (annotation withdrawn with a reason) and noticed afresh, never acted on with the
 * old notice. A run that reaches back to the notice, through cycles that failed, acts.
 */
TEST(idle_since_the_notice)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    char *audit = tmp_path("continuous.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 1200, 5); /* notice longer than idleTimer */
    r.idle_timer = 300;

    test_idle_since = 500;
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    ds_add(&ds, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.notices, 2);
    /* p1: busy at 1500 (no cycle saw it), idle from 1560 on; p2: idle throughout, one failed
       cycle in between */
    ds.v[1].decision = DECISION_KEEP;
    ds.v[1].reason = REASON_QUERY_ERROR;
    ds.v[1].idle_since = NAN;
    act_cycle(a, &ds, 1100);
    ds.v[1].decision = DECISION_RECLAIM;
    ds.v[1].reason = REASON_IDLE;
    ds.v[1].idle_since = 500;
    ds.v[0].idle_since = 1560;
    act_cycle(a, &ds, 2200);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_STR(f.last_acted, "p2");
    TEST_CHECK_INT(f.withdraws, 1);
    TEST_CHECK_CONTAINS(f.last_why, "not idle without a break since the notice");
    TEST_CHECK_CONTAINS(f.last_why, "00:26:00Z"); /* the run's start, 1560 */
    TEST_CHECK_INT(audit_count(audit, "spared", "ok"), 1);
    TEST_CHECK_INT(f.notices, 3); /* p1 noticed afresh, its new period runs */
    act_cycle(a, &ds, 3300);
    TEST_CHECK_INT(f.acts, 1);
    act_cycle(a, &ds, 3400);
    TEST_CHECK_INT(f.acts, 2);
    TEST_CHECK_STR(f.last_acted, "p1");
    ds_free(&ds);

    /* a reclaim decision without an idle run proves nothing: no action */
    fake_add(&f, "p3", "ml", "u3");
    test_idle_since = 3000;
    cycle1(a, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE, false, 4000);
    test_idle_since = NAN;
    cycle1(a, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE, false, 5200);
    TEST_CHECK_INT(f.acts, 2);
    TEST_CHECK_INT(audit_count(audit, "skipped", "not_idle_since_notice"), 1);
    test_idle_since = 0;
    act_free(a);
    free(audit);
}

/*
 * 12.3: stopped while a call is in flight, the engine records that call and starts no other:
 * the second due workload is neither resolved nor acted on, and a restart on the same state
 * acts on it without repeating the first.
 */
TEST(stop_during_a_call)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    static volatile sig_atomic_t stop;
    stop = 0;
    f.stop_on_act = &stop;
    char *state = tmp_path("stop.json"), *audit = tmp_path("stop.jsonl");
    struct act *a = act_mk(state, audit, 10, &f);
    act_set_stop(a, &stop);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    ds_add(&ds, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(f.resolves, 1);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    act_cycle(a, &ds, 1060); /* still stopping: nothing at all */
    TEST_CHECK_INT(f.resolves, 1);
    act_free(a);

    struct ledger l;
    char err[512] = "";
    TEST_CHECK_INT(ledger_load(&l, state, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 1);
    TEST_CHECK(ledger_find(&l, "r1", "{namespace=\"ml\",pod=\"p1\"}", "u1", LEDGER_ACTED) != NULL);
    ledger_free(&l);

    stop = 0;
    f.stop_on_act = NULL;
    a = act_mk(state, audit, 10, &f);
    act_set_stop(a, &stop);
    act_cycle(a, &ds, 1100);
    TEST_CHECK_INT(f.acts, 2);
    TEST_CHECK_STR(f.last_acted, "p2");
    act_free(a);
    ds_free(&ds);
    free(state);
    free(audit);
}

/* A gate that lets `*left` calls through, then answers "not the leader". */
static bool gate_countdown(void *arg)
{
    int *left = arg;
    return (*left)-- > 0;
}

TEST(lost_leadership_mid_cycle)
{
    /* The leader loses the Lease after its first action: the second workload is not touched
       in that cycle, and stays for the replica that holds the Lease next. */
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    fake_add(&f, "p2", "ml", "u2");
    char *state = tmp_path("gate.json"), *audit = tmp_path("gate.jsonl");
    struct act *a = act_mk(state, audit, 10, &f);
    int left = 1000;
    act_set_gate(a, gate_countdown, &left);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    ds_add(&ds, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE);
    /* Passes for the cycle's start and p1 (its start, its action); the Lease is lost before
       p2 is looked at. (Each HTTP call of the Kubernetes client is gated too: kube_cfg.gate,
       test_kube.) */
    left = 3;
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_STR(f.last_acted, "p1");
    TEST_CHECK_INT(f.resolves, 1);
    int resolves = f.resolves;
    left = 0;
    act_cycle(a, &ds, 1060); /* a standby: nothing at all */
    TEST_CHECK_INT(f.resolves, resolves);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);
    ds_free(&ds);
    free(state);
    free(audit);
}

static bool gate_open(void *arg)
{
    return true;
}

TEST(adopts_a_notice_found_on_the_object)
{
    /* Another replica noticed p1 at t=900 for t=1200 and died: this one, now the leader,
       continues that notice (no second notice) and acts at t=1200, not before. */
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    snprintf(f.objs[0].notice, sizeof(f.objs[0].notice),
             "{\"actAt\":\"1970-01-01T00:20:00Z\",\"rule\":\"r1\",\"action\":\"delete\","
             "\"noticedAt\":\"1970-01-01T00:15:00Z\",\"uid\":\"u1\"}");
    char *state = tmp_path("adopt.json"), *audit = tmp_path("adopt.jsonl");
    struct act *a = act_mk(state, audit, 10, &f);
    act_set_gate(a, gate_open, NULL);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(audit_count(audit, "notice", "adopted"), 1);
    act_cycle(a, &ds, 1200);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);
    ds_free(&ds);
    free(state);
    free(audit);
}

TEST(never_acts_on_a_notice_the_object_no_longer_shows)
{
    /* This replica noticed p1, then was a standby while the leader withdrew that notice
       (spared or exempt). Leader again after the period: its own record is not enough. */
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    char *state = tmp_path("stale.json"), *audit = tmp_path("stale.jsonl");
    struct act *a = act_mk(state, audit, 10, &f);
    act_set_gate(a, gate_open, NULL);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    act_cycle(a, &ds, 1000);
    TEST_CHECK_INT(f.notices, 1);
    f.objs[0].notice[0] = '\0'; /* withdrawn by the other replica */
    act_cycle(a, &ds, 1400);
    TEST_CHECK_INT(f.acts, 0);
    act_cycle(a, &ds, 1460); /* a fresh notice, with its own period */
    TEST_CHECK_INT(f.notices, 2);
    TEST_CHECK_INT(f.acts, 0);
    act_cycle(a, &ds, 1770);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);
    ds_free(&ds);
    free(state);
    free(audit);
}

static int fsync_fails(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/* 12.4: the write-ahead record could not be made durable: no mutating call. */
TEST(no_call_without_a_durable_record)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    char *state = tmp_path("fsync.json"), *audit = tmp_path("fsync.jsonl");
    struct act *a = act_mk(state, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 0, 5);
    ledger_dir_fsync = fsync_fails;
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    ledger_dir_fsync = fsync;
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(audit_count(audit, "skipped", "state_error"), 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1060);
    TEST_CHECK_INT(f.acts, 1);
    act_free(a);
    /* and a state directory that cannot be synced refuses the start */
    ledger_dir_fsync = fsync_fails;
    struct act_cfg cfg = {.state_file = state};
    char err[512] = "";
    TEST_CHECK(act_new(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "cannot sync directory");
    ledger_dir_fsync = fsync;
    free(state);
    free(audit);
}

/* The audit line (the last one whose event and result match): its message. */
static char *audit_message(const char *path, const char *event, const char *result)
{
    FILE *f = fopen(path, "r");
    char line[8192], *msg = NULL;
    while (f && fgets(line, sizeof(line), f)) {
        json_object *o = json_tokener_parse(line);
        json_object *ev, *res, *m;
        if (o && json_object_object_get_ex(o, "event", &ev) &&
            strcmp(json_object_get_string(ev), event) == 0 &&
            json_object_object_get_ex(o, "result", &res) &&
            strcmp(json_object_get_string(res), result) == 0 &&
            json_object_object_get_ex(o, "message", &m)) {
            free(msg);
            msg = xstrdup(json_object_get_string(m));
        }
        json_object_put(o);
    }
    if (f)
        fclose(f);
    return msg;
}

/*
 * Issue 18 item 7: an owner's keep-until on the workload or its owner postpones the action up
 * to the rule's maxKeepUntil after the notice; past it, capped and said so; a malformed value
 * keeps as long as the rule allows; a rule allowing 0 ignores it. The notice tells the owner
 * about the annotation, and how to bring the workload back after the action.
 */
TEST(keep_until_postpones_within_the_rule)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    f.objs[0].keep_until = "1970-01-01T00:40:00Z"; /* 2400 */
    char *audit = tmp_path("keep.jsonl");
    struct act *a = act_mk(NULL, audit, 100, &f);
    struct rule r = rule_with("r1", ACTION_SCALE_TO_ZERO, 300, 10);
    r.max_keep_until = 3600;
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    TEST_CHECK_INT(f.notices, 1); /* the notice still goes out: the owner's time runs */
    TEST_CHECK_CONTAINS(f.last_message,
                        "; to postpone it, annotate the workload gpureclaim.io/keep-until=<RFC "
                        "3339 time> (at most 1h after this notice, 1970-01-01T01:16:40Z); to "
                        "bring it back: restore ml/Deployment/p1-deploy");
    for (double t = 1300; t < 2400; t += 100)
        cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, t);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(audit_count(audit, "skipped", "kept_until"), 1);
    char *m = audit_message(audit, "skipped", "kept_until");
    TEST_CHECK_STR(m, "kept until 1970-01-01T00:40:00Z at the owner's request "
                      "(gpureclaim.io/keep-until on Deployment ml/p1-deploy)");
    free(m);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 2400);
    TEST_CHECK_INT(f.acts, 1);
    m = audit_message(audit, "action", "ok");
    TEST_CHECK_STR(m, "to bring it back: restore ml/Deployment/p1-deploy");
    free(m);

    /* past the maximum: capped at the notice + 1h, and said so */
    fake_add(&f, "p2", "ml", "uid-2");
    f.objs[1].keep_until = "1970-01-02T00:00:00Z";
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 3000);
    TEST_CHECK_INT(f.notices, 2);
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 6500);
    TEST_CHECK_INT(f.acts, 1);
    m = audit_message(audit, "skipped", "kept_until");
    TEST_CHECK_CONTAINS(m, "kept until 1970-01-01T01:50:00Z at the owner's request, capped: "
                           "gpureclaim.io/keep-until on Deployment ml/p2-deploy asks for "
                           "1970-01-02T00:00:00Z, rule 'r1' allows at most 1h after the notice");
    free(m);
    cycle1(a, &r, "ml", "p2", DECISION_RECLAIM, REASON_IDLE, false, 6600);
    TEST_CHECK_INT(f.acts, 2);

    /* not a time: kept as long as the rule allows, never becomes a reclaim at once */
    fake_add(&f, "p3", "ml", "uid-3");
    f.objs[2].keep_until = "friday";
    cycle1(a, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE, false, 7000);
    cycle1(a, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE, false, 7300);
    TEST_CHECK_INT(f.acts, 2);
    m = audit_message(audit, "skipped", "kept_until");
    TEST_CHECK_CONTAINS(m, "'friday', not an RFC 3339 time");
    free(m);
    cycle1(a, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE, false, 10600);
    TEST_CHECK_INT(f.acts, 3);

    /* a rule allowing 0: the annotation is not honoured, and the notice does not offer it */
    struct rule z = rule_with("r0", ACTION_SCALE_TO_ZERO, 300, 10);
    fake_add(&f, "p4", "ml", "uid-4");
    f.objs[3].keep_until = "1970-01-02T00:00:00Z";
    cycle1(a, &z, "ml", "p4", DECISION_RECLAIM, REASON_IDLE, false, 11000);
    TEST_CHECK(strstr(f.last_message, "keep-until") == NULL);
    cycle1(a, &z, "ml", "p4", DECISION_RECLAIM, REASON_IDLE, false, 11300);
    TEST_CHECK_INT(f.acts, 4);
    act_free(a);
    free(audit);
}

/*
 * Issue 18 item 6: a restored workload (restored-at on its owner, or a pod created after the
 * action under the owner acted on) whose idle series continues under the same labels is kept
 * as too young until a full idle window lies after the restart; the ledger records when the
 * object acted on was first seen running again.
 */
TEST(restored_workload_waits_a_whole_window)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("restored.jsonl");
    struct act *a = act_mk(NULL, audit, 100, &f);
    struct rule r = rule_with("r1", ACTION_SCALE_TO_ZERO, 0, 10);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(count_state(a, LEDGER_ACTED), 1);

    /* brought back at 1500 by `restore`, the same pod name, its series idle throughout */
    f.objs[0].uid = "uid-2";
    f.objs[0].created = 1400;
    f.objs[0].restarted = 1500;
    struct decisions ds = ds_new();
    struct decision_rec *d = ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE);
    d->window_start = 1450; /* the window begins before the restart: kept */
    act_cycle(a, &ds, 2350);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(f.notices, 1);
    TEST_CHECK_INT(audit_count(audit, "skipped", "too_young"), 1);
    char *m = audit_message(audit, "skipped", "too_young");
    TEST_CHECK_STR(m, "restarted: Deployment p1-deploy was brought back at "
                      "1970-01-01T00:25:00Z, after the idle window start 1970-01-01T00:24:10Z: "
                      "its idle window starts at the restart");
    free(m);
    /* the ledger knows the object acted on runs again, since its new pod's creation */
    const struct ledger_entry *e = &act_ledger(a)->v[0];
    TEST_CHECK_INT(e->state, LEDGER_ACTED);
    TEST_CHECK_DBL(e->restarted, 1400, 0);
    /* a whole window after the restart: reclaimed again, through a fresh notice */
    d->window_start = 1500;
    d->idle_since = 1500;
    act_cycle(a, &ds, 2400);
    TEST_CHECK_INT(f.notices, 2);
    TEST_CHECK_INT(f.acts, 2);
    ds_free(&ds);
    act_free(a);
    free(audit);
}

/* A restored-at that cannot be read: a restart cannot be ruled out, so kept, and said so. */
TEST(unreadable_restart_keeps)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    f.objs[0].restarted = INFINITY;
    char *audit = tmp_path("restored-bad.jsonl");
    struct act *a = act_mk(NULL, audit, 100, &f);
    struct rule r = rule_with("r1", ACTION_SCALE_TO_ZERO, 0, 10);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 5000);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(f.acts, 0);
    char *m = audit_message(audit, "skipped", "too_young");
    TEST_CHECK_CONTAINS(m, "gpureclaim.io/restored-at on p1-deploy cannot be read");
    free(m);
    act_free(a);
    free(audit);
}

/* Issue 26: what the re-proof answers, and how often it was asked. */
static bool reprove_answer;
static unsigned reprove_asked;

static bool fake_reprove(void *arg, const struct decision_rec *d, double now,
                         struct decision_rec *proven, char *msg, size_t msglen)
{
    (void)arg;
    (void)d;
    (void)now;
    reprove_asked++;
    proven->samples = 99; /* the full proof's statistics reach the lines written after it */
    if (!reprove_answer)
        snprintf(msg, msglen, "full-window proof: active: a late sample");
    return reprove_answer;
}

static void cycle_incr(struct act *a, const struct rule *r, const char *pod, bool dry, double now)
{
    struct decisions ds = ds_new();
    struct decision_rec *d = ds_add(&ds, r, "ml", pod, DECISION_RECLAIM, REASON_IDLE);
    d->dry_run = dry;
    d->proof = DECIDE_PROOF_INCREMENTAL;
    act_cycle(a, &ds, now);
    ds_free(&ds);
}

/*
 * An incremental decision may only ever keep on its own (issue 26): before its notice, its
 * dry-run report and its action the full-window proof is asked (once a cycle), and only its
 * yes lets them happen; the lines say "incremental+full". Without a re-proof installed,
 * nothing happens on an incremental decision.
 */
TEST(incremental_decisions_need_a_full_proof)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("incr.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    act_set_reprove(a, fake_reprove, NULL);

    reprove_answer = false;
    reprove_asked = 0;
    cycle_incr(a, &r, "p1", false, 1000);
    TEST_CHECK_INT(reprove_asked, 1);
    TEST_CHECK_INT(f.notices, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 0);
    TEST_CHECK_INT(audit_count(audit, "skipped", NULL), 1);
    cycle_incr(a, &r, "p1", true, 1000); /* a dry run is not reported either */
    TEST_CHECK_INT(count_state(a, LEDGER_DRY_RUN), 0);

    reprove_answer = true;
    reprove_asked = 0;
    cycle_incr(a, &r, "p1", false, 1060); /* proven: the notice */
    TEST_CHECK_INT(reprove_asked, 1);
    TEST_CHECK_INT(f.notices, 1);
    cycle_incr(a, &r, "p1", false, 1200); /* the notice period runs: nothing asked */
    TEST_CHECK_INT(reprove_asked, 1);
    reprove_answer = false;
    cycle_incr(a, &r, "p1", false, 1400); /* due, but refuted: no action, the notice stands */
    TEST_CHECK_INT(reprove_asked, 2);
    TEST_CHECK_INT(f.acts, 0);
    TEST_CHECK_INT(count_state(a, LEDGER_PENDING), 1);
    reprove_answer = true;
    cycle_incr(a, &r, "p1", false, 1460);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    act_free(a);

    /* The lines of the notice and the action rest on both proofs and show the full one's
       window statistics. */
    FILE *fp = fopen(audit, "r");
    char line[8192];
    unsigned both = 0;
    while (fp && fgets(line, sizeof(line), fp))
        if (strstr(line, "\"event\":\"notice\"") || strstr(line, "\"event\":\"action\""))
            both +=
                strstr(line, "\"proof\":\"incremental+full\"") && strstr(line, "\"samples\":99");
    if (fp)
        fclose(fp);
    TEST_CHECK_INT(both, 2);

    /* Nothing to prove it with: kept. */
    a = act_mk(NULL, NULL, 10, &f);
    unsigned before = f.notices;
    cycle_incr(a, &r, "p1", false, 3000);
    TEST_CHECK_INT(f.notices, before);
    act_free(a);
    free(audit);
}

static bool gate_flag(void *arg)
{
    return *(bool *)arg;
}

/* The gpureclaim_enforcer_* samples of the engine's metrics, rendered. */
static char *metrics_text(const struct act *a)
{
    struct expo *e = expo_new();
    act_metrics(a, e);
    struct sbuf out = {0};
    expo_render(e, &out);
    expo_free(e);
    return out.buf;
}

/*
 * Issue 25's live counterpart: the GPU time an action freed is the devices held times the
 * time the object was seen to stay stopped, until it runs again (at restored-at when known)
 * or is gone; an interval it could not be read, or this replica was not acting, is not
 * counted, and delete frees nothing the engine can watch.
 */
TEST(freed_gpu_time)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "u1");
    struct act *a = act_mk(NULL, NULL, 10, &f);
    struct rule r = rule_with("nb", ACTION_SCALE_TO_ZERO, 0, 5);
    struct decisions ds = ds_new();
    ds_add(&ds, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE)->allocated = 2;
    act_cycle(a, &ds, 1000); /* notice period 0: acted at 1000 */
    ds_free(&ds);
    TEST_CHECK_INT(f.acts, 1);
    struct decisions none = ds_new();
    f.back_res = ACT_BACK_STOPPED;
    act_cycle(a, &none, 1060);
    act_cycle(a, &none, 1120);
    char *m = metrics_text(a);
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_freed_gpu_seconds_total{rule=\"nb\","
                           "namespace=\"ml\"} 240");
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_reclaimed_gpus{rule=\"nb\",namespace=\"ml\"} 2");
    free(m);
    /* Unreadable for a minute: not counted. */
    f.back_res = ACT_BACK_UNKNOWN;
    act_cycle(a, &none, 1180);
    /* Restored at 1200, seen at 1240: counted up to 1200 from the last time it was read. */
    f.back_res = ACT_BACK_RUNNING;
    f.back_when = 1200;
    act_cycle(a, &none, 1240);
    m = metrics_text(a);
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_freed_gpu_seconds_total{rule=\"nb\","
                           "namespace=\"ml\"} 280");
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_returns_total{rule=\"nb\",namespace=\"ml\","
                           "within=\"1h\"} 1");
    TEST_CHECK(!strstr(m, "gpureclaim_enforcer_reclaimed_gpus{"));
    free(m);
    /* Counted once: the entry is closed, later cycles ask nothing more. */
    unsigned backs = f.backs;
    act_cycle(a, &none, 1300);
    TEST_CHECK_INT(f.backs, backs);
    TEST_CHECK(act_ledger(a)->v[0].returned == 1200);
    act_free(a);

    /* Delete: no way back to watch, nothing counted, nothing asked. */
    fake_init(&f);
    fake_add(&f, "p2", "ml", "u2");
    a = act_mk(NULL, NULL, 10, &f);
    struct rule del = rule_with("del", ACTION_DELETE, 0, 5);
    ds = ds_new();
    ds_add(&ds, &del, "ml", "p2", DECISION_RECLAIM, REASON_IDLE)->allocated = 4;
    act_cycle(a, &ds, 1000);
    ds_free(&ds);
    f.back_res = ACT_BACK_STOPPED;
    act_cycle(a, &none, 2000);
    TEST_CHECK_INT(f.backs, 0);
    m = metrics_text(a);
    TEST_CHECK(!strstr(m, "freed_gpu_seconds_total{"));
    free(m);
    act_free(a);

    /* Gone after a while: counted up to the last time it was seen stopped. A replica that was
       not acting (gate closed) counts nothing for that time. */
    fake_init(&f);
    fake_add(&f, "p3", "ml", "u3");
    a = act_mk(NULL, NULL, 10, &f);
    ds = ds_new();
    ds_add(&ds, &r, "ml", "p3", DECISION_RECLAIM, REASON_IDLE)->allocated = 1;
    act_cycle(a, &ds, 1000);
    ds_free(&ds);
    f.back_res = ACT_BACK_STOPPED;
    act_cycle(a, &none, 1100);
    bool open = false;
    act_set_gate(a, gate_flag, &open);
    act_cycle(a, &none, 5000);
    open = true;
    act_cycle(a, &none, 5100); /* back as leader: counting starts again here */
    f.back_res = ACT_BACK_GONE;
    act_cycle(a, &none, 5200);
    m = metrics_text(a);
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_freed_gpu_seconds_total{rule=\"nb\","
                           "namespace=\"ml\"} 100");
    TEST_CHECK(!strstr(m, "returns_total{"));
    free(m);
    act_free(a);
    ds_free(&none);
}

/*
 * A workload the API cannot be read for is kept, and the audit says why once per cause, not
 * once for every error: a refused token (401) and then etcd stopped (every read timing out)
 * are two lines, the same timeout in the next cycle none (found on a real API server,
 * tests/e2e/kube_faults.sh: the etcd outage left no audit line after the 401's).
 */
TEST(resolve_errors_audited_once_per_cause)
{
    struct fake f;
    fake_init(&f);
    fake_add(&f, "p1", "ml", "uid-1");
    char *audit = tmp_path("errcause.jsonl");
    struct act *a = act_mk(NULL, audit, 10, &f);
    struct rule r = rule_with("r1", ACTION_DELETE, 300, 1);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1000);
    TEST_CHECK_INT(f.notices, 1);

    f.objs[0].resolve_res = ACT_ERROR;
    f.objs[0].resolve_msg = "cannot get Pod 'ml/p1': HTTP 401 Unauthorized: Unauthorized";
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1400);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1500);
    TEST_CHECK_INT(audit_count(audit, "skipped", "error"), 1);
    f.objs[0].resolve_msg = "cannot get Pod 'ml/p1': timeout after 2.0 s requesting 'x'";
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1600);
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1700);
    TEST_CHECK_INT(audit_count(audit, "skipped", "error"), 2);
    char *m = metrics_text(a);
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_skipped_total{rule=\"r1\",reason=\"error\"} 2");
    free(m);
    TEST_CHECK_INT(f.acts, 0);

    f.objs[0].resolve_res = ACT_OK;
    cycle1(a, &r, "ml", "p1", DECISION_RECLAIM, REASON_IDLE, false, 1800);
    TEST_CHECK_INT(f.acts, 1);
    TEST_CHECK_INT(audit_count(audit, "action", "ok"), 1);
    act_free(a);
    free(audit);
}

int main(void)
{
    tmp_setup();
    RUN(notice_texts_as_printf);
    RUN(protected_set_as_list);
    RUN(notice_then_act);
    RUN(resolve_errors_audited_once_per_cause);
    RUN(notice_zero_acts_same_cycle);
    RUN(spared_when_active);
    RUN(no_action_without_proof);
    RUN(dry_run_never_mutates);
    RUN(dry_run_report_superseded_by_live_notice);
    RUN(protected_and_exempt);
    RUN(cycle_cap);
    RUN(hourly_cap_survives_restart);
    RUN(retry_later_then_ok);
    RUN(conflict_never_retried);
    RUN(write_ahead_on_disk_before_the_call);
    RUN(restart_never_acts_twice);
    RUN(audit_lines_are_json);
    RUN(metrics_promtool);
    RUN(too_young_object);
    RUN(idle_since_the_notice);
    RUN(stop_during_a_call);
    RUN(incremental_decisions_need_a_full_proof);
    RUN(lost_leadership_mid_cycle);
    RUN(adopts_a_notice_found_on_the_object);
    RUN(never_acts_on_a_notice_the_object_no_longer_shows);
    RUN(no_call_without_a_durable_record);
    RUN(keep_until_postpones_within_the_rule);
    RUN(restored_workload_waits_a_whole_window);
    RUN(unreadable_restart_keeps);
    RUN(freed_gpu_time);
    if (tmpdir[0]) {
        char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove '%s'\n", tmpdir);
        free(cmd);
    }
    return test_done();
}
