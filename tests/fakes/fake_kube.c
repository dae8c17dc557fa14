/*
 * A fake Kubernetes API server for the enforcer's tests (Debian has no kube-apiserver).
 *
 * It serves the objects in a directory of JSON files (pods, replicasets, deployments,
 * statefulsets, jobs, cronjobs, Kueue workloads, events) on their real paths and answers the
 * calls the enforcer makes the way kube-apiserver does: the same status codes and meta/v1
 * Status bodies (404 NotFound, 409 Conflict with "Precondition failed: UID in precondition",
 * 429 TooManyRequests with a DisruptionBudget cause, 415 for a patch type it does not take,
 * 401 for a wrong token), a uid precondition in DeleteOptions, Eviction deleteOptions and
 * merge patches' metadata.uid (on /scale too, compared with the parent's uid), RFC 7386 merge
 * patches applied to the stored object (a later GET sees them), the /scale subresource, label and
 * status.phase selectors on lists, metadata.generation bumped by every change outside metadata
 * and status (and by a Deployment's annotations), and list items without kind/apiVersion as the
 * real server sends them, API discovery and resourceVersion preconditions (fake_kube_disco.h).
 * After every write the controllers of fake_kube_ctl.h (Kubeflow Notebook, KServe InferenceService
 * and LLMInferenceService, suspend of RayCluster, JobSet, TrainJob, AppWrapper and the training
 * operator's jobs, Volcano's Commands and Jobs) react as the real ones do. It is written from the
 * API documentation, independently of enforcer/kube.c, so it checks the client rather than
 * mirroring it.
 *
 * usage: fake_kube --data DIR [--log FILE] [--token TOKEN | --token-file FILE] [--port N]
 *                  [--fault 'METHOD PATH=SPEC']... [--faults-file FILE] [--deny-file FILE]
 *                  [--kueue-versions LIST]
 *   SPEC: an HTTP status (its Status body; 429 on .../eviction is the PDB refusal, 500 there
 *   is the "more than one PodDisruptionBudget" error), slow:SECONDS (delay, then answer
 *   normally), garbage (200 with a body that is not JSON) or replace (the object named by
 *   the path gets a new metadata.uid, as when a StatefulSet or a user re-creates it under the
 *   same name, then the request is answered normally: a uid precondition then fails with the
 *   API server's 409), status or spec (another writer comes first: a controller's status update,
 *   or an edit of the spec, fk_touch; a resourceVersion precondition then fails with 409) or
 *   prune:FIELD (a merge patch is applied, then the dotted FIELD, such as
 *   spec.suspend, is dropped from the stored object and the answer, as a CRD without that
 *   field prunes it); a suffix xN applies it N times (FIELD without an 'x').
 *   --faults-file is re-read whenever it changes, one fault per line.
 *   --token-file is re-read on every request, so a test can rotate the accepted token.
 *   --token may be given several times: any of them is accepted.
 *   --deny-file lists the permissions SelfSubjectAccessReview denies (fake_kube_authz.h).
 *   --kueue-versions: the versions of kueue.x-k8s.io served, comma-separated, the first one
 *   preferred (default v1beta1; "v1beta2,v1beta1" as Kueue v0.15.0 and later serve them).
 *
 * "listening on PORT" goes to stdout once bound (PORT 0 = any free port). Each request is
 * appended to the log as one JSON line {"method","path","query","content_type","token",
 * "body"} (body parsed when it is JSON). SIGTERM or SIGINT stops it.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fakehttp.h"
#include "util.h"

struct fk_resource {
    const char *group; /* "" = core */
    const char *version;
    const char *kind;
    const char *plural;
    bool scalable;
};

static const struct fk_resource fk_resources[] = {
    {"", "v1", "Pod", "pods", false},
    {"", "v1", "Event", "events", false},
    {"apps", "v1", "ReplicaSet", "replicasets", true},
    {"apps", "v1", "Deployment", "deployments", true},
    {"apps", "v1", "StatefulSet", "statefulsets", true},
    {"batch", "v1", "Job", "jobs", false},
    {"batch", "v1", "CronJob", "cronjobs", false},
    {"kueue.x-k8s.io", "v1beta1", "Workload", "workloads", false},
    {"kueue.x-k8s.io", "v1beta2", "Workload", "workloads", false}, /* --kueue-versions */
    {"coordination.k8s.io", "v1", "Lease", "leases", false},
    /* The custom resources of the built-in kinds table (enforcer/kinds.h); scalable where
       the project's CRD declares a scale subresource. */
    {"kubeflow.org", "v1", "Notebook", "notebooks", false},
    {"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", false},
    {"serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices", false},
    {"aim.silogen.ai", "v1alpha1", "AIMService", "aimservices", false},
    {"aim.eai.amd.com", "v1alpha1", "AIMService", "aimservices", false},
    {"kaiwo.silogen.ai", "v1alpha1", "KaiwoJob", "kaiwojobs", false},
    {"kaiwo.silogen.ai", "v1alpha1", "KaiwoService", "kaiwoservices", false},
    {"ray.io", "v1", "RayCluster", "rayclusters", false},
    {"ray.io", "v1", "RayJob", "rayjobs", false},
    {"ray.io", "v1", "RayService", "rayservices", false},
    {"ray.io", "v1", "RayCronJob", "raycronjobs", false},
    {"serving.knative.dev", "v1", "Service", "services", false},
    {"serving.knative.dev", "v1", "Configuration", "configurations", false},
    {"serving.knative.dev", "v1", "Revision", "revisions", false},
    {"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", false},
    {"trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs", false},
    {"leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets", true},
    {"kubeflow.org", "v1", "TFJob", "tfjobs", false},
    {"kubeflow.org", "v1", "XGBoostJob", "xgboostjobs", false},
    {"kubeflow.org", "v1", "PaddleJob", "paddlejobs", true},
    {"kubeflow.org", "v1", "JAXJob", "jaxjobs", true},
    {"kubeflow.org", "v2beta1", "MPIJob", "mpijobs", false},
    {"serving.kserve.io", "v1alpha2", "LLMInferenceService", "llminferenceservices", false},
    {"workload.codeflare.dev", "v1beta2", "AppWrapper", "appwrappers", false},
    {"batch.volcano.sh", "v1alpha1", "Job", "jobs", false},
    {"bus.volcano.sh", "v1alpha1", "Command", "commands", false},
    {"argoproj.io", "v1alpha1", "Workflow", "workflows", false},
    {"argoproj.io", "v1alpha1", "CronWorkflow", "cronworkflows", false},
    /* A custom resource the kinds table does not know (tests of unknown owners). */
    {"example.com", "v1", "Widget", "widgets", false},
};

struct fk_obj {
    const struct fk_resource *res;
    char *ns, *name;
    json_object *obj;
};

enum fk_fault_type { FK_CODE, FK_SLOW, FK_GARBAGE, FK_REPLACE, FK_PRUNE, FK_STATUS, FK_SPEC };

struct fk_fault {
    char *method, *path;
    enum fk_fault_type type;
    unsigned code;
    double secs;
    long remaining;  /* -1: always */
    char field[128]; /* FK_PRUNE: the dotted path dropped from the stored object */
};

static struct fk_obj *fk_objs;
static size_t fk_nobjs;
static struct fk_fault *fk_faults; /* command line first, then the faults file */
static size_t fk_nfaults, fk_ncmd_faults;
static const char *fk_faults_file;
static struct timespec fk_faults_mtime;
static off_t fk_faults_size;
static const char *fk_log_path, *fk_token, *fk_token_file;
/* More --token values: each client of a multi-replica test has its own, so the request log
 * tells which replica made a call. */
static const char *fk_more_tokens[8];
static size_t fk_nmore_tokens;
static unsigned long fk_uid_seq;
static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;

static void fk_rv_bump(json_object *obj); /* fake_kube_disco.h */
static void fk_generation(json_object *obj, const char *before);

static void fk_die(const char *what, const char *subject)
{
    fprintf(stderr, "fake_kube: '%s': %s\n", subject, what);
    exit(2);
}

/*
 * The versions of kueue.x-k8s.io served (--kueue-versions, the first one preferred in
 * discovery), as Kueue's CRDs serve them: v1beta1 alone before v0.15.0, both since (v1beta2
 * preferred), v1beta2 alone once v1beta1 is dropped. A Workload is one object whatever the
 * version it is read or written at (the API server converts; the fields the enforcer uses are
 * the same in both): stored under the first Workload row of fk_resources, answered with the
 * apiVersion of the path.
 */
static const char *fk_kueue_versions[2] = {"v1beta1"};
static size_t fk_nkueue_versions = 1;

static bool fk_is_kueue(const struct fk_resource *r)
{
    return strcmp(r->group, "kueue.x-k8s.io") == 0;
}

static bool fk_served(const struct fk_resource *r)
{
    if (!fk_is_kueue(r))
        return true;
    for (size_t i = 0; i < fk_nkueue_versions; i++)
        if (strcmp(fk_kueue_versions[i], r->version) == 0)
            return true;
    return false;
}

/* The row an object of `r` is stored under. */
static const struct fk_resource *fk_canon(const struct fk_resource *r)
{
    for (size_t i = 0; r && fk_is_kueue(r) && i < ARRAY_LEN(fk_resources); i++)
        if (strcmp(fk_resources[i].group, r->group) == 0 &&
            strcmp(fk_resources[i].kind, r->kind) == 0)
            return &fk_resources[i];
    return r;
}

static void fk_kueue_parse(const char *list)
{
    char *copy = xstrdup(list);
    fk_nkueue_versions = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (fk_nkueue_versions == ARRAY_LEN(fk_kueue_versions) ||
            (strcmp(t, "v1beta1") != 0 && strcmp(t, "v1beta2") != 0))
            fk_die("expected v1beta1, v1beta2 or both", list);
        fk_kueue_versions[fk_nkueue_versions++] = strcmp(t, "v1beta1") == 0 ? "v1beta1" : "v1beta2";
    }
    free(copy);
    if (!fk_nkueue_versions)
        fk_die("expected v1beta1, v1beta2 or both", list);
}

/* ---- store ------------------------------------------------------------------------------- */

static const struct fk_resource *fk_resource_by_kind(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < ARRAY_LEN(fk_resources); i++) {
        const struct fk_resource *r = &fk_resources[i];
        char gv[64];
        snprintf(gv, sizeof(gv), "%s%s%s", r->group, r->group[0] ? "/" : "", r->version);
        if (strcmp(r->kind, kind) == 0 && strcmp(gv, api_version) == 0)
            return r;
    }
    return NULL;
}

static const struct fk_resource *fk_resource_by_path(const char *group, const char *version,
                                                     const char *plural)
{
    for (size_t i = 0; i < ARRAY_LEN(fk_resources); i++) {
        const struct fk_resource *r = &fk_resources[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(r->plural, plural) == 0)
            return fk_served(r) ? r : NULL;
    }
    return NULL;
}

static const char *fk_get_str(json_object *o, const char *a, const char *b)
{
    json_object *v;
    if (!json_object_object_get_ex(o, a, &v))
        return NULL;
    if (b && !json_object_object_get_ex(v, b, &v))
        return NULL;
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static struct fk_obj *fk_find(const struct fk_resource *res, const char *ns, const char *name)
{
    for (size_t i = 0; i < fk_nobjs; i++)
        if (fk_objs[i].res == fk_canon(res) && strcmp(fk_objs[i].ns, ns) == 0 &&
            strcmp(fk_objs[i].name, name) == 0)
            return &fk_objs[i];
    return NULL;
}

static void fk_remove(struct fk_obj *o)
{
    json_object_put(o->obj);
    free(o->ns);
    free(o->name);
    size_t i = (size_t)(o - fk_objs);
    memmove(&fk_objs[i], &fk_objs[i + 1], (fk_nobjs - i - 1) * sizeof(*fk_objs));
    fk_nobjs--;
}

/* A replacement under the same name: only the uid tells it from the object it replaces. */
static void fk_replace_uid(struct fk_obj *o)
{
    json_object *meta;
    char uid[64];
    snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012lu", ++fk_uid_seq);
    if (json_object_object_get_ex(o->obj, "metadata", &meta))
        json_object_object_add(meta, "uid", json_object_new_string(uid));
    fk_rv_bump(o->obj);
}

static void fk_add(json_object *obj, const char *file)
{
    const char *av = fk_get_str(obj, "apiVersion", NULL), *kind = fk_get_str(obj, "kind", NULL);
    const char *ns = fk_get_str(obj, "metadata", "namespace");
    const char *name = fk_get_str(obj, "metadata", "name");
    const struct fk_resource *res = av && kind ? fk_canon(fk_resource_by_kind(av, kind)) : NULL;
    if (!res || !ns || !name)
        fk_die("not an object of a served kind with metadata.namespace and name", file);
    if (fk_find(res, ns, name))
        fk_die("duplicate object", file);
    fk_objs = xrealloc(fk_objs, (fk_nobjs + 1) * sizeof(*fk_objs));
    fk_objs[fk_nobjs++] = (struct fk_obj){res, xstrdup(ns), xstrdup(name), json_object_get(obj)};
    if (!fk_get_str(obj, "metadata", "resourceVersion"))
        fk_rv_bump(obj);
    fk_generation(obj, NULL);
}

static int fk_json_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

static void fk_load(const char *dir)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, fk_json_file, alphasort);
    if (n < 0)
        fk_die("cannot read directory", dir);
    for (int i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", dir, ents[i]->d_name);
        json_object *o = json_object_from_file(path);
        if (!o)
            fk_die("invalid JSON", path);
        json_object *items;
        /* A file may hold a List of objects, as `kubectl get -o json` writes. */
        if (json_object_object_get_ex(o, "items", &items) &&
            json_object_is_type(items, json_type_array)) {
            for (size_t j = 0; j < json_object_array_length(items); j++)
                fk_add(json_object_array_get_idx(items, j), path);
        } else {
            fk_add(o, path);
        }
        json_object_put(o);
        free(path);
        free(ents[i]);
    }
    free(ents);
}

/* ---- faults ------------------------------------------------------------------------------ */

/* "METHOD PATH=SPEC"; returns -1 when malformed. */
static int fk_parse_fault(const char *line, struct fk_fault *f)
{
    const char *sp = strchr(line, ' '), *eq = strrchr(line, '=');
    if (!sp || !eq || eq < sp)
        return -1;
    *f = (struct fk_fault){.remaining = -1};
    char *spec = xstrdup(eq + 1);
    char *x = strrchr(spec, 'x');
    if (x && x != spec && x[1]) {
        uint64_t n;
        if (parse_u64(x + 1, &n) < 0) {
            free(spec);
            return -1;
        }
        f->remaining = (long)n;
        *x = '\0';
    }
    uint64_t code;
    int ret = 0;
    if (strncmp(spec, "slow:", 5) == 0) {
        f->type = FK_SLOW;
        ret = parse_double(spec + 5, &f->secs) < 0 || f->secs < 0 ? -1 : 0;
    } else if (strcmp(spec, "garbage") == 0) {
        f->type = FK_GARBAGE;
    } else if (strcmp(spec, "replace") == 0) {
        f->type = FK_REPLACE;
    } else if (strcmp(spec, "status") == 0) {
        f->type = FK_STATUS;
    } else if (strcmp(spec, "spec") == 0) {
        f->type = FK_SPEC;
    } else if (strncmp(spec, "prune:", 6) == 0 && spec[6] && strlen(spec + 6) < sizeof(f->field)) {
        f->type = FK_PRUNE;
        snprintf(f->field, sizeof(f->field), "%s", spec + 6);
    } else if (parse_u64(spec, &code) == 0 && code >= 100 && code <= 599) {
        f->type = FK_CODE;
        f->code = (unsigned)code;
    } else {
        ret = -1;
    }
    free(spec);
    if (ret == 0) {
        f->method = xstrndup(line, (size_t)(sp - line));
        f->path = xstrndup(sp + 1, (size_t)(eq - sp - 1));
    }
    return ret;
}

static void fk_add_fault(const char *line)
{
    struct fk_fault f;
    if (fk_parse_fault(line, &f) < 0)
        fk_die("invalid fault (want 'METHOD PATH=CODE|slow:S|garbage|replace|status|spec|prune:F"
               "[xN]')",
               line);
    fk_faults = xrealloc(fk_faults, (fk_nfaults + 1) * sizeof(*fk_faults));
    fk_faults[fk_nfaults++] = f;
}

/* Re-read the faults file when it changed (called with fk_lock held). */
static void fk_reload_faults(void)
{
    struct stat st;
    if (!fk_faults_file || stat(fk_faults_file, &st) < 0)
        return;
    /* nanoseconds: a test may rewrite it with the same size within one second */
    if (st.st_mtim.tv_sec == fk_faults_mtime.tv_sec &&
        st.st_mtim.tv_nsec == fk_faults_mtime.tv_nsec && st.st_size == fk_faults_size)
        return;
    fk_faults_mtime = st.st_mtim;
    fk_faults_size = st.st_size;
    for (size_t i = fk_ncmd_faults; i < fk_nfaults; i++) {
        free(fk_faults[i].method);
        free(fk_faults[i].path);
    }
    fk_nfaults = fk_ncmd_faults;
    FILE *f = fopen(fk_faults_file, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        str_rtrim(line);
        struct fk_fault ft;
        if (line[0] && line[0] != '#' && fk_parse_fault(line, &ft) == 0) {
            fk_faults = xrealloc(fk_faults, (fk_nfaults + 1) * sizeof(*fk_faults));
            fk_faults[fk_nfaults++] = ft;
        } else if (line[0] && line[0] != '#') {
            fprintf(stderr, "fake_kube: ignoring invalid fault '%s'\n", line);
        }
    }
    fclose(f);
}

static bool fk_take_fault(const char *method, const char *path, struct fk_fault *out)
{
    fk_reload_faults();
    for (size_t i = 0; i < fk_nfaults; i++) {
        struct fk_fault *f = &fk_faults[i];
        if (strcmp(f->method, method) != 0 || strcmp(f->path, path) != 0 || f->remaining == 0)
            continue;
        if (f->remaining > 0)
            f->remaining--;
        *out = *f;
        return true;
    }
    return false;
}

/* ---- answers ----------------------------------------------------------------------------- */

struct fk_req {
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    const char *ctype;
    const char *body;
    size_t body_len;
    bool replace;      /* a `replace` fault: re-create the object before answering */
    int touch;         /* a `status` or `spec` fault (FK_STATUS, FK_SPEC), or 0 */
    const char *prune; /* a `prune` fault: the field a patch may not store, or NULL */
};

static MHD_RESULT fk_send(struct fk_req *r, unsigned status, const char *ctype, const char *body)
{
    const char *const headers[] = {"Content-Type", ctype, "Cache-Control", "no-cache, private",
                                   NULL};
    return fakehttp_reply_headers(r->conn, status, body, headers);
}

static MHD_RESULT fk_send_json(struct fk_req *r, unsigned status, json_object *o)
{
    MHD_RESULT ret = fk_send(
        r, status, "application/json",
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return ret;
}

/* A meta/v1 Status; `res` and `name` fill details (NULL to omit). */
static MHD_RESULT fk_status(struct fk_req *r, unsigned code, const char *reason, const char *msg,
                            const struct fk_resource *res, const char *name, const char *cause,
                            const char *cause_msg)
{
    json_object *st = json_object_new_object();
    json_object_object_add(st, "kind", json_object_new_string("Status"));
    json_object_object_add(st, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(st, "metadata", json_object_new_object());
    json_object_object_add(st, "status",
                           json_object_new_string(code < 300 ? "Success" : "Failure"));
    if (msg)
        json_object_object_add(st, "message", json_object_new_string(msg));
    if (reason)
        json_object_object_add(st, "reason", json_object_new_string(reason));
    if (res || name || cause) {
        json_object *d = json_object_new_object();
        if (name)
            json_object_object_add(d, "name", json_object_new_string(name));
        if (res && res->group[0])
            json_object_object_add(d, "group", json_object_new_string(res->group));
        if (res)
            json_object_object_add(d, "kind", json_object_new_string(res->plural));
        if (cause) {
            json_object *causes = json_object_new_array(), *c = json_object_new_object();
            json_object_object_add(c, "reason", json_object_new_string(cause));
            json_object_object_add(c, "message", json_object_new_string(cause_msg));
            json_object_array_add(causes, c);
            json_object_object_add(d, "causes", causes);
        }
        json_object_object_add(st, "details", d);
    }
    json_object_object_add(st, "code", json_object_new_int((int)code));
    return fk_send_json(r, code, st);
}

/* "pods" or "deployments.apps", as the API server names a resource in messages. */
static char *fk_qualified(const struct fk_resource *res)
{
    return xasprintf("%s%s%s", res->plural, res->group[0] ? "." : "", res->group);
}

static MHD_RESULT fk_not_found(struct fk_req *r, const struct fk_resource *res, const char *name)
{
    char *q = fk_qualified(res);
    char *msg = xasprintf("%s \"%s\" not found", q, name);
    MHD_RESULT ret = fk_status(r, 404, "NotFound", msg, res, name, NULL, NULL);
    free(msg);
    free(q);
    return ret;
}

/*
 * 409 for a uid precondition that names another object. On a subresource (`sub`, e.g.
 * "scale") the API server names the resource "deployments/scale.apps" and compares the uid
 * in the patched Scale with the parent's (kubernetes/kubernetes
 * pkg/registry/apps/deployment/storage/storage.go, scaleUpdatedObjectInfo.UpdatedObject).
 */
static MHD_RESULT fk_uid_conflict(struct fk_req *r, const struct fk_resource *res, const char *sub,
                                  const char *name, const char *want, const char *have)
{
    char *q = sub ? xasprintf("%s/%s%s%s", res->plural, sub, res->group[0] ? "." : "", res->group)
                  : fk_qualified(res);
    char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID "
                          "in precondition: %s, UID in object meta: %s",
                          q, name, want, have ? have : "");
    MHD_RESULT ret = fk_status(r, 409, "Conflict", msg, res, name, NULL, NULL);
    free(msg);
    free(q);
    return ret;
}

/* The Status kube-apiserver sends for an injected status code. */
static MHD_RESULT fk_fault_status(struct fk_req *r, unsigned code)
{
    bool eviction = strlen(r->path) > 9 && strcmp(r->path + strlen(r->path) - 9, "/eviction") == 0;
    switch (code) {
    case 400:
        return fk_status(r, code, "BadRequest",
                         "the server rejected our request for an unknown "
                         "reason",
                         NULL, NULL, NULL, NULL);
    case 401:
        return fk_status(r, code, "Unauthorized", "Unauthorized", NULL, NULL, NULL, NULL);
    case 403:
        return fk_status(r, code, "Forbidden",
                         "User \"system:serviceaccount:gpureclaim:gpureclaim-enforcer\" cannot "
                         "perform this operation",
                         NULL, NULL, NULL, NULL);
    case 404:
        return fk_status(r, code, "NotFound", "the server could not find the requested resource",
                         NULL, NULL, NULL, NULL);
    case 409:
        return fk_status(r, code, "Conflict",
                         "Operation cannot be fulfilled: the object has been modified; please "
                         "apply your changes to the latest version and try again",
                         NULL, NULL, NULL, NULL);
    case 429:
        /* pkg/registry/core/pod/storage/eviction.go: NewTooManyRequests(msg, 0) + a cause. */
        if (eviction)
            return fk_status(r, code, "TooManyRequests",
                             "Cannot evict pod as it would violate the pod's disruption budget.",
                             NULL, NULL, "DisruptionBudget",
                             "The disruption budget ml-pdb needs 1 healthy pods and has 1 "
                             "currently");
        return fk_status(r, code, "TooManyRequests", "Too many requests, please try again later.",
                         NULL, NULL, NULL, NULL);
    case 500:
        return fk_status(r, code, "InternalError",
                         eviction ? "This pod has more than one PodDisruptionBudget, which the "
                                    "eviction subresource does not support."
                                  : "Internal error occurred: injected by fake_kube",
                         NULL, NULL, NULL, NULL);
    case 503:
        return fk_status(r, code, "ServiceUnavailable",
                         "the server is currently unable to handle the request", NULL, NULL, NULL,
                         NULL);
    default:
        return fk_status(r, code, NULL, "injected by fake_kube", NULL, NULL, NULL, NULL);
    }
}

/* ---- merge patch (RFC 7386) -------------------------------------------------------------- */

/* Returns the merged value; consumes one reference to `target`. */
static json_object *fk_merge(json_object *target, json_object *patch)
{
    if (!json_object_is_type(patch, json_type_object)) {
        json_object *copy = NULL;
        json_object_put(target);
        json_object_deep_copy(patch, &copy, NULL);
        return copy;
    }
    if (!json_object_is_type(target, json_type_object)) {
        json_object_put(target);
        target = json_object_new_object();
    }
    json_object_object_foreach(patch, key, val)
    {
        if (!val) {
            json_object_object_del(target, key);
            continue;
        }
        json_object *cur = NULL;
        json_object_object_get_ex(target, key, &cur);
        json_object_object_add(target, key, fk_merge(json_object_get(cur), val));
    }
    return target;
}

/* ---- handlers ---------------------------------------------------------------------------- */

static json_object *fk_parse_body(struct fk_req *r)
{
    if (!r->body_len)
        return NULL;
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, r->body, (int)r->body_len);
    if (json_tokener_get_error(tok) != json_tokener_success ||
        json_tokener_get_parse_end(tok) != r->body_len) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

static bool fk_ctype_is(struct fk_req *r, const char *want)
{
    size_t n = strlen(want);
    return r->ctype && strncmp(r->ctype, want, n) == 0 &&
           (r->ctype[n] == '\0' || r->ctype[n] == ';');
}

static MHD_RESULT fk_unsupported_media(struct fk_req *r)
{
    char *msg = xasprintf("the body of the request was in an unknown format - accepted media "
                          "types include: application/json-patch+json, "
                          "application/merge-patch+json, application/apply-patch+yaml (got '%s')",
                          r->ctype ? r->ctype : "");
    MHD_RESULT ret = fk_status(r, 415, "UnsupportedMediaType", msg, NULL, NULL, NULL, NULL);
    free(msg);
    return ret;
}

static MHD_RESULT fk_bad_body(struct fk_req *r, const char *what)
{
    char *msg = xasprintf("error decoding %s: invalid JSON", what);
    MHD_RESULT ret = fk_status(r, 400, "BadRequest", msg, NULL, NULL, NULL, NULL);
    free(msg);
    return ret;
}

#include "fake_kube_lease.h"
#include "fake_kube_disco.h"
#include "fake_kube_ctl.h"
#include "fake_kube_authz.h"

/* Items of a list carry no kind/apiVersion, as from the real API server. */
static MHD_RESULT fk_list(struct fk_req *r, const struct fk_resource *res, const char *ns)
{
    const char *label_sel =
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "labelSelector");
    const char *field_sel =
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "fieldSelector");
    char *lkey = NULL, *lval = NULL, *fval = NULL;
    if (label_sel && *label_sel) {
        const char *eq = strchr(label_sel, '=');
        if (!eq || strchr(label_sel, ','))
            return fk_status(r, 400, "BadRequest",
                             "fake_kube supports one key=value label "
                             "selector",
                             NULL, NULL, NULL, NULL);
        lkey = xstrndup(label_sel, (size_t)(eq - label_sel));
        lval = xstrdup(eq + 1);
    }
    if (field_sel && *field_sel) {
        if (!str_has_prefix(field_sel, "status.phase="))
            return fk_status(r, 400, "BadRequest", "field label not supported by fake_kube", NULL,
                             NULL, NULL, NULL);
        fval = xstrdup(field_sel + strlen("status.phase="));
    }
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    char *kind = xasprintf("%sList", res->kind);
    char *gv = xasprintf("%s%s%s", res->group, res->group[0] ? "/" : "", res->version);
    json_object_object_add(list, "kind", json_object_new_string(kind));
    json_object_object_add(list, "apiVersion", json_object_new_string(gv));
    json_object *lm = json_object_new_object();
    json_object_object_add(lm, "resourceVersion", json_object_new_string("1000"));
    json_object_object_add(list, "metadata", lm);
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *o = &fk_objs[i];
        if (o->res != fk_canon(res) || (ns && strcmp(o->ns, ns) != 0))
            continue;
        json_object *labels, *lv;
        json_object_object_get_ex(o->obj, "metadata", &labels);
        if (lkey && !(json_object_object_get_ex(labels, "labels", &labels) &&
                      json_object_object_get_ex(labels, lkey, &lv) &&
                      json_object_is_type(lv, json_type_string) &&
                      strcmp(json_object_get_string(lv), lval) == 0))
            continue;
        const char *phase = fk_get_str(o->obj, "status", "phase");
        if (fval && !(phase && strcmp(phase, fval) == 0))
            continue;
        json_object *copy = NULL;
        json_object_deep_copy(o->obj, &copy, NULL);
        json_object_object_del(copy, "kind");
        json_object_object_del(copy, "apiVersion");
        json_object_array_add(items, copy);
    }
    json_object_object_add(list, "items", items);
    free(kind);
    free(gv);
    free(lkey);
    free(lval);
    free(fval);
    return fk_send_json(r, 200, list);
}

static MHD_RESULT fk_create_event(struct fk_req *r, const struct fk_resource *res, const char *ns)
{
    if (!fk_ctype_is(r, "application/json"))
        return fk_unsupported_media(r);
    json_object *ev = fk_parse_body(r);
    if (!ev || !json_object_is_type(ev, json_type_object)) {
        json_object_put(ev);
        return fk_bad_body(r, "Event");
    }
    const char *kind = fk_get_str(ev, "kind", NULL), *name = fk_get_str(ev, "metadata", "name");
    const char *av = fk_get_str(ev, "apiVersion", NULL);
    const char *evns = fk_get_str(ev, "metadata", "namespace");
    json_object *inv;
    MHD_RESULT ret;
    if (!kind || strcmp(kind, "Event") != 0 || !av || strcmp(av, "v1") != 0) {
        ret = fk_status(r, 400, "BadRequest", "the object provided is not a v1 Event", NULL, NULL,
                        NULL, NULL);
    } else if (evns && strcmp(evns, ns) != 0) {
        ret = fk_status(r, 400, "BadRequest",
                        "the namespace of the provided object does not "
                        "match the namespace sent on the request",
                        NULL, NULL, NULL, NULL);
    } else if (!name || !*name) {
        ret = fk_status(r, 422, "Invalid",
                        "Event \"\" is invalid: metadata.name: Required "
                        "value: name or generateName is required",
                        res, "", NULL, NULL);
    } else if (!json_object_object_get_ex(ev, "involvedObject", &inv) ||
               !fk_get_str(ev, "involvedObject", "name")) {
        char *msg = xasprintf("Event \"%s\" is invalid: involvedObject.name: Required value", name);
        ret = fk_status(r, 422, "Invalid", msg, res, name, NULL, NULL);
        free(msg);
    } else if (fk_find(res, ns, name)) {
        char *msg = xasprintf("events \"%s\" already exists", name);
        ret = fk_status(r, 409, "AlreadyExists", msg, res, name, NULL, NULL);
        free(msg);
    } else {
        json_object *meta;
        json_object_object_get_ex(ev, "metadata", &meta);
        char uid[64];
        snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012lu", ++fk_uid_seq);
        json_object_object_add(meta, "uid", json_object_new_string(uid));
        if (!evns)
            json_object_object_add(meta, "namespace", json_object_new_string(ns));
        fk_add(ev, "request");
        return fk_send_json(r, 201, ev);
    }
    json_object_put(ev);
    return ret;
}

static json_object *fk_scale_of(const struct fk_obj *o)
{
    json_object *spec, *status, *v, *meta = NULL;
    int64_t replicas = 1;
    if (json_object_object_get_ex(o->obj, "spec", &spec) &&
        json_object_object_get_ex(spec, "replicas", &v))
        replicas = json_object_get_int64(v);
    json_object *s = json_object_new_object(), *m = json_object_new_object();
    json_object_object_add(s, "kind", json_object_new_string("Scale"));
    json_object_object_add(s, "apiVersion", json_object_new_string("autoscaling/v1"));
    json_object_object_add(m, "name", json_object_new_string(o->name));
    json_object_object_add(m, "namespace", json_object_new_string(o->ns));
    if (json_object_object_get_ex(o->obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "uid", &v))
        json_object_object_add(m, "uid", json_object_get(v));
    /* A Scale carries its parent's resourceVersion (and is checked against it on a patch). */
    if (meta && json_object_object_get_ex(meta, "resourceVersion", &v))
        json_object_object_add(m, "resourceVersion", json_object_get(v));
    json_object_object_add(s, "metadata", m);
    json_object *sspec = json_object_new_object(), *sst = json_object_new_object();
    /* autoscaling/v1 omits a zero replicas (omitempty), which clients must read as 0. */
    if (replicas)
        json_object_object_add(sspec, "replicas", json_object_new_int64(replicas));
    json_object_object_add(s, "spec", sspec);
    int64_t cur = replicas;
    if (json_object_object_get_ex(o->obj, "status", &status) &&
        json_object_object_get_ex(status, "replicas", &v))
        cur = json_object_get_int64(v);
    if (cur)
        json_object_object_add(sst, "replicas", json_object_new_int64(cur));
    json_object_object_add(sst, "selector",
                           json_object_new_string("app="
                                                  "fake"));
    json_object_object_add(s, "status", sst);
    return s;
}

/*
 * The object without metadata and status, as text: what metadata.generation counts. For an
 * apps/v1 Deployment its annotations count too: kube-apiserver bumps a Deployment's generation
 * when only its annotations change, "because annotations are copied from deployments to their
 * replica sets" (kubernetes/kubernetes v1.36.3 pkg/registry/apps/deployment/strategy.go,
 * PrepareForUpdate); the StatefulSet, ReplicaSet and DaemonSet strategies compare the spec only.
 */
static char *fk_spec_text(json_object *obj)
{
    json_object *c = json_object_new_object();
    json_object_object_foreach(obj, key, val)
    {
        if (strcmp(key, "metadata") != 0 && strcmp(key, "status") != 0)
            json_object_object_add(c, key, json_object_get(val));
    }
    const char *av = fk_get_str(obj, "apiVersion", NULL), *kind = fk_get_str(obj, "kind", NULL);
    json_object *meta, *ann;
    if (av && kind && strcmp(av, "apps/v1") == 0 && strcmp(kind, "Deployment") == 0 &&
        json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "annotations", &ann))
        json_object_object_add(c, "metadata.annotations", json_object_get(ann));
    char *s = xstrdup(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN));
    json_object_put(c);
    return s;
}

/*
 * metadata.generation as kube-apiserver keeps it: 1 at creation, and one more for every write
 * that changes anything but metadata and status (a /scale included), and for a Deployment an
 * annotation too (fk_spec_text; the generation strategies of apps/v1 and of custom resources
 * with a status subresource).
 */
static void fk_generation(json_object *obj, const char *before)
{
    json_object *meta, *g;
    if (!json_object_object_get_ex(obj, "metadata", &meta) ||
        !json_object_is_type(meta, json_type_object))
        return;
    int64_t n = json_object_object_get_ex(meta, "generation", &g) ? json_object_get_int64(g) : 0;
    char *after = before ? fk_spec_text(obj) : NULL;
    if (n < 1 || (before && strcmp(before, after) != 0))
        json_object_object_add(meta, "generation", json_object_new_int64(n < 1 ? 1 : n + 1));
    free(after);
}

/*
 * Another writer between a client's GET and its write (a `status` or `spec` fault): a
 * controller's status update (status.fakeWrites counted up), as the Deployment and StatefulSet
 * controllers write at once after a change, or an edit of the spec (spec.fakeEdits counted up,
 * which moves the generation). Either gives the object a new resourceVersion, so a write with
 * the one read before gets 409 Conflict, as from kube-apiserver.
 */
static void fk_touch(struct fk_obj *o, bool spec)
{
    const char *part = spec ? "spec" : "status", *key = spec ? "fakeEdits" : "fakeWrites";
    json_object *p, *n;
    if (!json_object_object_get_ex(o->obj, part, &p) || !json_object_is_type(p, json_type_object)) {
        p = json_object_new_object();
        json_object_object_add(o->obj, part, p);
    }
    int64_t v = json_object_object_get_ex(p, key, &n) ? json_object_get_int64(n) : 0;
    char *before = fk_spec_text(o->obj);
    json_object_object_add(p, key, json_object_new_int64(v + 1));
    fk_generation(o->obj, before);
    free(before);
    fk_rv_bump(o->obj);
}

/*
 * Drop the member at dotted `path` ("spec.suspend"), as a structural CRD prunes a field its
 * schema does not have: the patch is answered 200 and the field is not stored.
 */
static void fk_prune(json_object *o, const char *path)
{
    char *p = xstrdup(path), *save = NULL;
    char *key = strtok_r(p, ".", &save), *next;
    for (; key && o; key = next) {
        next = strtok_r(NULL, ".", &save);
        if (!json_object_is_type(o, json_type_object))
            break;
        if (!next) {
            json_object_object_del(o, key);
            break;
        }
        if (!json_object_object_get_ex(o, key, &o))
            break;
    }
    free(p);
}

static MHD_RESULT fk_patch(struct fk_req *r, struct fk_obj *o, bool scale)
{
    if (!fk_ctype_is(r, "application/merge-patch+json") &&
        !fk_ctype_is(r, "application/strategic-merge-patch+json"))
        return fk_unsupported_media(r);
    json_object *patch = fk_parse_body(r);
    if (!patch || !json_object_is_type(patch, json_type_object)) {
        json_object_put(patch);
        return fk_bad_body(r, "patch");
    }
    /* metadata.uid in a patch is a precondition (kubelet status patches rely on it). */
    const char *want = fk_get_str(patch, "metadata", "uid");
    const char *have = fk_get_str(o->obj, "metadata", "uid");
    if (want && (!have || strcmp(want, have) != 0)) {
        MHD_RESULT ret = fk_uid_conflict(r, o->res, scale ? "scale" : NULL, o->name, want, have);
        json_object_put(patch);
        return ret;
    }
    MHD_RESULT stale;
    if (fk_rv_patch_stale(r, o, patch, &stale)) {
        json_object_put(patch);
        return stale;
    }
    if (scale) {
        json_object *s = fk_merge(fk_scale_of(o), patch), *spec, *v;
        int64_t n = 0;
        if (json_object_object_get_ex(s, "spec", &spec) &&
            json_object_object_get_ex(spec, "replicas", &v)) {
            if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
                json_object_put(s);
                json_object_put(patch);
                return fk_status(r, 422, "Invalid",
                                 "Scale is invalid: spec.replicas: Invalid "
                                 "value: must be greater than or equal to 0",
                                 o->res, o->name, NULL, NULL);
            }
            n = json_object_get_int64(v);
        }
        json_object_put(s);
        json_object *p2 = json_object_new_object(), *sp = json_object_new_object();
        json_object *st = json_object_new_object();
        json_object_object_add(sp, "replicas", json_object_new_int64(n));
        json_object_object_add(st, "replicas", json_object_new_int64(n));
        json_object_object_add(p2, "spec", sp);
        json_object_object_add(p2, "status", st);
        char *before = fk_spec_text(o->obj);
        o->obj = fk_merge(o->obj, p2);
        fk_generation(o->obj, before);
        free(before);
        fk_rv_bump(o->obj);
        json_object_put(p2);
        json_object_put(patch);
        return fk_send_json(r, 200, fk_scale_of(o));
    }
    char *before = fk_spec_text(o->obj);
    o->obj = fk_merge(o->obj, patch);
    if (r->prune)
        fk_prune(o->obj, r->prune);
    fk_generation(o->obj, before);
    free(before);
    fk_rv_bump(o->obj);
    json_object_put(patch);
    return fk_send_json(r, 200, json_object_get(o->obj));
}

/* The uid in `opts` (DeleteOptions) preconditions, or NULL. */
static const char *fk_precondition_uid(json_object *opts)
{
    json_object *pre;
    if (!opts || !json_object_object_get_ex(opts, "preconditions", &pre))
        return NULL;
    return fk_get_str(pre, "uid", NULL);
}

static MHD_RESULT fk_delete(struct fk_req *r, struct fk_obj *o)
{
    json_object *opts = NULL;
    if (r->body_len) {
        if (!fk_ctype_is(r, "application/json"))
            return fk_unsupported_media(r);
        opts = fk_parse_body(r);
        const char *kind = opts ? fk_get_str(opts, "kind", NULL) : NULL;
        if (!opts || !kind || strcmp(kind, "DeleteOptions") != 0) {
            json_object_put(opts);
            return fk_bad_body(r, "DeleteOptions");
        }
    }
    const char *want = fk_precondition_uid(opts);
    const char *have = fk_get_str(o->obj, "metadata", "uid");
    if (want && (!have || strcmp(want, have) != 0)) {
        MHD_RESULT ret = fk_uid_conflict(r, o->res, NULL, o->name, want, have);
        json_object_put(opts);
        return ret;
    }
    MHD_RESULT stale;
    if (fk_rv_delete_stale(r, o, opts, &stale)) {
        json_object_put(opts);
        return stale;
    }
    json_object_put(opts);
    const struct fk_resource *res = o->res;
    /* A pod's DELETE answers the pod; others answer a Success Status with details. */
    if (strcmp(res->kind, "Pod") == 0) {
        json_object *pod = json_object_get(o->obj);
        fk_remove(o);
        return fk_send_json(r, 200, pod);
    }
    char *name = xstrdup(o->name), *uid = have ? xstrdup(have) : NULL;
    fk_remove(o);
    json_object *st = json_object_new_object(), *d = json_object_new_object();
    json_object_object_add(st, "kind", json_object_new_string("Status"));
    json_object_object_add(st, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(st, "metadata", json_object_new_object());
    json_object_object_add(st, "status", json_object_new_string("Success"));
    json_object_object_add(d, "name", json_object_new_string(name));
    if (res->group[0])
        json_object_object_add(d, "group", json_object_new_string(res->group));
    json_object_object_add(d, "kind", json_object_new_string(res->plural));
    if (uid)
        json_object_object_add(d, "uid", json_object_new_string(uid));
    json_object_object_add(st, "details", d);
    free(name);
    free(uid);
    return fk_send_json(r, 200, st);
}

static MHD_RESULT fk_evict(struct fk_req *r, const struct fk_resource *res, const char *ns,
                           const char *name)
{
    if (!fk_ctype_is(r, "application/json"))
        return fk_unsupported_media(r);
    json_object *ev = fk_parse_body(r);
    const char *kind = ev ? fk_get_str(ev, "kind", NULL) : NULL;
    const char *av = ev ? fk_get_str(ev, "apiVersion", NULL) : NULL;
    if (!ev || !kind || strcmp(kind, "Eviction") != 0 || !av ||
        (strcmp(av, "policy/v1") != 0 && strcmp(av, "policy/v1beta1") != 0)) {
        json_object_put(ev);
        return fk_bad_body(r, "Eviction");
    }
    const char *evname = fk_get_str(ev, "metadata", "name");
    MHD_RESULT ret;
    json_object *opts = NULL;
    json_object_object_get_ex(ev, "deleteOptions", &opts);
    const char *want = fk_precondition_uid(opts);
    struct fk_obj *o = fk_find(res, ns, name);
    if (o && r->replace)
        fk_replace_uid(o);
    if (!evname || strcmp(evname, name) != 0) {
        ret = fk_status(r, 400, "BadRequest",
                        "name in URL does not match name in Eviction "
                        "object",
                        NULL, NULL, NULL, NULL);
    } else if (!o) {
        ret = fk_not_found(r, res, name);
    } else if (want && (!fk_get_str(o->obj, "metadata", "uid") ||
                        strcmp(want, fk_get_str(o->obj, "metadata", "uid")) != 0)) {
        ret = fk_uid_conflict(r, res, NULL, name, want, fk_get_str(o->obj, "metadata", "uid"));
    } else {
        fk_remove(o);
        ret = fk_status(r, 201, NULL, NULL, NULL, NULL, NULL, NULL);
    }
    json_object_put(ev);
    return ret;
}

/* Route a request (fk_lock held). */
static MHD_RESULT fk_route(struct fk_req *r)
{
    MHD_RESULT disco;
    if (fk_disco_route(r, &disco))
        return disco;
    char *copy = xstrdup(r->path);
    char *seg[10];
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(copy, "/", &save); t && n < ARRAY_LEN(seg);
         t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    const char *group = NULL, *version = NULL;
    size_t i = 0;
    MHD_RESULT ret;
    if (n >= 2 && strcmp(seg[0], "api") == 0) {
        group = "";
        version = seg[1];
        i = 2;
    } else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        group = seg[1];
        version = seg[2];
        i = 3;
    }
    const struct fk_resource *res = NULL;
    const char *ns = NULL, *name = NULL, *sub = NULL;
    if (group && n - i == 1) { /* all namespaces: /api/v1/pods */
        res = fk_resource_by_path(group, version, seg[i]);
    } else if (group && n - i >= 3 && n - i <= 5 && strcmp(seg[i], "namespaces") == 0) {
        ns = seg[i + 1];
        res = fk_resource_by_path(group, version, seg[i + 2]);
        name = n - i >= 4 ? seg[i + 3] : NULL;
        sub = n - i == 5 ? seg[i + 4] : NULL;
    }
    bool get = strcmp(r->method, "GET") == 0;
    if (group && strcmp(group, "authorization.k8s.io") == 0 && n - i == 1 &&
        strcmp(seg[i], "selfsubjectaccessreviews") == 0) {
        ret = strcmp(r->method, "POST") == 0 ? fk_ssar(r)
                                             : fk_status(r, 405, "MethodNotAllowed",
                                                         "the server does not allow this "
                                                         "method on the requested resource",
                                                         NULL, NULL, NULL, NULL);
    } else if (!res) {
        ret = fk_status(r, 404, "NotFound", "the server could not find the requested resource",
                        NULL, NULL, NULL, NULL);
    } else if (!name) {
        if (get)
            ret = fk_list(r, res, ns);
        else if (strcmp(r->method, "POST") == 0 && ns && strcmp(res->kind, "Event") == 0)
            ret = fk_create_event(r, res, ns);
        else if (strcmp(r->method, "POST") == 0 && ns && strcmp(res->kind, "Lease") == 0)
            ret = fk_lease_create(r, res, ns);
        else if (strcmp(r->method, "POST") == 0 && ns && strcmp(res->kind, "Command") == 0)
            ret = fk_ctl_create_command(r, res, ns);
        else
            ret = fk_status(r, 405, "MethodNotAllowed",
                            "the server does not allow this method "
                            "on the requested resource",
                            NULL, NULL, NULL, NULL);
    } else if (sub && strcmp(sub, "eviction") == 0 && strcmp(res->kind, "Pod") == 0) {
        ret = strcmp(r->method, "POST") == 0 ? fk_evict(r, res, ns, name)
                                             : fk_status(r, 405, "MethodNotAllowed",
                                                         "the server does not allow this "
                                                         "method on the requested resource",
                                                         NULL, NULL, NULL, NULL);
    } else if (sub && !(strcmp(sub, "scale") == 0 && res->scalable)) {
        ret = fk_status(r, 404, "NotFound", "the server could not find the requested resource",
                        NULL, NULL, NULL, NULL);
    } else {
        struct fk_obj *o = fk_find(res, ns, name);
        if (o && r->replace)
            fk_replace_uid(o);
        if (o && r->touch)
            fk_touch(o, r->touch == FK_SPEC);
        if (!o)
            ret = fk_not_found(r, res, name);
        else if (get && !sub && res != o->res) { /* converted to the version asked for */
            json_object *conv = NULL;
            json_object_deep_copy(o->obj, &conv, NULL);
            json_object_object_add(conv, "apiVersion", json_object_new_string(fk_gv(res)));
            ret = fk_send_json(r, 200, conv);
        } else if (get)
            ret = fk_send_json(r, 200, sub ? fk_scale_of(o) : json_object_get(o->obj));
        else if (strcmp(r->method, "PATCH") == 0)
            ret = fk_patch(r, o, sub != NULL);
        else if (strcmp(r->method, "DELETE") == 0 && !sub)
            ret = fk_delete(r, o);
        else if (strcmp(r->method, "PUT") == 0 && !sub && strcmp(res->kind, "Lease") == 0)
            ret = fk_lease_update(r, o);
        else
            ret = fk_status(r, 405, "MethodNotAllowed",
                            "the server does not allow this method "
                            "on the requested resource",
                            NULL, NULL, NULL, NULL);
    }
    free(copy);
    /* The controllers react to every write, as the real ones do to the watch event. */
    if (!get)
        fk_ctl_reconcile();
    return ret;
}

static void fk_log(struct fk_req *r, const char *query, const char *token)
{
    if (!fk_log_path)
        return;
    json_object *l = json_object_new_object();
    json_object_object_add(l, "method", json_object_new_string(r->method));
    json_object_object_add(l, "path", json_object_new_string(r->path));
    json_object_object_add(l, "query", json_object_new_string(query));
    json_object_object_add(l, "content_type", r->ctype ? json_object_new_string(r->ctype) : NULL);
    json_object_object_add(l, "token", token ? json_object_new_string(token) : NULL);
    json_object *body = fk_parse_body(r);
    if (!body && r->body_len)
        body = json_object_new_string_len(r->body, (int)r->body_len);
    json_object_object_add(l, "body", body);
    FILE *f = fopen(fk_log_path, "a");
    if (f) {
        fprintf(f, "%s\n",
                json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
        fclose(f);
    }
    json_object_put(l);
}

static char *fk_current_token(void)
{
    if (fk_token)
        return xstrdup(fk_token);
    if (!fk_token_file)
        return NULL;
    FILE *f = fopen(fk_token_file, "r");
    if (!f)
        return xstrdup(""); /* nothing is accepted */
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return xstrdup(str_rtrim(buf));
}

static MHD_RESULT fk_handler(struct MHD_Connection *conn, const char *url, const char *method,
                             struct sbuf *body)
{
    struct fk_req r = {
        .conn = conn,
        .method = method,
        .path = url,
        .ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
        .body = body->buf,
        .body_len = body->len,
    };
    struct sbuf query = {0};
    sbuf_add(&query, "", 0);
    fakehttp_query(conn, &query);
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *sent = auth && str_has_prefix(auth, "Bearer ") ? auth + 7 : NULL;

    pthread_mutex_lock(&fk_lock);
    fk_log(&r, query.buf, sent);
    struct fk_fault fault;
    bool faulted = fk_take_fault(method, url, &fault);
    pthread_mutex_unlock(&fk_lock);
    sbuf_free(&query);

    if (faulted && fault.type == FK_SLOW)
        fakehttp_sleep(fault.secs);
    else if (faulted && fault.type == FK_REPLACE)
        r.replace = true;
    else if (faulted && (fault.type == FK_STATUS || fault.type == FK_SPEC))
        r.touch = (int)fault.type;
    else if (faulted && fault.type == FK_PRUNE)
        r.prune = fault.field;
    else if (faulted && fault.type == FK_GARBAGE)
        return fk_send(&r, 200, "application/json", "<html><body>502 Bad Gateway</body></html>");
    else if (faulted)
        return fk_fault_status(&r, fault.code);

    char *token = fk_current_token();
    bool ok = !token || (sent && strcmp(sent, token) == 0);
    for (size_t i = 0; !ok && sent && i < fk_nmore_tokens; i++)
        ok = strcmp(sent, fk_more_tokens[i]) == 0;
    free(token);
    if (!ok)
        return fk_status(&r, 401, "Unauthorized", "Unauthorized", NULL, NULL, NULL, NULL);

    pthread_mutex_lock(&fk_lock);
    MHD_RESULT ret = fk_route(&r);
    pthread_mutex_unlock(&fk_lock);
    return ret;
}

static void fk_usage(void)
{
    fprintf(stderr,
            "usage: fake_kube --data DIR [--log FILE] [--token TOKEN | --token-file FILE] "
            "[--port N] [--fault 'METHOD PATH=SPEC']... [--faults-file FILE] [--deny-file FILE] "
            "[--kueue-versions v1beta2,v1beta1]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *data = NULL;
    uint64_t port = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            fk_usage();
        if (strcmp(a, "--data") == 0)
            data = v;
        else if (strcmp(a, "--log") == 0)
            fk_log_path = v;
        else if (strcmp(a, "--token") == 0 && fk_token &&
                 fk_nmore_tokens < ARRAY_LEN(fk_more_tokens))
            fk_more_tokens[fk_nmore_tokens++] = v;
        else if (strcmp(a, "--token") == 0)
            fk_token = v;
        else if (strcmp(a, "--token-file") == 0)
            fk_token_file = v;
        else if (strcmp(a, "--faults-file") == 0)
            fk_faults_file = v;
        else if (strcmp(a, "--deny-file") == 0)
            fk_deny_file = v;
        else if (strcmp(a, "--fault") == 0)
            fk_add_fault(v);
        else if (strcmp(a, "--kueue-versions") == 0)
            fk_kueue_parse(v);
        else if (strcmp(a, "--port") == 0 && parse_u64(v, &port) == 0 && port <= 65535)
            ;
        else
            fk_usage();
        i++;
    }
    if (!data)
        fk_usage();
    fk_ncmd_faults = fk_nfaults;
    fk_load(data);

    int rc = fakehttp_serve("fake_kube", (uint16_t)port, fk_handler);
    for (size_t i = 0; i < fk_nobjs; i++) {
        json_object_put(fk_objs[i].obj);
        free(fk_objs[i].ns);
        free(fk_objs[i].name);
    }
    free(fk_objs);
    fk_ctl_free();
    for (size_t i = 0; i < fk_nfaults; i++) {
        free(fk_faults[i].method);
        free(fk_faults[i].path);
    }
    free(fk_faults);
    return rc;
}
