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
 * reaches all of it; this file holds the calls. Every call runs the same sequence (method,
 * path, body, the call with its token, retry and classification, the answer kept, everything
 * freed) through one helper, kube_send, so that each call reads as its path, its body and what
 * it means; the answer is read from k->ans, and an unreadable one reported by kube_bad_answer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "annot.h"
#include "file.h"
#include "httpc.h"
#include "kube.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

/*
 * Kueue's API group. Workloads are served at v1beta1 and, since Kueue v0.15.0, v1beta2, the
 * storage version since v0.16.0, which also deprecates v1beta1 (docs/enforcer.md, "Kueue"):
 * they are read and deactivated at the version discovery prefers (kube_kueue_resource).
 */
#define KUBE_KUEUE_GROUP "kueue.x-k8s.io"

#define KUBE_LABEL_QUEUE   "kueue.x-k8s.io/queue-name"
#define KUBE_LABEL_JOB_UID "kueue.x-k8s.io/job-uid"

/*
 * Discovery answers kept per client: one APIResourceList per group/version ("v1",
 * "apps/v1", "kubeflow.org/v1"). `served` is false when that version answered 404; then
 * `preferred` holds the group's preferred version from /apis (NULL: the group is not served).
 */
struct kube_disco {
    char *gv;
    bool served;
    char *preferred;
    char **versions; /* not served: every version the group serves, in /apis order */
    size_t nversions;
    struct kube_api_resource *res;
    size_t n;
    double fetched; /* mono_now() of the answer */
};

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
    char *last_rv;     /* metadata.resourceVersion in the last write's answer */
    int64_t last_gen;  /* metadata.generation after the last write, 0 unknown */
    char *last_answer; /* the last merge patch's 2xx answer (kube_last_answer) */
    size_t last_answer_len;
    struct httpc_resp ans; /* kube_send's last answer, for the caller to read */
    char *what;            /* what kube_send's last request was, for kube_bad_answer */
    struct kube_disco disco[KUBE_DISCO_MAX];
    size_t ndisco;
    /* The preferred version of Kueue's group from /apis (NULL: not served), when fetched. */
    char *kueue_version;
    double kueue_fetched; /* mono_now() of the answer; 0: never */
};

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

/* A group/version and kind safe to put in a path: DNS-ish names, no query or escapes. */
static bool kube_gvk_ok(const char *api_version, const char *kind)
{
    if (!api_version || !*api_version || !kind || !*kind || strlen(api_version) > 253)
        return false;
    const char *slash = strchr(api_version, '/');
    if (slash && (slash == api_version || !slash[1] || strchr(slash + 1, '/')))
        return false;
    for (const char *p = api_version; *p; p++)
        if (*p != '/' &&
            !((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
            return false;
    return kube_name_ok(kind);
}

/* Path of the object `ref` names (plus "/sub") in resource `res`. Caller frees. */
static char *kube_res_path(const struct kube_resource *res, const struct kube_ref *ref,
                           const char *sub, char *err, size_t errlen)
{
    if ((res->namespaced && !kube_name_ok(ref->ns)) || !kube_name_ok(ref->name)) {
        snprintf(err, errlen, "invalid object name '%s/%s'", ref->ns ? ref->ns : "",
                 ref->name ? ref->name : "");
        return NULL;
    }
    struct sbuf b = {0};
    if (res->group[0])
        sbuf_printf(&b, "/apis/%s/%s", res->group, res->version);
    else
        sbuf_printf(&b, "/api/%s", res->version);
    if (res->namespaced)
        sbuf_printf(&b, "/namespaces/%s", ref->ns);
    sbuf_printf(&b, "/%s/%s%s%s", res->plural, ref->name, sub ? "/" : "", sub ? sub : "");
    return sbuf_take(&b);
}

/*
 * Resolve `ref`'s kind and build its path: the resource in *res when `res` is not NULL (freed
 * by the caller, also on failure). KUBE_OK, or the discovery result with a message.
 */
static enum kube_result kube_path(struct kube *k, const struct kube_ref *ref, const char *sub,
                                  struct kube_resource *res, char **path, char *err, size_t errlen)
{
    struct kube_resource own;
    if (!res)
        res = &own;
    *path = NULL;
    enum kube_result r = kube_resource_of(k, ref->api_version, ref->kind, res, err, errlen);
    if (r == KUBE_OK && !(*path = kube_res_path(res, ref, sub, err, errlen)))
        r = KUBE_ERROR;
    if (res == &own)
        kube_resource_free(&own);
    return r;
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

static void kube_disco_clear(struct kube_disco *d)
{
    free(d->gv);
    free(d->preferred);
    for (size_t i = 0; i < d->nversions; i++)
        free(d->versions[i]);
    free(d->versions);
    kube_api_resources_free(d->res, d->n);
    *d = (struct kube_disco){0};
}

void kube_free(struct kube *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->ndisco; i++)
        kube_disco_clear(&k->disco[i]);
    free(k->kueue_version);
    free(k->last_rv);
    free(k->last_answer);
    httpc_resp_free(&k->ans);
    free(k->what);
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

/*
 * The sequence of every call: `method` on `path` with `body` (both malloc'd by the caller and
 * taken over here; body NULL: none), named by the printf-style `what` for messages ("evict pod
 * 'ml/p1'"). A PATCH is a JSON merge patch, whose 2xx answer is kept for a next write
 * (kube_last_resource_version) and to check what the API stored (kube_last_answer); any other
 * body is JSON. The answer stays in k->ans, whatever the result, until the next call: the
 * caller reads it and reports an unreadable one with kube_bad_answer.
 */
static enum kube_result kube_send(struct kube *k, const char *method, char *path, char *body,
                                  char *err, size_t errlen, const char *what, ...)
    __attribute__((format(printf, 7, 8)));

static enum kube_result kube_send(struct kube *k, const char *method, char *path, char *body,
                                  char *err, size_t errlen, const char *what, ...)
{
    struct sbuf w = {0};
    va_list ap;
    va_start(ap, what);
    sbuf_vprintf(&w, what, ap);
    va_end(ap);
    free(k->what);
    k->what = sbuf_take(&w);
    bool patch = strcmp(method, "PATCH") == 0;
    if (patch) {
        free(k->last_rv);
        k->last_rv = NULL;
        k->last_gen = 0;
        free(k->last_answer);
        k->last_answer = NULL;
        k->last_answer_len = 0;
    }
    httpc_resp_free(&k->ans);
    const char *ctype = patch ? "application/merge-patch+json" : body ? "application/json" : NULL;
    enum kube_result r = kube_call(k, method, path, ctype, body, k->what, &k->ans, err, errlen);
    if (r == KUBE_OK && patch) {
        k->last_answer = xstrndup(k->ans.body.buf ? k->ans.body.buf : "", k->ans.body.len);
        k->last_answer_len = k->ans.body.len;
        struct kube_obj o;
        char perr[128];
        if (kube_parse_obj(k->ans.body.buf, k->ans.body.len, &o, perr, sizeof(perr)) == 0) {
            k->last_rv = o.resource_version;
            k->last_gen = o.generation;
            o.resource_version = NULL;
            kube_obj_free(&o);
        }
    }
    free(path);
    free(body);
    return r;
}

/* The last call's answer could not be read (`why`): "cannot <what>: <why>", KUBE_ERROR. */
static enum kube_result kube_bad_answer(struct kube *k, const char *why, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot %s: %s", k->what ? k->what : "call the API", why);
    return KUBE_ERROR;
}

long kube_last_status(const struct kube *k)
{
    return k->last_status;
}

const char *kube_last_resource_version(const struct kube *k)
{
    return k->last_rv;
}

int64_t kube_last_generation(const struct kube *k)
{
    return k->last_gen;
}

const char *kube_last_answer(const struct kube *k, size_t *len)
{
    *len = k->last_answer_len;
    return k->last_answer;
}

/* ---- discovery -------------------------------------------------------------------------- */

/*
 * The resources compiled into kube-apiserver that the enforcer uses: they are served by every
 * cluster under these names (an API group of kube-apiserver cannot be removed or renamed), so
 * asking discovery for them would only add requests. Every other kind is asked for.
 */
static const struct {
    const char *group, *version, *kind, *plural;
    bool scale;
} kube_builtin[] = {
    {"", "v1", "Pod", "pods", false},
    {"", "v1", "Event", "events", false},
    {"apps", "v1", "ReplicaSet", "replicasets", true},
    {"apps", "v1", "Deployment", "deployments", true},
    {"apps", "v1", "StatefulSet", "statefulsets", true},
    {"batch", "v1", "Job", "jobs", false},
    {"batch", "v1", "CronJob", "cronjobs", false},
    {"coordination.k8s.io", "v1", "Lease", "leases", false},
};

void kube_resource_free(struct kube_resource *r)
{
    free(r->group);
    free(r->version);
    free(r->plural);
    *r = (struct kube_resource){0};
}

static void kube_resource_set(struct kube_resource *out, const char *group, const char *version,
                              const char *plural, bool namespaced, bool scale)
{
    *out = (struct kube_resource){xstrdup(group), xstrdup(version), xstrdup(plural), namespaced,
                                  scale};
}

static struct kube_disco *kube_disco_find(struct kube *k, const char *gv)
{
    for (size_t i = 0; i < k->ndisco; i++)
        if (strcmp(k->disco[i].gv, gv) == 0)
            return &k->disco[i];
    return NULL;
}

/* A slot for `gv`: its own, a free one, or the one fetched longest ago (bounded cache). */
static struct kube_disco *kube_disco_slot(struct kube *k, const char *gv)
{
    struct kube_disco *d = kube_disco_find(k, gv);
    if (!d && k->ndisco < KUBE_DISCO_MAX) {
        d = &k->disco[k->ndisco++];
        *d = (struct kube_disco){0};
    } else if (!d) {
        d = &k->disco[0];
        for (size_t i = 1; i < k->ndisco; i++)
            if (k->disco[i].fetched < d->fetched)
                d = &k->disco[i];
    }
    kube_disco_clear(d);
    d->gv = xstrdup(gv);
    return d;
}

/* GET a discovery document into k->ans. */
static enum kube_result kube_disco_get(struct kube *k, const char *path, char *err, size_t errlen)
{
    return kube_send(k, "GET", xstrdup(path), NULL, err, errlen,
                     "discover the API resources of '%s'", path);
}

/* Fetch group/version's APIResourceList (and on 404 the group's preferred version). */
static enum kube_result kube_disco_fetch(struct kube *k, const char *group, const char *version,
                                         const char *gv, struct kube_disco **out, char *err,
                                         size_t errlen)
{
    char *path =
        group[0] ? xasprintf("/apis/%s/%s", group, version) : xasprintf("/api/%s", version);
    char perr[256];
    struct kube_api_resource *res = NULL;
    size_t n = 0;
    enum kube_result r = kube_disco_get(k, path, err, errlen);
    if (r == KUBE_OK && kube_parse_resource_list(k->ans.body.buf, k->ans.body.len, &res, &n, perr,
                                                 sizeof(perr)) < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, perr);
        r = KUBE_ERROR;
    }
    char *preferred = NULL, **versions = NULL;
    size_t nversions = 0;
    if (r == KUBE_NOT_FOUND && group[0]) {
        /* Not served at this version (an ownerReference written at an older version of a
           CRD, say): the group's preferred version serves the same objects. */
        r = kube_disco_get(k, "/apis", err, errlen);
        if (r == KUBE_OK &&
            kube_parse_group_list(k->ans.body.buf, k->ans.body.len, group, &preferred, &versions,
                                  &nversions, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot read '/apis': %s", perr);
            r = KUBE_ERROR;
        }
        if (r == KUBE_OK) {
            struct kube_disco *d = kube_disco_slot(k, gv);
            d->served = false;
            d->preferred = preferred;
            d->versions = versions;
            d->nversions = nversions;
            d->fetched = mono_now();
            *out = d;
        }
    } else if (r == KUBE_NOT_FOUND) {
        struct kube_disco *d = kube_disco_slot(k, gv);
        d->fetched = mono_now();
        *out = d;
        r = KUBE_OK;
    } else if (r == KUBE_OK) {
        struct kube_disco *d = kube_disco_slot(k, gv);
        d->served = true;
        d->res = res;
        d->n = n;
        d->fetched = mono_now();
        *out = d;
    }
    free(path);
    return r;
}

static const struct kube_api_resource *kube_disco_kind(const struct kube_disco *d, const char *kind)
{
    for (size_t i = 0; d && d->served && i < d->n; i++)
        if (strcmp(d->res[i].kind, kind) == 0)
            return &d->res[i];
    return NULL;
}

static enum kube_result kube_resource_in(struct kube *k, const char *group, const char *version,
                                         const char *kind, bool follow_preferred,
                                         struct kube_resource *out, char *err, size_t errlen)
{
    char *gv = group[0] ? xasprintf("%s/%s", group, version) : xstrdup(version);
    struct kube_disco *d = kube_disco_find(k, gv);
    enum kube_result r = KUBE_OK;
    /* A miss refetches (a CRD installed since), at most once per KUBE_DISCO_REFRESH. */
    if (!d || (!kube_disco_kind(d, kind) && mono_now() - d->fetched >= KUBE_DISCO_REFRESH))
        r = kube_disco_fetch(k, group, version, gv, &d, err, errlen);
    const struct kube_api_resource *ar = r == KUBE_OK ? kube_disco_kind(d, kind) : NULL;
    if (ar) {
        kube_resource_set(out, group, version, ar->plural, ar->namespaced, ar->has_scale);
    } else if (r == KUBE_OK && !d->served && d->preferred && follow_preferred &&
               strcmp(d->preferred, version) != 0) {
        /* The preferred version first, then the group's other versions: a kind need not be
           served at the group's preferred version (KServe 0.16.0 serves LLMInferenceService
           at v1alpha1 only, its group prefers v1beta1, the InferenceService's; found on the
           real API server, docs/real-cluster.md). Copied: the recursion may reuse d's slot. */
        size_t nv = d->nversions;
        char **vs = xmalloc((nv + 1) * sizeof(*vs));
        vs[0] = xstrdup(d->preferred);
        for (size_t i = 0; i < nv; i++)
            vs[i + 1] = xstrdup(d->versions[i]);
        char first[512] = "";
        r = KUBE_UNSUPPORTED;
        for (size_t i = 0; i <= nv && r == KUBE_UNSUPPORTED; i++) {
            if ((i > 0 && strcmp(vs[i], vs[0]) == 0) || strcmp(vs[i], version) == 0)
                continue;
            kube_resource_free(out);
            r = kube_resource_in(k, group, vs[i], kind, false, out, err, errlen);
            if (i == 0)
                snprintf(first, sizeof(first), "%s", err);
        }
        /* None has it: the message of the preferred version's answer. */
        if (r == KUBE_UNSUPPORTED && first[0])
            snprintf(err, errlen, "%s", first);
        for (size_t i = 0; i <= nv; i++)
            free(vs[i]);
        free(vs);
    } else if (r == KUBE_OK) {
        if (d->served)
            snprintf(err, errlen, "the API serves no kind '%s' in '%s'", kind, gv);
        else
            snprintf(err, errlen, "the API does not serve '%s'%s", gv,
                     group[0] && !d->preferred ? " (no such API group)" : "");
        r = KUBE_UNSUPPORTED;
    }
    free(gv);
    return r;
}

enum kube_result kube_resource_of(struct kube *k, const char *api_version, const char *kind,
                                  struct kube_resource *out, char *err, size_t errlen)
{
    *out = (struct kube_resource){0};
    if (!kube_gvk_ok(api_version, kind)) {
        snprintf(err, errlen, "invalid kind '%s' (apiVersion '%s')", kind ? kind : "",
                 api_version ? api_version : "");
        return KUBE_UNSUPPORTED;
    }
    const char *slash = strchr(api_version, '/');
    char *group = slash ? xstrndup(api_version, (size_t)(slash - api_version)) : xstrdup("");
    const char *version = slash ? slash + 1 : api_version;
    for (size_t i = 0; i < ARRAY_LEN(kube_builtin); i++) {
        if (strcmp(kube_builtin[i].group, group) == 0 &&
            strcmp(kube_builtin[i].version, version) == 0 &&
            strcmp(kube_builtin[i].kind, kind) == 0) {
            kube_resource_set(out, group, version, kube_builtin[i].plural, true,
                              kube_builtin[i].scale);
            free(group);
            return KUBE_OK;
        }
    }
    enum kube_result r = kube_resource_in(k, group, version, kind, true, out, err, errlen);
    free(group);
    return r;
}

/*
 * Where Kueue Workloads are served: the resource of kind Workload at the version /apis names
 * as the group's preferredVersion (v1beta2 where both are served, as kube-apiserver prefers
 * the highest served version of a CRD). The answer is kept for KUBE_DISCO_REFRESH seconds, so
 * an upgrade of Kueue is seen within that. KUBE_NOT_FOUND, with a message, when the API does
 * not serve the group or no Workload in it (Kueue is not installed).
 */
static enum kube_result kube_kueue_resource(struct kube *k, struct kube_resource *out, char *err,
                                            size_t errlen)
{
    *out = (struct kube_resource){0};
    if (!k->kueue_fetched || mono_now() - k->kueue_fetched >= KUBE_DISCO_REFRESH) {
        char *preferred = NULL, perr[256];
        enum kube_result r = kube_disco_get(k, "/apis", err, errlen);
        if (r == KUBE_OK &&
            kube_parse_group_list(k->ans.body.buf, k->ans.body.len, KUBE_KUEUE_GROUP, &preferred,
                                  NULL, NULL, perr, sizeof(perr)) < 0) {
            snprintf(err, errlen, "cannot read '/apis': %s", perr);
            r = KUBE_ERROR;
        }
        if (r != KUBE_OK)
            return r;
        free(k->kueue_version);
        k->kueue_version = preferred;
        k->kueue_fetched = mono_now();
    }
    if (!k->kueue_version) {
        snprintf(err, errlen, "the API does not serve '%s' (no such API group)", KUBE_KUEUE_GROUP);
        return KUBE_NOT_FOUND;
    }
    enum kube_result r = kube_resource_in(k, KUBE_KUEUE_GROUP, k->kueue_version, "Workload", false,
                                          out, err, errlen);
    return r == KUBE_UNSUPPORTED ? KUBE_NOT_FOUND : r;
}

/* ---- objects ---------------------------------------------------------------------------- */

enum kube_result kube_get(struct kube *k, const struct kube_ref *ref, struct kube_obj *obj,
                          char *err, size_t errlen)
{
    *obj = (struct kube_obj){0};
    struct kube_resource res;
    char *path, perr[256];
    enum kube_result r = kube_path(k, ref, NULL, &res, &path, err, errlen);
    if (r != KUBE_OK) {
        kube_resource_free(&res);
        return r;
    }
    r = kube_send(k, "GET", path, NULL, err, errlen, "get %s '%s/%s'", ref->kind,
                  ref->ns ? ref->ns : "", ref->name);
    if (r == KUBE_OK &&
        kube_parse_obj(k->ans.body.buf, k->ans.body.len, obj, perr, sizeof(perr)) < 0)
        r = kube_bad_answer(k, perr, err, errlen);
    if (r == KUBE_OK && obj->ref.kind && strcmp(obj->ref.kind, ref->kind) != 0) {
        snprintf(perr, sizeof(perr), "the API returned kind '%s'", obj->ref.kind);
        kube_obj_free(obj);
        r = kube_bad_answer(k, perr, err, errlen);
    }
    if (r == KUBE_OK) {
        /* Fill identity the answer may omit, so the object can be passed on as a ref. */
        if (!obj->ref.api_version)
            obj->ref.api_version = xstrdup(ref->api_version);
        if (!obj->ref.kind)
            obj->ref.kind = xstrdup(ref->kind);
        if (!obj->ref.ns && res.namespaced && ref->ns)
            obj->ref.ns = xstrdup(ref->ns);
    }
    kube_resource_free(&res);
    return r;
}

enum kube_result kube_get_pod(struct kube *k, const char *ns, const char *name,
                              struct kube_obj *pod, char *err, size_t errlen)
{
    struct kube_ref ref = {(char *)"v1", (char *)"Pod", (char *)ns, (char *)name, NULL};
    return kube_get(k, &ref, pod, err, errlen);
}

enum kube_result kube_owner_walk(struct kube *k, const struct kube_obj *pod, kube_climb_fn climb,
                                 void *arg, struct kube_chain *chain, char *err, size_t errlen)
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
        if (!o || (climb && !climb(arg, cur, o)))
            break;
        if (depth >= KUBE_CHAIN_MAX) {
            snprintf(err, errlen, "owner chain of pod '%s/%s' is longer than %d levels", ns,
                     pod->ref.name, KUBE_CHAIN_MAX);
            return KUBE_ERROR;
        }
        /* Owners of any kind are read: which one is acted on is the caller's choice. */
        struct kube_ref ref = {(char *)o->api_version, (char *)o->kind, (char *)ns, (char *)o->name,
                               (char *)o->uid};
        struct kube_obj next;
        char gerr[512];
        enum kube_result r = kube_get(k, &ref, &next, gerr, sizeof(gerr));
        if (r == KUBE_UNSUPPORTED) {
            chain->unknown = (struct kube_owner_ref){xstrdup(o->api_version), xstrdup(o->kind),
                                                     xstrdup(o->name), xstrdup(o->uid), true};
            snprintf(err, errlen,
                     "owner %s '%s/%s' (apiVersion '%s') of %s '%s' cannot be read: %s", o->kind,
                     ns, o->name, o->api_version, cur->ref.kind, cur->ref.name, gerr);
            return r;
        }
        if (r != KUBE_OK) {
            snprintf(err, errlen, "%s", gerr);
            return r;
        }
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
    chain->kueue = kube_label(&chain->obj[chain->n - 1], KUBE_LABEL_QUEUE) != NULL;
    return KUBE_OK;
}

enum kube_result kube_root_owner(struct kube *k, const struct kube_obj *pod,
                                 struct kube_chain *chain, char *err, size_t errlen)
{
    return kube_owner_walk(k, pod, NULL, NULL, chain, err, errlen);
}

void kube_chain_free(struct kube_chain *chain)
{
    for (size_t i = 0; i < chain->n; i++)
        kube_obj_free(&chain->obj[i]);
    free(chain->unknown.api_version);
    free(chain->unknown.kind);
    free(chain->unknown.name);
    free(chain->unknown.uid);
    chain->unknown = (struct kube_owner_ref){0};
    chain->n = 0;
    chain->kueue = false;
}

enum kube_result kube_annotate(struct kube *k, const struct kube_ref *ref, const char *key,
                               const char *value, char *err, size_t errlen)
{
    char *path;
    enum kube_result r = kube_path(k, ref, NULL, NULL, &path, err, errlen);
    if (r != KUBE_OK)
        return r;
    return kube_send(k, "PATCH", path, kube_body_annotate(ref->uid, key, value), err, errlen,
                     "annotate %s '%s/%s'", ref->kind, ref->ns ? ref->ns : "", ref->name);
}

/* A write names the object by uid: without one it could land on a replacement. */
static bool kube_has_uid(struct kube *k, const struct kube_ref *ref, const char *verb, char *err,
                         size_t errlen)
{
    k->last_status = 0; /* a write refused before any request has no status */
    if (ref->uid && *ref->uid)
        return true;
    snprintf(err, errlen, "refusing to %s %s '%s/%s' without a uid", verb,
             ref->kind ? ref->kind : "", ref->ns ? ref->ns : "", ref->name ? ref->name : "");
    return false;
}

enum kube_result kube_patch(struct kube *k, const struct kube_ref *ref,
                            const char *resource_version, const char *merge_patch, char *err,
                            size_t errlen)
{
    if (!kube_has_uid(k, ref, "patch", err, errlen))
        return KUBE_UNSUPPORTED;
    char berr[256];
    char *body = kube_body_merge(ref->uid, resource_version, merge_patch, berr, sizeof(berr));
    if (!body) {
        snprintf(err, errlen, "cannot patch %s '%s/%s': %s", ref->kind, ref->ns ? ref->ns : "",
                 ref->name ? ref->name : "", berr);
        return KUBE_ERROR;
    }
    char *path;
    enum kube_result r = kube_path(k, ref, NULL, NULL, &path, err, errlen);
    if (r != KUBE_OK) {
        free(body);
        return r;
    }
    return kube_send(k, "PATCH", path, body, err, errlen, "patch %s '%s/%s'", ref->kind,
                     ref->ns ? ref->ns : "", ref->name);
}

/* GET path (a /scale subresource) into *replicas. */
static enum kube_result kube_get_scale(struct kube *k, const char *path, const char *what,
                                       int64_t *replicas, char *err, size_t errlen)
{
    char perr[256];
    *replicas = 0;
    enum kube_result r = kube_send(k, "GET", xstrdup(path), NULL, err, errlen, "%s", what);
    if (r == KUBE_OK &&
        kube_parse_scale(k->ans.body.buf, k->ans.body.len, replicas, perr, sizeof(perr)) < 0)
        r = kube_bad_answer(k, perr, err, errlen);
    return r;
}

/* The /scale path of `ref`, or KUBE_UNSUPPORTED when its kind has no scale subresource. */
static enum kube_result kube_scale_path(struct kube *k, const struct kube_ref *ref, char **path,
                                        char *err, size_t errlen)
{
    struct kube_resource res;
    enum kube_result r = kube_path(k, ref, "scale", &res, path, err, errlen);
    if (r == KUBE_OK && !res.has_scale) {
        snprintf(err, errlen, "cannot scale %s '%s/%s': no scale subresource", ref->kind,
                 ref->ns ? ref->ns : "", ref->name);
        free(*path);
        *path = NULL;
        r = KUBE_UNSUPPORTED;
    }
    kube_resource_free(&res);
    return r;
}

/* PATCH the /scale at `path` to `replicas` with the uid (and resourceVersion) preconditions. */
static enum kube_result kube_scale_write(struct kube *k, const struct kube_ref *ref,
                                         const char *path, const char *resource_version,
                                         int64_t replicas, const char *what, char *err,
                                         size_t errlen)
{
    /* The scale subresource compares the uid and resourceVersion in the patched Scale with its
       parent's (docs/backend-apis.md §6). */
    char spec[64], berr[128];
    snprintf(spec, sizeof(spec), "{\"spec\":{\"replicas\":%lld}}", (long long)replicas);
    char *body = kube_body_merge(ref->uid, resource_version, spec, berr, sizeof(berr));
    return kube_send(k, "PATCH", xstrdup(path), body, err, errlen, "%s", what);
}

enum kube_result kube_scale(struct kube *k, const struct kube_ref *ref,
                            const char *resource_version, int64_t replicas, int64_t *previous,
                            char *err, size_t errlen)
{
    *previous = 0;
    if (!kube_has_uid(k, ref, "scale", err, errlen))
        return KUBE_UNSUPPORTED;
    if (replicas < 0) {
        snprintf(err, errlen, "cannot scale %s '%s/%s' to %lld replicas", ref->kind,
                 ref->ns ? ref->ns : "", ref->name, (long long)replicas);
        return KUBE_ERROR;
    }
    char *path;
    enum kube_result r = kube_scale_path(k, ref, &path, err, errlen);
    if (r != KUBE_OK)
        return r;
    char *what = xasprintf("scale %s '%s/%s' to %lld", ref->kind, ref->ns ? ref->ns : "", ref->name,
                           (long long)replicas);
    int64_t n = 0;
    r = kube_get_scale(k, path, what, &n, err, errlen);
    if (r == KUBE_OK && n != replicas)
        r = kube_scale_write(k, ref, path, resource_version, replicas, what, err, errlen);
    if (r == KUBE_OK)
        *previous = n;
    free(what);
    free(path);
    return r;
}

enum kube_result kube_scale_to_zero(struct kube *k, const struct kube_ref *owner,
                                    const char *resource_version, int64_t *previous, char *err,
                                    size_t errlen)
{
    *previous = 0;
    if (!kube_has_uid(k, owner, "scale", err, errlen))
        return KUBE_UNSUPPORTED;
    char *path;
    enum kube_result r = kube_scale_path(k, owner, &path, err, errlen);
    if (r != KUBE_OK)
        return r;
    char *what =
        xasprintf("scale %s '%s/%s' to 0", owner->kind, owner->ns ? owner->ns : "", owner->name);
    int64_t n = 0;
    r = kube_get_scale(k, path, what, &n, err, errlen);
    /*
     * Already at zero: recording 0 would overwrite the count a previous reclaim saved, which
     * is the only way back for the user.
     */
    if (r == KUBE_OK && n > 0) {
        char num[32];
        snprintf(num, sizeof(num), "%lld", (long long)n);
        char *ann = kube_body_annotate(NULL, ANNOT_REPLICAS_BEFORE, num);
        r = kube_patch(k, owner, resource_version, ann, err, errlen);
        free(ann);
        int64_t gen = k->last_gen;
        /* The annotation gave the object a new resourceVersion: the scale must carry that
           one, else it would be refused as a change by someone else. */
        char *rv = r == KUBE_OK && resource_version && k->last_rv ? xstrdup(k->last_rv) : NULL;
        if (r == KUBE_OK)
            r = kube_scale_write(k, owner, path, rv, 0, what, err, errlen);
        /* A Scale answers no generation; the /scale changed spec.replicas of the object the
           annotation's answer showed, which moves its generation by one. */
        if (r == KUBE_OK)
            k->last_gen = gen > 0 ? gen + 1 : 0;
        free(rv);
    }
    if (r == KUBE_OK)
        *previous = n;
    free(what);
    free(path);
    return r;
}

enum kube_result kube_kueue_deactivate(struct kube *k, const struct kube_obj *job, char *err,
                                       size_t errlen)
{
    const struct kube_ref *j = &job->ref;
    k->last_status = 0;
    if (!kube_name_ok(j->ns) || !j->uid) {
        snprintf(err, errlen, "cannot find the Kueue workload of %s '%s': no namespace or uid",
                 j->kind ? j->kind : "object", j->name ? j->name : "");
        return KUBE_ERROR;
    }
    /* Not served: nothing to deactivate, and the object is not to be suspended instead. */
    struct kube_resource res;
    enum kube_result r = kube_kueue_resource(k, &res, err, errlen);
    if (r != KUBE_OK) {
        kube_resource_free(&res);
        return r == KUBE_NOT_FOUND ? KUBE_UNSUPPORTED : r;
    }
    /* The Workload's path is the collection's plus its name. */
    struct sbuf coll = {0}, path = {0};
    sbuf_printf(&coll, "/apis/%s/%s/namespaces/%s/%s", res.group, res.version, j->ns, res.plural);
    kube_resource_free(&res);
    sbuf_printf(&path, "%s?labelSelector=", coll.buf);
    char *sel = xasprintf("%s=%s", KUBE_LABEL_JOB_UID, j->uid);
    httpc_urlencode(&path, sel);
    free(sel);
    r = kube_send(k, "GET", sbuf_take(&path), NULL, err, errlen,
                  "find the Kueue workload of %s '%s/%s'", j->kind ? j->kind : "object", j->ns,
                  j->name);
    struct kube_obj *items = NULL;
    size_t n = 0;
    char perr[256];
    if (r == KUBE_OK) {
        if (kube_parse_list(k->ans.body.buf, k->ans.body.len, &items, &n, perr, sizeof(perr)) < 0)
            r = kube_bad_answer(k, perr, err, errlen);
        else if (n != 1) {
            snprintf(perr, sizeof(perr), "%zu workloads have label '%s=%s'", n, KUBE_LABEL_JOB_UID,
                     j->uid);
            r = kube_bad_answer(k, perr, err, errlen);
        } else if (!kube_name_ok(items[0].ref.name))
            r = kube_bad_answer(k, "invalid workload name", err, errlen);
    }
    if (r == KUBE_OK)
        r = kube_send(k, "PATCH", xasprintf("%s/%s", coll.buf, items[0].ref.name),
                      kube_body_deactivate(items[0].ref.uid), err, errlen,
                      "deactivate Kueue workload '%s/%s'", j->ns, items[0].ref.name);
    for (size_t i = 0; i < n; i++)
        kube_obj_free(&items[i]);
    free(items);
    sbuf_free(&coll);
    return r;
}

enum kube_result kube_suspend(struct kube *k, const struct kube_obj *job, char *err, size_t errlen)
{
    /* Kueue owns spec.suspend of what it admits and would undo our patch. */
    if (kube_label(job, KUBE_LABEL_QUEUE))
        return kube_kueue_deactivate(k, job, err, errlen);
    return kube_patch(k, &job->ref, job->resource_version, "{\"spec\":{\"suspend\":true}}", err,
                      errlen);
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
    char *path;
    if (kube_path(k, &ref, "eviction", NULL, &path, err, errlen) != KUBE_OK)
        return KUBE_ERROR;
    return kube_send(k, "POST", path, kube_body_eviction(ns, name, uid), err, errlen,
                     "evict pod '%s/%s'", ns, name);
}

enum kube_result kube_delete(struct kube *k, const struct kube_ref *ref, const char *propagation,
                             const char *resource_version, char *err, size_t errlen)
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
    char *path;
    enum kube_result r = kube_path(k, ref, NULL, NULL, &path, err, errlen);
    if (r != KUBE_OK)
        return r;
    return kube_send(k, "DELETE", path,
                     kube_body_delete_options(propagation, ref->uid, resource_version), err, errlen,
                     "delete %s '%s/%s'", ref->kind, ref->ns ? ref->ns : "", ref->name);
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
    enum kube_result r =
        kube_send(k, "POST", xasprintf("/api/v1/namespaces/%s/events", involved->ns),
                  kube_body_event(&ev), err, errlen, "post event '%s' about %s '%s/%s'", reason,
                  involved->kind ? involved->kind : "object", involved->ns, involved->name);
    free(name);
    return r;
}

enum kube_result kube_pending_for_resource(struct kube *k, const char *resource,
                                           struct pressure_demand *out, char *err, size_t errlen)
{
    *out = (struct pressure_demand){0};
    char perr[256];
    enum kube_result r =
        kube_send(k, "GET", xstrdup("/api/v1/pods?fieldSelector=status.phase%3DPending"), NULL, err,
                  errlen, "list Pending pods for '%s'", resource);
    if (r == KUBE_OK && pressure_parse_pending(k->ans.body.buf, k->ans.body.len, resource, out,
                                               perr, sizeof(perr)) < 0)
        r = kube_bad_answer(k, perr, err, errlen);
    return r;
}

enum kube_result kube_kueue_waiting_for_resource(struct kube *k, const char *resource,
                                                 const char *const *skip_uids, size_t nskip,
                                                 struct pressure_demand *out, char *err,
                                                 size_t errlen)
{
    *out = (struct pressure_demand){0};
    struct kube_resource res;
    enum kube_result r = kube_kueue_resource(k, &res, err, errlen);
    if (r != KUBE_OK) {
        kube_resource_free(&res);
        return r;
    }
    char perr[256];
    r = kube_send(k, "GET", xasprintf("/apis/%s/%s/%s", res.group, res.version, res.plural), NULL,
                  err, errlen, "list Kueue workloads waiting for '%s'", resource);
    if (r == KUBE_OK && pressure_parse_kueue(k->ans.body.buf, k->ans.body.len, resource, skip_uids,
                                             nskip, out, perr, sizeof(perr)) < 0)
        r = kube_bad_answer(k, perr, err, errlen);
    kube_resource_free(&res);
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
    enum kube_result r =
        kube_send(k, method, xstrdup(path), body ? xstrdup(body) : NULL, err, errlen, "%s", what);
    *status = k->ans.status;
    *resp_len = k->ans.body.len;
    *resp_body = xstrndup(k->ans.body.buf ? k->ans.body.buf : "", k->ans.body.len);
    return r;
}
