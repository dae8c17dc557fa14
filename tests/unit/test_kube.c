/*
 * Tests of the Kubernetes client's calls (enforcer/kube.c): every call against
 * tests/fakes/fake_kube serving tests/e2e/data/kube (kube_env.h), asserting the exact request
 * sequence from the fake's request log (method, path, query, Content-Type, token, body) and
 * the state the fake holds afterwards; its paths and configuration; faults, timeouts, token
 * rotation, pressure and access checks, discovery and custom resources.
 */
#include <curl/curl.h>

#include "kube.c"
#include "kube_env.h"

TEST(paths_and_config)
{
    static const struct {
        const char *av, *kind, *ns, *name, *sub, *path;
    } cases[] = {
        {"v1", "Pod", "ml", "p", NULL, "/api/v1/namespaces/ml/pods/p"},
        {"v1", "Pod", "ml", "p", "eviction", "/api/v1/namespaces/ml/pods/p/eviction"},
        {"apps/v1", "Deployment", "ml", "d", "scale",
         "/apis/apps/v1/namespaces/ml/deployments/d/scale"},
        {"apps/v1", "ReplicaSet", "ml", "r", NULL, "/apis/apps/v1/namespaces/ml/replicasets/r"},
        {"apps/v1", "StatefulSet", "ml", "s", NULL, "/apis/apps/v1/namespaces/ml/statefulsets/s"},
        {"batch/v1", "Job", "ml", "j", NULL, "/apis/batch/v1/namespaces/ml/jobs/j"},
        /* Not compiled into kube-apiserver: only discovery knows them, and it is not
           reachable here, so no path is made up. */
        {"kueue.x-k8s.io/v1beta2", "Workload", "ml", "w", NULL, NULL},
        {"ray.io/v1", "RayCluster", "ml", "r", NULL, NULL},
        {"ray.io/v1/x", "RayCluster", "ml", "r", NULL, NULL},
        {"ray.io?x", "RayCluster", "ml", "r", NULL, NULL},
        {"v1", "Deployment", "ml", "d", NULL, NULL},
        {"v1", "Pod", "ml", "../x", NULL, NULL},
        {"v1", "Pod", "ml", "a?b", NULL, NULL},
        {"v1", "Pod", "", "a", NULL, NULL},
        {"v1", "Pod", "ml", NULL, NULL, NULL},
    };
    /* Nothing listens on port 1: a request fails at once. */
    struct kube_cfg pcfg = {.api_url = "http://127.0.0.1:1", .token_file = "", .timeout = 2};
    char perr[256];
    struct kube *pk = kube_new(&pcfg, perr, sizeof(perr));
    TEST_CHECK(pk != NULL);
    for (size_t i = 0; pk && i < ARRAY_LEN(cases); i++) {
        struct kube_ref ref = {(char *)cases[i].av, (char *)cases[i].kind, (char *)cases[i].ns,
                               (char *)cases[i].name, NULL};
        char err[256] = "";
        struct kube_resource res;
        char *p = NULL;
        kube_path(pk, &ref, cases[i].sub, &res, &p, err, sizeof(err));
        kube_resource_free(&res);
        if (cases[i].path) {
            TEST_CHECK_STR(p, cases[i].path);
        } else {
            TEST_CHECK(p == NULL);
            TEST_CHECK(err[0] != '\0');
        }
        free(p);
    }
    kube_free(pk);

    char err[256] = "";
    struct kube_cfg cfg = {0};
    unsetenv("KUBERNETES_SERVICE_HOST");
    TEST_CHECK(kube_new(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "KUBERNETES_SERVICE_HOST");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    struct kube *k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK(k != NULL);
    if (k) {
        TEST_CHECK_STR(k->url, "https://10.96.0.1:443");
        TEST_CHECK_STR(k->token_file, KUBE_SA_DIR "/token");
        TEST_CHECK_STR(k->ca_file, KUBE_SA_DIR "/ca.crt");
        TEST_CHECK(k->timeout == 10.0 && !k->insecure);
    }
    kube_free(k);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK(k && strcmp(k->url, "https://[fd00::1]:443") == 0);
    kube_free(k);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    cfg.api_url = "ftp://x";
    TEST_CHECK(kube_new(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "'ftp://x'");
    /* A token over plain http is refused unless allowed; no token is fine. */
    cfg.api_url = "http://api.example:8080";
    TEST_CHECK(kube_new(&cfg, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "refusing to send the token of '" KUBE_SA_DIR "/token' over plain "
                             "http to 'http://api.example:8080'");
    TEST_CHECK_CONTAINS(err, "--kube.allow-insecure-credentials");
    cfg.allow_insecure_credentials = true;
    k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK(k != NULL);
    kube_free(k);
    cfg.allow_insecure_credentials = false;
    cfg.token_file = "";
    k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK(k != NULL);
    kube_free(k);
    cfg.token_file = NULL;
    cfg.api_url = "https://api.example:6443//";
    k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK(k && strcmp(k->url, "https://api.example:6443") == 0 && k->ca_file == NULL);
    kube_free(k);

    char ts[32];
    rfc3339_format(ts, sizeof(ts), 1767225600, RFC3339_SEC);
    TEST_CHECK_STR(ts, "2026-01-01T00:00:00Z");
}

/* ---- calls against fake_kube ------------------------------------------------------------ */

/* Read pod `name` in ml and walk its owners. */
static enum kube_result chain_of(struct env *e, const char *name, struct kube_chain *chain,
                                 char *err, size_t errlen)
{
    struct kube_obj pod;
    enum kube_result r = kube_get_pod(e->k, "ml", name, &pod, err, errlen);
    *chain = (struct kube_chain){0};
    if (r != KUBE_OK)
        return r;
    r = kube_root_owner(e->k, &pod, chain, err, errlen);
    kube_obj_free(&pod);
    return r;
}

TEST(deployment_scale_to_zero)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_chain ch;
    TEST_CHECK_INT(chain_of(&e, "train-7d9f8c-x2x4q", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(ch.n, 3);
    if (ch.n == 3) {
        TEST_CHECK_STR(ch.obj[0].ref.kind, "Pod");
        TEST_CHECK_STR(ch.obj[1].ref.kind, "ReplicaSet");
        TEST_CHECK_STR(ch.obj[2].ref.kind, "Deployment");
        TEST_CHECK_STR(ch.obj[2].ref.name, "train");
        TEST_CHECK_STR(ch.obj[2].ref.uid, UID("000003"));
        TEST_CHECK_STR(ch.obj[2].ref.ns, "ml");
        TEST_CHECK(!ch.kueue);
        int64_t prev = -1;
        TEST_CHECK_INT(kube_scale_to_zero(e.k, &ch.obj[2].ref, NULL, &prev, err, sizeof(err)),
                       KUBE_OK);
        TEST_CHECK_INT(prev, 3);
    }
    TEST_CHECK_INT(env_load_log(&e), 6);
    const char *dep = "/apis/apps/v1/namespaces/ml/deployments/train";
    CHECK_REQ(&e, 0, "GET", "/api/v1/namespaces/ml/pods/train-7d9f8c-x2x4q");
    CHECK_REQ(&e, 1, "GET", "/apis/apps/v1/namespaces/ml/replicasets/train-7d9f8c");
    CHECK_REQ(&e, 2, "GET", dep);
    CHECK_REQ(&e, 3, "GET", "/apis/apps/v1/namespaces/ml/deployments/train/scale");
    /* The annotation comes before the scale, so the count survives a crash in between. */
    CHECK_REQ(&e, 4, "PATCH", dep);
    TEST_CHECK(jeq(e.req[4], "/content_type", merge_ct));
    TEST_CHECK(
        jeq(e.req[4], "/body",
            "{\"metadata\":{\"uid\":\"" UID("000003") "\",\"annotations\":{\"gpureclaim.io"
                                                      "/replicas-before-reclaim\":\"3\"}}}"));
    CHECK_REQ(&e, 5, "PATCH", "/apis/apps/v1/namespaces/ml/deployments/train/scale");
    TEST_CHECK(jeq(e.req[5], "/content_type", merge_ct));
    /* /scale takes the same uid precondition as every other write (compared with the
       Deployment's own uid by the API server). */
    TEST_CHECK(jeq(e.req[5], "/body",
                   "{\"metadata\":{\"uid\":\"" UID("000003") "\"},\"spec\":{\"replicas\":0}}"));
    for (size_t i = 0; i < e.nreq; i++)
        TEST_CHECK(jeq(e.req[i], "/token", "token-one"));

    /* The fake applied both patches; a second reclaim patches nothing and keeps the count. */
    if (ch.n == 3) {
        struct kube_obj d;
        TEST_CHECK_INT(kube_get(e.k, &ch.obj[2].ref, &d, err, sizeof(err)), KUBE_OK);
        TEST_CHECK(d.has_replicas && d.replicas == 0);
        TEST_CHECK_STR(kube_annotation(&d, ANNOT_REPLICAS_BEFORE), "3");
        TEST_CHECK_STR(kube_annotation(&d, "deployment.kubernetes.io/revision"), "1");
        kube_obj_free(&d);
        int64_t prev = -1;
        TEST_CHECK_INT(kube_scale_to_zero(e.k, &ch.obj[2].ref, NULL, &prev, err, sizeof(err)),
                       KUBE_OK);
        TEST_CHECK_INT(prev, 0);
        TEST_CHECK_INT(env_load_log(&e), 8);
        CHECK_REQ(&e, 7, "GET", "/apis/apps/v1/namespaces/ml/deployments/train/scale");
    }
    kube_chain_free(&ch);
    env_stop(&e);
}

/*
 * The owner is re-created between the annotation and the scale patch: the uid precondition on
 * /scale makes the API answer 409 with a Status, and the replacement keeps its replicas.
 * Without the precondition the replacement was scaled to zero.
 */
TEST(scale_patch_uid_precondition)
{
    struct env e;
    if (env_start(&e, 5, "--fault",
                  "PATCH /apis/apps/v1/namespaces/ml/deployments/train/scale=replace", NULL) < 0)
        return;
    char err[512] = "";
    struct kube_ref dep = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml", (char *)"train",
                           (char *)UID("000003")};
    int64_t prev = -1;
    TEST_CHECK_INT(kube_scale_to_zero(e.k, &dep, NULL, &prev, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "HTTP 409 Conflict");
    TEST_CHECK_CONTAINS(err, "deployments/scale.apps \"train\": Precondition failed: UID in "
                             "precondition: " UID("000003"));
    TEST_CHECK_INT(kube_last_status(e.k), 409);
    TEST_CHECK_INT(env_load_log(&e), 3);
    CHECK_REQ(&e, 2, "PATCH", "/apis/apps/v1/namespaces/ml/deployments/train/scale");
    TEST_CHECK(jeq(e.req[2], "/body/metadata/uid", UID("000003")));
    struct kube_obj d;
    dep.uid = NULL;
    TEST_CHECK_INT(kube_get(e.k, &dep, &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(d.has_replicas && d.replicas == 3);
    TEST_CHECK(d.ref.uid && strcmp(d.ref.uid, UID("000003")) != 0);
    kube_obj_free(&d);
    /* no uid, no scale */
    TEST_CHECK_INT(kube_scale_to_zero(e.k, &dep, NULL, &prev, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "without a uid");
    TEST_CHECK_INT(env_load_log(&e), 4);
    env_stop(&e);
}

/* Once the stop flag is set no request starts: every call is KUBE_CANCELLED. */
TEST(stop_flag_cancels_calls)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    static volatile sig_atomic_t stop;
    stop = 0;
    e.k->stop = &stop;
    char err[512] = "";
    struct kube_obj pod;
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);
    stop = 1;
    struct kube_ref ref = {(char *)"v1", (char *)"Pod", (char *)"ml", (char *)"p1",
                           (char *)UID("000010")};
    TEST_CHECK_INT(kube_delete(e.k, &ref, NULL, NULL, err, sizeof(err)), KUBE_CANCELLED);
    TEST_CHECK_CONTAINS(err, "the enforcer is stopping");
    TEST_CHECK_INT(kube_post_event(e.k, &ref, "R", "m", NULL, NULL, err, sizeof(err)),
                   KUBE_CANCELLED);
    TEST_CHECK_STR(kube_result_name(KUBE_CANCELLED), "cancelled");
    TEST_CHECK_INT(env_load_log(&e), 1);
    env_stop(&e);
}

static bool gate_flag(void *arg)
{
    return *(bool *)arg;
}

TEST(gate_cancels_calls)
{
    /* The action engine's client of a replica that lost the Lease sends nothing more. */
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    bool leader = true;
    e.k->gate = gate_flag;
    e.k->gate_arg = &leader;
    char err[512] = "";
    struct kube_obj pod;
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);
    leader = false;
    struct kube_ref ref = {(char *)"v1", (char *)"Pod", (char *)"ml", (char *)"p1",
                           (char *)UID("000010")};
    TEST_CHECK_INT(kube_delete(e.k, &ref, NULL, NULL, err, sizeof(err)), KUBE_CANCELLED);
    TEST_CHECK_CONTAINS(err, "not the leader");
    TEST_CHECK_INT(env_load_log(&e), 1);
    env_stop(&e);
}

TEST(statefulset_scale_and_replaced_owner)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_chain ch;
    TEST_CHECK_INT(chain_of(&e, "db-0", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(ch.n, 2);
    int64_t prev = -1;
    if (ch.n == 2) {
        TEST_CHECK_STR(ch.obj[1].ref.kind, "StatefulSet");
        TEST_CHECK_INT(kube_scale_to_zero(e.k, &ch.obj[1].ref, NULL, &prev, err, sizeof(err)),
                       KUBE_OK);
        TEST_CHECK_INT(prev, 2);
    }
    kube_chain_free(&ch);
    TEST_CHECK_INT(env_load_log(&e), 5);
    CHECK_REQ(&e, 1, "GET", "/apis/apps/v1/namespaces/ml/statefulsets/db");
    CHECK_REQ(&e, 2, "GET", "/apis/apps/v1/namespaces/ml/statefulsets/db/scale");
    CHECK_REQ(&e, 3, "PATCH", "/apis/apps/v1/namespaces/ml/statefulsets/db");
    TEST_CHECK(
        jeq(e.req[3], "/body/metadata/annotations/gpureclaim.io~1replicas-before-reclaim", "2"));
    CHECK_REQ(&e, 4, "PATCH", "/apis/apps/v1/namespaces/ml/statefulsets/db/scale");

    /* An owner whose uid is not the one referenced was replaced: conflict, nothing acted on. */
    TEST_CHECK_INT(chain_of(&e, "stale-abc", &ch, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "it was replaced");
    TEST_CHECK_INT(ch.n, 1);
    kube_chain_free(&ch);

    /* A scale whose annotation patch hits a replacement stops before the scale. */
    struct kube_ref stale = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml", (char *)"train",
                             (char *)"not-the-uid"};
    TEST_CHECK_INT(kube_scale_to_zero(e.k, &stale, NULL, &prev, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "Precondition failed: UID in precondition: not-the-uid");
    TEST_CHECK_INT(prev, 0);
    size_t n = env_load_log(&e);
    CHECK_REQ(&e, n - 1, "PATCH", "/apis/apps/v1/namespaces/ml/deployments/train");
    struct kube_obj d;
    stale.uid = NULL;
    TEST_CHECK_INT(kube_get(e.k, &stale, &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(d.replicas == 3);
    kube_obj_free(&d);

    /* Kinds without /scale are refused without a request. */
    struct kube_ref job = {(char *)"batch/v1", (char *)"Job", (char *)"ml", (char *)"kq",
                           (char *)"u"};
    size_t before = env_load_log(&e);
    TEST_CHECK_INT(kube_scale_to_zero(e.k, &job, NULL, &prev, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_INT(env_load_log(&e), before);
    env_stop(&e);
}

/* A climb that stops below a CronJob, as the kinds table says for it (act_kube.c). */
static bool climb_not_cronjob(void *arg, const struct kube_obj *child,
                              const struct kube_owner_ref *owner)
{
    (void)arg;
    (void)child;
    return strcmp(owner->kind, "CronJob") != 0;
}

TEST(job_suspend_stops_at_cronjob)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_chain ch;
    /* Without a climb function every controller is followed, the CronJob too. */
    TEST_CHECK_INT(chain_of(&e, "nightly-29001-abcde", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(ch.n, 3);
    TEST_CHECK(ch.n == 3 && strcmp(ch.obj[2].ref.kind, "CronJob") == 0);
    kube_chain_free(&ch);
    struct kube_obj pod;
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "nightly-29001-abcde", &pod, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(kube_owner_walk(e.k, &pod, climb_not_cronjob, NULL, &ch, err, sizeof(err)),
                   KUBE_OK);
    kube_obj_free(&pod);
    TEST_CHECK_INT(ch.n, 2);
    char *want = NULL;
    if (ch.n == 2) {
        TEST_CHECK_STR(ch.obj[1].ref.kind, "Job");
        TEST_CHECK(!ch.kueue && !ch.obj[1].suspended && ch.obj[1].resource_version);
        want = xasprintf(
            "{\"metadata\":{\"uid\":\"" UID("000022") "\",\"resourceVersion\":"
                                                      "\"%s\"},\"spec\":{\"suspend\":true}}",
            ch.obj[1].resource_version);
        TEST_CHECK_INT(kube_suspend(e.k, &ch.obj[1], err, sizeof(err)), KUBE_OK);
        struct kube_obj j;
        TEST_CHECK_INT(kube_get(e.k, &ch.obj[1].ref, &j, err, sizeof(err)), KUBE_OK);
        TEST_CHECK(j.suspended);
        /* Each write gives the object a new resourceVersion. */
        TEST_CHECK(j.resource_version &&
                   strcmp(j.resource_version, ch.obj[1].resource_version) != 0);
        kube_obj_free(&j);
        /* The Job as read before the patch is stale now: changed since read, nothing sent
           twice. */
        TEST_CHECK_INT(kube_suspend(e.k, &ch.obj[1], err, sizeof(err)), KUBE_CONFLICT);
        TEST_CHECK_CONTAINS(err, "jobs.batch \"nightly-29001\": the object has been modified; "
                                 "please apply your changes to the latest version and try again");
    }
    kube_chain_free(&ch);
    TEST_CHECK_INT(env_load_log(&e), 8);
    CHECK_REQ(&e, 4, "GET", "/apis/batch/v1/namespaces/ml/jobs/nightly-29001");
    CHECK_REQ(&e, 5, "PATCH", "/apis/batch/v1/namespaces/ml/jobs/nightly-29001");
    TEST_CHECK(jeq(e.req[5], "/content_type", merge_ct));
    TEST_CHECK(want && jeq(e.req[5], "/body", want));
    free(want);
    env_stop(&e);
}

TEST(kueue_job_deactivates_workload)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_chain ch;
    TEST_CHECK_INT(chain_of(&e, "kq-7xk2p", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(ch.n, 2);
    TEST_CHECK(ch.kueue);
    if (ch.n == 2)
        TEST_CHECK_INT(kube_suspend(e.k, &ch.obj[1], err, sizeof(err)), KUBE_OK);
    /* Discovery first: the version Kueue's group prefers (this fake serves v1beta1 only). */
    TEST_CHECK_INT(env_load_log(&e), 6);
    CHECK_REQ(&e, 2, "GET", "/apis");
    CHECK_REQ(&e, 3, "GET", "/apis/kueue.x-k8s.io/v1beta1");
    CHECK_REQ(&e, 4, "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml/workloads");
    TEST_CHECK(jeq(e.req[4], "/query", "labelSelector=kueue.x-k8s.io/job-uid=" UID("000032")));
    CHECK_REQ(&e, 5, "PATCH", "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml/workloads/job-kq-3f1a2");
    TEST_CHECK(jeq(e.req[5], "/content_type", merge_ct));
    TEST_CHECK(jeq(e.req[5], "/body",
                   "{\"metadata\":{\"uid\":\"" UID("000033") "\"},\"spec\":{\"active\":false}}"));

    /* The Job itself is untouched (Kueue owns spec.suspend); the Workload is inactive. */
    struct kube_ref wl = {(char *)"kueue.x-k8s.io/v1beta1", (char *)"Workload", (char *)"ml",
                          (char *)"job-kq-3f1a2", NULL};
    struct kube_obj w, j;
    TEST_CHECK_INT(kube_get(e.k, &wl, &w, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_STR(w.ref.uid, UID("000033"));
    kube_obj_free(&w);
    if (ch.n == 2) {
        TEST_CHECK_INT(kube_get(e.k, &ch.obj[1].ref, &j, err, sizeof(err)), KUBE_OK);
        TEST_CHECK(!j.suspended);
        kube_obj_free(&j);
    }
    char *url = xasprintf("http://127.0.0.1:%d/apis/kueue.x-k8s.io/v1beta1/namespaces/ml/"
                          "workloads/job-kq-3f1a2",
                          e.fake.port);
    struct httpc_req req = {.url = url, .bearer_token = "token-one"};
    struct httpc_resp resp = {0};
    TEST_CHECK_INT(httpc_do(&req, &resp, err, sizeof(err)), 0);
    TEST_CHECK_CONTAINS(resp.body.buf, "\"active\":false");
    TEST_CHECK_CONTAINS(resp.body.buf, "\"queueName\":\"user-queue\"");
    httpc_resp_free(&resp);
    free(url);

    /* A Kueue Job without a Workload is an error, not "gone". */
    if (ch.n == 2) {
        free(ch.obj[1].ref.uid);
        ch.obj[1].ref.uid = xstrdup(UID("0000aa"));
        TEST_CHECK_INT(kube_suspend(e.k, &ch.obj[1], err, sizeof(err)), KUBE_ERROR);
        TEST_CHECK_CONTAINS(err, "0 workloads have label 'kueue.x-k8s.io/job-uid=");
    }
    kube_chain_free(&ch);
    env_stop(&e);
}

TEST(evict)
{
    struct env e;
    if (env_start(&e, 5, "--fault", "POST /api/v1/namespaces/ml/pods/p2/eviction=429", "--fault",
                  "POST /api/v1/namespaces/ml/pods/db-0/eviction=500", NULL) < 0)
        return;
    char err[512] = "";
    TEST_CHECK_INT(kube_evict(e.k, "ml", "p1", UID("000041"), err, sizeof(err)), KUBE_OK);
    TEST_CHECK_STR(err, "");
    struct kube_obj pod;
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_NOT_FOUND);
    TEST_CHECK_CONTAINS(err, "pods \"p1\" not found");

    /* Refused by a PodDisruptionBudget: retry later, with the API's words. */
    TEST_CHECK_INT(kube_evict(e.k, "ml", "p2", UID("000042"), err, sizeof(err)), KUBE_RETRY_LATER);
    TEST_CHECK_CONTAINS(err, "cannot evict pod 'ml/p2': HTTP 429 TooManyRequests: Cannot evict "
                             "pod as it would violate the pod's disruption budget.");
    TEST_CHECK_CONTAINS(err, "DisruptionBudget");
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p2", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);

    TEST_CHECK_INT(kube_evict(e.k, "ml", "db-0", UID("000011"), err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "HTTP 500 InternalError: This pod has more than one "
                             "PodDisruptionBudget");
    /* A replacement pod with the same name is not evicted. */
    TEST_CHECK_INT(kube_evict(e.k, "ml", "db-0", UID("0000ee"), err, sizeof(err)),
                   KUBE_ERROR); /* still the 500 fault on this path */
    TEST_CHECK_INT(kube_evict(e.k, "ml", "train-7d9f8c-x2x4q", UID("0000ee"), err, sizeof(err)),
                   KUBE_CONFLICT);
    TEST_CHECK_INT(kube_evict(e.k, "ml", "p2", NULL, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "without a uid");

    TEST_CHECK_INT(env_load_log(&e), 7);
    CHECK_REQ(&e, 0, "POST", "/api/v1/namespaces/ml/pods/p1/eviction");
    TEST_CHECK(jeq(e.req[0], "/content_type", "application/json"));
    TEST_CHECK(jeq(e.req[0], "/body",
                   "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":"
                   "\"p1\",\"namespace\":\"ml\"},\"deleteOptions\":{\"preconditions\":{\"uid\":"
                   "\"" UID("000041") "\"}}}"));
    CHECK_REQ(&e, 2, "POST", "/api/v1/namespaces/ml/pods/p2/eviction");
    CHECK_REQ(&e, 6, "POST", "/api/v1/namespaces/ml/pods/train-7d9f8c-x2x4q/eviction");
    env_stop(&e);
}

TEST(delete_with_uid_precondition)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_ref p2 = {(char *)"v1", (char *)"Pod", (char *)"ml", (char *)"p2",
                          (char *)UID("000042")};
    struct kube_ref dep = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml", (char *)"train",
                           (char *)"stale-uid"};
    /* Stale uid: 409, nothing deleted. */
    TEST_CHECK_INT(kube_delete(e.k, &dep, NULL, NULL, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(
        err, "cannot delete Deployment 'ml/train': HTTP 409 Conflict: Operation "
             "cannot be fulfilled on deployments.apps \"train\": Precondition "
             "failed: UID in precondition: stale-uid, UID in object meta: " UID("000003"));
    struct kube_obj o;
    TEST_CHECK_INT(kube_get(e.k, &dep, &o, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&o);

    dep.uid = (char *)UID("000003");
    TEST_CHECK_INT(kube_delete(e.k, &dep, "Foreground", NULL, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(kube_delete(e.k, &p2, NULL, NULL, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(kube_get(e.k, &p2, &o, err, sizeof(err)), KUBE_NOT_FOUND);
    TEST_CHECK_INT(kube_delete(e.k, &p2, NULL, NULL, err, sizeof(err)), KUBE_NOT_FOUND);
    TEST_CHECK_CONTAINS(err, "HTTP 404 NotFound: pods \"p2\" not found");

    TEST_CHECK_INT(env_load_log(&e), 6);
    CHECK_REQ(&e, 0, "DELETE", "/apis/apps/v1/namespaces/ml/deployments/train");
    CHECK_REQ(&e, 2, "DELETE", "/apis/apps/v1/namespaces/ml/deployments/train");
    TEST_CHECK(jeq(e.req[2], "/body/propagationPolicy", "Foreground"));
    CHECK_REQ(&e, 3, "DELETE", "/api/v1/namespaces/ml/pods/p2");
    TEST_CHECK(jeq(e.req[3], "/content_type", "application/json"));
    TEST_CHECK(jeq(e.req[3], "/body",
                   "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"propagationPolicy\":"
                   "\"Background\",\"preconditions\":{\"uid\":\"" UID("000042") "\"}}"));

    /* Refused before any request: no uid, unknown propagation, unknown kind. */
    p2.uid = NULL;
    TEST_CHECK_INT(kube_delete(e.k, &p2, NULL, NULL, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "without a uid");
    p2.uid = (char *)"u";
    TEST_CHECK_INT(kube_delete(e.k, &p2, "Cascade", NULL, err, sizeof(err)), KUBE_ERROR);
    /* A kind the API does not serve: discovery says so (/apis/GROUP/VERSION 404, the group
       absent from /apis), and nothing is deleted. */
    struct kube_ref gad = {(char *)"example.org/v1", (char *)"Gadget", (char *)"ml", (char *)"g",
                           (char *)"u"};
    TEST_CHECK_INT(kube_delete(e.k, &gad, NULL, NULL, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "the API does not serve 'example.org/v1' (no such API group)");
    TEST_CHECK_INT(env_load_log(&e), 8);
    CHECK_REQ(&e, 6, "GET", "/apis/example.org/v1");
    CHECK_REQ(&e, 7, "GET", "/apis");
    env_stop(&e);
}

TEST(errors_and_faults)
{
    struct env e;
    if (env_start(&e, 5, "--fault", "GET /api/v1/namespaces/ml/pods/p1=403", "--fault",
                  "GET /api/v1/namespaces/ml/pods/p2=503", "--fault",
                  "GET /api/v1/namespaces/ml/pods/db-0=garbage", "--fault",
                  "GET /api/v1/namespaces/ml/pods/deep-0=500", NULL) < 0)
        return;
    static const struct {
        const char *name;
        enum kube_result r;
        const char *msg;
    } cases[] = {
        {"nope", KUBE_NOT_FOUND,
         "cannot get Pod 'ml/nope': HTTP 404 NotFound: pods \"nope\" not "
         "found"},
        {"p1", KUBE_FORBIDDEN, "HTTP 403 Forbidden: User \"system:serviceaccount:"},
        {"p2", KUBE_RETRY_LATER, "HTTP 503 ServiceUnavailable"},
        {"db-0", KUBE_ERROR, "cannot get Pod 'ml/db-0': invalid JSON in object at offset 0"},
        {"deep-0", KUBE_ERROR, "HTTP 500 InternalError: Internal error occurred"},
        {"train-7d9f8c-x2x4q", KUBE_OK, ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char err[512] = "";
        struct kube_obj pod;
        enum kube_result r = kube_get_pod(e.k, "ml", cases[i].name, &pod, err, sizeof(err));
        TEST_CHECK_STR(kube_result_name(r), kube_result_name(cases[i].r));
        if (cases[i].msg[0])
            TEST_CHECK_CONTAINS(err, cases[i].msg);
        if (r == KUBE_OK)
            kube_obj_free(&pod);
        else
            TEST_CHECK(pod.ref.name == NULL);
    }

    /* The faults file is re-read when it changes. */
    char err[512];
    struct kube_obj pod;
    TEST_CHECK_INT(
        tmptree_put(e.dir, "faults",
                    "# comment\nGET /api/v1/namespaces/ml/pods/train-7d9f8c-x2x4q=404\n"),
        0);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "train-7d9f8c-x2x4q", &pod, err, sizeof(err)),
                   KUBE_NOT_FOUND);
    TEST_CHECK_INT(tmptree_put(e.dir, "faults", ""), 0);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "train-7d9f8c-x2x4q", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);

    /* The fake refuses a patch type it does not take with 415, as the API server does. */
    char *url =
        xasprintf("http://127.0.0.1:%d/apis/apps/v1/namespaces/ml/deployments/train", e.fake.port);
    const char *hdrs[] = {"Content-Type: application/json"};
    struct httpc_req req = {.method = "PATCH",
                            .url = url,
                            .headers = hdrs,
                            .nheaders = 1,
                            .body = "{}",
                            .body_len = 2,
                            .bearer_token = "token-one"};
    struct httpc_resp resp = {0};
    TEST_CHECK_INT(httpc_do(&req, &resp, err, sizeof(err)), 0);
    TEST_CHECK_INT(resp.status, 415);
    TEST_CHECK_INT(
        kube_classify(resp.status, resp.body.buf, resp.body.len, "patch", err, sizeof(err)),
        KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "HTTP 415 UnsupportedMediaType: the body of the request was in an "
                             "unknown format");
    httpc_resp_free(&resp);
    free(url);

    /* Connection refused is an error naming the URL. */
    int port = e.fake.port;
    env_stop(&e);
    char u[64];
    snprintf(u, sizeof(u), "http://127.0.0.1:%d", port);
    struct kube_cfg cfg = {.api_url = u, .token_file = "", .timeout = 2};
    struct kube *k = kube_new(&cfg, err, sizeof(err));
    TEST_CHECK_INT(kube_get_pod(k, "ml", "p1", &pod, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "cannot get Pod 'ml/p1': ");
    TEST_CHECK_CONTAINS(err, u);
    kube_free(k);
}

TEST(slow_answer_times_out)
{
    struct env e;
    /* The server answers after 30 s; the client gives up at 1 s (the upper bound only says it
       did not wait for the answer). */
    if (env_start(&e, 1.0, "--fault", "POST /api/v1/namespaces/ml/pods/p1/eviction=slow:30", NULL) <
        0)
        return;
    char err[512] = "";
    double t0 = mono_now();
    TEST_CHECK_INT(kube_evict(e.k, "ml", "p1", UID("000041"), err, sizeof(err)), KUBE_ERROR);
    double took = mono_now() - t0;
    TEST_CHECK(took >= 0.9 && took < 20);
    TEST_CHECK_CONTAINS(err, "cannot evict pod 'ml/p1': timeout after 1.0 s");
    env_stop(&e);
}

TEST(token_rotation_and_401)
{
    struct env e;
    if (env_start(&e, 5, "--fault", "GET /api/v1/namespaces/ml/pods/db-0=401x1", NULL) < 0)
        return;
    char err[512] = "";
    struct kube_obj pod;
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);
    /* The kubelet rewrites the token; the API server accepts only the new one. */
    TEST_CHECK_INT(tmptree_put(e.dir, "token", "token-two\n"), 0);
    TEST_CHECK_INT(tmptree_put(e.dir, "accept", "token-two"), 0);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);

    /* One 401 (the token expired just before rotation): re-read and retry once. */
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "db-0", &pod, err, sizeof(err)), KUBE_OK);
    kube_obj_free(&pod);

    /* A token the server never accepts: two attempts, then an error. */
    TEST_CHECK_INT(tmptree_put(e.dir, "token", "revoked"), 0);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "HTTP 401 Unauthorized: Unauthorized");

    /* An unreadable token file fails before any request. */
    unlink(e.token);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "cannot read token file");

    TEST_CHECK_INT(env_load_log(&e), 6);
    TEST_CHECK(jeq(e.req[0], "/token", "token-one"));
    TEST_CHECK(jeq(e.req[1], "/token", "token-two"));
    CHECK_REQ(&e, 2, "GET", "/api/v1/namespaces/ml/pods/db-0");
    CHECK_REQ(&e, 3, "GET", "/api/v1/namespaces/ml/pods/db-0");
    TEST_CHECK(jeq(e.req[4], "/token", "revoked"));
    TEST_CHECK(jeq(e.req[5], "/token", "revoked"));
    for (size_t i = 0; i < e.nreq; i++)
        TEST_CHECK(jeq(e.req[i], "/content_type", NULL) || jeq(e.req[i], "/content_type", "null"));
    env_stop(&e);
}

/* secret_read (common/util.c), which reads the token before every request. */
TEST(secret_files)
{
    static const struct {
        const char *name;
        size_t len; /* 0: use text */
        const char *text, *want, *err;
    } cases[] = {
        {"trimmed", 0, "token-x \n\t\n", "token-x", NULL},
        {"inner-space-kept", 0, " a b\n", " a b", NULL},
        {"empty", 0, "", "", NULL},
        {"at-limit", SECRET_MAX, NULL, NULL, NULL},
        {"over-limit", SECRET_MAX + 1, NULL, NULL, "': file too large"},
        {"missing", 0, NULL, NULL, "': No such file or directory"},
        {"dir", 0, NULL, NULL, "': Is a directory"},
    };
    char *big = xmalloc(SECRET_MAX + 2);
    memset(big, 'x', SECRET_MAX + 1);
    big[SECRET_MAX + 1] = '\0';
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char rel[64], path[4200], err[4400] = "";
        snprintf(rel, sizeof(rel), "secrets/%s", cases[i].name);
        snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
        if (cases[i].len)
            TEST_CHECK_INT(tmptree_write(tmpdir, rel, big, cases[i].len), 0);
        else if (cases[i].text)
            TEST_CHECK_INT(tmptree_put(tmpdir, rel, cases[i].text), 0);
        else if (strcmp(cases[i].name, "dir") == 0)
            TEST_CHECK_INT(tmptree_mkdirs(tmpdir, rel), 0);
        char *got = secret_read(path, "token", err, sizeof(err));
        if (cases[i].err) {
            TEST_CHECK(got == NULL);
            TEST_CHECK(str_has_prefix(err, "cannot read token file '"));
            TEST_CHECK_CONTAINS(err, path);
            TEST_CHECK_CONTAINS(err, cases[i].err);
        } else if (cases[i].len) {
            TEST_CHECK(got && strlen(got) == cases[i].len);
        } else {
            TEST_CHECK_STR(got, cases[i].want);
        }
        secret_free(got);
    }
    secret_free(NULL);

    /* The client fails before sending anything when its token file is too large. */
    struct env e;
    if (env_start(&e, 5, NULL) < 0) {
        free(big);
        return;
    }
    char err[512] = "";
    struct kube_obj pod;
    TEST_CHECK_INT(tmptree_write(e.dir, "token", big, SECRET_MAX + 1), 0);
    TEST_CHECK_INT(kube_get_pod(e.k, "ml", "p1", &pod, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "cannot read token file '");
    TEST_CHECK_CONTAINS(err, "': file too large");
    TEST_CHECK_INT(env_load_log(&e), 0);
    free(big);
    env_stop(&e);
}

static bool is_rfc3339(const char *s)
{
    int y, mo, d, h, mi, se;
    char z = 0;
    return s && strlen(s) == 20 &&
           sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) == 7 && z == 'Z';
}

TEST(event_and_annotation)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_ref dep = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml", (char *)"train",
                           (char *)UID("000003")};
    TEST_CHECK_INT(kube_post_event(e.k, &dep, "IdleGPUReclaimNotice",
                                   "gpu activity < 5% for 30m; scaling to 0 at "
                                   "2026-03-02T10:00:00Z",
                                   "Warning", "ScaleToZero", err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_INT(
        kube_post_event(e.k, &dep, "IdleGPUReclaimed", "scaled to 0", NULL, NULL, err, sizeof(err)),
        KUBE_OK);
    const char *notice = "2026-03-02T10:00:00Z rule=idle-30m window=30m threshold=0.05";
    TEST_CHECK_INT(kube_annotate(e.k, &dep, ANNOT_NOTICE, notice, err, sizeof(err)), KUBE_OK);
    struct kube_obj d;
    TEST_CHECK_INT(kube_get(e.k, &dep, &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_STR(kube_annotation(&d, ANNOT_NOTICE), notice);
    kube_obj_free(&d);
    TEST_CHECK_INT(kube_annotate(e.k, &dep, ANNOT_NOTICE, NULL, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(kube_get(e.k, &dep, &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(kube_annotation(&d, ANNOT_NOTICE) == NULL);
    TEST_CHECK_STR(kube_annotation(&d, "deployment.kubernetes.io/revision"), "1");
    kube_obj_free(&d);
    dep.uid = (char *)"other";
    TEST_CHECK_INT(kube_annotate(e.k, &dep, ANNOT_NOTICE, "x", err, sizeof(err)), KUBE_CONFLICT);

    TEST_CHECK_INT(env_load_log(&e), 7);
    CHECK_REQ(&e, 0, "POST", "/api/v1/namespaces/ml/events");
    json_object *ev = e.req[0];
    TEST_CHECK(jeq(ev, "/content_type", "application/json"));
    TEST_CHECK(jeq(ev, "/body/apiVersion", "v1"));
    TEST_CHECK(jeq(ev, "/body/kind", "Event"));
    const char *name = jstr(ev, "/body/metadata/name");
    TEST_CHECK(name && str_has_prefix(name, "train.") && strlen(name) > 12 &&
               strspn(name + 6, "0123456789abcdef") == strlen(name + 6));
    TEST_CHECK(jeq(ev, "/body/metadata/namespace", "ml"));
    TEST_CHECK(jeq(ev, "/body/involvedObject",
                   "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"train\","
                   "\"namespace\":\"ml\",\"uid\":\"" UID("000003") "\"}"));
    TEST_CHECK(jeq(ev, "/body/reason", "IdleGPUReclaimNotice"));
    TEST_CHECK(jeq(ev, "/body/message",
                   "gpu activity < 5% for 30m; scaling to 0 at 2026-03-02T10:00:00Z"));
    TEST_CHECK(jeq(ev, "/body/type", "Warning"));
    TEST_CHECK(jeq(ev, "/body/source", "{\"component\":\"gpureclaim-enforcer\"}"));
    TEST_CHECK(jeq(ev, "/body/reportingComponent", "gpureclaim.io/enforcer"));
    TEST_CHECK(jeq(ev, "/body/reportingInstance", "enforcer-0"));
    TEST_CHECK(jeq(ev, "/body/action", "ScaleToZero"));
    TEST_CHECK(jeq(ev, "/body/count", "1"));
    TEST_CHECK(jeq(ev, "/body/eventTime", NULL));
    TEST_CHECK(is_rfc3339(jstr(ev, "/body/firstTimestamp")));
    TEST_CHECK(jstr(ev, "/body/lastTimestamp") && jstr(ev, "/body/firstTimestamp") &&
               strcmp(jstr(ev, "/body/lastTimestamp"), jstr(ev, "/body/firstTimestamp")) == 0);
    /* A second event gets another name (the fake answers 409 AlreadyExists otherwise). */
    const char *name2 = jstr(e.req[1], "/body/metadata/name");
    TEST_CHECK(name2 && name && strcmp(name, name2) != 0);
    TEST_CHECK(jeq(e.req[1], "/body/type", "Normal"));
    TEST_CHECK(jeq(e.req[1], "/body/action", NULL));

    CHECK_REQ(&e, 2, "PATCH", "/apis/apps/v1/namespaces/ml/deployments/train");
    TEST_CHECK(jeq(e.req[2], "/content_type", merge_ct));
    TEST_CHECK(jeq(e.req[2], "/body/metadata/uid", UID("000003")));
    TEST_CHECK(jeq(e.req[2], "/body/metadata/annotations/gpureclaim.io~1reclaim-notice", notice));
    TEST_CHECK(
        jeq(e.req[4], "/body/metadata/annotations", "{\"gpureclaim.io/reclaim-notice\":null}"));

    /* The fake stored the event: list it back. */
    char *url = xasprintf("http://127.0.0.1:%d/api/v1/namespaces/ml/events", e.fake.port);
    struct httpc_req req = {.url = url, .bearer_token = "token-one"};
    struct httpc_resp resp = {0};
    struct kube_obj *items = NULL;
    size_t n = 0;
    TEST_CHECK_INT(httpc_do(&req, &resp, err, sizeof(err)), 0);
    TEST_CHECK_INT(kube_parse_list(resp.body.buf, resp.body.len, &items, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 2);
    for (size_t i = 0; i < n; i++)
        kube_obj_free(&items[i]);
    free(items);
    httpc_resp_free(&resp);
    free(url);

    struct kube_ref bad = {(char *)"v1", (char *)"Pod", (char *)"ml", (char *)"a/b", NULL};
    TEST_CHECK_INT(kube_post_event(e.k, &bad, "R", "m", NULL, NULL, err, sizeof(err)), KUBE_ERROR);
    env_stop(&e);
}

/* The call: one list over all namespaces; 404 (Kueue not installed) is KUBE_NOT_FOUND. */
TEST(kueue_waiting_pressure)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct pressure_demand d;
    const char *own[] = {UID("000512")};
    TEST_CHECK_INT(
        kube_kueue_waiting_for_resource(e.k, "amd.com/gpu", own, 1, &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(d.count, 2);
    TEST_CHECK_INT(env_load_log(&e), 3);
    CHECK_REQ(&e, 0, "GET", "/apis");
    CHECK_REQ(&e, 1, "GET", "/apis/kueue.x-k8s.io/v1beta1");
    CHECK_REQ(&e, 2, "GET", "/apis/kueue.x-k8s.io/v1beta1/workloads");
    TEST_CHECK(jeq(e.req[2], "/query", ""));
    tmptree_put(e.dir, "faults",
                "GET /apis/kueue.x-k8s.io/v1beta1/workloads=404x1\n"
                "GET /apis/kueue.x-k8s.io/v1beta1/workloads=403x1\n");
    d.count = 99;
    TEST_CHECK_INT(
        kube_kueue_waiting_for_resource(e.k, "amd.com/gpu", NULL, 0, &d, err, sizeof(err)),
        KUBE_NOT_FOUND);
    TEST_CHECK_INT(d.count, 0);
    TEST_CHECK_INT(
        kube_kueue_waiting_for_resource(e.k, "amd.com/gpu", NULL, 0, &d, err, sizeof(err)),
        KUBE_FORBIDDEN);
    TEST_CHECK_CONTAINS(err, "list Kueue workloads waiting for 'amd.com/gpu'");
    env_stop(&e);
}

/* The review call against the fake: granted, denied by its deny file, and failures unknown. */
TEST(access_review)
{
    struct env e;
    char deny[4300];
    snprintf(deny, sizeof(deny), "%s/deny", tmpdir);
    if (tmptree_put(tmpdir, "deny", "patch deployments.apps/scale ml\ncreate pods/eviction\n") < 0)
        TEST_CHECK(!"deny file written");
    if (env_start(&e, 5, "--deny-file", deny, NULL) < 0)
        return;
    char err[512] = "", reason[256];
    int v = 42;
    struct kube_access a = {"ml", "patch", "apps", "deployments", "scale", NULL};
    TEST_CHECK_INT(kube_access_review(e.k, &a, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_INT(v, KUBE_ACCESS_DENIED);
    a.ns = "other";
    TEST_CHECK_INT(kube_access_review(e.k, &a, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_INT(v, KUBE_ACCESS_ALLOWED);
    TEST_CHECK_CONTAINS(reason, "RBAC: allowed by ClusterRoleBinding");
    a.ns = ""; /* every namespace: not when one namespace lacks it */
    TEST_CHECK_INT(kube_access_review(e.k, &a, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_INT(v, KUBE_ACCESS_DENIED);
    struct kube_access ev = {"ml", "create", "", "pods", "eviction", NULL};
    TEST_CHECK_INT(kube_access_review(e.k, &ev, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_INT(v, KUBE_ACCESS_DENIED);
    TEST_CHECK_INT(env_load_log(&e), 4);
    CHECK_REQ(&e, 0, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    TEST_CHECK(jeq(e.req[0], "/content_type", "application/json"));
    TEST_CHECK(jeq(e.req[0], "/body/spec/resourceAttributes/subresource", "scale"));
    /* the review itself forbidden, or the API failing: unknown, never a grant */
    tmptree_put(e.dir, "faults",
                "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews=403x1\n"
                "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews=garbage\n");
    a.ns = "other";
    TEST_CHECK_INT(kube_access_review(e.k, &a, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_FORBIDDEN);
    TEST_CHECK_INT(v, KUBE_ACCESS_UNKNOWN);
    TEST_CHECK_INT(kube_access_review(e.k, &a, &v, reason, sizeof(reason), err, sizeof(err)),
                   KUBE_ERROR);
    TEST_CHECK_INT(v, KUBE_ACCESS_UNKNOWN);
    env_stop(&e);
}

TEST(pending_pressure)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct pressure_demand d;
    TEST_CHECK_INT(kube_pending_for_resource(e.k, "amd.com/gpu", &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(d.count, 2);
    TEST_CHECK_INT(d.requested, 4);
    TEST_CHECK_INT(kube_pending_for_resource(e.k, "nvidia.com/gpu", &d, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(d.count, 0);
    TEST_CHECK_INT(env_load_log(&e), 2);
    CHECK_REQ(&e, 0, "GET", "/api/v1/pods");
    TEST_CHECK(jeq(e.req[0], "/query", "fieldSelector=status.phase=Pending"));
    env_stop(&e);
}

TEST(owner_chain_limits)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_chain ch;
    /* deep-0 -> loop-1 -> ... -> loop-10: stops after KUBE_CHAIN_MAX owner GETs. */
    TEST_CHECK_INT(chain_of(&e, "deep-0", &ch, err, sizeof(err)), KUBE_ERROR);
    TEST_CHECK_CONTAINS(err, "owner chain of pod 'ml/deep-0' is longer than 8 levels");
    TEST_CHECK_INT(ch.n, 9);
    kube_chain_free(&ch);
    TEST_CHECK_INT(env_load_log(&e), 9);
    CHECK_REQ(&e, 8, "GET", "/apis/apps/v1/namespaces/ml/replicasets/loop-8");

    /* An owner kind the API does not serve: stop below it and name it. */
    TEST_CHECK_INT(chain_of(&e, "gadget-f5g6h", &ch, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_INT(ch.n, 1);
    TEST_CHECK_STR(ch.unknown.kind, "Gadget");
    TEST_CHECK_STR(ch.unknown.api_version, "example.org/v1");
    TEST_CHECK_STR(ch.unknown.name, "g");
    TEST_CHECK_CONTAINS(err, "owner Gadget 'ml/g' (apiVersion 'example.org/v1') of Pod "
                             "'gadget-f5g6h' cannot be read: the API does not serve "
                             "'example.org/v1'");
    kube_chain_free(&ch);
    TEST_CHECK_INT(env_load_log(&e), 12);

    /* A bare pod is its own root. */
    TEST_CHECK_INT(chain_of(&e, "p1", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(ch.n == 1 && strcmp(ch.obj[0].ref.name, "p1") == 0);
    kube_chain_free(&ch);

    /* An owner deleted meanwhile. */
    struct kube_ref rs = {(char *)"apps/v1", (char *)"ReplicaSet", (char *)"ml",
                          (char *)"train-7d9f8c", (char *)UID("000002")};
    TEST_CHECK_INT(kube_delete(e.k, &rs, NULL, NULL, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(chain_of(&e, "train-7d9f8c-x2x4q", &ch, err, sizeof(err)), KUBE_NOT_FOUND);
    TEST_CHECK_CONTAINS(err, "replicasets.apps \"train-7d9f8c\" not found");
    kube_chain_free(&ch);
    env_stop(&e);
}

TEST(discovery_resolves_and_caches)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_resource r;
    /* Built into kube-apiserver: no request. */
    TEST_CHECK_INT(kube_resource_of(e.k, "apps/v1", "Deployment", &r, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(r.has_scale && r.namespaced && strcmp(r.plural, "deployments") == 0);
    kube_resource_free(&r);
    TEST_CHECK_INT(kube_resource_of(e.k, "kubeflow.org/v1", "Notebook", &r, err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_STR(r.group, "kubeflow.org");
    TEST_CHECK_STR(r.version, "v1");
    TEST_CHECK_STR(r.plural, "notebooks");
    TEST_CHECK(r.namespaced && !r.has_scale);
    kube_resource_free(&r);
    /* Same group/version: from the cache. */
    TEST_CHECK_INT(kube_resource_of(e.k, "kubeflow.org/v1", "PyTorchJob", &r, err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_STR(r.plural, "pytorchjobs");
    kube_resource_free(&r);
    /* A kind the list does not hold: no plural is guessed, and the list just fetched is not
       fetched again (bounded to once per KUBE_DISCO_REFRESH). */
    TEST_CHECK_INT(kube_resource_of(e.k, "kubeflow.org/v1", "Gizmo", &r, err, sizeof(err)),
                   KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "the API serves no kind 'Gizmo' in 'kubeflow.org/v1'");
    TEST_CHECK(r.plural == NULL);
    TEST_CHECK_INT(kube_resource_of(e.k, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", &r, err,
                                    sizeof(err)),
                   KUBE_OK);
    TEST_CHECK(r.has_scale && strcmp(r.plural, "leaderworkersets") == 0);
    kube_resource_free(&r);
    /* A version no longer served: the group's preferred version from /apis. */
    TEST_CHECK_INT(kube_resource_of(e.k, "ray.io/v1alpha1", "RayCluster", &r, err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_STR(r.version, "v1");
    TEST_CHECK_STR(r.plural, "rayclusters");
    kube_resource_free(&r);
    TEST_CHECK_INT(kube_resource_of(e.k, "ray.io/v1/x", "RayCluster", &r, err, sizeof(err)),
                   KUBE_UNSUPPORTED);
    TEST_CHECK_INT(env_load_log(&e), 5);
    CHECK_REQ(&e, 0, "GET", "/apis/kubeflow.org/v1");
    CHECK_REQ(&e, 1, "GET", "/apis/leaderworkerset.x-k8s.io/v1");
    CHECK_REQ(&e, 2, "GET", "/apis/ray.io/v1alpha1");
    CHECK_REQ(&e, 3, "GET", "/apis");
    CHECK_REQ(&e, 4, "GET", "/apis/ray.io/v1");
    /* Core discovery answers too (kinds outside the compiled-in list). */
    TEST_CHECK_INT(kube_resource_of(e.k, "v1", "Event", &r, err, sizeof(err)), KUBE_OK);
    kube_resource_free(&r);
    TEST_CHECK_INT(kube_resource_of(e.k, "v1", "ConfigMap", &r, err, sizeof(err)),
                   KUBE_UNSUPPORTED);
    TEST_CHECK_INT(env_load_log(&e), 6);
    CHECK_REQ(&e, 5, "GET", "/api/v1");
    /* Once KUBE_DISCO_REFRESH has passed, a miss fetches the list again (a CRD installed
       since): one request, still no plural made up. */
    struct kube_disco *kf = kube_disco_find(e.k, "kubeflow.org/v1");
    TEST_CHECK(kf != NULL);
    if (kf)
        kf->fetched -= KUBE_DISCO_REFRESH + 1;
    TEST_CHECK_INT(kube_resource_of(e.k, "kubeflow.org/v1", "Gizmo", &r, err, sizeof(err)),
                   KUBE_UNSUPPORTED);
    TEST_CHECK_INT(env_load_log(&e), 7);
    CHECK_REQ(&e, 6, "GET", "/apis/kubeflow.org/v1");
    /* The cache is bounded: unserved groups past KUBE_DISCO_MAX replace the oldest lists. */
    for (int i = 0; i < KUBE_DISCO_MAX + 4; i++) {
        char av[64];
        snprintf(av, sizeof(av), "g%d.example.org/v1", i);
        TEST_CHECK_INT(kube_resource_of(e.k, av, "Thing", &r, err, sizeof(err)), KUBE_UNSUPPORTED);
    }
    TEST_CHECK_INT(e.k->ndisco, KUBE_DISCO_MAX);
    TEST_CHECK(kube_disco_find(e.k, "g0.example.org/v1") == NULL);
    TEST_CHECK(kube_disco_find(e.k, "g67.example.org/v1") != NULL);
    /* A kind the group's preferred version does not serve: found at another of its versions
       (the fake serves LLMInferenceService at v1alpha2 only, the group prefers v1beta1, the
       InferenceService's; KServe 0.16.0 on the real server is the same the other way round,
       v1alpha1 against the row's v1alpha2: restore failed there, docs/real-cluster.md). */
    TEST_CHECK_INT(kube_resource_of(e.k, "serving.kserve.io/v1alpha1", "LLMInferenceService", &r,
                                    err, sizeof(err)),
                   KUBE_OK);
    TEST_CHECK_STR(r.version, "v1alpha2");
    TEST_CHECK_STR(r.plural, "llminferenceservices");
    kube_resource_free(&r);
    /* A kind no version of the group serves: the preferred version's answer is said. */
    TEST_CHECK_INT(
        kube_resource_of(e.k, "serving.kserve.io/v1alpha1", "Gadget", &r, err, sizeof(err)),
        KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "the API serves no kind 'Gadget' in 'serving.kserve.io/v1beta1'");
    env_stop(&e);
}

/* Walk from pod `name` and check the kinds from the pod up. */
static void check_chain(struct env *e, const char *name, size_t n, const char *const *kinds)
{
    char err[512] = "";
    struct kube_chain ch;
    enum kube_result r = chain_of(e, name, &ch, err, sizeof(err));
    if (r != KUBE_OK)
        fprintf(stderr, "  %s: %s\n", name, err);
    TEST_CHECK_INT(r, KUBE_OK);
    TEST_CHECK_INT(ch.n, n);
    for (size_t i = 0; i < ch.n && i < n; i++) {
        TEST_CHECK_STR(ch.obj[i].ref.kind, kinds[i]);
        /* Every object keeps its JSON and resourceVersion for the stop check and restore. */
        TEST_CHECK(ch.obj[i].raw && strstr(ch.obj[i].raw, kinds[i]) &&
                   ch.obj[i].raw_len == strlen(ch.obj[i].raw));
        TEST_CHECK(ch.obj[i].resource_version != NULL);
    }
    kube_chain_free(&ch);
}

TEST(custom_resource_chains)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    check_chain(&e, "alice-0", 3, (const char *const[]){"Pod", "StatefulSet", "Notebook"});
    check_chain(&e, "llm-predictor-5d6f7-q2w3e", 4,
                (const char *const[]){"Pod", "ReplicaSet", "Deployment", "InferenceService"});
    check_chain(
        &e, "chat-predictor-8b9c-r4t5y", 5,
        (const char *const[]){"Pod", "ReplicaSet", "Deployment", "InferenceService", "AIMService"});
    check_chain(&e, "ray-head-h7j8k", 2, (const char *const[]){"Pod", "RayCluster"});
    check_chain(&e, "sweep-workers-0-0-z9x8c", 3, (const char *const[]){"Pod", "Job", "JobSet"});
    check_chain(&e, "wid-6c7d-a1s2d", 4,
                (const char *const[]){"Pod", "ReplicaSet", "Deployment", "Widget"});
    /* An ownerReference at a version no longer served is read at the preferred one. */
    char err[512] = "";
    struct kube_chain ch;
    TEST_CHECK_INT(chain_of(&e, "ray-oldref-m1n2", &ch, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(ch.n == 2 && strcmp(ch.obj[1].ref.api_version, "ray.io/v1") == 0 &&
               ch.obj[1].generation == 1);
    kube_chain_free(&ch);
    env_load_log(&e);
    /* Each group/version was discovered once. */
    size_t disco = 0;
    for (size_t i = 0; i < e.nreq; i++) {
        const char *p = jstr(e.req[i], "/path");
        disco += p && (strcmp(p, "/apis") == 0 || strcmp(p, "/api/v1") == 0 ||
                       (strncmp(p, "/apis/", 6) == 0 && !strstr(p, "/namespaces/")));
    }
    TEST_CHECK_INT(disco, 8); /* 6 group/versions, ray.io/v1alpha1 and /apis */
    env_stop(&e);
}

TEST(generic_patch_scale_delete)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    char err[512] = "";
    struct kube_ref nb = {(char *)"kubeflow.org/v1", (char *)"Notebook", (char *)"ml",
                          (char *)"alice", (char *)UID("000161")};
    struct kube_obj o;
    TEST_CHECK_INT(kube_get(e.k, &nb, &o, err, sizeof(err)), KUBE_OK);
    char *rv = o.resource_version ? xstrdup(o.resource_version) : NULL;
    kube_obj_free(&o);
    TEST_CHECK(rv != NULL);
    const char *stop = "{\"metadata\":{\"annotations\":{\"kubeflow-resource-stopped\":"
                       "\"2026-03-02T10:00:00Z\"}}}";
    TEST_CHECK_INT(kube_patch(e.k, &nb, rv, stop, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(kube_last_resource_version(e.k) && strcmp(kube_last_resource_version(e.k), rv) != 0);
    /* The same patch with the resourceVersion read before: changed since read. */
    TEST_CHECK_INT(kube_patch(e.k, &nb, rv, stop, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "HTTP 409 Conflict: Operation cannot be fulfilled on "
                             "notebooks.kubeflow.org \"alice\": the object has been modified");
    /* Another uid: a replacement. */
    struct kube_ref other = nb;
    other.uid = (char *)UID("000999");
    TEST_CHECK_INT(kube_patch(e.k, &other, NULL, stop, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "Precondition failed: UID in precondition");
    /* Refused before any request. */
    TEST_CHECK_INT(kube_patch(e.k, &nb, NULL, "[1]", err, sizeof(err)), KUBE_ERROR);
    other.uid = NULL;
    TEST_CHECK_INT(kube_patch(e.k, &other, NULL, stop, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "without a uid");
    TEST_CHECK_INT(env_load_log(&e), 5);
    CHECK_REQ(&e, 1, "GET", "/apis/kubeflow.org/v1/namespaces/ml/notebooks/alice");
    CHECK_REQ(&e, 2, "PATCH", "/apis/kubeflow.org/v1/namespaces/ml/notebooks/alice");
    TEST_CHECK(jeq(e.req[2], "/content_type", merge_ct));
    char *want = xasprintf("{\"metadata\":{\"uid\":\"" UID(
                               "000161") "\",\"resourceVersion\":"
                                         "\"%s\",\"annotations\":{\"kubeflow-resource-stopped\":"
                                         "\"2026-03-02T10:00:00Z\"}}}",
                           rv ? rv : "");
    TEST_CHECK(jeq(e.req[2], "/body", want));
    free(want);
    TEST_CHECK_INT(kube_get(e.k, &nb, &o, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_STR(kube_annotation(&o, "kubeflow-resource-stopped"), "2026-03-02T10:00:00Z");
    kube_obj_free(&o);

    /* /scale of a custom resource whose CRD has one. */
    struct kube_ref lws = {(char *)"leaderworkerset.x-k8s.io/v1", (char *)"LeaderWorkerSet",
                           (char *)"ml", (char *)"lws", (char *)UID("000231")};
    TEST_CHECK_INT(kube_get(e.k, &lws, &o, err, sizeof(err)), KUBE_OK);
    char *lrv = xstrdup(o.resource_version ? o.resource_version : "");
    kube_obj_free(&o);
    int64_t prev = -1;
    TEST_CHECK_INT(kube_scale(e.k, &lws, lrv, 0, &prev, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(prev, 2);
    TEST_CHECK_INT(kube_scale(e.k, &lws, lrv, 1, &prev, err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_INT(kube_scale(e.k, &nb, NULL, 0, &prev, err, sizeof(err)), KUBE_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "no scale subresource");
    env_load_log(&e);
    size_t base = e.nreq;
    TEST_CHECK_INT(kube_get(e.k, &lws, &o, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(o.has_replicas && o.replicas == 0);
    kube_obj_free(&o);
    /* discovery, GET lws, GET /scale, PATCH /scale, GET /scale, PATCH 409 (Notebook: none). */
    TEST_CHECK_INT(base, 12);
    CHECK_REQ(&e, 9, "PATCH",
              "/apis/leaderworkerset.x-k8s.io/v1/namespaces/ml/leaderworkersets/lws/scale");
    want = xasprintf("{\"metadata\":{\"uid\":\"" UID("000231") "\",\"resourceVersion\":\"%s\"},"
                                                               "\"spec\":{\"replicas\":0}}",
                     lrv);
    TEST_CHECK(jeq(e.req[9], "/body", want));
    free(want);

    /* scale to zero: the annotation's new resourceVersion goes with the scale. */
    struct kube_ref dep = {(char *)"apps/v1", (char *)"Deployment", (char *)"ml",
                           (char *)"llm-predictor", (char *)UID("000172")};
    TEST_CHECK_INT(kube_get(e.k, &dep, &o, err, sizeof(err)), KUBE_OK);
    char *drv = xstrdup(o.resource_version ? o.resource_version : "");
    kube_obj_free(&o);
    TEST_CHECK_INT(kube_scale_to_zero(e.k, &dep, drv, &prev, err, sizeof(err)), KUBE_OK);
    TEST_CHECK_INT(prev, 1);
    env_load_log(&e);
    TEST_CHECK_INT(e.nreq, 17);
    want = xasprintf(
        "{\"metadata\":{\"uid\":\"" UID(
            "000172") "\",\"resourceVersion\":\"%s\","
                      "\"annotations\":{\"gpureclaim.io/replicas-before-reclaim\":\"1\"}}}",
        drv);
    TEST_CHECK(e.nreq == 17 && jeq(e.req[15], "/body", want));
    free(want);
    TEST_CHECK(e.nreq == 17 && jstr(e.req[16], "/body/metadata/resourceVersion") &&
               strcmp(jstr(e.req[16], "/body/metadata/resourceVersion"), drv) != 0);

    /* DELETE with a stale resourceVersion deletes nothing; with the current one it does. */
    struct kube_ref rs = {(char *)"apps/v1", (char *)"ReplicaSet", (char *)"ml", (char *)"wid-6c7d",
                          (char *)UID("000203")};
    TEST_CHECK_INT(kube_delete(e.k, &rs, NULL, "1", err, sizeof(err)), KUBE_CONFLICT);
    TEST_CHECK_CONTAINS(err, "Precondition failed: ResourceVersion in precondition: 1");
    TEST_CHECK_INT(kube_get(e.k, &rs, &o, err, sizeof(err)), KUBE_OK);
    char *rrv = xstrdup(o.resource_version ? o.resource_version : "");
    kube_obj_free(&o);
    TEST_CHECK_INT(kube_delete(e.k, &rs, NULL, rrv, err, sizeof(err)), KUBE_OK);
    env_load_log(&e);
    want = xasprintf(
        "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"propagationPolicy\":"
        "\"Background\",\"preconditions\":{\"uid\":\"" UID("000203") "\","
                                                                     "\"resourceVersion\":\"%s\"}}",
        rrv);
    TEST_CHECK(e.nreq == 20 && jeq(e.req[19], "/body", want));
    free(want);
    free(rrv);
    free(drv);
    free(lrv);
    free(rv);
    env_stop(&e);
}

int main(int argc, char **argv)
{
    if (kube_env_setup(argv[0], "gpureclaim-test_kube") < 0)
        return 1;

    RUN(paths_and_config);
    RUN(deployment_scale_to_zero);
    RUN(scale_patch_uid_precondition);
    RUN(stop_flag_cancels_calls);
    RUN(gate_cancels_calls);
    RUN(statefulset_scale_and_replaced_owner);
    RUN(job_suspend_stops_at_cronjob);
    RUN(kueue_job_deactivates_workload);
    RUN(evict);
    RUN(delete_with_uid_precondition);
    RUN(errors_and_faults);
    RUN(slow_answer_times_out);
    RUN(token_rotation_and_401);
    RUN(secret_files);
    RUN(event_and_annotation);
    RUN(pending_pressure);
    RUN(kueue_waiting_pressure);
    RUN(access_review);
    RUN(owner_chain_limits);
    RUN(discovery_resolves_and_caches);
    RUN(custom_resource_chains);
    RUN(generic_patch_scale_delete);

    tmptree_finish(tmpdir);
    curl_global_cleanup();
    return test_done();
}
