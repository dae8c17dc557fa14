/*
 * Tests of the pure half of the Kubernetes client (enforcer/kube_json.c) on canned JSON,
 * well-formed and malformed: the exact bytes of every request body, the parsers of objects,
 * lists, Scale, Status, Pending pods, Kueue Workloads, access reviews and discovery, and the
 * mapping of an HTTP answer to a kube_result.
 */
#include "kube_json.c"

#include "annot.h"
#include "kube_env.h"

/* ---- pure request bodies ----------------------------------------------------------------- */

/* A uid, names and values that need escaping in JSON: quote, backslash, newline, control. */
#define ODD      "a\"b\\c\nd\x01/\xc3\xa9"
#define ODD_JSON "a\\\"b\\\\c\\nd\\u0001/\xc3\xa9"

/* Exact bytes of every builder: kube.c sends these unchanged (tests/fakes/fake_kube checks). */
TEST(request_bodies_exact)
{
    struct kube_ref inv = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml", (char *)"web",
                           (char *)UID("0001")};
    struct kube_ref bare = {NULL, NULL, (char *)"ml", (char *)"p" ODD, NULL};
    struct kube_event ev_full = {&inv,      "web.17f", "ReclaimNotice",        "idle " ODD,
                                 "Warning", "Reclaim", "2026-11-24T11:00:00Z", "enf-0"};
    struct kube_event ev_min = {&bare,  "p.1", "R" ODD, NULL, NULL, NULL, "2026-11-24T11:00:00Z",
                                "i" ODD};
    struct {
        const char *what;
        char *got;
        const char *want;
    } cases[] = {
        {"annotate", kube_body_annotate(UID("0001"), ANNOT_NOTICE, "2026-11-24T12:00:00Z"),
         "{\"metadata\":{\"uid\":\"" UID("0001") "\",\"annotations\":{\"gpureclaim.io/"
                                                 "reclaim-notice\":\"2026-11-24T12:00:00Z\"}}}"},
        {"annotate escaped", kube_body_annotate(ODD, "k" ODD, ODD),
         "{\"metadata\":{\"uid\":\"" ODD_JSON "\",\"annotations\":{\"k" ODD_JSON "\":\"" ODD_JSON
         "\"}}}"},
        {"annotate remove", kube_body_annotate(UID("0001"), ANNOT_NOTICE, NULL),
         "{\"metadata\":{\"uid\":\"" UID("0001") "\",\"annotations\":{\"gpureclaim.io/"
                                                 "reclaim-notice\":null}}}"},
        {"annotate no uid", kube_body_annotate(NULL, "k", "v"),
         "{\"metadata\":{\"annotations\":{\"k\":\"v\"}}}"},
        {"scale to zero", kube_body_scale_zero(UID("0002")),
         "{\"metadata\":{\"uid\":\"" UID("0002") "\"},\"spec\":{\"replicas\":0}}"},
        {"scale escaped", kube_body_scale_zero(ODD),
         "{\"metadata\":{\"uid\":\"" ODD_JSON "\"},\"spec\":{\"replicas\":0}}"},
        {"suspend", kube_body_suspend(UID("0003")),
         "{\"metadata\":{\"uid\":\"" UID("0003") "\"},\"spec\":{\"suspend\":true}}"},
        {"deactivate", kube_body_deactivate(UID("0004")),
         "{\"metadata\":{\"uid\":\"" UID("0004") "\"},\"spec\":{\"active\":false}}"},
        {"eviction", kube_body_eviction("ml", "p1", UID("0005")),
         "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p1\","
         "\"namespace\":\"ml\"},\"deleteOptions\":{\"preconditions\":{\"uid\":\"" UID(
             "0005") "\"}}}"},
        {"eviction escaped", kube_body_eviction("n" ODD, "p" ODD, ODD),
         "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p" ODD_JSON
         "\",\"namespace\":\"n" ODD_JSON
         "\"},\"deleteOptions\":{\"preconditions\":{\"uid\":\"" ODD_JSON "\"}}}"},
        {"delete", kube_body_delete("Foreground", UID("0006")),
         "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"propagationPolicy\":\"Foreground\","
         "\"preconditions\":{\"uid\":\"" UID("0006") "\"}}"},
        {"delete escaped", kube_body_delete("Background", ODD),
         "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"propagationPolicy\":\"Background\","
         "\"preconditions\":{\"uid\":\"" ODD_JSON "\"}}"},
        {"event", kube_body_event(&ev_full),
         "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"web.17f\","
         "\"namespace\":\"ml\"},\"involvedObject\":{\"apiVersion\":\"apps/v1\",\"kind\":"
         "\"Deployment\",\"name\":\"web\",\"namespace\":\"ml\",\"uid\":\"" UID(
             "0001") "\"},"
                     "\"reason\":\"ReclaimNotice\",\"message\":\"idle " ODD_JSON
                     "\",\"type\":\"Warning\","
                     "\"source\":{\"component\":\"gpureclaim-enforcer\"},\"firstTimestamp\":"
                     "\"2026-11-24T11:00:00Z\",\"lastTimestamp\":\"2026-11-24T11:00:00Z\","
                     "\"count\":1,"
                     "\"reportingComponent\":\"gpureclaim.io/"
                     "enforcer\",\"reportingInstance\":\"enf-0\","
                     "\"action\":\"Reclaim\"}"},
        {"event defaults", kube_body_event(&ev_min),
         "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"p.1\",\"namespace\":"
         "\"ml\"},\"involvedObject\":{\"name\":\"p" ODD_JSON "\",\"namespace\":\"ml\"},"
         "\"reason\":\"R" ODD_JSON "\",\"message\":\"\",\"type\":\"Normal\",\"source\":"
         "{\"component\":\"gpureclaim-enforcer\"},\"firstTimestamp\":\"2026-11-24T11:00:00Z\","
         "\"lastTimestamp\":\"2026-11-24T11:00:00Z\",\"count\":1,\"reportingComponent\":"
         "\"gpureclaim.io/enforcer\",\"reportingInstance\":\"i" ODD_JSON "\"}"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        if (strcmp(cases[i].got, cases[i].want) != 0)
            fprintf(stderr, "  case '%s'\n", cases[i].what);
        TEST_CHECK_STR(cases[i].got, cases[i].want);
        free(cases[i].got);
    }
}

/*
 * Every body that changes or removes an object names its uid where the API checks it
 * (metadata.uid of a merge patch, preconditions.uid of DeleteOptions and of an Eviction's
 * deleteOptions): parsed back, not matched as text, so a moved or misspelt key fails.
 */
TEST(request_bodies_carry_uid)
{
    const char *uid = UID("00ff");
    struct {
        const char *what, *ptr;
        char *body;
    } cases[] = {
        {"annotate", "/metadata/uid", kube_body_annotate(uid, "k", "v")},
        {"annotate remove", "/metadata/uid", kube_body_annotate(uid, "k", NULL)},
        {"scale to zero", "/metadata/uid", kube_body_scale_zero(uid)},
        {"suspend", "/metadata/uid", kube_body_suspend(uid)},
        {"deactivate", "/metadata/uid", kube_body_deactivate(uid)},
        {"eviction", "/deleteOptions/preconditions/uid", kube_body_eviction("ml", "p", uid)},
        {"delete background", "/preconditions/uid", kube_body_delete("Background", uid)},
        {"delete orphan", "/preconditions/uid", kube_body_delete("Orphan", uid)},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        json_object *o = json_tokener_parse(cases[i].body);
        TEST_CHECK(o != NULL);
        if (!jeq(o, cases[i].ptr, uid))
            fprintf(stderr, "  case '%s': no uid at %s in %s\n", cases[i].what, cases[i].ptr,
                    cases[i].body);
        TEST_CHECK(jeq(o, cases[i].ptr, uid));
        json_object_put(o);
        free(cases[i].body);
    }
}

/* ---- pure parsers ------------------------------------------------------------------------ */

static const char pod_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w-0\",\"namespace\":\"ml\","
    "\"uid\":\"u-1\",\"creationTimestamp\":\"2026-03-02T09:15:00Z\",\"deletionTimestamp\":"
    "\"2026-03-02T10:00:00Z\",\"labels\":{\"app\":\"w\",\"kueue.x-k8s.io/managed\":\"true\"},"
    "\"annotations\":{\"a\":\"b\"},\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
    "\"Node\",\"name\":\"n\",\"uid\":\"u-n\"},{\"apiVersion\":\"apps/v1\",\"kind\":"
    "\"StatefulSet\",\"name\":\"w\",\"uid\":\"u-2\",\"controller\":true,"
    "\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":\"x\",\"fieldsV1\":{\"f:a\":"
    "{\"f:b\":{\"f:c\":{\"f:d\":{}}}}}}]},\"spec\":{\"containers\":[]},\"status\":{\"phase\":"
    "\"Running\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":"
    "\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\",\"message\":\"m\"}]}}";

TEST(parse_pod)
{
    struct kube_obj o;
    char err[256] = "";
    TEST_CHECK_INT(kube_parse_obj(pod_json, strlen(pod_json), &o, err, sizeof(err)), 0);
    TEST_CHECK_STR(o.ref.api_version, "v1");
    TEST_CHECK_STR(o.ref.kind, "Pod");
    TEST_CHECK_STR(o.ref.ns, "ml");
    TEST_CHECK_STR(o.ref.name, "w-0");
    TEST_CHECK_STR(o.ref.uid, "u-1");
    TEST_CHECK_STR(o.creation_timestamp, "2026-03-02T09:15:00Z");
    TEST_CHECK_STR(o.deletion_timestamp, "2026-03-02T10:00:00Z");
    TEST_CHECK_INT(o.nlabels, 2);
    TEST_CHECK_STR(kube_label(&o, "kueue.x-k8s.io/managed"), "true");
    TEST_CHECK(kube_label(&o, "missing") == NULL);
    TEST_CHECK_STR(kube_annotation(&o, "a"), "b");
    TEST_CHECK_INT(o.nowners, 2);
    const struct kube_owner_ref *c = kube_controller_ref(&o);
    TEST_CHECK(c && strcmp(c->kind, "StatefulSet") == 0 && strcmp(c->uid, "u-2") == 0);
    TEST_CHECK(!o.owners[0].controller);
    TEST_CHECK_STR(o.phase, "Running");
    TEST_CHECK_INT(o.nconditions, 2);
    TEST_CHECK_STR(o.conditions[1].reason, "ContainersNotReady");
    TEST_CHECK(o.conditions[0].reason == NULL);
    TEST_CHECK(!o.has_replicas);
    kube_obj_free(&o);

    const char dep[] = "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":4,\"suspend\":true}}";
    TEST_CHECK_INT(kube_parse_obj(dep, strlen(dep), &o, err, sizeof(err)), 0);
    TEST_CHECK(o.has_replicas && o.replicas == 4 && o.suspended);
    TEST_CHECK(o.ref.kind == NULL && o.ref.uid == NULL && o.nowners == 0);
    kube_obj_free(&o);
}

TEST(parse_malformed)
{
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"", "empty answer"},
        {"{\"metadata\":{\"name\":\"x\"}", "truncated JSON"},
        {"<html>502</html>", "invalid JSON"},
        {"[]", "not a JSON object"},
        {"{\"metadata\":{\"name\":\"x\"}} {}", "trailing data"},
        {"{\"kind\":\"Pod\"}", "'metadata' is missing"},
        {"{\"metadata\":[]}", "'metadata' is not a object"},
        {"{\"metadata\":{}}", "'metadata.name' is missing"},
        {"{\"metadata\":{\"name\":7}}", "'metadata.name' is not a string"},
        {"{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":1}}}", "'metadata.labels.a'"},
        {"{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
         "\"K\",\"name\":\"n\"}]}}",
         "'metadata.ownerReferences[].uid' is missing"},
        {"{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[1]}}", "ownerReferences[0]"},
        {"{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
         "\"K\",\"name\":\"n\",\"uid\":\"u\",\"controller\":\"yes\"}]}}",
         "controller' is not a boolean"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"replicas\":-1}}", "negative"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"replicas\":\"3\"}}", "'spec.replicas'"},
        {"{\"metadata\":{\"name\":\"x\"},\"status\":{\"conditions\":[{\"status\":\"True\"}]}}",
         "'status.conditions[].type' is missing"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct kube_obj o;
        char err[256] = "";
        int r = kube_parse_obj(cases[i].body, strlen(cases[i].body), &o, err, sizeof(err));
        if (r != -1 || !strstr(err, cases[i].msg))
            fprintf(stderr, "case %zu: r=%d err='%s'\n", i, r, err);
        TEST_CHECK_INT(r, -1);
        TEST_CHECK_CONTAINS(err, cases[i].msg);
        TEST_CHECK(o.ref.name == NULL && o.labels == NULL && o.owners == NULL);
    }

    /* Lists: items must be present and every item an object with a name. */
    struct kube_obj *items;
    size_t n;
    char err[256];
    const char ok[] = "{\"kind\":\"WorkloadList\",\"items\":[{\"metadata\":{\"name\":\"a\"}},"
                      "{\"metadata\":{\"name\":\"b\",\"uid\":\"u\"}}]}";
    TEST_CHECK_INT(kube_parse_list(ok, strlen(ok), &items, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 2);
    if (n == 2)
        TEST_CHECK_STR(items[1].ref.uid, "u");
    for (size_t i = 0; i < n; i++)
        kube_obj_free(&items[i]);
    free(items);
    const char *bad_lists[] = {"{}", "{\"items\":{}}", "{\"items\":[{\"metadata\":{}}]}",
                               "{\"items\":[{\"metadata\":{\"name\":\"a\"}},3]}"};
    for (size_t i = 0; i < ARRAY_LEN(bad_lists); i++) {
        TEST_CHECK_INT(
            kube_parse_list(bad_lists[i], strlen(bad_lists[i]), &items, &n, err, sizeof(err)), -1);
        TEST_CHECK(items == NULL && n == 0);
    }
}

TEST(parse_scale)
{
    static const struct {
        const char *body;
        int ret;
        int64_t replicas;
    } cases[] = {
        {"{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\",\"spec\":{\"replicas\":3},"
         "\"status\":{\"replicas\":3,\"selector\":\"app=x\"}}",
         0, 3},
        /* autoscaling/v1 omits replicas: 0 (omitempty). */
        {"{\"kind\":\"Scale\",\"spec\":{},\"status\":{}}", 0, 0},
        {"{\"kind\":\"Scale\"}", 0, 0},
        {"{\"kind\":\"Deployment\",\"spec\":{\"replicas\":3}}", -1, 0},
        {"{\"kind\":\"Scale\",\"spec\":{\"replicas\":-2}}", -1, 0},
        {"{\"kind\":\"Scale\",\"spec\":{\"replicas\":1.5}}", -1, 0},
        {"{\"kind\":\"Scale\",\"spec\":[]}", -1, 0},
        {"null", -1, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int64_t n = 99;
        char err[256] = "";
        TEST_CHECK_INT(kube_parse_scale(cases[i].body, strlen(cases[i].body), &n, err, sizeof(err)),
                       cases[i].ret);
        TEST_CHECK_INT(n, cases[i].replicas);
        if (cases[i].ret < 0)
            TEST_CHECK(err[0] != '\0');
    }
}

TEST(classify)
{
    static const char pdb[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\","
        "\"reason\":\"TooManyRequests\",\"details\":{\"causes\":[{\"reason\":"
        "\"DisruptionBudget\",\"message\":\"The disruption budget pdb needs 1 healthy pods and "
        "has 1 currently\"}]},\"code\":429}";
    static const char conflict[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Operation cannot be fulfilled on pods \\\"p\\\": Precondition failed: "
        "UID in precondition: a, UID in object meta: b\",\"reason\":\"Conflict\",\"details\":"
        "{\"name\":\"p\",\"kind\":\"pods\"},\"code\":409}";
    static const char rate[] = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"message\":"
                               "\"slow down\",\"details\":{\"retryAfterSeconds\":10},\"code\":429}";
    static const struct {
        long status;
        const char *body;
        enum kube_result r;
        const char *msg;
    } cases[] = {
        {200, "{}", KUBE_OK, ""},
        {201, "", KUBE_OK, ""},
        {202, "garbage", KUBE_OK, ""},
        {404,
         "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":\"pods \\\"x\\\" not "
         "found\",\"code\":404}",
         KUBE_NOT_FOUND, "cannot do it: HTTP 404 NotFound: pods \"x\" not found"},
        {409, conflict, KUBE_CONFLICT, "Precondition failed: UID in precondition: a"},
        {429, pdb, KUBE_RETRY_LATER,
         "HTTP 429 TooManyRequests: Cannot evict pod as it would violate the pod's disruption "
         "budget. (cause DisruptionBudget)"},
        {429, rate, KUBE_RETRY_LATER, "slow down (retry after 10 s)"},
        {503, "{\"kind\":\"Status\",\"reason\":\"ServiceUnavailable\"}", KUBE_RETRY_LATER,
         "HTTP 503 ServiceUnavailable: (no message)"},
        {403, "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"no\"}", KUBE_FORBIDDEN,
         "HTTP 403 Forbidden: no"},
        {401, "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":\"Unauthorized\"}",
         KUBE_ERROR, "HTTP 401 Unauthorized"},
        {415, "{\"kind\":\"Status\",\"reason\":\"UnsupportedMediaType\"}", KUBE_ERROR, "415"},
        {500, "<html>oops</html>", KUBE_ERROR, "cannot do it: HTTP 500 without a Status body"},
        {502, "{\"kind\":\"Pod\"}", KUBE_ERROR, "HTTP 502 without a Status body"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char err[512] = "x";
        enum kube_result r = kube_classify(cases[i].status, cases[i].body, strlen(cases[i].body),
                                           "do it", err, sizeof(err));
        TEST_CHECK_STR(kube_result_name(r), kube_result_name(cases[i].r));
        if (cases[i].msg[0])
            TEST_CHECK_CONTAINS(err, cases[i].msg);
        else
            TEST_CHECK_STR(err, "");
    }

    struct kube_status st;
    char err[256];
    TEST_CHECK_INT(kube_parse_status(pdb, strlen(pdb), &st, err, sizeof(err)), 0);
    TEST_CHECK(st.disruption_budget && st.code == 429 && st.retry_after == -1);
    TEST_CHECK_STR(st.status, "Failure");
    kube_status_free(&st);
    const char *bad[] = {"{\"kind\":\"Pod\"}", "{\"code\":\"x\"}", "{\"details\":[]}", "[1]"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        TEST_CHECK_INT(kube_parse_status(bad[i], strlen(bad[i]), &st, err, sizeof(err)), -1);
        TEST_CHECK(st.reason == NULL && st.message == NULL);
    }
}

/* SelfSubjectAccessReview answers: allowed, denied, undecided, malformed. */
TEST(parse_ssar)
{
    static const struct {
        const char *body;
        int ret, verdict;
        const char *reason;
    } cases[] = {
        {"{\"status\":{\"allowed\":true,\"reason\":\"RBAC: allowed by RoleBinding\"}}", 0,
         KUBE_ACCESS_ALLOWED, "RBAC: allowed by RoleBinding"},
        {"{\"status\":{\"allowed\":false}}", 0, KUBE_ACCESS_DENIED, NULL},
        {"{\"status\":{\"allowed\":false,\"denied\":true,\"reason\":\"no\"}}", 0,
         KUBE_ACCESS_DENIED, "no"},
        /* the webhook authorizer failed: not allowed, not denied, nothing decided */
        {"{\"status\":{\"allowed\":false,\"evaluationError\":\"webhook timed out\"}}", 0,
         KUBE_ACCESS_UNKNOWN, "webhook timed out"},
        {"{\"status\":{\"allowed\":true,\"evaluationError\":\"one of two failed\"}}", 0,
         KUBE_ACCESS_ALLOWED, NULL},
        {"{\"spec\":{}}", -1, KUBE_ACCESS_UNKNOWN, NULL},
        {"{\"status\":{}}", -1, KUBE_ACCESS_UNKNOWN, NULL},
        {"{\"status\":{\"allowed\":\"true\"}}", -1, KUBE_ACCESS_UNKNOWN, NULL},
        {"{\"status\":{\"allowed\":true,\"denied\":true}}", -1, KUBE_ACCESS_UNKNOWN, NULL},
        {"<html>", -1, KUBE_ACCESS_UNKNOWN, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int verdict = 42;
        char *reason = NULL, err[256] = "";
        TEST_CHECK_INT(kube_parse_ssar(cases[i].body, strlen(cases[i].body), &verdict, &reason, err,
                                       sizeof(err)),
                       cases[i].ret);
        TEST_CHECK_INT(verdict, cases[i].verdict);
        if (cases[i].reason)
            TEST_CHECK(reason && strcmp(reason, cases[i].reason) == 0);
        if (cases[i].ret < 0)
            TEST_CHECK(err[0] != '\0' && reason == NULL);
        free(reason);
    }
    struct kube_access a = {"ml", "patch", "apps", "deployments", "scale", NULL};
    char *b = kube_body_ssar(&a);
    TEST_CHECK_STR(b, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                      "\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{"
                      "\"namespace\":\"ml\",\"verb\":\"patch\",\"group\":\"apps\",\"resource\":"
                      "\"deployments\",\"subresource\":\"scale\"}}}");
    free(b);
    /* core group and every namespace: both omitted, as the API's omitempty does */
    struct kube_access c = {"", "list", "", "pods", NULL, NULL};
    b = kube_body_ssar(&c);
    TEST_CHECK_STR(b, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                      "\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{"
                      "\"verb\":\"list\",\"resource\":\"pods\"}}}");
    free(b);
}

/* ---- discovery and custom resources ------------------------------------------------------ */

TEST(parse_discovery)
{
    char err[256] = "";
    struct kube_api_resource *res = NULL;
    size_t n = 0;
    /* The shape kube-apiserver sends: subresources as their own entries after the resource. */
    const char *list =
        "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"apps/v1\","
        "\"resources\":[{\"name\":\"deployments\",\"singularName\":\"deployment\",\"namespaced\":"
        "true,\"kind\":\"Deployment\",\"verbs\":[\"get\"],\"shortNames\":[\"deploy\"]},"
        "{\"name\":\"deployments/scale\",\"singularName\":\"\",\"namespaced\":true,\"group\":"
        "\"autoscaling\",\"version\":\"v1\",\"kind\":\"Scale\",\"verbs\":[\"get\",\"patch\"]},"
        "{\"name\":\"deployments/status\",\"singularName\":\"\",\"namespaced\":true,\"kind\":"
        "\"Deployment\",\"verbs\":[\"get\"]},{\"name\":\"clusterthings\",\"singularName\":\"\","
        "\"namespaced\":false,\"kind\":\"ClusterThing\",\"verbs\":[]}]}";
    TEST_CHECK_INT(kube_parse_resource_list(list, strlen(list), &res, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 2);
    if (n == 2) {
        TEST_CHECK_STR(res[0].kind, "Deployment");
        TEST_CHECK_STR(res[0].plural, "deployments");
        TEST_CHECK(res[0].namespaced && res[0].has_scale);
        TEST_CHECK_STR(res[1].plural, "clusterthings");
        TEST_CHECK(!res[1].namespaced && !res[1].has_scale);
    }
    kube_api_resources_free(res, n);
    const char *bad[] = {
        "{}", "{\"resources\":{}}", "{\"resources\":[1]}", "{\"resources\":[{\"name\":\"x\"}]}",
        "[]", "{\"resources\":["};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        TEST_CHECK_INT(kube_parse_resource_list(bad[i], strlen(bad[i]), &res, &n, err, sizeof(err)),
                       -1);
        TEST_CHECK(res == NULL && n == 0);
    }
    const char *groups =
        "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"ray.io\","
        "\"versions\":[{\"groupVersion\":\"ray.io/v1\",\"version\":\"v1\"},{\"groupVersion\":"
        "\"ray.io/v1alpha1\",\"version\":\"v1alpha1\"}],\"preferredVersion\":{\"groupVersion\":"
        "\"ray.io/v1\",\"version\":\"v1\"}}]}";
    char *pref = NULL;
    TEST_CHECK_INT(kube_parse_group_list(groups, strlen(groups), "ray.io", &pref, NULL, NULL, err,
                                         sizeof(err)),
                   0);
    TEST_CHECK_STR(pref, "v1");
    free(pref);
    /* every served version, in the order listed */
    char **vers = NULL;
    size_t nvers = 0;
    TEST_CHECK_INT(kube_parse_group_list(groups, strlen(groups), "ray.io", &pref, &vers, &nvers,
                                         err, sizeof(err)),
                   0);
    TEST_CHECK_INT(nvers, 2);
    if (nvers == 2) {
        TEST_CHECK_STR(vers[0], "v1");
        TEST_CHECK_STR(vers[1], "v1alpha1");
    }
    for (size_t i = 0; i < nvers; i++)
        free(vers[i]);
    free(vers);
    free(pref);
    TEST_CHECK_INT(
        kube_parse_group_list(groups, strlen(groups), "x.io", &pref, NULL, NULL, err, sizeof(err)),
        0);
    TEST_CHECK(pref == NULL);
    TEST_CHECK_INT(kube_parse_group_list("{}", 2, "x.io", &pref, NULL, NULL, err, sizeof(err)), -1);
}

int main(int argc, char **argv)
{
    if (kube_env_setup(argv[0], "gpureclaim-test_kube_json") < 0)
        return 1;

    RUN(request_bodies_exact);
    RUN(request_bodies_carry_uid);
    RUN(parse_pod);
    RUN(parse_malformed);
    RUN(parse_scale);
    RUN(classify);
    RUN(parse_ssar);
    RUN(parse_discovery);

    tmptree_finish(tmpdir);
    return test_done();
}
