/*
 * Kubernetes API client for the enforcer: the handful of calls it makes, over httpc.
 *
 * Why a hand-written client: the enforcer needs about ten requests (docs/backend-apis.md §6),
 * and each one's failure modes matter more than convenience. A uid precondition is attached to
 * every write that names an object (DELETE options, metadata.uid in merge patches, the
 * eviction's deleteOptions) because a StatefulSet pod or a re-created Deployment reuses the
 * name: the API then answers 409 and we never act on the replacement. The service-account token
 * is re-read for every request and once more after a 401, as projected tokens rotate hourly.
 * Parsing is strict (wrong types are errors, not defaults) and, with the building of every
 * request body (kube_body_*), lives in the pure functions of kube_json.c, so the fuzz target
 * reaches all of it; this file holds the calls: path, method, body and answer handling.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "httpc.h"
#include "kube.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

#define KUBE_KUEUE_API "kueue.x-k8s.io/v1beta1"

#define KUBE_LABEL_QUEUE   "kueue.x-k8s.io/queue-name"
#define KUBE_LABEL_JOB_UID "kueue.x-k8s.io/job-uid"

struct kube {
    char *url; /* without a trailing slash */
    char *token_file;
    char *ca_file;
    bool insecure;
    double timeout;
    char *instance;
    long last_status; /* of the last answer, for the audit trail */
    const volatile sig_atomic_t *stop;
    bool (*gate)(void *arg);
    void *gate_arg;
};

/* Kinds the client knows: how to build their paths and whether the owner walk follows them. */
struct kube_kind {
    const char *group; /* "" for the core group */
    const char *kind;
    const char *plural;
    bool follow;   /* an owner the chain walk climbs to */
    bool scalable; /* has a /scale subresource */
};

static const struct kube_kind kube_kinds[] = {
    {"", "Pod", "pods", false, false},
    {"apps", "ReplicaSet", "replicasets", true, true},
    {"apps", "Deployment", "deployments", true, true},
    {"apps", "StatefulSet", "statefulsets", true, true},
    {"batch", "Job", "jobs", true, false},
    {"batch", "CronJob", "cronjobs", false, false},
    {"kueue.x-k8s.io", "Workload", "workloads", false, false},
};

const char *kube_result_name(enum kube_result r)
{
    switch (r) {
    case KUBE_OK:
        return "ok";
    case KUBE_NOT_FOUND:
        return "not_found";
    case KUBE_CONFLICT:
        return "conflict";
    case KUBE_RETRY_LATER:
        return "retry_later";
    case KUBE_FORBIDDEN:
        return "forbidden";
    case KUBE_UNSUPPORTED:
        return "unsupported";
    case KUBE_ERROR:
        return "error";
    case KUBE_CANCELLED:
        return "cancelled";
    }
    return "error";
}

/* ---- paths ------------------------------------------------------------------------------ */

/* Names and namespaces are DNS subdomains/labels; anything else could escape the path. */
static bool kube_name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 253 || s[0] == '.')
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '.' || *p == '_'))
            return false;
    return true;
}

static const struct kube_kind *kube_kind_of(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    const char *slash = strchr(api_version, '/');
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    for (size_t i = 0; i < ARRAY_LEN(kube_kinds); i++) {
        const struct kube_kind *kk = &kube_kinds[i];
        if (strcmp(kk->kind, kind) == 0 && strlen(kk->group) == glen &&
            strncmp(kk->group, api_version, glen) == 0)
            return kk;
    }
    return NULL;
}

/* Path of the object `ref` names (plus "/sub"), or NULL with a message. Caller frees. */
static char *kube_path(const struct kube_ref *ref, const char *sub, char *err, size_t errlen)
{
    const struct kube_kind *kk = kube_kind_of(ref->api_version, ref->kind);
    if (!kk) {
        snprintf(err, errlen, "unsupported kind '%s' (apiVersion '%s')", ref->kind ? ref->kind : "",
                 ref->api_version ? ref->api_version : "");
        return NULL;
    }
    if (!kube_name_ok(ref->ns) || !kube_name_ok(ref->name) || strchr(ref->api_version, '?') ||
        strchr(ref->api_version, '%') || strchr(ref->api_version, '#')) {
        snprintf(err, errlen, "invalid object name '%s/%s'", ref->ns ? ref->ns : "",
                 ref->name ? ref->name : "");
        return NULL;
    }
    return xasprintf("/%s/%s/namespaces/%s/%s/%s%s%s", kk->group[0] ? "apis" : "api",
                     ref->api_version, ref->ns, kk->plural, ref->name, sub ? "/" : "",
                     sub ? sub : "");
}

/* ---- client ----------------------------------------------------------------------------- */

struct kube *kube_new(const struct kube_cfg *cfg, char *err, size_t errlen)
{
    struct kube *k = xcalloc(1, sizeof(*k));
    if (cfg->api_url && *cfg->api_url) {
        k->url = xstrdup(cfg->api_url);
        k->ca_file = cfg->ca_file ? xstrdup(cfg->ca_file) : NULL;
    } else {
        const char *host = getenv("KUBERNETES_SERVICE_HOST");
        const char *port = getenv("KUBERNETES_SERVICE_PORT");
        if (!host || !*host || !port || !*port) {
            snprintf(err, errlen,
                     "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
                     "set: not in a cluster, give --kube.api-url");
            free(k);
            return NULL;
        }
        /* An IPv6 service address needs brackets in a URL. */
        k->url = xasprintf(strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
        k->ca_file = xstrdup(cfg->ca_file ? cfg->ca_file : KUBE_SA_DIR "/ca.crt");
    }
    size_t n = strlen(k->url);
    while (n > 0 && k->url[n - 1] == '/')
        k->url[--n] = '\0';
    if (!str_has_prefix(k->url, "https://") && !str_has_prefix(k->url, "http://")) {
        snprintf(err, errlen, "invalid API server URL '%s': not http(s)", k->url);
        kube_free(k);
        return NULL;
    }
    k->token_file = xstrdup(cfg->token_file ? cfg->token_file : KUBE_SA_DIR "/token");
    /* A bearer token in clear text is a credential handed to anyone on the path. */
    if (k->token_file[0] && str_has_prefix(k->url, "http://") && !cfg->allow_insecure_credentials) {
        snprintf(err, errlen,
                 "refusing to send the token of '%s' over plain http to '%s': use https, "
                 "no token (--kube.token-file=''), or --kube.allow-insecure-credentials",
                 k->token_file, k->url);
        kube_free(k);
        return NULL;
    }
    k->insecure = cfg->insecure;
    k->stop = cfg->stop;
    k->gate = cfg->gate;
    k->gate_arg = cfg->gate_arg;
    k->timeout = cfg->timeout > 0 ? cfg->timeout : 10.0;
    if (cfg->instance && *cfg->instance) {
        k->instance = xstrdup(cfg->instance);
    } else if (getenv("POD_NAME") && *getenv("POD_NAME")) {
        k->instance = xstrdup(getenv("POD_NAME"));
    } else {
        char host[256] = "";
        gethostname(host, sizeof(host) - 1);
        k->instance = xstrdup(host[0] ? host : "gpureclaim-enforcer");
    }
    if (strlen(k->instance) > 128)
        k->instance[128] = '\0';
    if (k->insecure)
        log_warn("TLS verification of the Kubernetes API '%s' is disabled", k->url);
    return k;
}

void kube_free(struct kube *k)
{
    if (!k)
        return;
    free(k->url);
    free(k->token_file);
    free(k->ca_file);
    free(k->instance);
    free(k);
}

/*
 * One API call: `what` names it for messages ("evict pod 'ml/p1'"). On KUBE_OK `resp` holds
 * the answer for the caller to parse; the caller always frees it.
 */
static enum kube_result kube_call(struct kube *k, const char *method, const char *path,
                                  const char *ctype, const char *body, const char *what,
                                  struct httpc_resp *resp, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", k->url, path);
    char *ct = ctype ? xasprintf("Content-Type: %s", ctype) : NULL;
    const char *headers[] = {"Accept: application/json", ct};
    enum kube_result r = KUBE_ERROR;
    *resp = (struct httpc_resp){0};
    k->last_status = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        /*
         * After SIGTERM nothing new starts, nor on a replica that lost the Lease (the new
         * leader decides from here on); the caller reports what was left undone. Checked on
         * every attempt: the retry after a 401 is a new call.
         */
        if (k->stop && *k->stop) {
            snprintf(err, errlen, "cannot %s: not sent, the enforcer is stopping", what);
            r = KUBE_CANCELLED;
            break;
        }
        if (k->gate && !k->gate(k->gate_arg)) {
            snprintf(err, errlen, "cannot %s: not sent, this replica is not the leader", what);
            r = KUBE_CANCELLED;
            break;
        }
        char *token = NULL;
        if (k->token_file[0] && !(token = secret_read(k->token_file, "token", err, errlen)))
            break;
        struct httpc_req req = {
            .method = method,
            .url = url,
            .headers = headers,
            .nheaders = ct ? 2 : 1,
            .body = body,
            .body_len = body ? strlen(body) : 0,
            .timeout = k->timeout,
            .ca_file = k->ca_file,
            .insecure = k->insecure,
            .bearer_token = token,
        };
        httpc_resp_free(resp);
        char herr[512];
        int hr = httpc_do(&req, resp, herr, sizeof(herr));
        secret_free(token);
        if (hr < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, herr);
            break;
        }
        k->last_status = resp->status;
        log_debug("kubernetes %s %s: HTTP %ld, %zu bytes, %.3f s", method, path, resp->status,
                  resp->body.len, resp->elapsed);
        /* The kubelet may have rotated the token since we read it: read it again, once. */
        if (resp->status == 401 && attempt == 0) {
            log_info("kubernetes API answered 401 to %s %s, re-reading the token", method, path);
            continue;
        }
        r = kube_classify(resp->status, resp->body.buf, resp->body.len, what, err, errlen);
        break;
    }
    free(url);
    free(ct);
    return r;
}

long kube_last_status(const struct kube *k)
{
    return k->last_status;
}

/* GET path and parse the answer as one object into `obj`. */
static enum kube_result kube_get_path(struct kube *k, const char *path, const char *what,
                                      struct kube_obj *obj, char *err, size_t errlen)
{
    struct httpc_resp resp;
    *obj = (struct kube_obj){0};
    enum kube_result r = kube_call(k, "GET", path, NULL, NULL, what, &resp, err, errlen);
    if (r == KUBE_OK) {
        char perr[256];
        if (kube_parse_obj(resp.body.buf, resp.body.len, obj, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        }
    }
    httpc_resp_free(&resp);
    return r;
}

enum kube_result kube_get(struct kube *k, const struct kube_ref *ref, struct kube_obj *obj,
                          char *err, size_t errlen)
{
    *obj = (struct kube_obj){0};
    char *path = kube_path(ref, NULL, err, errlen);
    if (!path)
        return KUBE_UNSUPPORTED;
    char *what = xasprintf("get %s '%s/%s'", ref->kind, ref->ns, ref->name);
    enum kube_result r = kube_get_path(k, path, what, obj, err, errlen);
    if (r == KUBE_OK && obj->ref.kind && strcmp(obj->ref.kind, ref->kind) != 0) {
        snprintf(err, errlen, "cannot %s: the API returned kind '%s'", what, obj->ref.kind);
        kube_obj_free(obj);
        r = KUBE_ERROR;
    }
    if (r == KUBE_OK) {
        /* Fill identity the answer may omit, so the object can be passed on as a ref. */
        if (!obj->ref.api_version)
            obj->ref.api_version = xstrdup(ref->api_version);
        if (!obj->ref.kind)
            obj->ref.kind = xstrdup(ref->kind);
        if (!obj->ref.ns)
            obj->ref.ns = xstrdup(ref->ns);
    }
    free(what);
    free(path);
    return r;
}

enum kube_result kube_get_pod(struct kube *k, const char *ns, const char *name,
                              struct kube_obj *pod, char *err, size_t errlen)
{
    struct kube_ref ref = {(char *)"v1", (char *)"Pod", (char *)ns, (char *)name, NULL};
    return kube_get(k, &ref, pod, err, errlen);
}

enum kube_result kube_root_owner(struct kube *k, const struct kube_obj *pod,
                                 struct kube_chain *chain, char *err, size_t errlen)
{
    *chain = (struct kube_chain){0};
    kube_obj_copy(&chain->obj[0], pod);
    chain->n = 1;
    if (!chain->obj[0].ref.api_version)
        chain->obj[0].ref.api_version = xstrdup("v1");
    if (!chain->obj[0].ref.kind)
        chain->obj[0].ref.kind = xstrdup("Pod");
    const char *ns = pod->ref.ns ? pod->ref.ns : "";

    for (size_t depth = 0;; depth++) {
        const struct kube_obj *cur = &chain->obj[chain->n - 1];
        const struct kube_owner_ref *o = kube_controller_ref(cur);
        if (!o)
            break;
        const struct kube_kind *kk = kube_kind_of(o->api_version, o->kind);
        /* A Job's CronJob is a schedule: act on this run, never on the schedule. */
        if (kk && strcmp(kk->kind, "CronJob") == 0 && strcmp(cur->ref.kind, "Job") == 0)
            break;
        if (!kk || !kk->follow) {
            chain->unknown = (struct kube_owner_ref){xstrdup(o->api_version), xstrdup(o->kind),
                                                     xstrdup(o->name), xstrdup(o->uid), true};
            snprintf(err, errlen,
                     "owner %s '%s/%s' (apiVersion '%s') of %s '%s' is not a kind "
                     "gpureclaim acts on",
                     o->kind, ns, o->name, o->api_version, cur->ref.kind, cur->ref.name);
            return KUBE_UNSUPPORTED;
        }
        if (depth >= KUBE_CHAIN_MAX) {
            snprintf(err, errlen, "owner chain of pod '%s/%s' is longer than %d levels", ns,
                     pod->ref.name, KUBE_CHAIN_MAX);
            return KUBE_ERROR;
        }
        struct kube_ref ref = {(char *)o->api_version, (char *)o->kind, (char *)ns, (char *)o->name,
                               (char *)o->uid};
        struct kube_obj next;
        enum kube_result r = kube_get(k, &ref, &next, err, errlen);
        if (r != KUBE_OK)
            return r;
        if (!next.ref.uid || strcmp(next.ref.uid, o->uid) != 0) {
            snprintf(err, errlen,
                     "%s '%s/%s' has uid '%s', not '%s' as referenced by %s '%s': "
                     "it was replaced",
                     o->kind, ns, o->name, next.ref.uid ? next.ref.uid : "", o->uid, cur->ref.kind,
                     cur->ref.name);
            kube_obj_free(&next);
            return KUBE_CONFLICT;
        }
        chain->obj[chain->n++] = next;
    }
    const struct kube_obj *root = &chain->obj[chain->n - 1];
    chain->kueue = strcmp(root->ref.kind, "Job") == 0 && kube_label(root, KUBE_LABEL_QUEUE);
    return KUBE_OK;
}

/* PATCH path with a JSON merge patch from a kube_body_* builder, which this frees. */
static enum kube_result kube_merge_patch(struct kube *k, const char *path, char *body,
                                         const char *what, char *err, size_t errlen)
{
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "PATCH", path, "application/merge-patch+json", body, what, &resp, err, errlen);
    httpc_resp_free(&resp);
    free(body);
    return r;
}

enum kube_result kube_annotate(struct kube *k, const struct kube_ref *ref, const char *key,
                               const char *value, char *err, size_t errlen)
{
    char *path = kube_path(ref, NULL, err, errlen);
    if (!path)
        return KUBE_UNSUPPORTED;
    char *body = kube_body_annotate(ref->uid, key, value);
    char *what = xasprintf("annotate %s '%s/%s'", ref->kind, ref->ns, ref->name);
    enum kube_result r = kube_merge_patch(k, path, body, what, err, errlen);
    free(what);
    free(path);
    return r;
}

enum kube_result kube_scale_to_zero(struct kube *k, const struct kube_ref *owner, int64_t *previous,
                                    char *err, size_t errlen)
{
    k->last_status = 0; /* an action refused before any request has no status */
    *previous = 0;
    const struct kube_kind *kk = kube_kind_of(owner->api_version, owner->kind);
    if (!kk || !kk->scalable) {
        snprintf(err, errlen, "cannot scale %s '%s/%s': no scale subresource",
                 owner->kind ? owner->kind : "", owner->ns ? owner->ns : "",
                 owner->name ? owner->name : "");
        return KUBE_UNSUPPORTED;
    }
    /* Without a uid the patch of /scale could land on a re-created owner of the same name. */
    if (!owner->uid || !*owner->uid) {
        snprintf(err, errlen, "refusing to scale %s '%s/%s' without a uid", owner->kind,
                 owner->ns ? owner->ns : "", owner->name ? owner->name : "");
        return KUBE_UNSUPPORTED;
    }
    char *path = kube_path(owner, "scale", err, errlen);
    if (!path)
        return KUBE_UNSUPPORTED;
    char *what = xasprintf("scale %s '%s/%s' to 0", owner->kind, owner->ns, owner->name);
    struct httpc_resp resp;
    enum kube_result r = kube_call(k, "GET", path, NULL, NULL, what, &resp, err, errlen);
    int64_t n = 0;
    if (r == KUBE_OK) {
        char perr[256];
        if (kube_parse_scale(resp.body.buf, resp.body.len, &n, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        }
    }
    httpc_resp_free(&resp);
    /*
     * Already at zero: recording 0 would overwrite the count a previous reclaim saved, which
     * is the only way back for the user.
     */
    if (r == KUBE_OK && n > 0) {
        char num[32];
        snprintf(num, sizeof(num), "%lld", (long long)n);
        r = kube_annotate(k, owner, KUBE_ANN_REPLICAS_BEFORE, num, err, errlen);
        if (r == KUBE_OK)
            r = kube_merge_patch(k, path, kube_body_scale_zero(owner->uid), what, err, errlen);
    }
    if (r == KUBE_OK)
        *previous = n;
    free(what);
    free(path);
    return r;
}

/* Deactivate the Kueue Workload created for `job` (label kueue.x-k8s.io/job-uid). */
static enum kube_result kube_deactivate_workload(struct kube *k, const struct kube_obj *job,
                                                 char *err, size_t errlen)
{
    const struct kube_ref *j = &job->ref;
    if (!kube_name_ok(j->ns) || !j->uid) {
        snprintf(err, errlen, "cannot find the Kueue workload of Job '%s': no namespace or uid",
                 j->name ? j->name : "");
        return KUBE_ERROR;
    }
    struct sbuf path = {0};
    sbuf_printf(&path, "/apis/%s/namespaces/%s/workloads?labelSelector=", KUBE_KUEUE_API, j->ns);
    char *sel = xasprintf("%s=%s", KUBE_LABEL_JOB_UID, j->uid);
    httpc_urlencode(&path, sel);
    free(sel);
    char *what = xasprintf("find the Kueue workload of Job '%s/%s'", j->ns, j->name);
    struct httpc_resp resp;
    enum kube_result r = kube_call(k, "GET", path.buf, NULL, NULL, what, &resp, err, errlen);
    struct kube_obj *items = NULL;
    size_t n = 0;
    if (r == KUBE_OK) {
        char perr[256];
        if (kube_parse_list(resp.body.buf, resp.body.len, &items, &n, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        } else if (n != 1) {
            snprintf(err, errlen, "cannot %s: %zu workloads have label '%s=%s'", what, n,
                     KUBE_LABEL_JOB_UID, j->uid);
            r = KUBE_ERROR;
        }
    }
    httpc_resp_free(&resp);
    if (r == KUBE_OK) {
        struct kube_ref wl = {(char *)KUBE_KUEUE_API, (char *)"Workload", (char *)j->ns,
                              items[0].ref.name, items[0].ref.uid};
        char *wpath = kube_path(&wl, NULL, err, errlen);
        if (!wpath) {
            r = KUBE_ERROR;
        } else {
            char *wwhat = xasprintf("deactivate Kueue workload '%s/%s'", j->ns, wl.name);
            r = kube_merge_patch(k, wpath, kube_body_deactivate(wl.uid), wwhat, err, errlen);
            free(wwhat);
            free(wpath);
        }
    }
    for (size_t i = 0; i < n; i++)
        kube_obj_free(&items[i]);
    free(items);
    free(what);
    sbuf_free(&path);
    return r;
}

enum kube_result kube_suspend(struct kube *k, const struct kube_obj *job, char *err, size_t errlen)
{
    k->last_status = 0;
    const struct kube_kind *kk = kube_kind_of(job->ref.api_version, job->ref.kind);
    if (!kk || strcmp(kk->kind, "Job") != 0) {
        snprintf(err, errlen, "cannot suspend %s '%s': only Jobs can be suspended",
                 job->ref.kind ? job->ref.kind : "", job->ref.name ? job->ref.name : "");
        return KUBE_UNSUPPORTED;
    }
    /* Kueue owns spec.suspend of the Jobs it admits and would undo our patch. */
    if (kube_label(job, KUBE_LABEL_QUEUE))
        return kube_deactivate_workload(k, job, err, errlen);
    char *path = kube_path(&job->ref, NULL, err, errlen);
    if (!path)
        return KUBE_ERROR;
    char *what = xasprintf("suspend Job '%s/%s'", job->ref.ns, job->ref.name);
    enum kube_result r =
        kube_merge_patch(k, path, kube_body_suspend(job->ref.uid), what, err, errlen);
    free(what);
    free(path);
    return r;
}

enum kube_result kube_evict(struct kube *k, const char *ns, const char *name, const char *uid,
                            char *err, size_t errlen)
{
    k->last_status = 0;
    struct kube_ref ref = {(char *)"v1", (char *)"Pod", (char *)ns, (char *)name, (char *)uid};
    if (!uid || !*uid) {
        snprintf(err, errlen, "refusing to evict pod '%s/%s' without a uid", ns ? ns : "",
                 name ? name : "");
        return KUBE_ERROR;
    }
    char *path = kube_path(&ref, "eviction", err, errlen);
    if (!path)
        return KUBE_ERROR;
    char *body = kube_body_eviction(ns, name, uid);
    char *what = xasprintf("evict pod '%s/%s'", ns, name);
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "POST", path, "application/json", body, what, &resp, err, errlen);
    httpc_resp_free(&resp);
    free(what);
    free(body);
    free(path);
    return r;
}

enum kube_result kube_delete(struct kube *k, const struct kube_ref *ref, const char *propagation,
                             char *err, size_t errlen)
{
    k->last_status = 0;
    if (!propagation)
        propagation = "Background";
    if (strcmp(propagation, "Background") != 0 && strcmp(propagation, "Foreground") != 0 &&
        strcmp(propagation, "Orphan") != 0) {
        snprintf(err, errlen, "invalid propagation policy '%s'", propagation);
        return KUBE_ERROR;
    }
    /* Without a uid a re-created object of the same name would be deleted. */
    if (!ref->uid || !*ref->uid) {
        snprintf(err, errlen, "refusing to delete %s '%s/%s' without a uid",
                 ref->kind ? ref->kind : "", ref->ns ? ref->ns : "", ref->name ? ref->name : "");
        return KUBE_ERROR;
    }
    char *path = kube_path(ref, NULL, err, errlen);
    if (!path)
        return KUBE_UNSUPPORTED;
    char *body = kube_body_delete(propagation, ref->uid);
    char *what = xasprintf("delete %s '%s/%s'", ref->kind, ref->ns, ref->name);
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "DELETE", path, "application/json", body, what, &resp, err, errlen);
    httpc_resp_free(&resp);
    free(what);
    free(body);
    free(path);
    return r;
}

/*
 * Event names must be unique in the namespace; client-go's recorder uses "<name>.<hex ns>".
 * Two events within one nanosecond would collide, so the stamp only moves forward.
 */
static unsigned long long kube_event_stamp(void)
{
    static _Atomic unsigned long long last;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned)ts.tv_nsec;
    unsigned long long prev = atomic_load(&last);
    do {
        if (now <= prev)
            now = prev + 1;
    } while (!atomic_compare_exchange_weak(&last, &prev, now));
    return now;
}

enum kube_result kube_post_event(struct kube *k, const struct kube_ref *involved,
                                 const char *reason, const char *message, const char *type,
                                 const char *action, char *err, size_t errlen)
{
    if (!kube_name_ok(involved->ns) || !kube_name_ok(involved->name) || !reason) {
        snprintf(err, errlen, "cannot post an event about '%s/%s': invalid object or reason",
                 involved->ns ? involved->ns : "", involved->name ? involved->name : "");
        return KUBE_ERROR;
    }
    char stamp[24], now[32];
    snprintf(stamp, sizeof(stamp), "%llx", kube_event_stamp());
    rfc3339_format(now, sizeof(now), (double)time(NULL), RFC3339_SEC);
    /* Keep the name within 253 characters by shortening the object-name part. */
    int keep = (int)(253 - 1 - strlen(stamp));
    char *name = xasprintf("%.*s.%s", keep, involved->name, stamp);
    struct kube_event ev = {involved, name, reason, message, type, action, now, k->instance};
    char *body = kube_body_event(&ev);
    char *path = xasprintf("/api/v1/namespaces/%s/events", involved->ns);
    char *what =
        xasprintf("post event '%s' about %s '%s/%s'", reason,
                  involved->kind ? involved->kind : "object", involved->ns, involved->name);
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "POST", path, "application/json", body, what, &resp, err, errlen);
    httpc_resp_free(&resp);
    free(what);
    free(path);
    free(body);
    free(name);
    return r;
}

enum kube_result kube_pending_for_resource(struct kube *k, const char *resource, size_t *count,
                                           int64_t *requested, char *err, size_t errlen)
{
    int64_t req_dummy;
    if (!requested)
        requested = &req_dummy;
    *count = 0;
    *requested = 0;
    const char *path = "/api/v1/pods?fieldSelector=status.phase%3DPending";
    char *what = xasprintf("list Pending pods for '%s'", resource);
    struct httpc_resp resp;
    enum kube_result r = kube_call(k, "GET", path, NULL, NULL, what, &resp, err, errlen);
    if (r == KUBE_OK) {
        char perr[256];
        if (kube_parse_pending(resp.body.buf, resp.body.len, resource, count, requested, perr,
                               sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        }
    }
    httpc_resp_free(&resp);
    free(what);
    return r;
}

enum kube_result kube_kueue_waiting_for_resource(struct kube *k, const char *resource,
                                                 const char *const *skip_uids, size_t nskip,
                                                 size_t *count, char *err, size_t errlen)
{
    *count = 0;
    char *path = xasprintf("/apis/%s/workloads", KUBE_KUEUE_API);
    char *what = xasprintf("list Kueue workloads waiting for '%s'", resource);
    struct httpc_resp resp;
    enum kube_result r = kube_call(k, "GET", path, NULL, NULL, what, &resp, err, errlen);
    if (r == KUBE_OK) {
        char perr[256];
        if (kube_parse_kueue_waiting(resp.body.buf, resp.body.len, resource, skip_uids, nskip,
                                     count, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        }
    }
    httpc_resp_free(&resp);
    free(what);
    free(path);
    return r;
}

enum kube_result kube_access_review(struct kube *k, const struct kube_access *a, int *verdict,
                                    char *reason, size_t reasonlen, char *err, size_t errlen)
{
    *verdict = KUBE_ACCESS_UNKNOWN;
    if (reasonlen)
        reason[0] = '\0';
    char *body = kube_body_ssar(a);
    char *what =
        xasprintf("review access to %s %s%s%s%s%s", a->verb, a->group && *a->group ? a->group : "",
                  a->group && *a->group ? "/" : "", a->resource, a->subresource ? "/" : "",
                  a->subresource ? a->subresource : "");
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                  "application/json", body, what, &resp, err, errlen);
    if (r == KUBE_OK) {
        char perr[256], *why = NULL;
        if (kube_parse_ssar(resp.body.buf, resp.body.len, verdict, &why, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot %s: %s", what, perr);
            r = KUBE_ERROR;
        } else if (why && reasonlen) {
            snprintf(reason, reasonlen, "%s", why);
        }
        free(why);
    }
    httpc_resp_free(&resp);
    free(what);
    free(body);
    return r;
}

enum kube_result kube_request(struct kube *k, const char *method, const char *path,
                              const char *body, const char *what, long *status, char **resp_body,
                              size_t *resp_len, char *err, size_t errlen)
{
    struct httpc_resp resp;
    enum kube_result r = kube_call(k, method, path, body ? "application/json" : NULL, body, what,
                                   &resp, err, errlen);
    *status = resp.status;
    *resp_len = resp.body.len;
    *resp_body = xstrndup(resp.body.buf ? resp.body.buf : "", resp.body.len);
    httpc_resp_free(&resp);
    return r;
}
