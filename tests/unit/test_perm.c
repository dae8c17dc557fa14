/*
 * Tests of the permission list (perm_needs): what each rule action can use on the built-in
 * kinds and on a user kind, per namespace of the scope or cluster-wide, deduplicated with
 * everyone who needs it; --kube.confirm-pressure and --leader-elect additions; and the
 * metrics of a check (perm_metrics) from set verdicts. The reviews themselves run against
 * the fake API server in tests/e2e/permissions.sh.
 */
#include "perm.c"

#include "test.h"

static const char head[] = "apiVersion: gpureclaim/v1\n"
                           "kind: ReclaimRules\n"
                           "defaults:\n"
                           "  policy: Always\n"
                           "  threshold: 10\n"
                           "  idleTimer: 15m\n";

static int load(const char *body, struct ruleset *rs)
{
    char *y = xasprintf("%s%s", head, body);
    struct rules_errors errs = {0};
    int rc = rules_load_buffer("t.yaml", y, strlen(y), rs, &errs);
    for (size_t i = 0; i < errs.n; i++)
        fprintf(stderr, "%s\n", errs.msg[i]);
    rules_errors_free(&errs);
    free(y);
    return rc;
}

/* The need "VERB RESOURCE[.GROUP][/SUB] NS" (NS "-" for every namespace), or NULL. */
static const struct perm_need *find(const struct perm_need *v, size_t n, const char *spec)
{
    for (size_t i = 0; i < n; i++) {
        char *s = xasprintf("%s %s%s%s%s%s %s", v[i].verb, v[i].resource, v[i].group[0] ? "." : "",
                            v[i].group, v[i].subresource[0] ? "/" : "", v[i].subresource,
                            v[i].ns[0] ? v[i].ns : "-");
        bool eq = strcmp(s, spec) == 0;
        free(s);
        if (eq)
            return &v[i];
    }
    return NULL;
}

static const struct perm_cfg plain = {false, NULL, NULL, NULL};

TEST(scale_to_zero_in_scope_namespaces)
{
    struct ruleset rs = {0};
    TEST_CHECK_INT(load("rules:\n- name: idle\n  action: scaleToZero\n"
                        "  scope:\n    namespaces: [ml, team-b, kube-system]\n",
                        &rs),
                   0);
    struct perm_need *v;
    size_t n = perm_needs(&rs, &plain, &v);
    static const char *const want[] = {
        "get deployments.apps ml",
        "patch deployments.apps ml",
        "get deployments.apps/scale ml",
        "patch deployments.apps/scale ml",
        "patch statefulsets.apps/scale ml",
        "patch replicasets.apps/scale team-b",
        /* Notebook and InferenceService stop by annotation: a patch on the object */
        "patch notebooks.kubeflow.org ml",
        "patch inferenceservices.serving.kserve.io ml",
        "patch leaderworkersets.leaderworkerset.x-k8s.io/scale ml",
        /* the owner walk reads every kind it climbs, whatever the action */
        "get pods ml",
        "get rayclusters.ray.io ml",
        "get jobs.batch ml",
        "get services.serving.knative.dev team-b",
        "create events ml",
        "create events team-b",
    };
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        if (!find(v, n, want[i])) {
            fprintf(stderr, "missing need '%s'\n", want[i]);
            TEST_CHECK(!"need listed");
        }
    static const char *const not_wanted[] = {
        "delete deployments.apps ml", /* scale never deletes */
        "create pods/eviction ml",
        "patch jobs.batch ml",    /* Jobs cannot scale */
        "get deployments.apps -", /* the scope names namespaces */
        "list workloads.kueue.x-k8s.io ml",
        "get cronjobs.batch ml", /* a schedule: the walk stops below it without reading it */
        "list pods -",
    };
    for (size_t i = 0; i < ARRAY_LEN(not_wanted); i++)
        if (find(v, n, not_wanted[i])) {
            fprintf(stderr, "unexpected need '%s'\n", not_wanted[i]);
            TEST_CHECK(!"need not listed");
        }
    /* a protected namespace is never acted in: nothing is needed there */
    for (size_t i = 0; i < n; i++)
        TEST_CHECK(strcmp(v[i].ns, "kube-system") != 0);
    struct perm_cfg prot = {false, "ml", NULL, NULL};
    struct perm_need *w;
    size_t nw = perm_needs(&rs, &prot, &w);
    TEST_CHECK(find(w, nw, "get pods kube-system") != NULL);
    TEST_CHECK(find(w, nw, "get pods ml") == NULL);
    perm_needs_free(w, nw);
    const struct perm_need *d = find(v, n, "patch deployments.apps/scale ml");
    TEST_CHECK(d && strcmp(d->why, "rule 'idle' (scaleToZero)") == 0 &&
               d->verdict == KUBE_ACCESS_UNKNOWN && strcmp(d->kind, "Deployment") == 0);
    /* each permission once */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            TEST_CHECK(!perm_eq(&v[i], v[j].group, v[j].resource, v[j].subresource, v[j].verb,
                                v[j].ns, v[j].name));
    perm_needs_free(v, n);
    rules_free(&rs);
}

TEST(each_action_its_verbs)
{
    struct ruleset rs = {0};
    TEST_CHECK_INT(load("rules:\n"
                        "- name: ev\n  action: evict\n"
                        "- name: su\n  action: suspend\n"
                        "- name: de\n  action: delete\n"
                        "- name: rep\n  action: report\n  scope:\n    namespaces: [quiet]\n"
                        "- name: off\n  enabled: false\n  action: delete\n"
                        "  scope:\n    namespaces: [off]\n",
                        &rs),
                   0);
    struct perm_need *v;
    size_t n = perm_needs(&rs, &plain, &v);
    /* no scope: every namespace */
    TEST_CHECK(find(v, n, "create pods/eviction -") != NULL);
    /* an eviction's notice goes on the root owner, whatever its kind */
    TEST_CHECK(find(v, n, "patch deployments.apps -") != NULL);
    TEST_CHECK(find(v, n, "patch jobs.batch -") != NULL);
    TEST_CHECK(find(v, n, "patch rayclusters.ray.io -") != NULL);
    TEST_CHECK(find(v, n, "patch trainjobs.trainer.kubeflow.org -") != NULL);
    TEST_CHECK(find(v, n, "list workloads.kueue.x-k8s.io -") != NULL);
    TEST_CHECK(find(v, n, "patch workloads.kueue.x-k8s.io -") != NULL);
    TEST_CHECK(find(v, n, "delete aimservices.aim.eai.amd.com -") != NULL);
    TEST_CHECK(find(v, n, "delete kaiwojobs.kaiwo.silogen.ai -") != NULL);
    TEST_CHECK(find(v, n, "delete pods -") != NULL);
    /* suspend has no way on a Deployment: nothing but the walk's get and the evict notice */
    TEST_CHECK(find(v, n, "delete deployments.apps/scale -") == NULL);
    TEST_CHECK(find(v, n, "get deployments.apps/scale -") == NULL);
    /* report and disabled rules use nothing */
    for (size_t i = 0; i < n; i++)
        TEST_CHECK(strcmp(v[i].ns, "quiet") != 0 && strcmp(v[i].ns, "off") != 0);
    /* needed by several rules: one entry naming each */
    const struct perm_need *ev = find(v, n, "create events -");
    TEST_CHECK(ev && strstr(ev->why, "rule 'ev' (evict)") &&
               strstr(ev->why, "rule 'su' (suspend)") && strstr(ev->why, "rule 'de' (delete)"));
    TEST_CHECK(find(v, n, "list pods -") == NULL); /* no --kube.confirm-pressure */
    perm_needs_free(v, n);
    rules_free(&rs);
}

TEST(pressure_and_lease)
{
    struct ruleset rs = {0};
    TEST_CHECK_INT(load("rules:\n- name: p\n  policy: DuringGPUPressure\n  action: delete\n"
                        "  scope:\n    namespaces: [ml]\n"
                        "- name: a\n  action: delete\n  scope:\n    namespaces: [ml]\n",
                        &rs),
                   0);
    struct perm_cfg cfg = {true, NULL, "gpureclaim", "gpureclaim-enforcer"};
    struct perm_need *v;
    size_t n = perm_needs(&rs, &cfg, &v);
    /* demand anywhere counts: both lists span every namespace */
    const struct perm_need *lp = find(v, n, "list pods -");
    TEST_CHECK(lp && strcmp(lp->why, "--kube.confirm-pressure") == 0);
    TEST_CHECK(find(v, n, "list workloads.kueue.x-k8s.io -") != NULL);
    const struct perm_need *g = find(v, n, "get leases.coordination.k8s.io gpureclaim");
    TEST_CHECK(g && strcmp(g->name, "gpureclaim-enforcer") == 0);
    const struct perm_need *u = find(v, n, "update leases.coordination.k8s.io gpureclaim");
    TEST_CHECK(u && strcmp(u->name, "gpureclaim-enforcer") == 0);
    const struct perm_need *c = find(v, n, "create leases.coordination.k8s.io gpureclaim");
    TEST_CHECK(c && c->name[0] == '\0'); /* RBAC cannot limit create to a name */
    char *s = perm_describe(g);
    TEST_CHECK_STR(s, "get 'leases.coordination.k8s.io gpureclaim-enforcer' in namespace "
                      "'gpureclaim'");
    free(s);
    s = perm_describe(lp);
    TEST_CHECK_STR(s, "list 'pods' in every namespace");
    free(s);
    perm_needs_free(v, n);
    /* only a DuringGPUPressure rule lists pending work */
    rules_free(&rs);
    TEST_CHECK_INT(load("rules:\n- name: a\n  action: delete\n", &rs), 0);
    n = perm_needs(&rs, &cfg, &v);
    TEST_CHECK(find(v, n, "list pods -") == NULL);
    perm_needs_free(v, n);
    rules_free(&rs);
}

/* A user kind: its resource is not in the row, so the need names the kind. */
TEST(user_kind)
{
    struct ruleset rs = {0};
    TEST_CHECK_INT(load("kinds:\n"
                        "- apiVersion: example.com/v1\n  kind: Sandbox\n  reconciles: true\n"
                        "  actions:\n    delete: {method: delete}\n"
                        "rules:\n- name: a\n  action: delete\n  scope:\n    namespaces: [ml]\n",
                        &rs),
                   0);
    struct perm_need *v;
    size_t n = perm_needs(&rs, &plain, &v);
    const struct perm_need *d = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].kind, "Sandbox") == 0 && strcmp(v[i].verb, "delete") == 0)
            d = &v[i];
    TEST_CHECK(d && strcmp(d->group, "example.com") == 0 && d->resource[0] == '\0');
    if (d) {
        char *s = perm_describe(d);
        TEST_CHECK_STR(s, "delete 'Sandbox.example.com' in namespace 'ml'");
        free(s);
    }
    perm_needs_free(v, n);
    rules_free(&rs);
}

TEST(metrics_of_a_check)
{
    struct ruleset rs = {0};
    TEST_CHECK_INT(
        load("rules:\n- name: a\n  action: delete\n  scope:\n    namespaces: [ml]\n", &rs), 0);
    struct perm_cfg cfg = {false, NULL, NULL, NULL};
    struct perm *p = perm_new(NULL, &cfg);
    struct expo *e = expo_new();
    perm_metrics(p, e); /* no check yet: nothing */
    struct sbuf out = {0};
    expo_render(e, &out);
    TEST_CHECK(!out.buf || !strstr(out.buf, "permission"));
    expo_free(e);
    sbuf_free(&out);
    p->n = perm_needs(&rs, &cfg, &p->needs);
    p->checked = true;
    p->last_check = 1700000000;
    for (size_t i = 0; i < p->n; i++)
        p->needs[i].verdict = KUBE_ACCESS_ALLOWED;
    struct perm_need *del = (struct perm_need *)find(p->needs, p->n, "delete pods ml");
    struct perm_need *ev = (struct perm_need *)find(p->needs, p->n, "create events ml");
    TEST_CHECK(del && ev);
    if (del && ev) {
        del->verdict = KUBE_ACCESS_DENIED;
        ev->verdict = KUBE_ACCESS_UNKNOWN;
    }
    e = expo_new();
    perm_metrics(p, e);
    out = (struct sbuf){0};
    expo_render(e, &out);
    const char *m = out.buf ? out.buf : "";
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_permission_missing{group=\"\",resource=\"pods\","
                           "subresource=\"\",verb=\"delete\",namespace=\"ml\"} 1\n");
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_permission_unknown{group=\"\",resource=\"events\","
                           "subresource=\"\",verb=\"create\",namespace=\"ml\"} 1\n");
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_permission_checks{result=\"missing\"} 1\n");
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_permission_checks{result=\"unknown\"} 1\n");
    char *granted =
        xasprintf("gpureclaim_enforcer_permission_checks{result=\"granted\"} %zu\n", p->n - 2);
    TEST_CHECK_CONTAINS(m, granted);
    free(granted);
    TEST_CHECK_CONTAINS(m, "gpureclaim_enforcer_permission_last_check_timestamp_seconds "
                           "1700000000\n");
    TEST_CHECK(!strstr(m, "resource=\"deployments\"")); /* granted ones are only counted */
    expo_free(e);
    sbuf_free(&out);
    TEST_CHECK(!perm_incomplete(p)); /* only a failed review asks for another check */
    perm_free(p);
    rules_free(&rs);
}

int main(void)
{
    RUN(scale_to_zero_in_scope_namespaces);
    RUN(each_action_its_verbs);
    RUN(pressure_and_lease);
    RUN(user_kind);
    RUN(metrics_of_a_check);
    return test_done();
}
