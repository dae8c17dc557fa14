/*
 * The way back (restore_plan.c, restore_run.c): the record added to the notice at action time reads
 * back; a restore of each way undoes exactly what the record says (replicas, undo patch, stop
 * annotation) and writes restored-at; it refuses a replaced object (another uid), one
 * changed since (generation, or the stop annotation no longer exactly ours), one never
 * reclaimed, one noticed but not acted on, and a way that cannot be undone. The `restore`
 * command (restore_run) against a fake API that records every call: the calls in order with
 * their preconditions, what it prints and audits, and that a refusal, a dry run or a failed
 * call goes no further; the target and kind look-ups of its command line.
 */
#include "restore_plan.c"
#include "restore_run.c"

#include "test.h"
#include "tmptree.h"

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
                          uid, generation, n ? "\"" ANNOT_NOTICE "\":" : "",
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
    char *obj = object(&w, "root-1", 7, "\"" ANNOT_REPLICAS_BEFORE "\":\"3\"");
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
                    "\"uid\":\"root-2\",\"annotations\":{\"" ANNOT_NOTICE "\":%s}}}",
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
    const char *noticed = "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":"
                          "\"ml\",\"uid\":\"u\",\"generation\":1,\"annotations\":{\"" ANNOT_NOTICE
                          "\":\"{\\\"rule\\\":\\\"r\\\",\\\"actAt\\\":\\\"2023-11-14T22:13:20Z\\\"}"
                          "\"}}}";
    TEST_CHECK_INT(plan(noticed, &op, msg, sizeof(msg)), -1);
    TEST_CHECK_CONTAINS(msg, "has a reclaim notice but was not acted on");
    /* acted on before records existed */
    TEST_CHECK_INT(
        plan("{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ml\","
             "\"uid\":\"u\",\"generation\":1,\"annotations\":{\"" ANNOT_NOTICE
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

/* ---- the command, against a fake API ------------------------------------------------------ */

struct fake_api {
    char *obj; /* what get returns (KUBE_OK), with uid `uid` */
    const char *uid;
    enum kube_result get_res, scale_res, patch_res, event_res, command_res;
    struct sbuf calls; /* one line per call */
    const char *rv;    /* resourceVersion of the last successful patch */
};

static enum kube_result fake_get(void *arg, const struct kube_ref *ref, struct kube_obj *obj,
                                 char *err, size_t errlen)
{
    struct fake_api *f = arg;
    sbuf_printf(&f->calls, "get %s %s %s/%s\n", ref->api_version, ref->kind, ref->ns, ref->name);
    if (f->get_res != KUBE_OK) {
        snprintf(err, errlen, "fake get %s", kube_result_name(f->get_res));
        return f->get_res;
    }
    obj->ref.uid = xstrdup(f->uid);
    obj->resource_version = xstrdup("rv-1");
    obj->raw = xstrdup(f->obj);
    obj->raw_len = strlen(f->obj);
    return KUBE_OK;
}

static enum kube_result fake_scale(void *arg, const struct kube_ref *ref, const char *rv,
                                   int64_t replicas, int64_t *previous, char *err, size_t errlen)
{
    struct fake_api *f = arg;
    sbuf_printf(&f->calls, "scale uid=%s rv=%s replicas=%" PRId64 "\n", ref->uid, rv, replicas);
    *previous = 0;
    if (f->scale_res != KUBE_OK) {
        snprintf(err, errlen, "fake scale %s", kube_result_name(f->scale_res));
        return f->scale_res;
    }
    f->rv = "rv-2";
    return KUBE_OK;
}

static enum kube_result fake_patch(void *arg, const struct kube_ref *ref, const char *rv,
                                   const char *patch, char *err, size_t errlen)
{
    struct fake_api *f = arg;
    sbuf_printf(&f->calls, "patch uid=%s rv=%s %s\n", ref->uid, rv, patch);
    if (f->patch_res != KUBE_OK) {
        snprintf(err, errlen, "fake patch %s", kube_result_name(f->patch_res));
        return f->patch_res;
    }
    f->rv = "rv-3";
    return KUBE_OK;
}

static enum kube_result fake_event(void *arg, const struct kube_ref *ref, const char *reason,
                                   const char *message, const char *type, const char *action,
                                   char *err, size_t errlen)
{
    struct fake_api *f = arg;
    sbuf_printf(&f->calls, "event %s %s %s: %s\n", type, reason, action, message);
    snprintf(err, errlen, "fake event %s", kube_result_name(f->event_res));
    return f->event_res;
}

static enum kube_result fake_command(void *arg, const struct kind_way *way,
                                     const struct kube_obj *obj, bool undo, char *err,
                                     size_t errlen)
{
    struct fake_api *f = arg;
    sbuf_printf(&f->calls, "command %s %s uid=%s\n", way->command.kind,
                undo ? way->command.undo : way->command.stop, obj->ref.uid);
    snprintf(err, errlen, "fake command %s", kube_result_name(f->command_res));
    return f->command_res;
}

static long fake_status(void *arg)
{
    return ((struct fake_api *)arg)->get_res == KUBE_NOT_FOUND ? 404 : 409;
}

static const char *fake_rv(void *arg)
{
    return ((struct fake_api *)arg)->rv;
}

/* One restore_run: status, what it printed on out and errout, and the audit file's text. */
struct run {
    int status;
    char *out, *err, *audit;
};

static struct run run_restore(struct fake_api *f, const char *kind, bool dry_run)
{
    struct restore_api api = {.arg = f,
                              .get = fake_get,
                              .scale = fake_scale,
                              .patch = fake_patch,
                              .post_event = fake_event,
                              .last_status = fake_status,
                              .last_resource_version = fake_rv,
                              .command = fake_command};
    struct run r = {0};
    char dir[PATH_MAX], path[PATH_MAX + 16], err[512] = "";
    size_t outlen = 0, errlen = 0;
    TEST_CHECK_INT(tmptree_make(dir, sizeof(dir), "gpureclaim-restore"), 0);
    snprintf(path, sizeof(path), "%s/audit.log", dir);
    struct audit *au = audit_open(path, err, sizeof(err));
    TEST_CHECK(au != NULL);
    const struct kind_def *def = restore_kind(kinds_builtin(), kind, err, sizeof(err));
    TEST_CHECK(def != NULL);
    FILE *out = open_memstream(&r.out, &outlen), *errout = open_memstream(&r.err, &errlen);
    r.status = def ? restore_run(&api, def, "ml", "alice", dry_run, au, out, errout) : -1;
    fclose(out);
    fclose(errout);
    audit_close(au);
    r.audit = test_read_file(path, NULL);
    tmptree_remove(dir);
    return r;
}

static void run_free(struct run *r, struct fake_api *f)
{
    free(r->out);
    free(r->err);
    free(r->audit);
    free(f->obj);
    sbuf_free(&f->calls);
}

static const struct restore_record scaled = {.method = KIND_SCALE,
                                             .uid = "root-1",
                                             .has_generation = true,
                                             .generation = 7,
                                             .replicas_before = 3};

TEST(run_scales_back_then_records_in_that_order)
{
    struct fake_api f = {.obj = object(&scaled, "root-1", 7, NULL), .uid = "root-1"};
    struct run r = run_restore(&f, "notebooks", false);
    TEST_CHECK_INT(r.status, 0);
    /* The /scale with the object's resourceVersion, then the annotations with the one the
       scale produced: nothing changed between the read and the undo goes unnoticed. */
    TEST_CHECK_CONTAINS(f.calls.buf,
                        "get kubeflow.org/v1 Notebook ml/alice\n"
                        "scale uid=root-1 rv=rv-1 replicas=3\n"
                        "patch uid=root-1 rv=rv-2 {\"metadata\":{\"annotations\":{\"" ANNOT_NOTICE
                        "\":null,\"" ANNOT_REPLICAS_BEFORE "\":null,\"" ANNOT_RESTORED_AT "\":\"");
    TEST_CHECK_CONTAINS(f.calls.buf, "event Normal IdleGPUReclaimRestored Restore: restored: "
                                     "scale Notebook ml/alice back to 3 replicas (reclaimed by "
                                     "rule 'nb'); its idle window starts now\n");
    TEST_CHECK_STR(r.out, "restored: scale Notebook ml/alice back to 3 replicas (reclaimed by rule "
                          "'nb'); its idle window starts now\n");
    TEST_CHECK_STR(r.err, "");
    TEST_CHECK_CONTAINS(r.audit, "\"event\":\"restore\"");
    TEST_CHECK_CONTAINS(r.audit, "\"result\":\"ok\"");
    TEST_CHECK_CONTAINS(r.audit, "\"uid\":\"root-1\"");
    run_free(&r, &f);
}

TEST(run_dry_run_only_reads)
{
    struct fake_api f = {.obj = object(&scaled, "root-1", 7, NULL), .uid = "root-1"};
    struct run r = run_restore(&f, "Notebook.kubeflow.org", true);
    TEST_CHECK_INT(r.status, 0);
    TEST_CHECK_STR(f.calls.buf, "get kubeflow.org/v1 Notebook ml/alice\n");
    TEST_CHECK_CONTAINS(r.out, "dry run: would scale Notebook ml/alice back to 3 replicas\n"
                               "  then merge-patch ml/alice with {\"metadata\":");
    TEST_CHECK_STR(r.audit, "");
    run_free(&r, &f);
}

TEST(run_refusals_and_failures_go_no_further)
{
    /* Gone: a reclaim by delete took its record with it. */
    struct fake_api f = {.get_res = KUBE_NOT_FOUND, .obj = xstrdup("")};
    struct run r = run_restore(&f, "notebook", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK_STR(f.calls.buf, "get kubeflow.org/v1 Notebook ml/alice\n");
    TEST_CHECK_CONTAINS(r.err, "error: Notebook ml/alice does not exist: nothing to restore (a "
                               "reclaim by delete cannot be undone");
    TEST_CHECK_CONTAINS(r.audit, "\"result\":\"not_found\"");
    TEST_CHECK_STR(r.out, "");
    run_free(&r, &f);

    /* Replaced since the action: refused before any write. */
    f = (struct fake_api){.obj = object(&scaled, "root-9", 7, NULL), .uid = "root-9"};
    r = run_restore(&f, "notebook", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK_STR(f.calls.buf, "get kubeflow.org/v1 Notebook ml/alice\n");
    TEST_CHECK_CONTAINS(r.err, "error: ");
    TEST_CHECK_CONTAINS(r.audit, "\"result\":\"refused\"");
    TEST_CHECK_CONTAINS(r.audit, "\"rule\":\"nb\"");
    run_free(&r, &f);

    /* The scale fails: the annotations are not touched, no Event says it was restored. */
    f = (struct fake_api){
        .obj = object(&scaled, "root-1", 7, NULL), .uid = "root-1", .scale_res = KUBE_FORBIDDEN};
    r = run_restore(&f, "notebook", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK(strstr(f.calls.buf, "patch ") == NULL);
    TEST_CHECK(strstr(f.calls.buf, "event ") == NULL);
    TEST_CHECK_CONTAINS(r.err, "error: cannot scale Notebook ml/alice back to 3 replicas: fake "
                               "scale");
    TEST_CHECK_CONTAINS(r.audit, "\"result\":\"forbidden\"");
    run_free(&r, &f);

    /* A conflict on the undo patch: changed while restoring, run it again. */
    struct restore_record patched = {.method = KIND_PATCH,
                                     .uid = "root-1",
                                     .has_generation = true,
                                     .generation = 2,
                                     .undo = "{\"spec\":{\"suspend\":false}}"};
    f = (struct fake_api){
        .obj = object(&patched, "root-1", 2, NULL), .uid = "root-1", .patch_res = KUBE_CONFLICT};
    r = run_restore(&f, "notebook", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK_CONTAINS(f.calls.buf, "patch uid=root-1 rv=rv-1 {\"spec\":{\"suspend\":false},");
    TEST_CHECK(strstr(f.calls.buf, "event ") == NULL);
    TEST_CHECK_CONTAINS(r.err, "(it changed while restoring: run restore again to check it anew)");
    run_free(&r, &f);

    /* The Event is the one best-effort call: restored all the same. */
    f = (struct fake_api){
        .obj = object(&scaled, "root-1", 7, NULL), .uid = "root-1", .event_res = KUBE_ERROR};
    r = run_restore(&f, "notebook", false);
    TEST_CHECK_INT(r.status, 0);
    TEST_CHECK_CONTAINS(r.out, "restored: scale Notebook ml/alice back to 3 replicas");
    run_free(&r, &f);
}

/* The Volcano Job of `rec` in phase `phase`: a command way reads its status. */
static char *volcano_job(const struct restore_record *rec, const char *phase)
{
    char *o = object(rec, "job-1", 2, NULL);
    char *end = strstr(o, "\"spec\":{}}");
    TEST_CHECK(end != NULL);
    if (end)
        *end = '\0';
    /* the object's identity as the Volcano Job it stands for */
    const char *nb = "\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"Notebook\",";
    char *id = strstr(o, nb);
    TEST_CHECK(id != NULL);
    char *v = xasprintf("{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",%s"
                        "\"spec\":{},\"status\":{\"state\":{\"phase\":\"%s\"}}}",
                        id ? id + strlen(nb) : o, phase);
    free(o);
    return v;
}

TEST(run_command_way_resumes_then_records)
{
    struct restore_record cmd = {
        .method = KIND_COMMAND, .uid = "job-1", .has_generation = true, .generation = 2};
    struct fake_api f = {.obj = volcano_job(&cmd, "Aborted"), .uid = "job-1"};
    struct run r = run_restore(&f, "jobs.batch.volcano.sh", false);
    TEST_CHECK_INT(r.status, 0);
    /* The command first, then the annotations with the uid precondition only: the controller
       changes the status (and the resourceVersion) as it carries the command out. */
    TEST_CHECK_CONTAINS(f.calls.buf, "get batch.volcano.sh/v1alpha1 Job ml/alice\n"
                                     "command Command ResumeJob uid=job-1\n"
                                     "patch uid=job-1 rv=(null) {\"metadata\":");
    TEST_CHECK_CONTAINS(r.out, "restored: create the command that resumes Job ml/alice");
    run_free(&r, &f);

    /* Running again since the action: not ours to resume, nothing is sent. */
    f = (struct fake_api){.obj = volcano_job(&cmd, "Running"), .uid = "job-1"};
    r = run_restore(&f, "jobs.batch.volcano.sh", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK_STR(f.calls.buf, "get batch.volcano.sh/v1alpha1 Job ml/alice\n");
    TEST_CHECK_CONTAINS(r.err, "is not stopped as the action left it");
    run_free(&r, &f);

    /* A command of ours still there: said so, and the annotations are left as they are. */
    f = (struct fake_api){
        .obj = volcano_job(&cmd, "Aborted"), .uid = "job-1", .command_res = KUBE_CONFLICT};
    r = run_restore(&f, "jobs.batch.volcano.sh", false);
    TEST_CHECK_INT(r.status, 1);
    TEST_CHECK(strstr(f.calls.buf, "patch ") == NULL);
    TEST_CHECK_CONTAINS(r.err, "fake command conflict");
    run_free(&r, &f);
}

TEST(target_and_kind)
{
    struct restore_target t;
    char err[512] = "";
    TEST_CHECK_INT(
        restore_target_parse("ml/notebook/alice", "default", false, &t, err, sizeof(err)), 0);
    TEST_CHECK_STR(t.ns, "ml");
    TEST_CHECK_STR(t.kind, "notebook");
    TEST_CHECK_STR(t.name, "alice");
    restore_target_free(&t);
    TEST_CHECK_INT(restore_target_parse("notebook/alice", "team", true, &t, err, sizeof(err)), 0);
    TEST_CHECK_STR(t.ns, "team");
    restore_target_free(&t);
    TEST_CHECK_INT(restore_target_parse("ml/notebook/alice", "team", true, &t, err, sizeof(err)),
                   -1);
    TEST_CHECK_STR(err, "'ml/notebook/alice' names namespace 'ml', --namespace says 'team'");
    TEST_CHECK_INT(restore_target_parse("a/b/c/d", "default", false, &t, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "invalid target 'a/b/c/d': want [NS/]KIND/NAME, e.g. ml/notebook/alice");
    TEST_CHECK_INT(restore_target_parse("alice", "default", false, &t, err, sizeof(err)), -1);
    TEST_CHECK_INT(restore_target_parse("ml//alice", "default", false, &t, err, sizeof(err)), -1);

    const struct kind_def *d = restore_kind(kinds_builtin(), "DEPLOYMENTS", err, sizeof(err));
    TEST_CHECK(d != NULL && strcmp(d->kind, "Deployment") == 0);
    d = restore_kind(kinds_builtin(), "deployment.apps", err, sizeof(err));
    TEST_CHECK(d != NULL && strcmp(d->group, "apps") == 0);
    TEST_CHECK(restore_kind(kinds_builtin(), "deployment.batch", err, sizeof(err)) == NULL);
    TEST_CHECK(restore_kind(kinds_builtin(), "Widget", err, sizeof(err)) == NULL);
    TEST_CHECK_STR(err, "kind 'Widget' is not in the workload kinds table: " KINDS_HOW_TO_ADD);
    /* As kubectl: a bare "job" is Kubernetes' (batch/v1), Volcano's needs its group. */
    d = restore_kind(kinds_builtin(), "job", err, sizeof(err));
    TEST_CHECK(d != NULL && strcmp(d->group, "batch") == 0);
    d = restore_kind(kinds_builtin(), "jobs.batch.volcano.sh", err, sizeof(err));
    TEST_CHECK(d != NULL && strcmp(d->group, "batch.volcano.sh") == 0);
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
    RUN(run_scales_back_then_records_in_that_order);
    RUN(run_dry_run_only_reads);
    RUN(run_refusals_and_failures_go_no_further);
    RUN(run_command_way_resumes_then_records);
    RUN(target_and_kind);
    return test_done();
}
