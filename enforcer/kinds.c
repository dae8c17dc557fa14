/*
 * The table of workload kinds (kinds.h): the built-in rows, each verified against its project's
 * source or CRDs (docs/workload-kinds.md), the user rows of a rules file's `kinds:` section, and
 * the pure questions asked of a row (is this object stopped, which permissions does a way need).
 *
 * Why data and not code: before this table the owner walk, the action calls and the RBAC
 * manifest each knew the kinds on their own, and an owner none of them knew kept the workload
 * for ever. A row says everything the enforcer needs about a kind, so adding one (built in or
 * in YAML) changes no code path, and the RBAC manifest is checked against the rows
 * (tests/unit/test_kinds.c) so that the two cannot drift.
 *
 * The `kinds:` parser is here rather than in rules.c so that the rows' rules (which method
 * fits which action, what a patch may touch, what undoes it) live beside the table; it reports
 * through a callback so that its errors join the rules file's own, sorted by position.
 */
#include "kinds.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonparse.h"
#include "util.h"
#include "ydom.h"

/* Nesting of a user patch: spec.a.b.c is depth 4; no CRD stop field is deeper than that. */
#define KINDS_PATCH_DEPTH 8
/* An object handed to kinds_is_stopped: Kubernetes objects nest about 10-15 levels. */
#define KINDS_OBJ_DEPTH 64

#define SUSPEND_PATCH   "{\"spec\":{\"suspend\":true}}"
#define UNSUSPEND_PATCH "{\"spec\":{\"suspend\":false}}"

#define WAY_SCALE                                                                                  \
    {                                                                                              \
        .method = KIND_SCALE                                                                       \
    }
#define WAY_DELETE                                                                                 \
    {                                                                                              \
        .method = KIND_DELETE                                                                      \
    }
#define WAY_EVICT                                                                                  \
    {                                                                                              \
        .method = KIND_EVICT                                                                       \
    }
#define WAY_SUSPEND                                                                                \
    {                                                                                              \
        .method = KIND_PATCH, .patch = SUSPEND_PATCH, .unpatch = UNSUSPEND_PATCH                   \
    }
/* A row with no way: known to the walk (it climbs through or stops below it), never acted on. */
#define NO_WAYS [ACTION_REPORT] = {.method = KIND_NONE}
#define WAY_ANNOTATE(k, v)                                                                         \
    {                                                                                              \
        .method = KIND_ANNOTATE, .key = (k), .value = (v)                                          \
    }

/* Kubeflow's notebook controller sets its StatefulSet's replicas to 0 while the annotation is
   present, whatever its value; its culler writes the RFC 3339 time (NULL value here). */
#define NOTEBOOK_STOP WAY_ANNOTATE("kubeflow-resource-stopped", NULL)
/* KServe deletes the predictor's (transformer's, explainer's) workload while the annotation is
   "true" (case-insensitive), keeping the InferenceService. */
#define KSERVE_STOP WAY_ANNOTATE("serving.kserve.io/stop", "true")
/* The Kubeflow training operator v1 (one reconciler for every kind) and mpi-operator v2beta1
   delete the job's pods while spec.runPolicy.suspend is true and create them again after. */
#define RUNPOLICY_SUSPEND                                                                          \
    {                                                                                              \
        .method = KIND_PATCH, .patch = "{\"spec\":{\"runPolicy\":{\"suspend\":true}}}",            \
        .unpatch = "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}"                                \
    }
/* Volcano's job controller aborts a Job on a Command AbortJob (killing its running and pending
   pods, phase Aborting then Aborted) and restarts it on ResumeJob; `vcctl job suspend` and
   `vcctl job resume` create exactly these. It takes and deletes a command in any phase but
   acts on AbortJob only from Pending or Running: from Restarting or Completing the command
   would be gone and the job not stopped, so the way requires Running (a job with idle GPU
   pods runs). */
#define VOLCANO_ABORT                                                                              \
    {                                                                                              \
        .method = KIND_COMMAND,                                                                    \
        .command = {"bus.volcano.sh", "v1alpha1", "Command", "commands", "AbortJob", "ResumeJob"}, \
        .requires = "{\"status\":{\"state\":{\"phase\":\"Running\"}}}",                            \
        .stopped = "[{\"status\":{\"state\":{\"phase\":\"Aborting\"}}},"                           \
                   "{\"status\":{\"state\":{\"phase\":\"Aborted\"}}}]"                             \
    }

#define ROW(g, v, k, rec, res, anchor, ...)                                                        \
    {                                                                                              \
        .group = (g), .version = (v), .kind = (k), .reconciles = (rec), .ways = {__VA_ARGS__},     \
        .source = "docs/workload-kinds.md#" anchor, .resource = (res)                              \
    }

/*
 * The built-in rows. ways[] is indexed by enum rule_action; an action not listed is KIND_NONE.
 * Each row's facts, their sources (repository, path, commit) and why each action maps to that
 * way or to none are in docs/workload-kinds.md under the row's anchor.
 */
static const struct kind_def builtin_rows[] = {
    /* Kubernetes */
    ROW("", "v1", "Pod", true, "pods",
        "pod", [ACTION_EVICT] = WAY_EVICT, [ACTION_DELETE] = WAY_DELETE),
    ROW("apps", "v1", "ReplicaSet", true, "replicasets",
        "replicaset", [ACTION_SCALE_TO_ZERO] = WAY_SCALE, [ACTION_DELETE] = WAY_DELETE),
    ROW("apps", "v1", "Deployment", true, "deployments",
        "deployment", [ACTION_SCALE_TO_ZERO] = WAY_SCALE, [ACTION_DELETE] = WAY_DELETE),
    ROW("apps", "v1", "StatefulSet", true, "statefulsets",
        "statefulset", [ACTION_SCALE_TO_ZERO] = WAY_SCALE, [ACTION_DELETE] = WAY_DELETE),
    ROW("batch", "v1", "Job", true, "jobs",
        "job", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    /* A schedule, not a workload: the walk stops below it and acts on this run's Job. */
    ROW("batch", "v1", "CronJob", false, "cronjobs", "cronjob", NO_WAYS),
    /* Kubeflow Notebooks */
    ROW("kubeflow.org", "v1", "Notebook", true, "notebooks",
        "notebook", [ACTION_SCALE_TO_ZERO] = NOTEBOOK_STOP, [ACTION_SUSPEND] = NOTEBOOK_STOP,
        [ACTION_DELETE] = WAY_DELETE),
    /* KServe, and the Knative objects between a serverless InferenceService and its pods */
    ROW("serving.kserve.io", "v1beta1", "InferenceService", true, "inferenceservices",
        "inferenceservice", [ACTION_SCALE_TO_ZERO] = KSERVE_STOP, [ACTION_SUSPEND] = KSERVE_STOP,
        [ACTION_DELETE] = WAY_DELETE),
    ROW("serving.kserve.io", "v1alpha2", "LLMInferenceService", true, "llminferenceservices",
        "llminferenceservice", [ACTION_SCALE_TO_ZERO] = KSERVE_STOP, [ACTION_SUSPEND] = KSERVE_STOP,
        [ACTION_DELETE] = WAY_DELETE),
    ROW("serving.knative.dev", "v1", "Service", true, "services", "knative", NO_WAYS),
    ROW("serving.knative.dev", "v1", "Configuration", true, "configurations", "knative", NO_WAYS),
    ROW("serving.knative.dev", "v1", "Revision", true, "revisions", "knative", NO_WAYS),
    /* AMD AI Workbench: AIM and Kaiwo have no stop but delete */
    ROW("aim.eai.amd.com", "v1alpha1", "AIMService", true, "aimservices",
        "aimservice", [ACTION_DELETE] = WAY_DELETE),
    ROW("aim.silogen.ai", "v1alpha1", "AIMService", true, "aimservices",
        "aimservice", [ACTION_DELETE] = WAY_DELETE),
    ROW("kaiwo.silogen.ai", "v1alpha1", "KaiwoJob", true, "kaiwojobs",
        "kaiwo", [ACTION_DELETE] = WAY_DELETE),
    ROW("kaiwo.silogen.ai", "v1alpha1", "KaiwoService", true, "kaiwoservices",
        "kaiwo", [ACTION_DELETE] = WAY_DELETE),
    /* KubeRay */
    ROW("ray.io", "v1", "RayCluster", true, "rayclusters",
        "raycluster", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("ray.io", "v1", "RayJob", true, "rayjobs", "rayjob",
        [ACTION_SUSPEND] = {.method = KIND_PATCH,
                            .patch = SUSPEND_PATCH,
                            .unpatch = UNSUSPEND_PATCH,
                            .requires = "{\"spec\":{\"shutdownAfterJobFinishes\":true,"
                                        "\"clusterSelector\":null},"
                                        "\"status\":{\"jobDeploymentStatus\":\"Running\"}}"},
        [ACTION_DELETE] = WAY_DELETE),
    ROW("ray.io", "v1", "RayService", true, "rayservices",
        "rayservice", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    /* A schedule of RayJobs, like CronJob: the walk stops below it, at the RayJob. */
    ROW("ray.io", "v1", "RayCronJob", false, "raycronjobs", "raycronjob", NO_WAYS),
    /* JobSet, Kubeflow Trainer and the training operator, LeaderWorkerSet */
    ROW("jobset.x-k8s.io", "v1alpha2", "JobSet", true, "jobsets",
        "jobset", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("trainer.kubeflow.org", "v1alpha1", "TrainJob", true, "trainjobs",
        "trainjob", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("kubeflow.org", "v1", "PyTorchJob", true, "pytorchjobs",
        "pytorchjob", [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("kubeflow.org", "v1", "TFJob", true, "tfjobs", "training-operator-jobs",
        [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("kubeflow.org", "v1", "XGBoostJob", true, "xgboostjobs", "training-operator-jobs",
        [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("kubeflow.org", "v1", "PaddleJob", true, "paddlejobs", "training-operator-jobs",
        [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    ROW("kubeflow.org", "v1", "JAXJob", true, "jaxjobs", "training-operator-jobs",
        [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    /* v2beta1 (mpi-operator) and v1 (training operator) are one row: the same field stops
       both; the row names v2beta1 so that `restore` finds mpi-operator's MPIJobs in a group
       whose v1 the training operator serves (docs/workload-kinds.md#mpijob). */
    ROW("kubeflow.org", "v2beta1", "MPIJob", true, "mpijobs",
        "mpijob", [ACTION_SUSPEND] = RUNPOLICY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    /* CodeFlare AppWrapper: spec.suspend (Kueue's when it admits it) */
    ROW("workload.codeflare.dev", "v1beta2", "AppWrapper", true, "appwrappers",
        "appwrapper", [ACTION_SUSPEND] = WAY_SUSPEND, [ACTION_DELETE] = WAY_DELETE),
    /* Volcano: no field stops a Job, a Command does */
    ROW("batch.volcano.sh", "v1alpha1", "Job", true, "jobs",
        "volcano-job", [ACTION_SUSPEND] = VOLCANO_ABORT, [ACTION_DELETE] = WAY_DELETE),
    /* Argo Workflows: no stop that can be undone, so delete only; CronWorkflow is a schedule */
    ROW("argoproj.io", "v1alpha1", "Workflow", true, "workflows",
        "workflow", [ACTION_DELETE] = WAY_DELETE),
    ROW("argoproj.io", "v1alpha1", "CronWorkflow", false, "cronworkflows", "cronworkflow", NO_WAYS),
    ROW("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", true, "leaderworkersets",
        "leaderworkerset", [ACTION_SCALE_TO_ZERO] = WAY_SCALE, [ACTION_DELETE] = WAY_DELETE),
};

/*
 * A table. The built-in one has no user rows and no order; a parsed one lists its user rows
 * first, then the built-in rows that no user row replaces (order[]).
 */
struct kinds {
    struct kind_def *user; /* strings owned */
    size_t nuser;
    const struct kind_def **order; /* kinds_at order; NULL: the built-in rows as they are */
    size_t norder;
};

static const struct kinds builtin_table = {NULL, 0, NULL, 0};

const struct kinds *kinds_builtin(void)
{
    return &builtin_table;
}

const char *kinds_method_name(enum kind_method m)
{
    switch (m) {
    case KIND_NONE:
        return "none";
    case KIND_SCALE:
        return "scale";
    case KIND_PATCH:
        return "patch";
    case KIND_ANNOTATE:
        return "annotate";
    case KIND_DELETE:
        return "delete";
    case KIND_EVICT:
        return "evict";
    case KIND_COMMAND:
        return "command";
    }
    return "none";
}

size_t kinds_count(const struct kinds *t)
{
    if (!t || !t->order)
        return ARRAY_LEN(builtin_rows);
    return t->norder;
}

const struct kind_def *kinds_at(const struct kinds *t, size_t i)
{
    if (!t || !t->order)
        return i < ARRAY_LEN(builtin_rows) ? &builtin_rows[i] : NULL;
    return i < t->norder ? t->order[i] : NULL;
}

size_t kinds_user_count(const struct kinds *t)
{
    return t ? t->nuser : 0;
}

/* The group of an apiVersion: "" for "v1", "apps" for "apps/v1". */
static void group_of(const char *api_version, const char **group, size_t *len)
{
    const char *slash = strchr(api_version, '/');
    *group = api_version;
    *len = slash ? (size_t)(slash - api_version) : 0;
}

static bool row_is(const struct kind_def *d, const char *group, size_t glen, const char *kind)
{
    return strcmp(d->kind, kind) == 0 && strlen(d->group) == glen &&
           strncmp(d->group, group, glen) == 0;
}

const struct kind_def *kinds_find(const struct kinds *t, const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    const char *group;
    size_t glen;
    group_of(api_version, &group, &glen);
    size_t n = kinds_count(t);
    for (size_t i = 0; i < n; i++) {
        const struct kind_def *d = kinds_at(t, i);
        if (row_is(d, group, glen, kind))
            return d;
    }
    return NULL;
}

/* ---- recognising a stopped object --------------------------------------------------------- */

/*
 * Does every leaf of `patch` hold in `obj` (NULL: absent)? A null leaf holds when absent. On
 * the first that does not, `why` (when not NULL) says which: "spec.suspend must be true".
 */
static bool leaves_hold(json_object *patch, json_object *obj, const char *prefix, struct sbuf *why)
{
    json_object_object_foreach(patch, key, pv)
    {
        json_object *ov = NULL;
        bool has = obj && json_object_is_type(obj, json_type_object) &&
                   json_object_object_get_ex(obj, key, &ov);
        bool ok;
        char *path = why ? (prefix[0] ? xasprintf("%s.%s", prefix, key) : xstrdup(key)) : NULL;
        if (!pv) {
            ok = !(has && ov);
            if (!ok && why)
                sbuf_printf(why, "%s must be absent", path);
        } else if (json_object_is_type(pv, json_type_object)) {
            /* A merge patch merges objects; an absent or non-object target is replaced. */
            ok = leaves_hold(pv, has && json_object_is_type(ov, json_type_object) ? ov : NULL, path,
                             why);
        } else {
            ok = has && json_object_equal(pv, ov);
            if (!ok && why)
                sbuf_printf(why, "%s must be %s", path,
                            json_object_to_json_string_ext(pv, JSON_C_TO_STRING_PLAIN));
        }
        free(path);
        if (!ok)
            return false;
    }
    return true;
}

int kinds_is_stopped(const struct kind_way *way, const char *obj_json, size_t len, char *err,
                     size_t errlen)
{
    if (!way || way->method == KIND_NONE || way->method == KIND_DELETE || way->method == KIND_EVICT)
        return 0;
    json_object *root = jsonparse_strict(obj_json, len, KINDS_OBJ_DEPTH, "object", err, errlen);
    if (!root)
        return -1;
    int rc = -1;
    if (!json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "object is not a JSON object");
        goto out;
    }
    switch (way->method) {
    case KIND_SCALE: {
        json_object *spec, *rep;
        if (!json_object_object_get_ex(root, "spec", &spec) || !spec ||
            !json_object_object_get_ex(spec, "replicas", &rep) || !rep) {
            rc = 1;
        } else if (!json_object_is_type(rep, json_type_int)) {
            snprintf(err, errlen, "spec.replicas is not an integer");
        } else {
            rc = json_object_get_int64(rep) == 0;
        }
        break;
    }
    case KIND_PATCH: {
        json_object *patch = way->patch ? jsonparse_strict(way->patch, strlen(way->patch),
                                                           KINDS_PATCH_DEPTH, "patch", err, errlen)
                                        : NULL;
        if (!patch)
            break;
        rc = json_object_is_type(patch, json_type_object) ? leaves_hold(patch, root, "", NULL) : 0;
        json_object_put(patch);
        break;
    }
    case KIND_COMMAND: {
        json_object *alts = way->stopped
                                ? jsonparse_strict(way->stopped, strlen(way->stopped),
                                                   KINDS_PATCH_DEPTH, "stopped", err, errlen)
                                : NULL;
        if (!alts)
            break;
        rc = 0;
        for (size_t i = 0; json_object_is_type(alts, json_type_array) &&
                           i < json_object_array_length(alts) && !rc;
             i++) {
            json_object *alt = json_object_array_get_idx(alts, i);
            rc = json_object_is_type(alt, json_type_object) && leaves_hold(alt, root, "", NULL);
        }
        json_object_put(alts);
        break;
    }
    case KIND_ANNOTATE: {
        json_object *meta, *ann, *v;
        rc = 0;
        if (way->key && json_object_object_get_ex(root, "metadata", &meta) && meta &&
            json_object_object_get_ex(meta, "annotations", &ann) && ann &&
            json_object_is_type(ann, json_type_object) &&
            json_object_object_get_ex(ann, way->key, &v) &&
            json_object_is_type(v, json_type_string))
            rc = !way->value || strcmp(json_object_get_string(v), way->value) == 0;
        break;
    }
    default:
        rc = 0;
    }
out:
    json_object_put(root);
    return rc;
}

int kinds_can_act(const struct kind_way *way, const char *obj_json, size_t len, char *why,
                  size_t whylen)
{
    if (!way || !way->requires)
        return 1;
    json_object *req = jsonparse_strict(way->requires, strlen(way->requires), KINDS_PATCH_DEPTH,
                                        "requires", why, whylen);
    if (!req)
        return -1;
    json_object *root = jsonparse_strict(obj_json, len, KINDS_OBJ_DEPTH, "object", why, whylen);
    int rc = -1;
    if (root && json_object_is_type(root, json_type_object) &&
        json_object_is_type(req, json_type_object)) {
        struct sbuf w = {0};
        rc = leaves_hold(req, root, "", &w);
        if (!rc)
            snprintf(why, whylen, "%s", w.buf ? w.buf : "a required field does not hold");
        sbuf_free(&w);
    } else if (root) {
        snprintf(why, whylen, "object is not a JSON object");
    }
    if (root)
        json_object_put(root);
    json_object_put(req);
    return rc;
}

/* ---- permissions --------------------------------------------------------------------------- */

static size_t perm_add(struct kind_perm *perms, size_t n, size_t max, const char *sub,
                       const char *verb)
{
    if (n < max)
        perms[n] = (struct kind_perm){sub, verb, NULL, NULL};
    return n + 1;
}

size_t kinds_perms(const struct kind_way *way, struct kind_perm *perms, size_t max)
{
    size_t n = 0;
    if (!way || way->method == KIND_NONE)
        return 0;
    n = perm_add(perms, n, max, NULL, "get");
    if (way->method == KIND_EVICT)
        /* The notice and its record go on the root owner, whose own ways grant its patch. */
        return perm_add(perms, n, max, "eviction", "create");
    n = perm_add(perms, n, max, NULL, "patch");
    if (way->method == KIND_DELETE)
        n = perm_add(perms, n, max, NULL, "delete");
    if (way->method == KIND_SCALE) {
        n = perm_add(perms, n, max, "scale", "get");
        n = perm_add(perms, n, max, "scale", "patch");
    }
    if (way->method == KIND_COMMAND) {
        if (n < max)
            perms[n] =
                (struct kind_perm){NULL, "create", way->command.group, way->command.resource};
        n++;
    }
    return n;
}

size_t kinds_verbs(const struct kind_way *way, const char **verbs, size_t max)
{
    struct kind_perm p[8];
    size_t np = kinds_perms(way, p, ARRAY_LEN(p)), n = 0;
    for (size_t i = 0; i < np && i < ARRAY_LEN(p); i++) {
        if (p[i].subresource || p[i].resource)
            continue;
        if (n < max)
            verbs[n] = p[i].verb;
        n++;
    }
    return n;
}

size_t kinds_walk_perms(const struct kind_def *def, struct kind_perm *perms, size_t max)
{
    if (!def || !(def->reconciles || (def->group[0] == '\0' && strcmp(def->kind, "Pod") == 0)))
        return 0;
    return perm_add(perms, 0, max, NULL, "get");
}

/* ---- commands ---------------------------------------------------------------------------- */

/* An ownerReference to the object, with controller true (metav1.NewControllerRef). */
static json_object *command_ref(const char *api_version, const char *kind, const char *name,
                                const char *uid)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "apiVersion", json_object_new_string(api_version));
    json_object_object_add(r, "kind", json_object_new_string(kind));
    json_object_object_add(r, "name", json_object_new_string(name));
    json_object_object_add(r, "uid", json_object_new_string(uid));
    json_object_object_add(r, "controller", json_object_new_boolean(1));
    json_object_object_add(r, "blockOwnerDeletion", json_object_new_boolean(1));
    return r;
}

char *kinds_command_body(const struct kind_way *way, const char *api_version, const char *kind,
                         const char *ns, const char *name, const char *uid, bool undo,
                         char **cmd_name)
{
    *cmd_name = NULL;
    const struct kind_command *c = way ? &way->command : NULL;
    if (!way || way->method != KIND_COMMAND || !c->group || !c->version || !c->kind || !c->stop ||
        !c->undo || !api_version || !kind || !ns || !name || !uid)
        return NULL;
    const char *action = undo ? c->undo : c->stop;
    /* NAME-gpureclaim-ACTION within a name's 253 characters: the object's name is cut. */
    char *lower = xstrdup(action);
    for (char *p = lower; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    int keep = (int)(253 - strlen("-gpureclaim-") - strlen(lower));
    *cmd_name = xasprintf("%.*s-gpureclaim-%s", keep < 1 ? 1 : keep, name, lower);
    free(lower);
    json_object *o = json_object_new_object(), *md = json_object_new_object();
    json_object *owners = json_object_new_array();
    char *gv = xasprintf("%s/%s", c->group, c->version);
    json_object_object_add(o, "apiVersion", json_object_new_string(gv));
    free(gv);
    json_object_object_add(o, "kind", json_object_new_string(c->kind));
    json_object_object_add(md, "name", json_object_new_string(*cmd_name));
    json_object_object_add(md, "namespace", json_object_new_string(ns));
    json_object_array_add(owners, command_ref(api_version, kind, name, uid));
    json_object_object_add(md, "ownerReferences", owners);
    json_object_object_add(o, "metadata", md);
    json_object_object_add(o, "action", json_object_new_string(action));
    json_object_object_add(o, "target", command_ref(api_version, kind, name, uid));
    json_object_object_add(o, "reason", json_object_new_string("IdleGPUReclaim"));
    json_object_object_add(
        o, "message",
        json_object_new_string(undo ? "restored by gpureclaim-enforcer restore"
                                    : "idle GPU reclaimed by gpureclaim-enforcer"));
    char *s = xstrdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
}

/* ---- the `kinds:` section ------------------------------------------------------------------ */

struct kparse {
    const char *file;
    kinds_report_fn report;
    void *arg;
    int errors;
};

static void kreport(struct kparse *p, const struct ydom_node *at, bool note, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void kreport(struct kparse *p, const struct ydom_node *at, bool note, const char *fmt, ...)
{
    struct sbuf s = {0};
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(&s, fmt, ap);
    va_end(ap);
    if (!note)
        p->errors++;
    if (p->report)
        p->report(p->arg, at->line, at->col, note, s.buf ? s.buf : "");
    sbuf_free(&s);
}

#define KQ 72
static const char *kq(const struct ydom_node *n, char buf[KQ])
{
    return ydom_printable(n->str, n->len, buf, KQ);
}

/* A string scalar without NULs, or NULL after reporting why not. */
static const char *kstring(struct kparse *p, const struct ydom_node *v, const char *key)
{
    if (v->kind != YDOM_KIND_SCALAR || ydom_scalar_type(v) != YDOM_T_STRING) {
        kreport(p, v, false, "'%s' must be a string, got %s", key, ydom_type_name(v));
        return NULL;
    }
    if (strlen(v->str) != v->len) {
        kreport(p, v, false, "'%s' must not contain a NUL character", key);
        return NULL;
    }
    return v->str;
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* A DNS-1123 subdomain (API group, annotation prefix): labels of [a-z0-9-] joined by dots. */
static bool dns_subdomain(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool edge = i == 0 || i + 1 == len || s[i - 1] == '.' || s[i + 1] == '.';
        if (c == '.' ? (i == 0 || i + 1 == len || s[i - 1] == '.')
                     : !(is_lower_alnum(c) || (c == '-' && !edge)))
            return false;
    }
    return true;
}

/* A Kubernetes API version: v1, v2, v1beta1, v1alpha2, ... */
static bool api_version_ok(const char *v)
{
    if (v[0] != 'v' || v[1] < '1' || v[1] > '9')
        return false;
    const char *p = v + 2;
    while (*p >= '0' && *p <= '9')
        p++;
    if (!*p)
        return true;
    if (str_has_prefix(p, "alpha"))
        p += 5;
    else if (str_has_prefix(p, "beta"))
        p += 4;
    else
        return false;
    if (*p < '1' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '\0';
}

/* An annotation key: an optional DNS subdomain prefix and '/', then a name of 1-63 characters
   [A-Za-z0-9][-A-Za-z0-9_.]* ending alphanumeric. */
static bool annotation_key_ok(const char *k)
{
    const char *slash = strchr(k, '/');
    const char *name = slash ? slash + 1 : k;
    if (slash && !dns_subdomain(k, (size_t)(slash - k)))
        return false;
    size_t n = strlen(name);
    if (n == 0 || n > 63 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(is_alnum(name[i]) || name[i] == '-' || name[i] == '_' || name[i] == '.'))
            return false;
    return true;
}

/* Append to `out` the leaves of `patch` that `un` does not set to another value (null
   included): restoring with `un` would leave those stopped. */
static void not_undone(json_object *patch, json_object *un, const char *prefix, struct sbuf *out)
{
    json_object_object_foreach(patch, key, pv)
    {
        char *path = prefix[0] ? xasprintf("%s.%s", prefix, key) : xstrdup(key);
        json_object *uv = NULL;
        bool has = un && json_object_object_get_ex(un, key, &uv);
        if (pv && json_object_is_type(pv, json_type_object) && json_object_object_length(pv) > 0)
            not_undone(pv, has && uv && json_object_is_type(uv, json_type_object) ? uv : NULL, path,
                       out);
        else if (!has || pv == uv || (pv && uv && json_object_equal(pv, uv)))
            sbuf_printf(out, "%s%s", out->len ? ", " : "", path);
        free(path);
    }
}

/* A non-empty JSON object given as JSON text in a string; NULL after reporting why not. */
static json_object *parse_json_object(struct kparse *p, const struct ydom_node *v, const char *key)
{
    char b[KQ];
    const char *s = kstring(p, v, key);
    if (!s)
        return NULL;
    char err[256];
    json_object *o = jsonparse_strict(s, v->len, KINDS_PATCH_DEPTH, key, err, sizeof(err));
    if (!o) {
        kreport(p, v, false, "'%s' must be a JSON object: %s", key, err);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_object))
        kreport(p, v, false, "'%s' must be a JSON object, got '%s'", key, kq(v, b));
    else if (json_object_object_length(o) == 0)
        kreport(p, v, false, "'%s' must not be an empty object", key);
    else
        return o;
    json_object_put(o);
    return NULL;
}

/*
 * A merge patch given as JSON text: an object that changes something under fields a stop can
 * use. metadata is refused (annotations are method annotate; labels, names and owners are not
 * a stop), as are apiVersion, kind and status (a controller owns status).
 */
static json_object *parse_patch(struct kparse *p, const struct ydom_node *v, const char *key)
{
    static const char *const refused[] = {"metadata", "apiVersion", "kind", "status"};
    json_object *o = parse_json_object(p, v, key);
    for (size_t i = 0; o && i < ARRAY_LEN(refused); i++)
        if (json_object_object_get_ex(o, refused[i], NULL)) {
            kreport(p, v, false, "'%s' must not change '%s'%s", key, refused[i],
                    i == 0 ? " (an annotation is method annotate)" : "");
            json_object_put(o);
            return NULL;
        }
    return o;
}

static const char *const action_keys[] = {
    [ACTION_SCALE_TO_ZERO] = "scaleToZero",
    [ACTION_SUSPEND] = "suspend",
    [ACTION_EVICT] = "evict",
    [ACTION_DELETE] = "delete",
};

static const char *const method_keys[] = {
    [KIND_SCALE] = "scale",   [KIND_PATCH] = "patch", [KIND_ANNOTATE] = "annotate",
    [KIND_DELETE] = "delete", [KIND_EVICT] = "evict",
};

/* Which methods carry out which action: what the action promises, the method must give. */
static bool method_fits(enum rule_action a, enum kind_method m)
{
    switch (a) {
    case ACTION_SCALE_TO_ZERO:
    case ACTION_SUSPEND:
        /* no pods, the object and its spec kept, and a way back (a command: built in only) */
        return m == KIND_SCALE || m == KIND_PATCH || m == KIND_ANNOTATE || m == KIND_COMMAND;
    case ACTION_EVICT:
        return m == KIND_EVICT;
    case ACTION_DELETE:
        return m == KIND_DELETE;
    default:
        return false;
    }
}

static const char *fitting_methods(enum rule_action a)
{
    switch (a) {
    case ACTION_SCALE_TO_ZERO:
    case ACTION_SUSPEND:
        return "scale, patch or annotate";
    case ACTION_EVICT:
        return "evict";
    default:
        return "delete";
    }
}

/* One way (`suspend: {method: patch, patch: ..., unpatch: ...}`); false after an error. */
static bool parse_way(struct kparse *p, const struct ydom_node *map, enum rule_action a,
                      bool is_pod, struct kind_way *w)
{
    static const char *const keys[] = {"method", "patch", "unpatch", "key", "value", "requires"};
    const char *an = action_keys[a];
    char b[KQ];
    if (map->kind != YDOM_KIND_MAPPING) {
        kreport(p, map, false, "'%s' must be a mapping with 'method', got %s", an,
                ydom_type_name(map));
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key;
        bool known = false;
        for (size_t j = 0; j < ARRAY_LEN(keys); j++)
            known |= strcmp(k->str, keys[j]) == 0;
        if (!known) {
            kreport(p, k, false,
                    "unknown key '%s' in '%s' (expected method, patch, unpatch, key, "
                    "value or requires)",
                    kq(k, b), an);
            ok = false;
        }
    }
    const struct ydom_node *mv = ydom_map_get(map, "method");
    if (!mv) {
        kreport(p, map, false, "missing required key 'method' in '%s'", an);
        return false;
    }
    const char *ms = kstring(p, mv, "method");
    if (!ms)
        return false;
    enum kind_method m = KIND_NONE;
    for (size_t j = 0; j < ARRAY_LEN(method_keys); j++)
        if (method_keys[j] && strcmp(ms, method_keys[j]) == 0)
            m = (enum kind_method)j;
    if (m == KIND_NONE) {
        kreport(p, mv, false,
                "unknown method '%s' (expected scale, patch, annotate, delete or evict)",
                kq(mv, b));
        return false;
    }
    if (!method_fits(a, m)) {
        kreport(p, mv, false, "method '%s' cannot carry out '%s' (it takes %s)", ms, an,
                fitting_methods(a));
        return false;
    }
    if (m == KIND_EVICT && !is_pod) {
        kreport(p, mv, false, "method 'evict' applies only to Pod (apiVersion v1)");
        return false;
    }
    w->method = m;
    const struct ydom_node *pv = ydom_map_get(map, "patch"), *uv = ydom_map_get(map, "unpatch");
    const struct ydom_node *kv = ydom_map_get(map, "key"), *vv = ydom_map_get(map, "value");
    /* Keys of another method would be silently ignored: refuse them. */
    const struct {
        const struct ydom_node *v;
        const char *name;
        enum kind_method of;
    } only[] = {{pv, "patch", KIND_PATCH},
                {uv, "unpatch", KIND_PATCH},
                {kv, "key", KIND_ANNOTATE},
                {vv, "value", KIND_ANNOTATE}};
    for (size_t i = 0; i < ARRAY_LEN(only); i++)
        if (only[i].v && m != only[i].of) {
            kreport(p, only[i].v, false, "'%s' applies only to method %s", only[i].name,
                    method_keys[only[i].of]);
            ok = false;
        }
    if (!ok)
        return false;
    const struct ydom_node *rq = ydom_map_get(map, "requires");
    if (rq) {
        json_object *ro = parse_json_object(p, rq, "requires");
        if (!ro)
            return false;
        w->requires = xstrdup(json_object_to_json_string_ext(ro, JSON_C_TO_STRING_PLAIN));
        json_object_put(ro);
    }
    if (m == KIND_PATCH) {
        if (!pv || !uv) {
            /* scaleToZero and suspend promise a way back: a patch without one is a delete
               that keeps the object. */
            kreport(p, map, false,
                    "missing required key '%s' in '%s' (method patch needs "
                    "'patch' and the 'unpatch' that undoes it)",
                    pv ? "unpatch" : "patch", an);
            return false;
        }
        json_object *po = parse_patch(p, pv, "patch");
        json_object *uo = parse_patch(p, uv, "unpatch");
        struct sbuf left = {0};
        if (po && uo)
            not_undone(po, uo, "", &left);
        if (left.len) {
            kreport(p, uv, false,
                    "'unpatch' must set every field 'patch' sets to another value, or null: "
                    "not %s",
                    left.buf);
            ok = false;
        }
        sbuf_free(&left);
        if (po && uo && ok) {
            w->patch = xstrdup(json_object_to_json_string_ext(po, JSON_C_TO_STRING_PLAIN));
            w->unpatch = xstrdup(json_object_to_json_string_ext(uo, JSON_C_TO_STRING_PLAIN));
        }
        if (po)
            json_object_put(po);
        if (uo)
            json_object_put(uo);
        return po && uo && ok;
    }
    if (m == KIND_ANNOTATE) {
        if (!kv) {
            kreport(p, map, false,
                    "missing required key 'key' in '%s' (method annotate needs "
                    "the annotation)",
                    an);
            return false;
        }
        const char *key = kstring(p, kv, "key");
        if (!key)
            return false;
        if (!annotation_key_ok(key)) {
            kreport(p, kv, false, "invalid annotation key '%s'", kq(kv, b));
            return false;
        }
        if (str_has_prefix(key, "gpureclaim.io/")) {
            kreport(p, kv, false, "annotation key '%s' is gpureclaim's own", key);
            return false;
        }
        const char *val = NULL;
        if (vv && !(val = kstring(p, vv, "value")))
            return false;
        w->key = xstrdup(key);
        w->value = val ? xstrdup(val) : NULL;
    }
    return true;
}

static void way_free(struct kind_way *w)
{
    free((char *)w->patch);
    free((char *)w->unpatch);
    free((char *)w->key);
    free((char *)w->value);
    free((char *)w->requires);
    memset(w, 0, sizeof(*w));
}

static void row_free(struct kind_def *d)
{
    free((char *)d->group);
    free((char *)d->version);
    free((char *)d->kind);
    free((char *)d->source);
    free((char *)d->resource);
    for (size_t a = 0; a < KINDS_NACTIONS; a++)
        way_free(&d->ways[a]);
}

/* One user row; false (and nothing kept) after an error. Every problem of the row is
   reported, not just the first. */
static bool parse_row(struct kparse *p, const struct ydom_node *map, size_t index,
                      struct kind_def *d, char **name)
{
    static const char *const keys[] = {"apiVersion", "kind", "reconciles", "actions"};
    char b[KQ];
    memset(d, 0, sizeof(*d));
    if (map->kind != YDOM_KIND_MAPPING) {
        kreport(p, map, false, "kind %zu must be a mapping, got %s", index + 1,
                ydom_type_name(map));
        return false;
    }
    int before = p->errors;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key;
        bool known = false;
        for (size_t j = 0; j < ARRAY_LEN(keys); j++)
            known |= strcmp(k->str, keys[j]) == 0;
        if (!known)
            kreport(p, k, false,
                    "unknown key '%s' in kind %zu (expected apiVersion, kind, reconciles or "
                    "actions)",
                    kq(k, b), index + 1);
    }
    for (size_t j = 0; j < 3; j++)
        if (!ydom_map_get(map, keys[j]))
            kreport(p, map, false, "missing required key '%s' in kind %zu", keys[j], index + 1);
    const struct ydom_node *av = ydom_map_get(map, "apiVersion");
    const struct ydom_node *kv = ydom_map_get(map, "kind");
    const struct ydom_node *rv = ydom_map_get(map, "reconciles");
    const char *api = av ? kstring(p, av, "apiVersion") : NULL;
    const char *kind = kv ? kstring(p, kv, "kind") : NULL;
    if (api) {
        const char *slash = strchr(api, '/');
        if (slash ? !dns_subdomain(api, (size_t)(slash - api)) || !api_version_ok(slash + 1)
                  : strcmp(api, "v1") != 0) {
            kreport(p, av, false,
                    "invalid apiVersion '%s' (expected GROUP/VERSION such as example.com/v1, "
                    "or v1 for the core group)",
                    kq(av, b));
            api = NULL;
        }
    }
    if (kind) {
        size_t n = strlen(kind);
        bool good = n > 0 && n <= 63 && kind[0] >= 'A' && kind[0] <= 'Z';
        for (size_t i = 0; good && i < n; i++)
            good = is_alnum(kind[i]);
        if (!good) {
            kreport(p, kv, false,
                    "invalid kind '%s' (expected a name such as Notebook: a capital letter, "
                    "then letters and digits)",
                    kq(kv, b));
            kind = NULL;
        }
    }
    bool reconciles = false;
    if (rv && (rv->kind != YDOM_KIND_SCALAR || ydom_scalar_bool(rv, &reconciles) < 0))
        kreport(p, rv, false, "'reconciles' must be true or false, got %s", ydom_type_name(rv));
    /* Pod decides whether evict fits; without a valid apiVersion and kind, assume not. */
    bool is_pod = api && kind && strcmp(api, "v1") == 0 && strcmp(kind, "Pod") == 0;

    const struct ydom_node *acts = ydom_map_get(map, "actions");
    if (acts && acts->kind != YDOM_KIND_MAPPING) {
        kreport(p, acts, false, "'actions' must be a mapping, got %s", ydom_type_name(acts));
        acts = NULL;
    }
    for (size_t i = 0; acts && i < acts->npairs; i++) {
        const struct ydom_node *k = acts->pairs[i].key;
        int a = -1;
        for (size_t j = 0; j < ARRAY_LEN(action_keys); j++)
            if (action_keys[j] && strcmp(k->str, action_keys[j]) == 0)
                a = (int)j;
        if (a < 0)
            kreport(p, k, false,
                    "unknown action '%s' (expected scaleToZero, suspend, evict or delete)",
                    kq(k, b));
        else
            parse_way(p, acts->pairs[i].value, (enum rule_action)a, is_pod, &d->ways[a]);
    }
    /* The row's "group/kind", for duplicates, even when something else in it is wrong. */
    if (api && kind) {
        const char *sl = strchr(api, '/');
        *name = sl ? xasprintf("%.*s/%s", (int)(sl - api), api, kind) : xstrdup(kind);
    }
    if (p->errors != before) {
        row_free(d);
        return false;
    }
    const char *slash = strchr(api, '/');
    d->group = slash ? xstrndup(api, (size_t)(slash - api)) : xstrdup("");
    d->version = xstrdup(slash ? slash + 1 : api);
    d->kind = xstrdup(kind);
    d->reconciles = reconciles;
    d->source = xasprintf("%s:%d:%d", p->file, map->line, map->col);
    return true;
}

struct kinds *kinds_parse(const struct ydom_node *seq, const char *file, kinds_report_fn report,
                          void *arg)
{
    struct kparse p = {file ? file : "", report, arg, 0};
    struct kinds *t = xcalloc(1, sizeof(*t));
    char **names = NULL; /* "group/kind" of each row, NULL when it has none */
    if (seq && seq->kind != YDOM_KIND_SEQUENCE) {
        kreport(&p, seq, false, "'kinds' must be a sequence, got %s", ydom_type_name(seq));
        seq = NULL;
    }
    if (seq && seq->nitems) {
        t->user = xcalloc(seq->nitems, sizeof(*t->user));
        names = xcalloc(seq->nitems, sizeof(*names));
    }
    for (size_t i = 0; seq && i < seq->nitems; i++) {
        struct kind_def d;
        bool ok = parse_row(&p, seq->items[i], i, &d, &names[i]);
        size_t fi = i;
        for (size_t j = 0; names[i] && j < i && fi == i; j++)
            if (names[j] && strcmp(names[j], names[i]) == 0)
                fi = j;
        if (fi != i) {
            kreport(&p, seq->items[i], false, "duplicate kind '%s' (first at %d:%d)", names[i],
                    seq->items[fi]->line, seq->items[fi]->col);
            if (ok)
                row_free(&d);
            continue;
        }
        if (!ok)
            continue;
        for (size_t j = 0; j < ARRAY_LEN(builtin_rows); j++)
            if (row_is(&builtin_rows[j], d.group, strlen(d.group), d.kind))
                kreport(&p, seq->items[i], true,
                        "kind '%s' replaces the built-in row (%s): only the actions given here "
                        "apply",
                        names[i], builtin_rows[j].source);
        t->user[t->nuser++] = d;
    }
    for (size_t i = 0; seq && names && i < seq->nitems; i++)
        free(names[i]);
    free(names);
    if (t->nuser) {
        t->order = xcalloc(t->nuser + ARRAY_LEN(builtin_rows), sizeof(*t->order));
        for (size_t i = 0; i < t->nuser; i++)
            t->order[t->norder++] = &t->user[i];
        for (size_t j = 0; j < ARRAY_LEN(builtin_rows); j++) {
            const struct kind_def *b = &builtin_rows[j];
            bool replaced = false;
            for (size_t i = 0; i < t->nuser && !replaced; i++)
                replaced = row_is(&t->user[i], b->group, strlen(b->group), b->kind);
            if (!replaced)
                t->order[t->norder++] = b;
        }
    }
    return t;
}

void kinds_free(struct kinds *t)
{
    if (!t || t == &builtin_table)
        return;
    for (size_t i = 0; i < t->nuser; i++)
        row_free(&t->user[i]);
    free(t->user);
    free(t->order);
    free(t);
}
