/*
 * Tests for the workload-kinds table (enforcer/kinds.c): look-ups by group and kind, the
 * built-in rows' ways, recognising a stopped object, the permissions of each way, user rows
 * from a rules file's `kinds:` section (through rules_load_buffer, as `check` and `run` load
 * them), and the RBAC manifest against the built-in rows. Run from the repository root.
 */
#include "kinds.c"

#include "test.h"

static const char *const rules_tail = "rules:\n"
                                      "- name: r\n"
                                      "  threshold: 10\n"
                                      "  idleTimer: 15m\n";

/* Load a rules file made of `kinds` (a `kinds:` section, or "") and one rule. */
static int load(const char *kinds, struct ruleset *rs, struct rules_errors *errs)
{
    char *buf = xasprintf("apiVersion: gpureclaim/v1\nkind: ReclaimRules\n%s%s", kinds, rules_tail);
    int rc = rules_load_buffer("k.yaml", buf, strlen(buf), rs, errs);
    free(buf);
    return rc;
}

TEST(test_builtin_find)
{
    const struct kind_def *d = kinds_find(NULL, "apps/v1", "Deployment");
    TEST_CHECK(d != NULL);
    if (d) {
        TEST_CHECK(d->reconciles);
        TEST_CHECK_INT(d->ways[ACTION_SCALE_TO_ZERO].method, KIND_SCALE);
        TEST_CHECK_INT(d->ways[ACTION_DELETE].method, KIND_DELETE);
        TEST_CHECK_INT(d->ways[ACTION_SUSPEND].method, KIND_NONE);
        TEST_CHECK_INT(d->ways[ACTION_EVICT].method, KIND_NONE);
        TEST_CHECK_INT(d->ways[ACTION_STOP].method, KIND_NONE);
    }
    /* another version of the same group and kind is the same row */
    TEST_CHECK(kinds_find(NULL, "apps/v1beta2", "Deployment") == d);
    /* the group is part of the key: a core "Deployment" or another group's is not it */
    TEST_CHECK(kinds_find(NULL, "v1", "Deployment") == NULL);
    TEST_CHECK(kinds_find(NULL, "example.com/v1", "Deployment") == NULL);
    TEST_CHECK(kinds_find(NULL, "app/v1", "Deployment") == NULL);
    TEST_CHECK(kinds_find(NULL, "apps/v1", "deployment") == NULL);
    TEST_CHECK(kinds_find(NULL, NULL, "Deployment") == NULL);

    const struct kind_def *pod = kinds_find(kinds_builtin(), "v1", "Pod");
    TEST_CHECK(pod && !pod->reconciles && pod->ways[ACTION_EVICT].method == KIND_EVICT &&
               pod->ways[ACTION_SCALE_TO_ZERO].method == KIND_NONE);
    const struct kind_def *job = kinds_find(NULL, "batch/v1", "Job");
    TEST_CHECK(job && job->reconciles && job->ways[ACTION_SUSPEND].method == KIND_PATCH);
    if (job) {
        TEST_CHECK_STR(job->ways[ACTION_SUSPEND].patch, "{\"spec\":{\"suspend\":true}}");
        TEST_CHECK_STR(job->ways[ACTION_SUSPEND].unpatch, "{\"spec\":{\"suspend\":false}}");
    }
    /* a CronJob is known, stops the climb, and is never acted on */
    const struct kind_def *cj = kinds_find(NULL, "batch/v1", "CronJob");
    TEST_CHECK(cj && !cj->reconciles);
    for (size_t a = 0; cj && a < KINDS_NACTIONS; a++)
        TEST_CHECK_INT(cj->ways[a].method, KIND_NONE);
}

/* Every built-in row: unique group/kind, a source in docs/, and ways that fit their action. */
TEST(test_builtin_rows_consistent)
{
    size_t n = kinds_count(NULL);
    TEST_CHECK(n >= 6);
    for (size_t i = 0; i < n; i++) {
        const struct kind_def *d = kinds_at(NULL, i);
        TEST_CHECK(d->group && d->version && d->kind && d->resource);
        TEST_CHECK(str_has_prefix(d->source, "docs/workload-kinds.md#"));
        TEST_CHECK(kinds_find(NULL, d->group[0] ? "x/v1" : "v1", d->kind) == NULL ||
                   d->group[0] == '\0');
        char *api = d->group[0] ? xasprintf("%s/%s", d->group, d->version) : xstrdup(d->version);
        TEST_CHECK(kinds_find(NULL, api, d->kind) == d);
        free(api);
        for (size_t a = 0; a < KINDS_NACTIONS; a++) {
            const struct kind_way *w = &d->ways[a];
            if (w->method == KIND_NONE)
                continue;
            TEST_CHECK(method_fits((enum rule_action)a, w->method));
            if (w->method == KIND_PATCH) {
                /* the built-in patches pass the checks a user's would */
                json_object *po = json_tokener_parse(w->patch);
                json_object *uo = w->unpatch ? json_tokener_parse(w->unpatch) : NULL;
                TEST_CHECK(po && uo);
                struct sbuf left = {0};
                if (po && uo)
                    not_undone(po, uo, "", &left);
                TEST_CHECK_INT(left.len, 0);
                sbuf_free(&left);
                json_object_put(po);
                json_object_put(uo);
            }
            if (w->method == KIND_ANNOTATE)
                TEST_CHECK(w->key && annotation_key_ok(w->key));
        }
    }
}

TEST(test_is_stopped_scale)
{
    const struct kind_way w = {.method = KIND_SCALE};
    char err[128] = "";
#define STOPPED(j) kinds_is_stopped(&w, j, strlen(j), err, sizeof(err))
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"replicas\":0}}"), 1);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"replicas\":3}}"), 0);
    TEST_CHECK_INT(STOPPED("{\"spec\":{}}"), 1);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"replicas\":\"0\"}}"), -1);
    TEST_CHECK(strstr(err, "not an integer") != NULL);
    TEST_CHECK_INT(STOPPED("{\"spec\":"), -1);
    TEST_CHECK_INT(STOPPED("[]"), -1);
#undef STOPPED
}

TEST(test_is_stopped_patch)
{
    const struct kind_way w = {.method = KIND_PATCH,
                               .patch = "{\"spec\":{\"suspend\":true,\"x\":{\"y\":null}}}",
                               .unpatch = "{\"spec\":{\"suspend\":false}}"};
    char err[128] = "";
#define STOPPED(j) kinds_is_stopped(&w, j, strlen(j), err, sizeof(err))
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"suspend\":true}}"), 1);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"suspend\":true,\"x\":{\"z\":1}}}"), 1);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"suspend\":true,\"x\":{\"y\":1}}}"), 0);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"suspend\":false}}"), 0);
    TEST_CHECK_INT(STOPPED("{\"spec\":{\"suspend\":\"true\"}}"), 0);
    TEST_CHECK_INT(STOPPED("{\"spec\":{}}"), 0);
    TEST_CHECK_INT(STOPPED("{}"), 0);
#undef STOPPED
    const struct kind_way d = {.method = KIND_DELETE};
    TEST_CHECK_INT(kinds_is_stopped(&d, "{}", 2, err, sizeof(err)), 0);
}

TEST(test_is_stopped_annotate)
{
    const struct kind_way any = {.method = KIND_ANNOTATE, .key = "example.com/stopped"};
    const struct kind_way val = {
        .method = KIND_ANNOTATE, .key = "example.com/stopped", .value = "true"};
    char err[128] = "";
    const char *on = "{\"metadata\":{\"annotations\":{\"example.com/stopped\":\"2026-01-01\"}}}";
    const char *yes = "{\"metadata\":{\"annotations\":{\"example.com/stopped\":\"true\"}}}";
    const char *off = "{\"metadata\":{\"annotations\":{\"other\":\"true\"}}}";
    TEST_CHECK_INT(kinds_is_stopped(&any, on, strlen(on), err, sizeof(err)), 1);
    TEST_CHECK_INT(kinds_is_stopped(&any, off, strlen(off), err, sizeof(err)), 0);
    TEST_CHECK_INT(kinds_is_stopped(&any, "{}", 2, err, sizeof(err)), 0);
    TEST_CHECK_INT(kinds_is_stopped(&val, on, strlen(on), err, sizeof(err)), 0);
    TEST_CHECK_INT(kinds_is_stopped(&val, yes, strlen(yes), err, sizeof(err)), 1);
}

static bool has_perm(const struct kind_perm *p, size_t n, const char *sub, const char *verb)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].verb, verb) == 0 &&
            (sub ? p[i].subresource && strcmp(p[i].subresource, sub) == 0 : !p[i].subresource))
            return true;
    return false;
}

TEST(test_perms)
{
    struct kind_perm p[8];
    const char *v[8];
    const struct kind_way scale = {.method = KIND_SCALE}, del = {.method = KIND_DELETE},
                          evict = {.method = KIND_EVICT}, none = {0},
                          patch = {.method = KIND_PATCH, .patch = "{}"},
                          ann = {.method = KIND_ANNOTATE, .key = "k"};
    size_t n = kinds_perms(&scale, p, 8);
    TEST_CHECK_INT(n, 4);
    TEST_CHECK(has_perm(p, n, NULL, "get") && has_perm(p, n, NULL, "patch") &&
               has_perm(p, n, "scale", "get") && has_perm(p, n, "scale", "patch"));
    TEST_CHECK(!has_perm(p, n, NULL, "delete"));
    TEST_CHECK_INT(kinds_verbs(&scale, v, 8), 2);
    n = kinds_perms(&del, p, 8);
    TEST_CHECK(n == 3 && has_perm(p, n, NULL, "delete") && has_perm(p, n, NULL, "patch"));
    n = kinds_perms(&evict, p, 8);
    TEST_CHECK(n == 2 && has_perm(p, n, "eviction", "create") && has_perm(p, n, NULL, "get"));
    TEST_CHECK_INT(kinds_verbs(&evict, v, 8), 1);
    TEST_CHECK_INT(kinds_perms(&none, p, 8), 0);
    TEST_CHECK_INT(kinds_verbs(&none, v, 8), 0);
    n = kinds_perms(&patch, p, 8);
    TEST_CHECK(n == 2 && has_perm(p, n, NULL, "patch"));
    n = kinds_perms(&ann, p, 8);
    TEST_CHECK(n == 2 && has_perm(p, n, NULL, "patch"));
    /* a short buffer is filled as far as it goes, the count is still the whole */
    TEST_CHECK_INT(kinds_perms(&scale, p, 1), 4);
    TEST_CHECK_INT(kinds_verbs(&del, v, 1), 3);
    TEST_CHECK_STR(v[0], "get");
    /* the walk reads reconciling owners and the pod, not a CronJob */
    TEST_CHECK_INT(kinds_walk_perms(kinds_find(NULL, "apps/v1", "ReplicaSet"), p, 8), 1);
    TEST_CHECK_INT(kinds_walk_perms(kinds_find(NULL, "v1", "Pod"), p, 8), 1);
    TEST_CHECK_INT(kinds_walk_perms(kinds_find(NULL, "batch/v1", "CronJob"), p, 8), 0);
}

TEST(test_no_kinds_section)
{
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(load("", &rs, &errs), 0);
    TEST_CHECK(rs.kinds != NULL);
    TEST_CHECK_INT(kinds_user_count(rs.kinds), 0);
    TEST_CHECK_INT(kinds_count(rs.kinds), kinds_count(NULL));
    TEST_CHECK(kinds_find(rs.kinds, "apps/v1", "StatefulSet") ==
               kinds_find(NULL, "apps/v1", "StatefulSet"));
    TEST_CHECK_INT(rs.nnotes, 0);
    rules_free(&rs);
    rules_errors_free(&errs);
}

TEST(test_user_rows)
{
    struct ruleset rs;
    struct rules_errors errs = {0};
    const char *k = "kinds:\n"
                    "- apiVersion: example.com/v1\n"
                    "  kind: Workspace\n"
                    "  reconciles: true\n"
                    "  actions:\n"
                    "    suspend: {method: patch, patch: '{\"spec\": {\"paused\": true}}',\n"
                    "              unpatch: '{\"spec\":{\"paused\":null}}'}\n"
                    "    scaleToZero: {method: annotate, key: example.com/stop, value: 'yes'}\n"
                    "    delete: {method: delete}\n"
                    "- apiVersion: apps/v1\n"
                    "  kind: StatefulSet\n"
                    "  reconciles: true\n"
                    "  actions:\n"
                    "    delete: {method: delete}\n"
                    "- apiVersion: example.org/v1beta1\n"
                    "  kind: Schedule\n"
                    "  reconciles: false\n";
    TEST_CHECK_INT(load(k, &rs, &errs), 0);
    for (size_t i = 0; i < errs.n; i++)
        fprintf(stderr, "%s\n", errs.msg[i]);
    if (!rs.kinds) {
        rules_errors_free(&errs);
        return;
    }
    TEST_CHECK_INT(kinds_user_count(rs.kinds), 3);
    /* the StatefulSet row replaces the built-in one: one fewer built-in row follows */
    TEST_CHECK_INT(kinds_count(rs.kinds), 3 + kinds_count(NULL) - 1);
    const struct kind_def *ws = kinds_find(rs.kinds, "example.com/v2", "Workspace");
    TEST_CHECK(ws && ws == kinds_at(rs.kinds, 0));
    if (ws) {
        TEST_CHECK(ws->reconciles);
        TEST_CHECK_STR(ws->version, "v1");
        TEST_CHECK_STR(ws->source, "k.yaml:4:3");
        TEST_CHECK_INT(ws->ways[ACTION_SUSPEND].method, KIND_PATCH);
        /* stored compact, as it is sent */
        TEST_CHECK_STR(ws->ways[ACTION_SUSPEND].patch, "{\"spec\":{\"paused\":true}}");
        TEST_CHECK_STR(ws->ways[ACTION_SUSPEND].unpatch, "{\"spec\":{\"paused\":null}}");
        TEST_CHECK_INT(ws->ways[ACTION_SCALE_TO_ZERO].method, KIND_ANNOTATE);
        TEST_CHECK_STR(ws->ways[ACTION_SCALE_TO_ZERO].key, "example.com/stop");
        TEST_CHECK_STR(ws->ways[ACTION_SCALE_TO_ZERO].value, "yes");
        TEST_CHECK_INT(ws->ways[ACTION_EVICT].method, KIND_NONE);
    }
    const struct kind_def *sts = kinds_find(rs.kinds, "apps/v1", "StatefulSet");
    TEST_CHECK(sts && sts != kinds_find(NULL, "apps/v1", "StatefulSet"));
    TEST_CHECK(sts && sts->ways[ACTION_SCALE_TO_ZERO].method == KIND_NONE);
    TEST_CHECK(kinds_find(rs.kinds, "apps/v1", "Deployment") ==
               kinds_find(NULL, "apps/v1", "Deployment"));
    const struct kind_def *sch = kinds_find(rs.kinds, "example.org/v1", "Schedule");
    TEST_CHECK(sch && !sch->reconciles && sch->ways[ACTION_DELETE].method == KIND_NONE);
    TEST_CHECK_INT(rs.nnotes, 1);
    if (rs.nnotes)
        TEST_CHECK_STR(rs.notes[0], "k.yaml:12:3: note: kind 'apps/StatefulSet' replaces the "
                                    "built-in row (docs/workload-kinds.md#statefulset): only the "
                                    "actions given here apply");
    /* kinds_at walks every row once */
    size_t seen_sts = 0;
    for (size_t i = 0; i < kinds_count(rs.kinds); i++)
        seen_sts += strcmp(kinds_at(rs.kinds, i)->kind, "StatefulSet") == 0;
    TEST_CHECK_INT(seen_sts, 1);
    TEST_CHECK(kinds_at(rs.kinds, kinds_count(rs.kinds)) == NULL);
    rules_free(&rs);
    rules_errors_free(&errs);
}

/* A file with errors keeps nothing and reports each at its position. */
TEST(test_user_rows_errors)
{
    struct ruleset rs;
    struct rules_errors errs = {0};
    const char *k = "kinds:\n"
                    "- apiVersion: example.com/v1\n"
                    "  kind: Workspace\n"
                    "  reconciles: true\n"
                    "- apiVersion: example.com/v2\n"
                    "  kind: Workspace\n"
                    "  reconciles: true\n"
                    "  actions:\n"
                    "    suspend: {method: patch, patch: '{\"spec\":{\"a\":1}}'}\n";
    TEST_CHECK_INT(load(k, &rs, &errs), -1);
    TEST_CHECK(rs.kinds == NULL);
    TEST_CHECK_INT(errs.n, 1);
    if (errs.n == 1)
        TEST_CHECK_STR(errs.msg[0], "k.yaml:11:14: missing required key 'unpatch' in 'suspend' "
                                    "(method patch needs 'patch' and the 'unpatch' that undoes "
                                    "it)");
    rules_errors_free(&errs);

    k = "kinds:\n"
        "- apiVersion: example.com/v1\n"
        "  kind: Workspace\n"
        "  reconciles: true\n"
        "- apiVersion: example.com/v2\n"
        "  kind: Workspace\n"
        "  reconciles: false\n";
    TEST_CHECK_INT(load(k, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    if (errs.n == 1)
        TEST_CHECK_STR(errs.msg[0],
                       "k.yaml:7:3: duplicate kind 'example.com/Workspace' (first at 4:3)");
    rules_errors_free(&errs);

    TEST_CHECK_INT(load("kinds: {}\n", &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    if (errs.n == 1)
        TEST_CHECK_STR(errs.msg[0], "k.yaml:3:8: 'kinds' must be a sequence, got mapping");
    rules_errors_free(&errs);
}

TEST(test_names)
{
    TEST_CHECK(dns_subdomain("kubeflow.org", 12));
    TEST_CHECK(dns_subdomain("apps", 4));
    TEST_CHECK(!dns_subdomain("Apps", 4));
    TEST_CHECK(!dns_subdomain("a..b", 4));
    TEST_CHECK(!dns_subdomain("-a.b", 4));
    TEST_CHECK(!dns_subdomain("a-.b", 4));
    TEST_CHECK(!dns_subdomain("a.b.", 4));
    TEST_CHECK(api_version_ok("v1") && api_version_ok("v1beta1") && api_version_ok("v2alpha12"));
    TEST_CHECK(!api_version_ok("v0") && !api_version_ok("v1gamma1") && !api_version_ok("v1beta") &&
               !api_version_ok("1") && !api_version_ok("v1beta0"));
    TEST_CHECK(annotation_key_ok("kubeflow-resource-stopped"));
    TEST_CHECK(annotation_key_ok("serving.kserve.io/stop"));
    TEST_CHECK(!annotation_key_ok("serving.kserve.io/"));
    TEST_CHECK(!annotation_key_ok("/stop"));
    TEST_CHECK(!annotation_key_ok("Serving.io/stop"));
    TEST_CHECK(!annotation_key_ok("stop-"));
    TEST_CHECK(!annotation_key_ok("a/b/c"));
    TEST_CHECK_STR(kinds_method_name(KIND_ANNOTATE), "annotate");
    TEST_CHECK_STR(kinds_method_name(KIND_NONE), "none");
}

int main(void)
{
    RUN(test_builtin_find);
    RUN(test_builtin_rows_consistent);
    RUN(test_is_stopped_scale);
    RUN(test_is_stopped_patch);
    RUN(test_is_stopped_annotate);
    RUN(test_perms);
    RUN(test_no_kinds_section);
    RUN(test_user_rows);
    RUN(test_user_rows_errors);
    RUN(test_names);
    return test_done();
}
