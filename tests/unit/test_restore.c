/*
 * The way back (restore.c): the record added to the notice at action time reads back; a
 * restore of each way undoes exactly what the record says (replicas, undo patch, stop
 * annotation) and writes restored-at; it refuses a replaced object (another uid), one
 * changed since (generation, or the stop annotation no longer exactly ours), one never
 * reclaimed, one noticed but not acted on, and a way that cannot be undone.
 */
#include "restore.c"

#include "test.h"

#define NOW 1700003600.0 /* 2023-11-14T23:13:20Z */

static const char notice[] = "{\"actAt\":\"2023-11-14T22:13:20Z\",\"rule\":\"nb\",\"action\":"
                             "\"scaleToZero\",\"noticedAt\":\"2023-11-14T22:00:00Z\",\"uid\":"
                             "\"pod-1\",\"actedAt\":\"2023-11-14T22:13:20Z\"}";

/* An object with the notice of `rec` (NULL: no notice) and extra annotations `ann`. */
static char *object(const struct restore_record *rec, const char *uid, int generation,
                    const char *ann)
{
    char *n = rec ? restore_record_add(notice, rec) : NULL;
    json_object *s = json_object_new_string(n ? n : "");
    char *obj = xasprintf("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"Notebook\",\"metadata\":"
                          "{\"name\":\"alice\",\"namespace\":\"ml\",\"uid\":\"%s\",\"generation\":"
                          "%d,\"annotations\":{%s%s%s%s}},\"spec\":{}}",
                          uid, generation, n ? "\"" KUBE_ANN_NOTICE "\":" : "",
                          n ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN) : "",
                          n && ann ? "," : "", ann ? ann : "");
    json_object_put(s);
    free(n);
    return obj;
}

static int plan(const char *json, struct restore_op *op, char *msg, size_t len)
{
    struct restore_obj o;
    char err[160] = "";
    int rc = restore_obj_parse(json, strlen(json), &o, err, sizeof(err));
    TEST_CHECK_INT(rc, 0);
    if (rc == 0)
        rc = restore_plan(&o, NOW, op, msg, len);
    restore_obj_free(&o);
    return rc;
}

TEST(record_round_trip)
{
    struct restore_record w = {.method = KIND_SCALE,
                               .uid = "root-1",
                               .has_generation = true,
                               .generation = 7,
                               .replicas_before = 3};
    char *n = restore_record_add(notice, &w);
    TEST_CHECK(n != NULL);
    TEST_CHECK_CONTAINS(n, "\"actedAt\":\"2023-11-14T22:13:20Z\"");
    TEST_CHECK_CONTAINS(n, "\"acted\":{\"way\":\"scale\",\"uid\":\"root-1\",\"generation\":7,"
                           "\"replicasBefore\":3}");
    struct restore_record r;
    char err[160] = "";
    TEST_CHECK_INT(restore_record_parse(n, &r, err, sizeof(err)), 0);
    TEST_CHECK_INT(r.method, KIND_SCALE);
    TEST_CHECK_STR(r.uid, "root-1");
    TEST_CHECK_INT(r.generation, 7);
    TEST_CHECK_INT(r.replicas_before, 3);
    TEST_CHECK_STR(r.rule, "nb");
    TEST_CHECK_DBL(r.acted, 1700000000.0, 0);
    restore_record_free(&r);
    free(n);
    TEST_CHECK(restore_record_add("[1]", &w) == NULL);
    TEST_CHECK_INT(
        restore_record_parse("{\"acted\":{\"way\":\"scale\",\"uid\":\"u\"}}", &r, err, sizeof(err)),
        -1);
    TEST_CHECK_CONTAINS(err, "no replica count");
    restore_record_free(&r);
}

TEST(scale_back_to_the_recorded_replicas)
{
    struct restore_record w = {.method = KIND_SCALE,
                               .uid = "root-1",
                               .has_generation = true,
                               .generation = 7,
                               .replicas_before = 3};
    char *obj = object(&w, "root-1", 7, "\"" KUBE_ANN_REPLICAS_BEFORE "\":\"3\"");
    struct restore_op op;
    char msg[512] = "";
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), 0);
    TEST_CHECK_INT(op.method, KIND_SCALE);
    TEST_CHECK_INT(op.replicas, 3);
    TEST_CHECK_STR(op.patch, "{\"metadata\":{\"annotations\":{\"gpureclaim.io/reclaim-notice\":"
                             "null,\"gpureclaim.io/replicas-before-reclaim\":null,"
                             "\"gpureclaim.io/restored-at\":\"2023-11-14T23:13:20Z\"}}}");
    TEST_CHECK_STR(op.what, "scale Notebook ml/alice back to 3 replicas");
    restore_op_free(&op);
    free(obj);
    /* someone changed its spec since (the generation moved): refused */
    obj = object(&w, "root-1", 8, NULL);
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_STR(msg, "Notebook ml/alice changed since the action: its spec is at generation "
                        "8, the action left 7 (changed by someone else since "
                        "2023-11-14T22:13:20Z); refusing");
    TEST_CHECK(op.patch == NULL);
    free(obj);
}

TEST(unpatch_with_the_recorded_undo)
{
    struct restore_record w = {.method = KIND_PATCH,
                               .uid = "root-2",
                               .has_generation = true,
                               .generation = 4,
                               .undo = "{\"spec\":{\"suspend\":false}}"};
    char *obj = object(&w, "root-2", 4, NULL);
    struct restore_op op;
    char msg[512] = "";
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), 0);
    TEST_CHECK_INT(op.method, KIND_PATCH);
    TEST_CHECK_STR(op.patch, "{\"spec\":{\"suspend\":false},\"metadata\":{\"annotations\":{"
                             "\"gpureclaim.io/reclaim-notice\":null,\"gpureclaim.io/"
                             "restored-at\":\"2023-11-14T23:13:20Z\"}}}");
    restore_op_free(&op);
    free(obj);
    /* no generation on the object: a change cannot be ruled out */
    char *n = restore_record_add(notice, &w);
    json_object *s = json_object_new_string(n);
    obj = xasprintf("{\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"r\",\"namespace\":\"ml\","
                    "\"uid\":\"root-2\",\"annotations\":{\"" KUBE_ANN_NOTICE "\":%s}}}",
                    json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN));
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "no metadata.generation on the object");
    json_object_put(s);
    free(n);
    free(obj);
}

TEST(remove_the_stop_annotation_only_if_exactly_ours)
{
    struct restore_record w = {.method = KIND_ANNOTATE,
                               .uid = "nb-1",
                               .key = "kubeflow-resource-stopped",
                               .value = "2023-11-14T22:13:20Z"};
    char *obj = object(&w, "nb-1", 1, "\"kubeflow-resource-stopped\":\"2023-11-14T22:13:20Z\"");
    struct restore_op op;
    char msg[512] = "";
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), 0);
    TEST_CHECK_INT(op.method, KIND_ANNOTATE);
    TEST_CHECK_STR(op.patch, "{\"metadata\":{\"annotations\":{\"gpureclaim.io/reclaim-notice\":"
                             "null,\"kubeflow-resource-stopped\":null,\"gpureclaim.io/"
                             "restored-at\":\"2023-11-14T23:13:20Z\"}}}");
    TEST_CHECK_STR(op.what, "remove annotation kubeflow-resource-stopped from Notebook ml/alice");
    restore_op_free(&op);
    free(obj);
    /* an annotation-only stop does not bump the generation: a new generation is no refusal */
    obj = object(&w, "nb-1", 9, "\"kubeflow-resource-stopped\":\"2023-11-14T22:13:20Z\"");
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), 0);
    restore_op_free(&op);
    free(obj);
    /* stopped again by someone else (another value): refused */
    obj = object(&w, "nb-1", 1, "\"kubeflow-resource-stopped\":\"2023-11-15T08:00:00Z\"");
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_STR(msg, "Notebook ml/alice changed since the action: annotation "
                        "'kubeflow-resource-stopped' is '2023-11-15T08:00:00Z', the action set "
                        "'2023-11-14T22:13:20Z'; refusing");
    free(obj);
    /* started through the platform (Kubeflow's Start removed it): refused, and said so */
    obj = object(&w, "nb-1", 1, NULL);
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "no longer has the annotation 'kubeflow-resource-stopped'");
    TEST_CHECK_CONTAINS(msg, "restarted through its platform already");
    free(obj);
}

/* A command way (a Volcano Job): the record reads back; restore needs the object still stopped
   by the row's way (the caller's o.stopped) and an unchanged generation. */
static int plan_stopped(const char *json, int stopped, struct restore_op *op, char *msg, size_t len)
{
    struct restore_obj o;
    char err[160] = "";
    int rc = restore_obj_parse(json, strlen(json), &o, err, sizeof(err));
    TEST_CHECK_INT(rc, 0);
    TEST_CHECK_INT(o.stopped, -1); /* unknown until the caller asks the row */
    o.stopped = stopped;
    if (rc == 0)
        rc = restore_plan(&o, NOW, op, msg, len);
    restore_obj_free(&o);
    return rc;
}

TEST(command_resumes_only_what_is_still_stopped)
{
    struct restore_record w = {
        .method = KIND_COMMAND, .uid = "job-1", .has_generation = true, .generation = 2};
    char *n = restore_record_add(notice, &w);
    TEST_CHECK_CONTAINS(n, "\"acted\":{\"way\":\"command\",\"uid\":\"job-1\",\"generation\":2}");
    struct restore_record r;
    char err[160] = "";
    TEST_CHECK_INT(restore_record_parse(n, &r, err, sizeof(err)), 0);
    TEST_CHECK_INT(r.method, KIND_COMMAND);
    restore_record_free(&r);
    free(n);
    char *obj = object(&w, "job-1", 2, NULL);
    struct restore_op op;
    char msg[512] = "";
    TEST_CHECK_INT(plan_stopped(obj, 1, &op, msg, sizeof(msg)), 0);
    TEST_CHECK_INT(op.method, KIND_COMMAND);
    TEST_CHECK_STR(op.patch, "{\"metadata\":{\"annotations\":{\"gpureclaim.io/reclaim-notice\":"
                             "null,\"gpureclaim.io/restored-at\":\"2023-11-14T23:13:20Z\"}}}");
    TEST_CHECK_STR(op.what, "create the command that resumes Notebook ml/alice");
    restore_op_free(&op);
    /* resumed (or ended) since: its status no longer reads as stopped */
    TEST_CHECK_INT(plan_stopped(obj, 0, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "is not stopped as the action left it");
    TEST_CHECK(op.patch == NULL);
    TEST_CHECK_INT(plan_stopped(obj, -1, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "unreadable");
    free(obj);
    /* stopped, but its spec changed since */
    obj = object(&w, "job-1", 3, NULL);
    TEST_CHECK_INT(plan_stopped(obj, 1, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "changed since the action");
    free(obj);
    char *hint = restore_hint(KIND_COMMAND, "Job", "ml", "train", "Command", "ResumeJob");
    TEST_CHECK_STR(hint, "to bring it back: gpureclaim-enforcer restore ml/Job/train, or create a "
                         "Command ResumeJob for Job train (as its platform's CLI resumes it)");
    free(hint);
}

TEST(refuse_a_replaced_object)
{
    struct restore_record w = {.method = KIND_SCALE,
                               .uid = "root-1",
                               .has_generation = true,
                               .generation = 7,
                               .replicas_before = 1};
    char *obj = object(&w, "root-NEW", 7, NULL);
    struct restore_op op;
    char msg[512] = "";
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_STR(msg, "Notebook ml/alice was replaced since the action (uid 'root-NEW', the "
                        "action was on 'root-1'): refusing to change the new object");
    free(obj);
}

TEST(refuse_what_was_never_reclaimed)
{
    struct restore_op op;
    char msg[512] = "";
    char *obj = object(NULL, "u", 1, NULL);
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_STR(msg, "Notebook ml/alice carries no gpureclaim.io/reclaim-notice annotation: "
                        "gpureclaim did not reclaim it, nothing to undo");
    free(obj);
    obj = object(NULL, "u", 1, "\"gpureclaim.io/restored-at\":\"2023-11-14T23:00:00Z\"");
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "was already restored at 2023-11-14T23:00:00Z");
    free(obj);
    /* noticed, not acted on */
    const char *noticed =
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":"
        "\"ml\",\"uid\":\"u\",\"generation\":1,\"annotations\":{\"" KUBE_ANN_NOTICE
        "\":\"{\\\"rule\\\":\\\"r\\\",\\\"actAt\\\":\\\"2023-11-14T22:13:20Z\\\"}"
        "\"}}}";
    TEST_CHECK_INT(plan(noticed, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "has a reclaim notice but was not acted on");
    /* acted on before records existed */
    TEST_CHECK_INT(
        plan("{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ml\","
             "\"uid\":\"u\",\"generation\":1,\"annotations\":{\"" KUBE_ANN_NOTICE
             "\":\"{\\\"actedAt\\\":\\\"2023-11-14T22:13:20Z\\\"}\"}}}",
             &op, msg, sizeof(msg)),
        -1);
    TEST_CHECK_CONTAINS(msg, "does not record how (no 'acted' record): undo it by hand");
    /* a delete cannot be undone */
    struct restore_record del = {.method = KIND_DELETE, .uid = "u"};
    obj = object(&del, "u", 1, NULL);
    TEST_CHECK_INT(plan(obj, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "with delete, which cannot be undone");
    free(obj);
}

TEST(not_an_object)
{
    struct restore_obj o;
    char err[160] = "";
    TEST_CHECK_INT(restore_obj_parse("[]", 2, &o, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "the object has no metadata");
    restore_obj_free(&o);
    TEST_CHECK_INT(restore_obj_parse("{", 1, &o, err, sizeof(err)), -1);
    restore_obj_free(&o);
}

TEST(hints)
{
    char *h =
        restore_hint(KIND_ANNOTATE, "Notebook", "ml", "alice", "kubeflow-resource-stopped", NULL);
    TEST_CHECK_STR(h, "to bring it back: gpureclaim-enforcer restore ml/Notebook/alice, or remove "
                      "the annotation kubeflow-resource-stopped from Notebook alice (the "
                      "platform's own start does that)");
    free(h);
    h = restore_hint(KIND_SCALE, "Deployment", "ml", "d", NULL, NULL);
    TEST_CHECK_CONTAINS(h, "restore ml/Deployment/d, or scale Deployment d back");
    free(h);
    h = restore_hint(KIND_PATCH, "RayCluster", "ml", "r", NULL, "{\"spec\":{\"suspend\":false}}");
    TEST_CHECK_CONTAINS(h,
                        "or apply the merge patch {\"spec\":{\"suspend\":false}} to RayCluster r");
    free(h);
    /* After a delete, the owner is told there is no way back, not left to guess. */
    char *del_hint = restore_hint(KIND_DELETE, "Pod", "ml", "p", NULL, NULL);
    TEST_CHECK_CONTAINS(del_hint ? del_hint : "", "no way back");
    TEST_CHECK_CONTAINS(del_hint ? del_hint : "", "re-create Pod p");
    free(del_hint);
    TEST_CHECK(restore_hint(KIND_EVICT, "Pod", "ml", "p", NULL, NULL) == NULL);
}

int main(void)
{
    RUN(record_round_trip);
    RUN(scale_back_to_the_recorded_replicas);
    RUN(unpatch_with_the_recorded_undo);
    RUN(remove_the_stop_annotation_only_if_exactly_ours);
    RUN(command_resumes_only_what_is_still_stopped);
    RUN(refuse_a_replaced_object);
    RUN(refuse_what_was_never_reclaimed);
    RUN(not_an_object);
    RUN(hints);
    return test_done();
}
