/*
 * Unit tests of the enforcer's table of metric families (enforcer/enfmetrics.c) and the HTTP
 * server's (common/httpd.c, shared by both programs): every id is declared, no name is
 * declared twice across the two tables, names and types follow the naming rules, no enforcer
 * source nor common/httpd.c adds a sample by a raw name, and the metric functions (daemon's
 * add_metrics with act_metrics, notify_metrics, lease_metrics and perm_metrics, and the server's
 * own_metrics) publish only declared families, each with exactly its declared HELP and TYPE.
 */
#include "enfmetrics.c"
/* For the static add_metrics(), own_metrics() and the private state they render. */
#include "act.c"
#include "daemon.c"
#include "httpd.c"
#include "lease.c"
#include "perm.c"

#include "test.h"

#include "families.h"

/* Both tables as one list: a name may be declared in only one place of the two. */
#define NFAM (EMX_COUNT + HX_COUNT)
static const struct expo_family *fams[NFAM];

static void fams_init(void)
{
    for (int i = 0; i < EMX_COUNT; i++)
        fams[i] = &emx_family[i];
    for (int i = 0; i < HX_COUNT; i++)
        fams[EMX_COUNT + i] = &httpd_family[i];
}

TEST(every_id_is_declared_and_well_named)
{
    fam_check_declared(fams, EMX_COUNT, "gpureclaim_enforcer_");
    fam_check_declared(fams + EMX_COUNT, HX_COUNT, "gpureclaim_");
}

TEST(no_name_is_declared_twice)
{
    fam_check_unique(fams, NFAM);
}

/* A sample added by a raw name would bypass the tables: these sources use expo_put only. */
TEST(sources_add_only_declared_families)
{
    TEST_CHECK(fam_scan_sources("enforcer/*.c") > 10);
    TEST_CHECK_INT(fam_scan_sources("common/httpd.c"), 1);
}

/* Render `e` (freed) and check it: no disagreement, the families as declared. */
static void check_expo(struct expo *e, const char *what, bool seen[NFAM])
{
    TEST_CHECK_INT(expo_conflicts(e), 0);
    TEST_CHECK_INT(expo_duplicates(e), 0);
    struct sbuf b = {0};
    expo_render(e, &b);
    expo_free(e);
    char *out = sbuf_take(&b);
    TEST_CHECK(out != NULL);
    if (out)
        fam_check_output(fams, NFAM, what, out, seen);
    free(out);
}

static const char rules_yaml[] = "apiVersion: gpureclaim/v1\n"
                                 "kind: ReclaimRules\n"
                                 "defaults:\n"
                                 "  policy: Always\n"
                                 "  threshold: 10\n"
                                 "  idleTimer: 15m\n"
                                 "rules:\n"
                                 "- name: a\n"
                                 "  action: delete\n"
                                 "  scope:\n"
                                 "    namespaces: [ml]\n";

TEST(metric_functions_publish_declared_families_as_declared)
{
    bool seen[NFAM] = {false};

    /* The action engine with one of each count, as cycles would leave it. */
    char err[512] = "";
    struct act *a = act_new(&(struct act_cfg){0}, err, sizeof(err));
    TEST_CHECK(a != NULL);
    if (!a) {
        fprintf(stderr, "act_new: %s\n", err);
        return;
    }
    act_count_add(&a->actions, "a", "delete", "success");
    act_count_add(&a->notices, "a", NULL, NULL);
    act_count_add(&a->spared, "a", NULL, NULL);
    act_count_add(&a->skipped, "a", "protected", NULL);
    act_count_addv(&a->freed, "a", "ml", NULL, 120);
    act_count_add(&a->returns, "a", "ml", "1h");
    struct ledger_entry *le =
        ledger_add(&a->ledger, "a", "{pod=\"p\"}", "u", "Pod ml/p", LEDGER_ACTED);
    le->allocated = 2;
    struct notify *n = notify_new(&(struct notify_cfg){0}, err, sizeof(err));
    TEST_CHECK(n != NULL);
    act_set_notify(a, n);

    /* A permission check with one verdict of each kind. */
    struct perm_cfg pcfg = {false, NULL, NULL, NULL};
    struct perm *p = perm_new(NULL, &pcfg);
    struct daemon dm = {0};
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_buffer("t.yaml", rules_yaml, strlen(rules_yaml), &dm.rules, &errs),
                   0);
    rules_errors_free(&errs);
    p->n = perm_needs(&dm.rules, &pcfg, &p->needs);
    TEST_CHECK(p->n >= 3);
    p->checked = true;
    for (size_t i = 0; i < p->n; i++)
        p->needs[i].verdict = i == 0   ? KUBE_ACCESS_DENIED
                              : i == 1 ? KUBE_ACCESS_UNKNOWN
                                       : KUBE_ACCESS_ALLOWED;

    /* A lease that is not running: only its counters are read, under its mutex. */
    struct lease *l = xcalloc(1, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);

    /* The loop's state after a cycle: rules, tallies, an idle workload. */
    struct daemon_cfg cfg = {.act = a, .lease = l, .perm = p};
    dm.cfg = &cfg;
    dm.q = promq_new(&(struct promq_cfg){.url = "http://127.0.0.1:1"});
    pthread_mutex_init(&dm.mu, NULL);
    if (!dm.rules.file)
        dm.rules.file = xstrdup("t.yaml");
    rule_eval_get(&dm, "a")->read_path = "promql";
    rule_eval_get(&dm, "a")->read_raw = true; /* read_samples_total, late_samples_total */
    /* The state carried between cycles (issue 26): nothing read yet, the gauges at 0. */
    dm.live = replay_live_open(dm.q, &dm.rules,
                               &(struct replay_live_cfg){.overlap = 30, .full_every = 3600});
    tally_add(&dm.total, "a", DECISION_RECLAIM, REASON_IDLE);
    tally_add(&dm.last, "a", DECISION_RECLAIM, REASON_IDLE);
    dm.idle = xcalloc(1, sizeof(*dm.idle));
    dm.idle[0].rule = xstrdup("a");
    dm.nidle = 1;
    struct expo *e = expo_new();
    add_metrics(&dm, e);
    check_expo(e, "daemon", seen);
    replay_close(dm.live);
    dm.live = NULL;
    /* publish() renders the same into the snapshot that /metrics serves. */
    publish(&dm);
    TEST_CHECK(dm.snapshot != NULL);
    if (dm.snapshot)
        fam_check_output(fams, NFAM, "daemon snapshot", dm.snapshot, seen);

    /* The HTTP server's own series, with a web config so that all three are there. */
    struct httpd *h = xcalloc(1, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    h->config_file = xstrdup("web.yml");
    h->reload_ok = true;
    struct sbuf b = {0};
    own_metrics(h, &b);
    char *out = sbuf_take(&b);
    TEST_CHECK(out != NULL);
    if (out)
        fam_check_output(fams, NFAM, "httpd", out, seen);
    free(out);

    for (int i = 0; i < NFAM; i++)
        if (!seen[i]) {
            fprintf(stderr, "'%s' was not published by the functions above\n", fams[i]->name);
            TEST_CHECK(false);
        }

    pthread_mutex_destroy(&h->mu);
    free(h->config_file);
    free(h);
    free(dm.snapshot);
    pthread_mutex_destroy(&dm.mu);
    idle_free(&dm);
    rule_evals_free(&dm);
    tallies_free(&dm.total);
    tallies_free(&dm.last);
    promq_free(dm.q);
    rules_free(&dm.rules);
    pthread_mutex_destroy(&l->mu);
    free(l);
    perm_free(p);
    act_free(a);
}

int main(void)
{
    fams_init();
    RUN(every_id_is_declared_and_well_named);
    RUN(no_name_is_declared_twice);
    RUN(sources_add_only_declared_families);
    RUN(metric_functions_publish_declared_families_as_declared);
    return test_done();
}
