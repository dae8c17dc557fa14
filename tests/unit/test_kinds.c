/*
 * Tests for the workload-kinds table (enforcer/kinds.c): look-ups by group and kind, the
 * built-in rows' ways, recognising a stopped object, the permissions of each way, user rows
 * from a rules file's `kinds:` section (through rules_load_buffer, as `check` and `run` load
 * them), and the RBAC manifest against the built-in rows. Run from the repository root.
 */
#include "kinds.c"

#include "file.h"
#include "rules.h"
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
    /* a Pod reconciles: LeaderWorkerSet's leader pod controls its worker StatefulSet */
    TEST_CHECK(pod && pod->reconciles && pod->ways[ACTION_EVICT].method == KIND_EVICT &&
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

/* The custom-resource rows, as docs/workload-kinds.md states them. */
TEST(test_builtin_custom_resources)
{
    const struct kind_def *nb = kinds_find(NULL, "kubeflow.org/v1beta1", "Notebook");
    TEST_CHECK(nb && nb->reconciles);
    if (nb) {
        TEST_CHECK_STR(nb->version, "v1");
        for (int a = ACTION_SCALE_TO_ZERO; a <= ACTION_SUSPEND; a++) {
            TEST_CHECK_INT(nb->ways[a].method, KIND_ANNOTATE);
            TEST_CHECK_STR(nb->ways[a].key, "kubeflow-resource-stopped");
            TEST_CHECK(nb->ways[a].value == NULL);
        }
        TEST_CHECK_INT(nb->ways[ACTION_DELETE].method, KIND_DELETE);
    }
    const struct kind_def *isvc = kinds_find(NULL, "serving.kserve.io/v1beta1", "InferenceService");
    TEST_CHECK(isvc && isvc->reconciles && isvc->ways[ACTION_SUSPEND].method == KIND_ANNOTATE);
    if (isvc) {
        TEST_CHECK_STR(isvc->ways[ACTION_SCALE_TO_ZERO].key, "serving.kserve.io/stop");
        TEST_CHECK_STR(isvc->ways[ACTION_SCALE_TO_ZERO].value, "true");
    }
    /* Knative objects are climbed through and never acted on */
    static const char *const kn[] = {"Service", "Configuration", "Revision"};
    for (size_t i = 0; i < ARRAY_LEN(kn); i++) {
        const struct kind_def *d = kinds_find(NULL, "serving.knative.dev/v1", kn[i]);
        TEST_CHECK(d && d->reconciles);
        for (size_t a = 0; d && a < KINDS_NACTIONS; a++)
            TEST_CHECK_INT(d->ways[a].method, KIND_NONE);
    }
    /* delete only: AIMService (both groups), KaiwoJob, KaiwoService */
    static const char *const del_only[][2] = {{"aim.eai.amd.com/v1alpha1", "AIMService"},
                                              {"aim.silogen.ai/v1alpha1", "AIMService"},
                                              {"kaiwo.silogen.ai/v1alpha1", "KaiwoJob"},
                                              {"kaiwo.silogen.ai/v1alpha1", "KaiwoService"}};
    for (size_t i = 0; i < ARRAY_LEN(del_only); i++) {
        const struct kind_def *d = kinds_find(NULL, del_only[i][0], del_only[i][1]);
        TEST_CHECK(d && d->reconciles);
        for (size_t a = 0; d && a < KINDS_NACTIONS; a++)
            TEST_CHECK_INT(d->ways[a].method, a == ACTION_DELETE ? KIND_DELETE : KIND_NONE);
    }
    /* spec.suspend kinds: suspend only, never scaleToZero */
    static const char *const susp[][2] = {{"ray.io/v1", "RayCluster"},
                                          {"ray.io/v1", "RayJob"},
                                          {"ray.io/v1", "RayService"},
                                          {"jobset.x-k8s.io/v1alpha2", "JobSet"},
                                          {"trainer.kubeflow.org/v1alpha1", "TrainJob"}};
    for (size_t i = 0; i < ARRAY_LEN(susp); i++) {
        const struct kind_def *d = kinds_find(NULL, susp[i][0], susp[i][1]);
        TEST_CHECK(d && d->reconciles && d->ways[ACTION_SCALE_TO_ZERO].method == KIND_NONE &&
                   d->ways[ACTION_DELETE].method == KIND_DELETE);
        if (d)
            TEST_CHECK_STR(d->ways[ACTION_SUSPEND].patch, SUSPEND_PATCH);
    }
    const struct kind_def *ptj = kinds_find(NULL, "kubeflow.org/v1", "PyTorchJob");
    TEST_CHECK(ptj && ptj->ways[ACTION_SCALE_TO_ZERO].method == KIND_NONE);
    if (ptj)
        TEST_CHECK_STR(ptj->ways[ACTION_SUSPEND].patch,
                       "{\"spec\":{\"runPolicy\":{\"suspend\":true}}}");
    /* kubeflow.org holds both Notebook and PyTorchJob: the kind tells them apart */
    TEST_CHECK(ptj != nb);
    const struct kind_def *lws = kinds_find(NULL, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet");
    TEST_CHECK(lws && lws->ways[ACTION_SCALE_TO_ZERO].method == KIND_SCALE &&
               lws->ways[ACTION_SUSPEND].method == KIND_NONE);
    const struct kind_def *rj = kinds_find(NULL, "ray.io/v1", "RayJob");
    TEST_CHECK(rj && rj->ways[ACTION_SUSPEND].requires != NULL);
}

TEST(test_can_act)
{
    const struct kind_def *rj = kinds_find(NULL, "ray.io/v1", "RayJob");
    if (!rj) {
        TEST_CHECK(rj != NULL);
        return;
    }
    const struct kind_way *w = &rj->ways[ACTION_SUSPEND];
    char why[256] = "";
#define CAN(j) kinds_can_act(w, j, strlen(j), why, sizeof(why))
    TEST_CHECK_INT(CAN("{\"spec\":{\"shutdownAfterJobFinishes\":true},"
                       "\"status\":{\"jobDeploymentStatus\":\"Running\"}}"),
                   1);
    TEST_CHECK_INT(CAN("{\"spec\":{},\"status\":{\"jobDeploymentStatus\":\"Running\"}}"), 0);
    TEST_CHECK_STR(why, "spec.shutdownAfterJobFinishes must be true");
    TEST_CHECK_INT(CAN("{\"spec\":{\"shutdownAfterJobFinishes\":true,\"clusterSelector\":"
                       "{\"ray.io/cluster\":\"c\"}},"
                       "\"status\":{\"jobDeploymentStatus\":\"Running\"}}"),
                   0);
    TEST_CHECK_STR(why, "spec.clusterSelector must be absent");
    TEST_CHECK_INT(CAN("{\"spec\":{\"shutdownAfterJobFinishes\":true},"
                       "\"status\":{\"jobDeploymentStatus\":\"Complete\"}}"),
                   0);
    TEST_CHECK_STR(why, "status.jobDeploymentStatus must be \"Running\"");
    TEST_CHECK_INT(CAN("{\"spec\":"), -1);
    TEST_CHECK_INT(CAN("[1]"), -1);
#undef CAN
    /* no requires: always */
    const struct kind_def *js = kinds_find(NULL, "jobset.x-k8s.io/v1alpha2", "JobSet");
    TEST_CHECK(js && kinds_can_act(&js->ways[ACTION_SUSPEND], "{}", 2, why, sizeof(why)) == 1);
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
                    "  kind: Pool\n"
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

    /* a duplicate is found even when the first row has an error of its own */
    k = "kinds:\n"
        "- {apiVersion: example.com/v1, kind: Workspace, reconciles: maybe}\n"
        "- {apiVersion: example.com/v1, kind: Workspace, reconciles: true}\n";
    TEST_CHECK_INT(load(k, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 2);
    if (errs.n == 2) {
        TEST_CHECK_STR(errs.msg[0], "k.yaml:4:61: 'reconciles' must be true or false, got string");
        TEST_CHECK_STR(errs.msg[1],
                       "k.yaml:5:3: duplicate kind 'example.com/Workspace' (first at 4:3)");
    }
    rules_errors_free(&errs);

    /* requires is kept compact, as kinds_can_act reads it */
    k = "kinds:\n"
        "- apiVersion: v1\n"
        "  kind: Pod\n"
        "  reconciles: true\n"
        "  actions:\n"
        "    delete: {method: delete, requires: '{ \"status\": {\"phase\": \"Running\"} }'}\n";
    TEST_CHECK_INT(load(k, &rs, &errs), 0);
    const struct kind_def *pod = rs.kinds ? kinds_find(rs.kinds, "v1", "Pod") : NULL;
    TEST_CHECK(pod && pod->ways[ACTION_EVICT].method == KIND_NONE);
    if (pod) {
        TEST_CHECK_STR(pod->ways[ACTION_DELETE].requires, "{\"status\":{\"phase\":\"Running\"}}");
        char why[128];
        const char *pending = "{\"status\":{\"phase\":\"Pending\"}}";
        TEST_CHECK_INT(
            kinds_can_act(&pod->ways[ACTION_DELETE], pending, strlen(pending), why, sizeof(why)),
            0);
        TEST_CHECK_STR(why, "status.phase must be \"Running\"");
    }
    rules_free(&rs);
    rules_errors_free(&errs);

    TEST_CHECK_INT(load("kinds: {}\n", &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    if (errs.n == 1)
        TEST_CHECK_STR(errs.msg[0], "k.yaml:3:8: 'kinds' must be a sequence, got mapping");
    rules_errors_free(&errs);
}

/* `check` prints a note for each replaced built-in row, and the file still passes. */
TEST(test_check_prints_notes)
{
    char *const path[] = {(char *)"tests/rules/valid/kinds-replace.yaml"};
    FILE *out = tmpfile();
    if (!out) {
        TEST_CHECK(out != NULL);
        return;
    }
    TEST_CHECK_INT(rules_check_files(path, 1, out), 0);
    rewind(out);
    char line[512];
    size_t notes = 0, ok = 0;
    while (fgets(line, sizeof(line), out)) {
        notes += strstr(line, ": note: kind '") != NULL;
        ok += strstr(line, ": OK (1 rules") != NULL;
    }
    fclose(out);
    TEST_CHECK_INT(notes, 3);
    TEST_CHECK_INT(ok, 1);
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

/* docs/workload-kinds.md: each row's anchor is a heading, and §1's table lists it. */
TEST(test_doc_lists_every_row)
{
    size_t len;
    char why[128];
    char *doc = file_read("docs/workload-kinds.md", 1u << 20, &len, why, sizeof(why));
    if (!doc) {
        TEST_CHECK(doc != NULL);
        return;
    }
    for (size_t i = 0; i < kinds_count(NULL); i++) {
        const struct kind_def *d = kinds_at(NULL, i);
        const char *anchor = strchr(d->source, '#') + 1;
        bool heading = false, listed = false;
        for (char *line = doc; line && *line;) {
            char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) : strlen(line);
            char *l = xstrndup(line, n);
            if (str_has_prefix(l, "### ")) {
                /* GitHub's anchor: lower case, spaces to dashes */
                for (char *c = l + 4; *c; c++)
                    *c = *c == ' ' ? '-' : (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
                heading |= strcmp(l + 4, anchor) == 0;
            }
            if (str_has_prefix(l, "| [") && strstr(l, d->kind)) {
                char *gv = d->group[0] ? xasprintf("`%s/%s`", d->group, d->version)
                                       : xasprintf("core `%s`", d->version);
                char *link = xasprintf("](#%s)", anchor);
                listed |= strstr(l, gv) && strstr(l, link);
                free(gv);
                free(link);
            }
            free(l);
            line = nl ? nl + 1 : NULL;
        }
        if (!heading || !listed)
            fprintf(stderr, "docs/workload-kinds.md: %s %s/%s: heading %d, in the table %d\n",
                    d->kind, d->group, d->version, heading, listed);
        TEST_CHECK(heading && listed);
    }
    free(doc);
}

/* The rows of issue 24 §3, as docs/workload-kinds.md states them. */
TEST(test_builtin_platform_rows)
{
    /* LLMInferenceService: storage v1alpha2, v1alpha1 served too; KServe's stop annotation */
    const struct kind_def *llm =
        kinds_find(NULL, "serving.kserve.io/v1alpha1", "LLMInferenceService");
    TEST_CHECK(llm && llm->reconciles &&
               llm == kinds_find(NULL, "serving.kserve.io/v1alpha2", "LLMInferenceService"));
    if (llm) {
        TEST_CHECK_STR(llm->version, "v1alpha2");
        for (int a = ACTION_SCALE_TO_ZERO; a <= ACTION_SUSPEND; a++) {
            TEST_CHECK_INT(llm->ways[a].method, KIND_ANNOTATE);
            TEST_CHECK_STR(llm->ways[a].key, "serving.kserve.io/stop");
            TEST_CHECK_STR(llm->ways[a].value, "true");
        }
        TEST_CHECK_INT(llm->ways[ACTION_DELETE].method, KIND_DELETE);
    }
    /* the training operator's jobs, and MPIJob at both versions: spec.runPolicy.suspend */
    static const char *const runpolicy[][2] = {
        {"kubeflow.org/v1", "PyTorchJob"}, {"kubeflow.org/v1", "TFJob"},
        {"kubeflow.org/v1", "XGBoostJob"}, {"kubeflow.org/v1", "PaddleJob"},
        {"kubeflow.org/v1", "JAXJob"},     {"kubeflow.org/v1", "MPIJob"},
        {"kubeflow.org/v2beta1", "MPIJob"}};
    for (size_t i = 0; i < ARRAY_LEN(runpolicy); i++) {
        const struct kind_def *d = kinds_find(NULL, runpolicy[i][0], runpolicy[i][1]);
        TEST_CHECK(d && d->reconciles);
        if (!d)
            continue;
        TEST_CHECK_INT(d->ways[ACTION_SUSPEND].method, KIND_PATCH);
        TEST_CHECK_STR(d->ways[ACTION_SUSPEND].patch,
                       "{\"spec\":{\"runPolicy\":{\"suspend\":true}}}");
        TEST_CHECK_STR(d->ways[ACTION_SUSPEND].unpatch,
                       "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}");
        TEST_CHECK_INT(d->ways[ACTION_SCALE_TO_ZERO].method, KIND_NONE);
        TEST_CHECK_INT(d->ways[ACTION_DELETE].method, KIND_DELETE);
    }
    /* one MPIJob row, named at v2beta1 so that restore finds mpi-operator's in any cluster */
    const struct kind_def *mpi = kinds_find(NULL, "kubeflow.org/v1", "MPIJob");
    TEST_CHECK(mpi && strcmp(mpi->version, "v2beta1") == 0);
    const struct kind_def *aw = kinds_find(NULL, "workload.codeflare.dev/v1beta2", "AppWrapper");
    TEST_CHECK(aw && aw->reconciles && aw->ways[ACTION_SUSPEND].method == KIND_PATCH &&
               strcmp(aw->ways[ACTION_SUSPEND].patch, SUSPEND_PATCH) == 0);
    /* Argo: a Workflow is deleted or kept, never "suspended" (its pods would go on running) */
    const struct kind_def *wf = kinds_find(NULL, "argoproj.io/v1alpha1", "Workflow");
    TEST_CHECK(wf && wf->reconciles && wf->ways[ACTION_DELETE].method == KIND_DELETE &&
               wf->ways[ACTION_SUSPEND].method == KIND_NONE &&
               wf->ways[ACTION_SCALE_TO_ZERO].method == KIND_NONE);
    const struct kind_def *cwf = kinds_find(NULL, "argoproj.io/v1alpha1", "CronWorkflow");
    TEST_CHECK(cwf && !cwf->reconciles);
    for (size_t a = 0; cwf && a < KINDS_NACTIONS; a++)
        TEST_CHECK_INT(cwf->ways[a].method, KIND_NONE);
    /* Volcano Job: a command, told apart from batch/v1 Job by its group */
    const struct kind_def *vj = kinds_find(NULL, "batch.volcano.sh/v1alpha1", "Job");
    TEST_CHECK(vj && vj != kinds_find(NULL, "batch/v1", "Job") && vj->reconciles);
    if (vj) {
        const struct kind_way *w = &vj->ways[ACTION_SUSPEND];
        TEST_CHECK_INT(w->method, KIND_COMMAND);
        TEST_CHECK_STR(w->command.group, "bus.volcano.sh");
        TEST_CHECK_STR(w->command.stop, "AbortJob");
        TEST_CHECK_STR(w->command.undo, "ResumeJob");
        TEST_CHECK_STR(kinds_method_name(w->method), "command");
    }
}

/* A command way: recognition from the object's status, the command's body, its permissions. */
TEST(test_command_way)
{
    const struct kind_def *vj = kinds_find(NULL, "batch.volcano.sh/v1alpha1", "Job");
    TEST_CHECK(vj != NULL);
    if (!vj)
        return;
    const struct kind_way *w = &vj->ways[ACTION_SUSPEND];
    char err[128];
    static const struct {
        const char *json;
        int stopped;
    } objs[] = {
        {"{\"status\":{\"state\":{\"phase\":\"Aborted\"}}}", 1},
        {"{\"status\":{\"state\":{\"phase\":\"Aborting\"}}}", 1},
        {"{\"status\":{\"state\":{\"phase\":\"Running\"}}}", 0},
        {"{\"status\":{\"state\":{\"phase\":\"Restarting\"}}}", 0},
        {"{\"status\":{\"state\":{}}}", 0},
        {"{\"spec\":{}}", 0},
        {"[1]", -1},
        {"{\"status\":", -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(objs); i++)
        TEST_CHECK_INT(kinds_is_stopped(w, objs[i].json, strlen(objs[i].json), err, sizeof(err)),
                       objs[i].stopped);
    /* Volcano takes a command in any phase but aborts only from Pending or Running: a command
       sent from Restarting would be gone with the job not stopped, so it must run */
    static const char run[] = "{\"status\":{\"state\":{\"phase\":\"Running\"}}}";
    static const char restarting[] = "{\"status\":{\"state\":{\"phase\":\"Restarting\"}}}";
    TEST_CHECK_INT(kinds_can_act(w, run, strlen(run), err, sizeof(err)), 1);
    TEST_CHECK_INT(kinds_can_act(w, restarting, strlen(restarting), err, sizeof(err)), 0);
    TEST_CHECK_STR(err, "status.state.phase must be \"Running\"");
    char *name = NULL;
    char *body = kinds_command_body(w, "batch.volcano.sh/v1alpha1", "Job", "ml", "train", "u-1",
                                    false, &name);
    TEST_CHECK(body != NULL);
    TEST_CHECK_STR(name, "train-gpureclaim-abortjob");
    json_object *o = body ? json_tokener_parse(body) : NULL, *v;
    TEST_CHECK(o != NULL);
    if (o) {
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(o, "apiVersion")),
                       "bus.volcano.sh/v1alpha1");
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(o, "kind")), "Command");
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(o, "action")), "AbortJob");
        v = json_object_object_get(o, "target");
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(v, "uid")), "u-1");
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(v, "kind")), "Job");
        TEST_CHECK_STR(json_object_get_string(json_object_object_get(v, "apiVersion")),
                       "batch.volcano.sh/v1alpha1");
        TEST_CHECK(json_object_get_boolean(json_object_object_get(v, "controller")));
        v = json_object_object_get(json_object_object_get(o, "metadata"), "ownerReferences");
        TEST_CHECK(json_object_array_length(v) == 1);
        TEST_CHECK_STR(
            json_object_get_string(json_object_object_get(json_object_array_get_idx(v, 0), "name")),
            "train");
        json_object_put(o);
    }
    free(body);
    free(name);
    body = kinds_command_body(w, "batch.volcano.sh/v1alpha1", "Job", "ml", "train", "u-1", true,
                              &name);
    TEST_CHECK(body && strstr(body, "\"action\":\"ResumeJob\""));
    TEST_CHECK_STR(name, "train-gpureclaim-resumejob");
    free(body);
    free(name);
    /* a long name is cut to keep the command's within 253 characters */
    char longname[254];
    memset(longname, 'a', 253);
    longname[253] = '\0';
    body = kinds_command_body(w, "batch.volcano.sh/v1alpha1", "Job", "ml", longname, "u", false,
                              &name);
    TEST_CHECK(name && strlen(name) == 253 && strcmp(name + 253 - 20, "-gpureclaim-abortjob") == 0);
    free(body);
    free(name);
    /* not a command way, or no uid: nothing */
    TEST_CHECK(kinds_command_body(&vj->ways[ACTION_DELETE], "batch.volcano.sh/v1alpha1", "Job",
                                  "ml", "train", "u", false, &name) == NULL &&
               name == NULL);
    TEST_CHECK(kinds_command_body(w, "batch.volcano.sh/v1alpha1", "Job", "ml", "train", NULL, false,
                                  &name) == NULL);
    /* permissions: the Job's get and patch (notice), and create on the commands */
    struct kind_perm p[8];
    size_t n = kinds_perms(w, p, ARRAY_LEN(p));
    TEST_CHECK_INT(n, 3);
    if (n == 3) {
        TEST_CHECK(!p[0].resource && strcmp(p[0].verb, "get") == 0);
        TEST_CHECK(!p[1].resource && strcmp(p[1].verb, "patch") == 0);
        TEST_CHECK_STR(p[2].group, "bus.volcano.sh");
        TEST_CHECK_STR(p[2].resource, "commands");
        TEST_CHECK_STR(p[2].verb, "create");
        TEST_CHECK(p[2].subresource == NULL);
    }
    const char *verbs[4];
    TEST_CHECK_INT(kinds_verbs(w, verbs, ARRAY_LEN(verbs)), 2);
    /* a user row cannot name the method: it is built in only */
    struct ruleset rs = {0};
    struct rules_errors errs = {0};
    TEST_CHECK(load("kinds:\n- apiVersion: example.com/v1\n  kind: Thing\n  reconciles: true\n"
                    "  actions:\n    suspend: {method: command}\n",
                    &rs, &errs) != 0);
    TEST_CHECK(errs.n > 0 && strstr(errs.msg[0], "unknown method 'command'"));
    rules_free(&rs);
    rules_errors_free(&errs);
}

/* ---- the RBAC manifest against the built-in rows ------------------------------------------- */

#define RBAC_FILE "deploy/kubernetes/enforcer/rbac.yaml"
#define RBAC_ROLE "gpureclaim-enforcer"

/* A set of permissions, each "GROUP RESOURCE[/SUB] VERB" (a hundred at most: a list does). */
struct perms {
    char **v;
    size_t n;
};

static bool perms_has(const struct perms *set, const char *k)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->v[i], k) == 0)
            return true;
    return false;
}

static void perm_put(struct perms *set, const char *group, const char *resource, const char *sub,
                     const char *verb)
{
    char *k = xasprintf("%s %s%s%s %s", group[0] ? group : "\"\"", resource, sub ? "/" : "",
                        sub ? sub : "", verb);
    if (perms_has(set, k)) {
        free(k);
        return;
    }
    set->v = xgrow(set->v, set->n, sizeof(*set->v));
    set->v[set->n++] = k;
}

static void perms_free(struct perms *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i]);
    free(set->v);
    memset(set, 0, sizeof(*set));
}

/* How many of `from` are not in `in`; each is printed when `what` is set. */
static size_t perms_missing(const struct perms *from, const struct perms *in, const char *what)
{
    size_t n = 0;
    for (size_t i = 0; i < from->n; i++)
        if (!perms_has(in, from->v[i])) {
            if (what)
                fprintf(stderr, "%s: %s\n", what, from->v[i]);
            n++;
        }
    return n;
}

/*
 * The permissions the enforcer needs that are not a kind's: list pods (pending pods for
 * --kube.confirm-pressure), create events (notices and results), list and patch Kueue
 * Workloads (deactivating a Kueue-admitted Job). The leader-election Lease is a Role of its own.
 */
static const char *const rbac_extra[][3] = {
    {"", "pods", "list"},
    {"", "events", "create"},
    {"kueue.x-k8s.io", "workloads", "list"},
    {"kueue.x-k8s.io", "workloads", "patch"},
};

/* What the built-in rows need: the walk's get, and every way's permissions. */
static void rbac_expected(struct perms *set)
{
    for (size_t i = 0; i < kinds_count(NULL); i++) {
        const struct kind_def *d = kinds_at(NULL, i);
        struct kind_perm p[8];
        size_t n = kinds_walk_perms(d, p, ARRAY_LEN(p));
        for (size_t j = 0; j < n; j++)
            perm_put(set, d->group, d->resource, p[j].subresource, p[j].verb);
        /* An eviction's notice and its record go on the root owner, any kind the walk
           reaches (perm.c, needs_rule): patch on each of them. */
        if (n > 0)
            perm_put(set, d->group, d->resource, NULL, "patch");
        for (size_t a = 0; a < KINDS_NACTIONS; a++) {
            n = kinds_perms(&d->ways[a], p, ARRAY_LEN(p));
            for (size_t j = 0; j < n && j < ARRAY_LEN(p); j++)
                perm_put(set, p[j].resource ? p[j].group : d->group,
                         p[j].resource ? p[j].resource : d->resource, p[j].subresource, p[j].verb);
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(rbac_extra); i++)
        perm_put(set, rbac_extra[i][0], rbac_extra[i][1], NULL, rbac_extra[i][2]);
}

/* The ClusterRole's rules, expanded to single permissions; -1 when it cannot be read. */
static int rbac_manifest(const char *path, struct perms *set)
{
    size_t len;
    char why[128];
    char *buf = file_read(path, 1u << 20, &len, why, sizeof(why));
    if (!buf) {
        fprintf(stderr, "cannot read '%s': %s\n", path, why);
        return -1;
    }
    int found = 0;
    /* ydom takes one document: split the stream at its "---" lines */
    for (char *doc = buf; doc && *doc;) {
        char *sep = strstr(doc, "\n---\n");
        size_t dlen = sep ? (size_t)(sep - doc) + 1 : strlen(doc);
        struct ydom_doc yd;
        if (ydom_load(doc, dlen, &yd) == 0 && yd.root) {
            const struct ydom_node *kind = ydom_map_get(yd.root, "kind");
            const struct ydom_node *meta = ydom_map_get(yd.root, "metadata");
            const struct ydom_node *name = meta ? ydom_map_get(meta, "name") : NULL;
            const struct ydom_node *rules = ydom_map_get(yd.root, "rules");
            if (kind && strcmp(kind->str, "ClusterRole") == 0 && name &&
                strcmp(name->str, RBAC_ROLE) == 0 && rules) {
                found++;
                for (size_t r = 0; r < rules->nitems; r++) {
                    const struct ydom_node *g = ydom_map_get(rules->items[r], "apiGroups");
                    const struct ydom_node *res = ydom_map_get(rules->items[r], "resources");
                    const struct ydom_node *v = ydom_map_get(rules->items[r], "verbs");
                    for (size_t a = 0; g && a < g->nitems; a++)
                        for (size_t b = 0; res && b < res->nitems; b++)
                            for (size_t c = 0; v && c < v->nitems; c++)
                                perm_put(set, g->items[a]->str, res->items[b]->str, NULL,
                                         v->items[c]->str);
                }
            }
        }
        ydom_doc_free(&yd);
        doc = sep ? sep + 5 : NULL;
    }
    free(buf);
    return found == 1 ? 0 : -1;
}

TEST(test_rbac_manifest_matches_table)
{
    struct perms want = {0}, have = {0}, less = {0};
    rbac_expected(&want);
    TEST_CHECK_INT(rbac_manifest(RBAC_FILE, &have), 0);
    TEST_CHECK_INT(perms_missing(&want, &have, RBAC_FILE " lacks, and the kinds table needs"), 0);
    TEST_CHECK_INT(perms_missing(&have, &want, RBAC_FILE " grants, and nothing needs"), 0);
    /* the comparison can fail: a set without what the table needs is found short */
    perm_put(&less, "apps", "deployments", NULL, "get");
    TEST_CHECK(perms_missing(&want, &less, NULL) > 0);
    TEST_CHECK_INT(perms_missing(&less, &want, NULL), 0);
    perms_free(&want);
    perms_free(&have);
    perms_free(&less);
}

int main(void)
{
    RUN(test_builtin_find);
    RUN(test_builtin_rows_consistent);
    RUN(test_builtin_custom_resources);
    RUN(test_builtin_platform_rows);
    RUN(test_command_way);
    RUN(test_can_act);
    RUN(test_is_stopped_scale);
    RUN(test_is_stopped_patch);
    RUN(test_is_stopped_annotate);
    RUN(test_perms);
    RUN(test_no_kinds_section);
    RUN(test_user_rows);
    RUN(test_user_rows_errors);
    RUN(test_check_prints_notes);
    RUN(test_names);
    RUN(test_rbac_manifest_matches_table);
    RUN(test_doc_lists_every_row);
    return test_done();
}
