/*
 * Tests of the Kubernetes action backend's choice of target (enforcer/act_kube.c) against
 * tests/fakes/fake_kube (kube_env.h): the owner walk acts at the top of custom resources, stops
 * below a CronJob, and refuses an object that changed since it was read.
 */
#include <curl/curl.h>

#include "act_kube.c"
#include "kube_env.h"

/* ---- the action backend's choice of target (act_kube.c) ------------------------------- */

/* Resolve pod ml/NAME for a rule with `action` through the Kubernetes backend of `e`. */
static enum act_result resolve_pod(struct act_backend *b, const char *name, enum rule_action action,
                                   struct act_target *t, char *err, size_t errlen)
{
    struct rule rule = {.name = (char *)"r", .action = action};
    struct decision_rec d = {.rule = &rule};
    labels_set(&d.identity, "namespace", "ml");
    labels_set(&d.identity, "pod", name);
    enum act_result r = b->resolve(b, &d, t, err, errlen);
    labels_free(&d.identity);
    return r;
}

/* The backend over the env's client (the env keeps the client: the backend is freed alone). */
static struct act_backend *backend_of(struct env *e)
{
    struct act_backend *b = act_kube_new(e->k);
    act_kube_set_kinds(b, NULL);
    return b;
}

/* The backend frees what it holds (the record of its last action too) and the client, which
   the env then no longer has. */
static void backend_free(struct env *e, struct act_backend *b)
{
    b->free(b);
    e->k = NULL;
}

TEST(act_at_the_top_of_custom_resources)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    struct act_backend *b = backend_of(&e);
    char err[1024] = "";
    struct act_target t;
    /* Notebook -> StatefulSet -> Pod: the Notebook, by its annotation, never the StatefulSet. */
    TEST_CHECK_INT(resolve_pod(b, "alice-0", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_INT(t.nchain, 3);
    TEST_CHECK_STR(t.chain[t.nchain - 1].kind, "Notebook");
    TEST_CHECK_STR(t.how, "annotate Notebook ml/alice kubeflow-resource-stopped");
    TEST_CHECK(!t.exempt && t.running);
    b->target_free(b, &t);
    /* AIMService -> InferenceService -> Deployment -> ReplicaSet -> Pod: the AIMService, which
       has no stop but delete. scaleToZero is kept with its own reason, never a delete. */
    TEST_CHECK_INT(
        resolve_pod(b, "chat-predictor-8b9c-r4t5y", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)),
        ACT_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "kept: AIMService ml/chat cannot be reclaimed by action "
                             "'scaleToZero'");
    TEST_CHECK_INT(resolve_pod(b, "chat-predictor-8b9c-r4t5y", ACTION_DELETE, &t, err, sizeof(err)),
                   ACT_OK);
    TEST_CHECK_INT(t.nchain, 5);
    TEST_CHECK_STR(t.how, "delete AIMService ml/chat");
    b->target_free(b, &t);
    /* InferenceService -> Deployment -> ReplicaSet -> Pod. */
    TEST_CHECK_INT(
        resolve_pod(b, "llm-predictor-5d6f7-q2w3e", ACTION_SUSPEND, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_STR(t.how, "annotate InferenceService ml/llm serving.kserve.io/stop=true");
    b->target_free(b, &t);
    /* JobSet -> Job -> Pod. */
    TEST_CHECK_INT(resolve_pod(b, "sweep-workers-0-0-z9x8c", ACTION_SUSPEND, &t, err, sizeof(err)),
                   ACT_OK);
    TEST_CHECK_STR(t.how, "patch JobSet ml/sweep {\"spec\":{\"suspend\":true}}");
    b->target_free(b, &t);
    /* Evict is of the pod, whatever owns it; the notice stays on the top owner. */
    TEST_CHECK_INT(resolve_pod(b, "alice-0", ACTION_EVICT, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_STR(t.how, "evict Pod ml/alice-0");
    TEST_CHECK_STR(t.chain[t.nchain - 1].kind, "Notebook");
    b->target_free(b, &t);
    /* A kind the table does not know on top (over a Deployment it would restore). */
    TEST_CHECK_INT(resolve_pod(b, "wid-6c7d-a1s2d", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)),
                   ACT_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "kept: the top owner Widget ml/wid (apiVersion 'example.com/v1')");
    TEST_CHECK_CONTAINS(err, KINDS_HOW_TO_ADD);
    /* An owner kind the API does not serve. */
    TEST_CHECK_INT(resolve_pod(b, "gadget-f5g6h", ACTION_DELETE, &t, err, sizeof(err)),
                   ACT_UNSUPPORTED);
    TEST_CHECK_CONTAINS(err, "kept: owner Gadget 'ml/g'");
    /* Exempt on the middle object of the chain keeps it. */
    TEST_CHECK_INT(
        resolve_pod(b, "keep-predictor-1a2b-c3v4b", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)),
        ACT_OK);
    TEST_CHECK(t.exempt);
    b->target_free(b, &t);
    /* A uid replaced mid-walk: never acted on. */
    TEST_CHECK_INT(resolve_pod(b, "stale-abc", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)),
                   ACT_CONFLICT);
    /* No write in any of it. */
    env_load_log(&e);
    for (size_t i = 0; i < e.nreq; i++)
        TEST_CHECK(jeq(e.req[i], "/method", "GET"));
    backend_free(&e, b);
    env_stop(&e);
}

TEST(act_stops_below_a_cronjob_and_on_a_changed_object)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    struct act_backend *b = backend_of(&e);
    char err[1024] = "";
    struct act_target t;
    /* CronJob -> Job -> Pod: the run, not the schedule, which is not even read. */
    TEST_CHECK_INT(resolve_pod(b, "nightly-29001-abcde", ACTION_SUSPEND, &t, err, sizeof(err)),
                   ACT_OK);
    TEST_CHECK_INT(t.nchain, 2);
    TEST_CHECK_STR(t.how, "patch Job ml/nightly-29001 {\"spec\":{\"suspend\":true}}");
    b->target_free(b, &t);
    env_load_log(&e);
    for (size_t i = 0; i < e.nreq; i++)
        TEST_CHECK(!strstr(jstr(e.req[i], "/path"), "cronjobs"));

    /* RayCluster: suspended with the resourceVersion read; the same target again is stale. */
    TEST_CHECK_INT(resolve_pod(b, "ray-head-h7j8k", ACTION_SUSPEND, &t, err, sizeof(err)), ACT_OK);
    long status = 0;
    TEST_CHECK_INT(b->act(b, &t, ACTION_SUSPEND, &status, err, sizeof(err)), ACT_OK);
    TEST_CHECK_INT(status, 200);
    size_t n = env_load_log(&e);
    /* the PATCH, then the Event */
    TEST_CHECK(n >= 2 && jeq(e.req[n - 2], "/method", "PATCH") &&
               jeq(e.req[n - 2], "/path", "/apis/ray.io/v1/namespaces/ml/rayclusters/ray"));
    TEST_CHECK(n >= 2 && jeq(e.req[n - 2], "/body/spec", "{\"suspend\":true}") &&
               jstr(e.req[n - 2], "/body/metadata/resourceVersion"));
    /* 409 Conflict, read again: the spec is not the one the target was read with (it was
       suspended since), so it is not written again; the 409 is in the message */
    TEST_CHECK_INT(b->act(b, &t, ACTION_SUSPEND, &status, err, sizeof(err)), ACT_CONFLICT);
    TEST_CHECK_INT(status, 409);
    TEST_CHECK_CONTAINS(err, "its spec is not the one the decision was made on");
    TEST_CHECK_CONTAINS(err, "the object has been modified");
    b->target_free(b, &t);
    /* KubeRay deletes a suspended cluster's pods (tests/fakes/fake_kube_ctl.h): gone. */
    TEST_CHECK_INT(resolve_pod(b, "ray-head-h7j8k", ACTION_SUSPEND, &t, err, sizeof(err)),
                   ACT_GONE);
    /* A Notebook's pod stays in the fake: read again after the stop, it is recognised as
       stopped and nothing is written twice. */
    TEST_CHECK_INT(resolve_pod(b, "alice-0", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_INT(b->act(b, &t, ACTION_SCALE_TO_ZERO, &status, err, sizeof(err)), ACT_OK);
    b->target_free(b, &t);
    TEST_CHECK_INT(resolve_pod(b, "alice-0", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)), ACT_OK);
    n = env_load_log(&e);
    TEST_CHECK_INT(b->act(b, &t, ACTION_SCALE_TO_ZERO, &status, err, sizeof(err)), ACT_OK);
    size_t m = env_load_log(&e);
    for (size_t i = n; i < m; i++)
        TEST_CHECK(!jeq(e.req[i], "/method", "PATCH"));
    b->target_free(b, &t);

    /* LeaderWorkerSet through its /scale, replicas-before recorded. */
    TEST_CHECK_INT(resolve_pod(b, "lws-0", ACTION_SCALE_TO_ZERO, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_STR(t.how, "scale LeaderWorkerSet ml/lws to 0");
    TEST_CHECK_INT(b->act(b, &t, ACTION_SCALE_TO_ZERO, &status, err, sizeof(err)), ACT_OK);
    b->target_free(b, &t);
    struct kube_ref lws = {(char *)"leaderworkerset.x-k8s.io/v1", (char *)"LeaderWorkerSet",
                           (char *)"ml", (char *)"lws", NULL};
    struct kube_obj o;
    TEST_CHECK_INT(kube_get(e.k, &lws, &o, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(o.has_replicas && o.replicas == 0);
    TEST_CHECK_STR(kube_annotation(&o, ANNOT_REPLICAS_BEFORE), "2");
    kube_obj_free(&o);
    backend_free(&e, b);
    env_stop(&e);
}

/* A Volcano Job: the command way (kinds.h KIND_COMMAND), a Command AbortJob its controller takes.
 */
TEST(act_volcano_job_by_command)
{
    struct env e;
    if (env_start(&e, 5, NULL) < 0)
        return;
    struct act_backend *b = backend_of(&e);
    char err[1024] = "";
    struct act_target t;
    long status = 0;
    TEST_CHECK_INT(resolve_pod(b, "vj-worker-0", ACTION_SUSPEND, &t, err, sizeof(err)), ACT_OK);
    TEST_CHECK_INT(t.nchain, 2);
    TEST_CHECK_STR(t.how, "create a bus.volcano.sh/v1alpha1 Command AbortJob for Job ml/vj");
    /* the group named: a bare "Job" is batch/v1's to `restore` */
    TEST_CHECK_CONTAINS(t.restore_hint, "gpureclaim-enforcer restore ml/Job.batch.volcano.sh/vj");
    TEST_CHECK_CONTAINS(t.restore_hint, "Command ResumeJob");
    /* a command of ours still there (its controller not taking commands): 409, said so, and
       nothing else written */
    size_t n = env_load_log(&e);
    TEST_CHECK(tmptree_put(e.dir, "faults",
                           "POST /apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands=409x1\n") ==
               0);
    TEST_CHECK_INT(b->act(b, &t, ACTION_SUSPEND, &status, err, sizeof(err)), ACT_CONFLICT);
    TEST_CHECK_CONTAINS(err, "Command AbortJob 'vj-gpureclaim-abortjob' is still there, not "
                             "carried out");
    size_t m = env_load_log(&e);
    TEST_CHECK_INT(m, n + 1);
    CHECK_REQ(&e, n, "POST", "/apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands");
    TEST_CHECK(act_kube_of(b)->last.method == KIND_NONE); /* nothing to undo recorded */
    /* the command as vcctl makes it, then the Event */
    TEST_CHECK_INT(b->act(b, &t, ACTION_SUSPEND, &status, err, sizeof(err)), ACT_OK);
    TEST_CHECK_INT(status, 201);
    m = env_load_log(&e);
    TEST_CHECK_INT(m, n + 3);
    CHECK_REQ(&e, n + 1, "POST", "/apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands");
    json_object *c = n + 1 < e.nreq ? e.req[n + 1] : NULL;
    TEST_CHECK(jeq(c, "/content_type", "application/json"));
    TEST_CHECK(jeq(c, "/body/kind", "Command") &&
               jeq(c, "/body/apiVersion", "bus.volcano.sh/v1alpha1"));
    TEST_CHECK(jeq(c, "/body/action", "AbortJob"));
    TEST_CHECK(jeq(c, "/body/metadata/name", "vj-gpureclaim-abortjob") &&
               jeq(c, "/body/metadata/namespace", "ml"));
    TEST_CHECK(jeq(c, "/body/target/apiVersion", "batch.volcano.sh/v1alpha1") &&
               jeq(c, "/body/target/kind", "Job") && jeq(c, "/body/target/name", "vj") &&
               jeq(c, "/body/target/uid", UID("000301")) &&
               jeq(c, "/body/target/controller", "true"));
    TEST_CHECK(jeq(c, "/body/metadata/ownerReferences/0/uid", UID("000301")));
    CHECK_REQ(&e, n + 2, "POST", "/api/v1/namespaces/ml/events");
    /* recorded for restore: the command way, the Job's uid, its generation unchanged */
    struct restore_record *rec = &act_kube_of(b)->last;
    TEST_CHECK(rec->method == KIND_COMMAND && rec->uid && strcmp(rec->uid, UID("000301")) == 0);
    TEST_CHECK(rec->has_generation && rec->generation == 1);
    b->target_free(b, &t);
    /* Volcano's controller took it (tests/fakes/fake_kube_ctl.h): Aborted, its pod gone */
    struct kube_ref vj = {(char *)"batch.volcano.sh/v1alpha1", (char *)"Job", (char *)"ml",
                          (char *)"vj", NULL};
    struct kube_obj o;
    TEST_CHECK_INT(kube_get(e.k, &vj, &o, err, sizeof(err)), KUBE_OK);
    TEST_CHECK(o.raw && strstr(o.raw, "\"phase\":\"Aborted\""));
    const struct kind_def *d = kinds_find(NULL, "batch.volcano.sh/v1alpha1", "Job");
    char serr[128];
    TEST_CHECK(d && o.raw &&
               kinds_is_stopped(&d->ways[ACTION_SUSPEND], o.raw, o.raw_len, serr, sizeof(serr)) ==
                   1);
    kube_obj_free(&o);
    TEST_CHECK_INT(resolve_pod(b, "vj-worker-0", ACTION_SUSPEND, &t, err, sizeof(err)), ACT_GONE);
    backend_free(&e, b);
    env_stop(&e);
}

int main(int argc, char **argv)
{
    if (kube_env_setup(argv[0], "gpureclaim-test_act_kube") < 0)
        return 1;

    RUN(act_at_the_top_of_custom_resources);
    RUN(act_stops_below_a_cronjob_and_on_a_changed_object);
    RUN(act_volcano_job_by_command);

    tmptree_finish(tmpdir);
    curl_global_cleanup();
    return test_done();
}
