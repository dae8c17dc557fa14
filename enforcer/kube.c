/*
 * Kubernetes API client for the enforcer: the handful of calls it makes, over httpc and json-c.
 *
 * Why a hand-written client: the enforcer needs about ten requests (docs/backend-apis.md §6),
 * and each one's failure modes matter more than convenience. A uid precondition is attached to
 * every write that names an object (DELETE options, metadata.uid in merge patches, the
 * eviction's deleteOptions) because a StatefulSet pod or a re-created Deployment reuses the
 * name: the API then answers 409 and we never act on the replacement. The service-account token
 * is re-read for every request and once more after a 401, as projected tokens rotate hourly.
 * Parsing is strict (wrong types are errors, not defaults) and lives in pure functions so the
 * fuzz target reaches all of it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "httpc.h"
#include "jsonparse.h"
#include "kube.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

/* Objects with managedFields nest deeper than anything we read; 64 leaves room. */
#define KUBE_JSON_DEPTH 64
#define KUBE_KUEUE_API  "kueue.x-k8s.io/v1beta1"

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

/* ---- objects ---------------------------------------------------------------------------- */

static char *kube_strdup_opt(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void kube_ref_free(struct kube_ref *r)
{
    free(r->api_version);
    free(r->kind);
    free(r->ns);
    free(r->name);
    free(r->uid);
    *r = (struct kube_ref){0};
}

void kube_ref_copy(struct kube_ref *dst, const struct kube_ref *src)
{
    dst->api_version = kube_strdup_opt(src->api_version);
    dst->kind = kube_strdup_opt(src->kind);
    dst->ns = kube_strdup_opt(src->ns);
    dst->name = kube_strdup_opt(src->name);
    dst->uid = kube_strdup_opt(src->uid);
}

static void kube_kv_free(struct kube_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

static void kube_owner_free(struct kube_owner_ref *o)
{
    free(o->api_version);
    free(o->kind);
    free(o->name);
    free(o->uid);
    *o = (struct kube_owner_ref){0};
}

void kube_obj_free(struct kube_obj *o)
{
    kube_ref_free(&o->ref);
    free(o->creation_timestamp);
    free(o->deletion_timestamp);
    kube_kv_free(o->labels, o->nlabels);
    kube_kv_free(o->annotations, o->nannotations);
    for (size_t i = 0; i < o->nowners; i++)
        kube_owner_free(&o->owners[i]);
    free(o->owners);
    free(o->phase);
    for (size_t i = 0; i < o->nconditions; i++) {
        free(o->conditions[i].type);
        free(o->conditions[i].status);
        free(o->conditions[i].reason);
        free(o->conditions[i].message);
    }
    free(o->conditions);
    *o = (struct kube_obj){0};
}

static void kube_obj_copy(struct kube_obj *dst, const struct kube_obj *src)
{
    *dst = (struct kube_obj){0};
    kube_ref_copy(&dst->ref, &src->ref);
    dst->creation_timestamp = kube_strdup_opt(src->creation_timestamp);
    dst->deletion_timestamp = kube_strdup_opt(src->deletion_timestamp);
    dst->labels = xcalloc(src->nlabels + 1, sizeof(*dst->labels));
    for (size_t i = 0; i < src->nlabels; i++)
        dst->labels[i] =
            (struct kube_kv){xstrdup(src->labels[i].key), xstrdup(src->labels[i].value)};
    dst->nlabels = src->nlabels;
    dst->annotations = xcalloc(src->nannotations + 1, sizeof(*dst->annotations));
    for (size_t i = 0; i < src->nannotations; i++)
        dst->annotations[i] =
            (struct kube_kv){xstrdup(src->annotations[i].key), xstrdup(src->annotations[i].value)};
    dst->nannotations = src->nannotations;
    dst->owners = xcalloc(src->nowners + 1, sizeof(*dst->owners));
    for (size_t i = 0; i < src->nowners; i++) {
        const struct kube_owner_ref *s = &src->owners[i];
        dst->owners[i] = (struct kube_owner_ref){xstrdup(s->api_version), xstrdup(s->kind),
                                                 xstrdup(s->name), xstrdup(s->uid), s->controller};
    }
    dst->nowners = src->nowners;
    dst->phase = kube_strdup_opt(src->phase);
    dst->conditions = xcalloc(src->nconditions + 1, sizeof(*dst->conditions));
    for (size_t i = 0; i < src->nconditions; i++) {
        const struct kube_condition *c = &src->conditions[i];
        dst->conditions[i] =
            (struct kube_condition){kube_strdup_opt(c->type), kube_strdup_opt(c->status),
                                    kube_strdup_opt(c->reason), kube_strdup_opt(c->message)};
    }
    dst->nconditions = src->nconditions;
    dst->has_replicas = src->has_replicas;
    dst->replicas = src->replicas;
    dst->suspended = src->suspended;
}

static const char *kube_kv_get(const struct kube_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

const char *kube_label(const struct kube_obj *o, const char *key)
{
    return kube_kv_get(o->labels, o->nlabels, key);
}

const char *kube_annotation(const struct kube_obj *o, const char *key)
{
    return kube_kv_get(o->annotations, o->nannotations, key);
}

const struct kube_owner_ref *kube_controller_ref(const struct kube_obj *o)
{
    for (size_t i = 0; i < o->nowners; i++)
        if (o->owners[i].controller)
            return &o->owners[i];
    return NULL;
}

/* ---- JSON helpers ----------------------------------------------------------------------- */

/* A JSON object, or NULL with the reason in err (jsonparse.h). */
static json_object *kube_json_parse(const char *body, size_t len, const char *what, char *err,
                                    size_t errlen)
{
    json_object *root = jsonparse_strict(body, len, KUBE_JSON_DEPTH, what, err, errlen);
    if (root && !json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "%s is not a JSON object", what);
        json_object_put(root);
        return NULL;
    }
    return root;
}

/* Member `key` of `o` of type `type`: 1 found, 0 absent (or null), -1 wrong type. */
static int kube_member(json_object *o, const char *key, enum json_type type, json_object **out,
                       const char *ctx, char *err, size_t errlen)
{
    json_object *v = NULL;
    *out = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return 0;
    if (!json_object_is_type(v, type)) {
        snprintf(err, errlen, "'%s%s' is not a %s", ctx, key, json_type_to_name(type));
        return -1;
    }
    *out = v;
    return 1;
}

/* Copy string member `key` into *out (NULL when absent); -1 on a wrong type or when required. */
static int kube_str(json_object *o, const char *key, bool required, char **out, const char *ctx,
                    char *err, size_t errlen)
{
    json_object *v;
    int r = kube_member(o, key, json_type_string, &v, ctx, err, errlen);
    if (r < 0)
        return -1;
    if (r == 0) {
        if (required) {
            snprintf(err, errlen, "'%s%s' is missing", ctx, key);
            return -1;
        }
        return 0;
    }
    *out = xstrdup(json_object_get_string(v));
    return 0;
}

static int kube_parse_kv(json_object *meta, const char *key, struct kube_kv **out, size_t *n,
                         char *err, size_t errlen)
{
    json_object *m;
    *out = NULL;
    *n = 0;
    int r = kube_member(meta, key, json_type_object, &m, "metadata.", err, errlen);
    if (r <= 0)
        return r;
    size_t cap = (size_t)json_object_object_length(m);
    *out = xcalloc(cap + 1, sizeof(**out));
    json_object_object_foreach(m, k, v)
    {
        if (!json_object_is_type(v, json_type_string)) {
            snprintf(err, errlen, "'metadata.%s.%s' is not a string", key, k);
            return -1;
        }
        (*out)[*n].key = xstrdup(k);
        (*out)[*n].value = xstrdup(json_object_get_string(v));
        (*n)++;
    }
    return 0;
}

static int kube_parse_owner_refs(json_object *meta, struct kube_obj *o, char *err, size_t errlen)
{
    json_object *arr;
    int r = kube_member(meta, "ownerReferences", json_type_array, &arr, "metadata.", err, errlen);
    if (r <= 0)
        return r;
    size_t n = json_object_array_length(arr);
    o->owners = xcalloc(n + 1, sizeof(*o->owners));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_object)) {
            snprintf(err, errlen, "'metadata.ownerReferences[%zu]' is not an object", i);
            return -1;
        }
        struct kube_owner_ref *ref = &o->owners[o->nowners++];
        const char *ctx = "metadata.ownerReferences[].";
        json_object *c;
        if (kube_str(e, "apiVersion", true, &ref->api_version, ctx, err, errlen) < 0 ||
            kube_str(e, "kind", true, &ref->kind, ctx, err, errlen) < 0 ||
            kube_str(e, "name", true, &ref->name, ctx, err, errlen) < 0 ||
            kube_str(e, "uid", true, &ref->uid, ctx, err, errlen) < 0 ||
            kube_member(e, "controller", json_type_boolean, &c, ctx, err, errlen) < 0)
            return -1;
        ref->controller = c && json_object_get_boolean(c);
    }
    return 0;
}

static int kube_parse_conditions(json_object *status, struct kube_obj *o, char *err, size_t errlen)
{
    json_object *arr;
    int r = kube_member(status, "conditions", json_type_array, &arr, "status.", err, errlen);
    if (r <= 0)
        return r;
    size_t n = json_object_array_length(arr);
    o->conditions = xcalloc(n + 1, sizeof(*o->conditions));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_object)) {
            snprintf(err, errlen, "'status.conditions[%zu]' is not an object", i);
            return -1;
        }
        struct kube_condition *c = &o->conditions[o->nconditions++];
        const char *ctx = "status.conditions[].";
        if (kube_str(e, "type", true, &c->type, ctx, err, errlen) < 0 ||
            kube_str(e, "status", false, &c->status, ctx, err, errlen) < 0 ||
            kube_str(e, "reason", false, &c->reason, ctx, err, errlen) < 0 ||
            kube_str(e, "message", false, &c->message, ctx, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* Fill `o` from an object's JSON (list items carry no kind/apiVersion: those stay NULL). */
static int kube_obj_from_json(json_object *root, struct kube_obj *o, char *err, size_t errlen)
{
    json_object *meta, *spec, *status, *v;
    *o = (struct kube_obj){0};
    if (kube_str(root, "apiVersion", false, &o->ref.api_version, "", err, errlen) < 0 ||
        kube_str(root, "kind", false, &o->ref.kind, "", err, errlen) < 0)
        goto fail;
    int r = kube_member(root, "metadata", json_type_object, &meta, "", err, errlen);
    if (r == 0)
        snprintf(err, errlen, "'metadata' is missing");
    if (r <= 0)
        goto fail;
    const char *ctx = "metadata.";
    if (kube_str(meta, "name", true, &o->ref.name, ctx, err, errlen) < 0 ||
        kube_str(meta, "namespace", false, &o->ref.ns, ctx, err, errlen) < 0 ||
        kube_str(meta, "uid", false, &o->ref.uid, ctx, err, errlen) < 0 ||
        kube_str(meta, "creationTimestamp", false, &o->creation_timestamp, ctx, err, errlen) < 0 ||
        kube_str(meta, "deletionTimestamp", false, &o->deletion_timestamp, ctx, err, errlen) < 0 ||
        kube_parse_kv(meta, "labels", &o->labels, &o->nlabels, err, errlen) < 0 ||
        kube_parse_kv(meta, "annotations", &o->annotations, &o->nannotations, err, errlen) < 0 ||
        kube_parse_owner_refs(meta, o, err, errlen) < 0)
        goto fail;

    if (kube_member(root, "spec", json_type_object, &spec, "", err, errlen) < 0 ||
        kube_member(spec, "replicas", json_type_int, &v, "spec.", err, errlen) < 0)
        goto fail;
    if (v) {
        o->replicas = json_object_get_int64(v);
        if (o->replicas < 0) {
            snprintf(err, errlen, "'spec.replicas' is negative");
            goto fail;
        }
        o->has_replicas = true;
    }
    if (kube_member(spec, "suspend", json_type_boolean, &v, "spec.", err, errlen) < 0)
        goto fail;
    o->suspended = v && json_object_get_boolean(v);

    if (kube_member(root, "status", json_type_object, &status, "", err, errlen) < 0 ||
        kube_str(status, "phase", false, &o->phase, "status.", err, errlen) < 0 ||
        kube_parse_conditions(status, o, err, errlen) < 0)
        goto fail;
    return 0;
fail:
    kube_obj_free(o);
    return -1;
}

int kube_parse_obj(const char *body, size_t len, struct kube_obj *out, char *err, size_t errlen)
{
    *out = (struct kube_obj){0};
    json_object *root = kube_json_parse(body, len, "object", err, errlen);
    if (!root)
        return -1;
    int ret = kube_obj_from_json(root, out, err, errlen);
    json_object_put(root);
    return ret;
}

int kube_parse_list(const char *body, size_t len, struct kube_obj **items, size_t *n, char *err,
                    size_t errlen)
{
    *items = NULL;
    *n = 0;
    json_object *root = kube_json_parse(body, len, "list", err, errlen), *arr;
    if (!root)
        return -1;
    int r = kube_member(root, "items", json_type_array, &arr, "", err, errlen);
    if (r <= 0) {
        /* The API always sends "items", even an empty one ("items": []). */
        if (r == 0)
            snprintf(err, errlen, "'items' is missing");
        json_object_put(root);
        return -1;
    }
    size_t cnt = json_object_array_length(arr);
    *items = xcalloc(cnt + 1, sizeof(**items));
    for (size_t i = 0; i < cnt; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        char sub[200] = "";
        if (!json_object_is_type(e, json_type_object) ||
            kube_obj_from_json(e, &(*items)[i], sub, sizeof(sub)) < 0) {
            snprintf(err, errlen, "items[%zu]: %s", i, sub[0] ? sub : "not an object");
            for (size_t j = 0; j < i; j++)
                kube_obj_free(&(*items)[j]);
            free(*items);
            *items = NULL;
            *n = 0;
            json_object_put(root);
            return -1;
        }
        *n = i + 1;
    }
    json_object_put(root);
    return 0;
}

int kube_parse_scale(const char *body, size_t len, int64_t *replicas, char *err, size_t errlen)
{
    *replicas = 0;
    json_object *root = kube_json_parse(body, len, "scale", err, errlen), *kind, *spec, *v;
    if (!root)
        return -1;
    int ret = -1;
    if (kube_member(root, "kind", json_type_string, &kind, "", err, errlen) < 0 ||
        kube_member(root, "spec", json_type_object, &spec, "", err, errlen) < 0 ||
        kube_member(spec, "replicas", json_type_int, &v, "spec.", err, errlen) < 0)
        goto out;
    if (kind && strcmp(json_object_get_string(kind), "Scale") != 0) {
        snprintf(err, errlen, "expected kind 'Scale', got '%s'", json_object_get_string(kind));
        goto out;
    }
    *replicas = v ? json_object_get_int64(v) : 0;
    if (*replicas < 0) {
        snprintf(err, errlen, "'spec.replicas' is negative");
        *replicas = 0;
        goto out;
    }
    ret = 0;
out:
    json_object_put(root);
    return ret;
}

void kube_status_free(struct kube_status *st)
{
    free(st->status);
    free(st->reason);
    free(st->message);
    *st = (struct kube_status){.retry_after = -1};
}

int kube_parse_status(const char *body, size_t len, struct kube_status *st, char *err,
                      size_t errlen)
{
    *st = (struct kube_status){.retry_after = -1};
    json_object *root = kube_json_parse(body, len, "status", err, errlen), *v, *details, *causes;
    if (!root)
        return -1;
    int ret = -1;
    char *kind = NULL;
    if (kube_str(root, "kind", false, &kind, "", err, errlen) < 0 ||
        kube_str(root, "status", false, &st->status, "", err, errlen) < 0 ||
        kube_str(root, "reason", false, &st->reason, "", err, errlen) < 0 ||
        kube_str(root, "message", false, &st->message, "", err, errlen) < 0 ||
        kube_member(root, "code", json_type_int, &v, "", err, errlen) < 0)
        goto out;
    if (kind && strcmp(kind, "Status") != 0) {
        snprintf(err, errlen, "expected kind 'Status', got '%s'", kind);
        goto out;
    }
    st->code = v ? (long)json_object_get_int64(v) : 0;
    if (kube_member(root, "details", json_type_object, &details, "", err, errlen) < 0 ||
        kube_member(details, "retryAfterSeconds", json_type_int, &v, "details.", err, errlen) < 0 ||
        kube_member(details, "causes", json_type_array, &causes, "details.", err, errlen) < 0)
        goto out;
    if (v)
        st->retry_after = (long)json_object_get_int64(v);
    for (size_t i = 0; causes && i < json_object_array_length(causes); i++) {
        json_object *c = json_object_array_get_idx(causes, i), *reason;
        if (json_object_is_type(c, json_type_object) &&
            json_object_object_get_ex(c, "reason", &reason) &&
            json_object_is_type(reason, json_type_string) &&
            strcmp(json_object_get_string(reason), "DisruptionBudget") == 0)
            st->disruption_budget = true;
    }
    ret = 0;
out:
    if (ret < 0)
        kube_status_free(st);
    free(kind);
    json_object_put(root);
    return ret;
}

enum kube_result kube_classify(long http_status, const char *body, size_t len, const char *what,
                               char *err, size_t errlen)
{
    if (http_status >= 200 && http_status < 300) {
        if (errlen)
            err[0] = '\0';
        return KUBE_OK;
    }
    enum kube_result r;
    switch (http_status) {
    case 404:
        r = KUBE_NOT_FOUND;
        break;
    case 409:
        r = KUBE_CONFLICT;
        break;
    case 429:
    case 503:
        r = KUBE_RETRY_LATER;
        break;
    case 403:
        r = KUBE_FORBIDDEN;
        break;
    default:
        r = KUBE_ERROR;
        break;
    }
    struct kube_status st;
    char perr[128];
    if (kube_parse_status(body, len, &st, perr, sizeof(perr)) < 0) {
        snprintf(err, errlen, "cannot %s: HTTP %ld without a Status body", what, http_status);
        return r;
    }
    char extra[96] = "";
    if (st.disruption_budget && st.retry_after >= 0)
        snprintf(extra, sizeof(extra), " (cause DisruptionBudget, retry after %ld s)",
                 st.retry_after);
    else if (st.disruption_budget)
        snprintf(extra, sizeof(extra), " (cause DisruptionBudget)");
    else if (st.retry_after >= 0)
        snprintf(extra, sizeof(extra), " (retry after %ld s)", st.retry_after);
    snprintf(err, errlen, "cannot %s: HTTP %ld %s: %s%s", what, http_status,
             st.reason ? st.reason : "(no reason)", st.message ? st.message : "(no message)",
             extra);
    kube_status_free(&st);
    return r;
}

/* "Insufficient <resource>" as a whole word: amd.com/gpu must not match amd.com/gpu-foo. */
static bool kube_insufficient(const char *msg, const char *resource)
{
    char *needle = xasprintf("Insufficient %s", resource);
    size_t nlen = strlen(needle);
    bool found = false;
    for (const char *p = strstr(msg, needle); p && !found; p = strstr(p + 1, needle)) {
        const char *e = p + nlen;
        bool name_char = (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
                         (*e >= '0' && *e <= '9') || *e == '-' || *e == '_' || *e == '/';
        /* A resource name ends in an alphanumeric, so "amd.com/gpu." ends a sentence. */
        bool dot_inside =
            *e == '.' && ((e[1] >= 'a' && e[1] <= 'z') || (e[1] >= 'A' && e[1] <= 'Z') ||
                          (e[1] >= '0' && e[1] <= '9'));
        found = !name_char && !dot_inside;
    }
    free(needle);
    return found;
}

/* Sum of `resource` in containers[].resources.requests (or limits); -1 on a bad quantity. */
static int kube_sum_requests(json_object *containers, const char *resource, bool max, int64_t *out)
{
    *out = 0;
    if (!containers || !json_object_is_type(containers, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(containers); i++) {
        json_object *c = json_object_array_get_idx(containers, i), *res, *m, *q = NULL;
        if (!json_object_is_type(c, json_type_object) ||
            !json_object_object_get_ex(c, "resources", &res) ||
            !json_object_is_type(res, json_type_object))
            continue;
        if (!(json_object_object_get_ex(res, "requests", &m) &&
              json_object_is_type(m, json_type_object) &&
              json_object_object_get_ex(m, resource, &q)) &&
            !(json_object_object_get_ex(res, "limits", &m) &&
              json_object_is_type(m, json_type_object) &&
              json_object_object_get_ex(m, resource, &q)))
            continue;
        int64_t v;
        /* Extended resources are whole numbers; the API sends them as strings ("1"). */
        if (!json_object_is_type(q, json_type_string) ||
            parse_i64(json_object_get_string(q), &v) < 0 || v < 0 || v > INT32_MAX)
            return -1;
        if (max)
            *out = v > *out ? v : *out;
        else
            *out += v;
    }
    return 0;
}

int kube_parse_pending(const char *body, size_t len, const char *resource, size_t *count,
                       int64_t *requested, char *err, size_t errlen)
{
    *count = 0;
    *requested = 0;
    json_object *root = kube_json_parse(body, len, "pod list", err, errlen), *arr;
    if (!root)
        return -1;
    int r = kube_member(root, "items", json_type_array, &arr, "", err, errlen);
    if (r <= 0) {
        if (r == 0)
            snprintf(err, errlen, "'items' is missing");
        json_object_put(root);
        return -1;
    }
    int ret = 0;
    for (size_t i = 0; i < json_object_array_length(arr) && ret == 0; i++) {
        json_object *e = json_object_array_get_idx(arr, i), *spec = NULL, *cs = NULL, *ics = NULL;
        struct kube_obj pod;
        char sub[200] = "";
        if (!json_object_is_type(e, json_type_object) ||
            kube_obj_from_json(e, &pod, sub, sizeof(sub)) < 0) {
            snprintf(err, errlen, "items[%zu]: %s", i, sub[0] ? sub : "not an object");
            ret = -1;
            break;
        }
        bool waiting = false;
        if (pod.phase && strcmp(pod.phase, "Pending") == 0 && !pod.deletion_timestamp) {
            for (size_t j = 0; j < pod.nconditions; j++) {
                const struct kube_condition *c = &pod.conditions[j];
                if (strcmp(c->type, "PodScheduled") == 0 && c->status &&
                    strcmp(c->status, "False") == 0 && c->reason &&
                    strcmp(c->reason, "Unschedulable") == 0 && c->message &&
                    kube_insufficient(c->message, resource))
                    waiting = true;
            }
        }
        if (waiting) {
            int64_t sum, init;
            json_object_object_get_ex(e, "spec", &spec);
            if (spec && json_object_is_type(spec, json_type_object)) {
                json_object_object_get_ex(spec, "containers", &cs);
                json_object_object_get_ex(spec, "initContainers", &ics);
            }
            /* Effective request: max(sum over containers, largest init container). */
            if (kube_sum_requests(cs, resource, false, &sum) < 0 ||
                kube_sum_requests(ics, resource, true, &init) < 0) {
                snprintf(err, errlen, "items[%zu]: '%s' is not a whole number", i, resource);
                ret = -1;
            } else {
                (*count)++;
                *requested += sum > init ? sum : init;
            }
        }
        kube_obj_free(&pod);
    }
    if (ret < 0) {
        *count = 0;
        *requested = 0;
    }
    json_object_put(root);
    return ret;
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
        k->ca_file = kube_strdup_opt(cfg->ca_file);
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

static char *kube_json_take(json_object *o)
{
    char *s = xstrdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
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

void kube_chain_free(struct kube_chain *chain)
{
    for (size_t i = 0; i < chain->n; i++)
        kube_obj_free(&chain->obj[i]);
    kube_owner_free(&chain->unknown);
    chain->n = 0;
    chain->kueue = false;
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

/* PATCH path with a JSON merge patch. */
static enum kube_result kube_merge_patch(struct kube *k, const char *path, json_object *patch,
                                         const char *what, char *err, size_t errlen)
{
    char *body = kube_json_take(patch);
    struct httpc_resp resp;
    enum kube_result r =
        kube_call(k, "PATCH", path, "application/merge-patch+json", body, what, &resp, err, errlen);
    httpc_resp_free(&resp);
    free(body);
    return r;
}

/* {"metadata":{"uid":U}} — the uid makes the API refuse (409) a patch to a replacement. */
static json_object *kube_patch_with_uid(const char *uid, json_object **meta)
{
    json_object *patch = json_object_new_object();
    *meta = json_object_new_object();
    if (uid)
        json_object_object_add(*meta, "uid", json_object_new_string(uid));
    json_object_object_add(patch, "metadata", *meta);
    return patch;
}

enum kube_result kube_annotate(struct kube *k, const struct kube_ref *ref, const char *key,
                               const char *value, char *err, size_t errlen)
{
    char *path = kube_path(ref, NULL, err, errlen);
    if (!path)
        return KUBE_UNSUPPORTED;
    json_object *meta, *ann = json_object_new_object();
    json_object *patch = kube_patch_with_uid(ref->uid, &meta);
    json_object_object_add(ann, key, value ? json_object_new_string(value) : NULL);
    json_object_object_add(meta, "annotations", ann);
    char *what = xasprintf("annotate %s '%s/%s'", ref->kind, ref->ns, ref->name);
    enum kube_result r = kube_merge_patch(k, path, patch, what, err, errlen);
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
        if (r == KUBE_OK) {
            json_object *meta, *spec = json_object_new_object();
            json_object *patch = kube_patch_with_uid(owner->uid, &meta);
            json_object_object_add(spec, "replicas", json_object_new_int(0));
            json_object_object_add(patch, "spec", spec);
            r = kube_merge_patch(k, path, patch, what, err, errlen);
        }
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
            json_object *meta, *spec = json_object_new_object();
            json_object *patch = kube_patch_with_uid(wl.uid, &meta);
            json_object_object_add(spec, "active", json_object_new_boolean(0));
            json_object_object_add(patch, "spec", spec);
            char *wwhat = xasprintf("deactivate Kueue workload '%s/%s'", j->ns, wl.name);
            r = kube_merge_patch(k, wpath, patch, wwhat, err, errlen);
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
    json_object *meta, *spec = json_object_new_object();
    json_object *patch = kube_patch_with_uid(job->ref.uid, &meta);
    json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    json_object_object_add(patch, "spec", spec);
    char *what = xasprintf("suspend Job '%s/%s'", job->ref.ns, job->ref.name);
    enum kube_result r = kube_merge_patch(k, path, patch, what, err, errlen);
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
    json_object *ev = json_object_new_object(), *meta = json_object_new_object();
    json_object *opts = json_object_new_object(), *pre = json_object_new_object();
    json_object_object_add(ev, "apiVersion", json_object_new_string("policy/v1"));
    json_object_object_add(ev, "kind", json_object_new_string("Eviction"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(ev, "metadata", meta);
    json_object_object_add(pre, "uid", json_object_new_string(uid));
    json_object_object_add(opts, "preconditions", pre);
    json_object_object_add(ev, "deleteOptions", opts);
    char *body = kube_json_take(ev);
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
    json_object *opts = json_object_new_object(), *pre = json_object_new_object();
    json_object_object_add(opts, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(opts, "kind", json_object_new_string("DeleteOptions"));
    json_object_object_add(opts, "propagationPolicy", json_object_new_string(propagation));
    json_object_object_add(pre, "uid", json_object_new_string(ref->uid));
    json_object_object_add(opts, "preconditions", pre);
    char *body = kube_json_take(opts);
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

    json_object *ev = json_object_new_object(), *meta = json_object_new_object();
    json_object *obj = json_object_new_object(), *src = json_object_new_object();
    json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(ev, "kind", json_object_new_string("Event"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(involved->ns));
    json_object_object_add(ev, "metadata", meta);
    if (involved->api_version)
        json_object_object_add(obj, "apiVersion", json_object_new_string(involved->api_version));
    if (involved->kind)
        json_object_object_add(obj, "kind", json_object_new_string(involved->kind));
    json_object_object_add(obj, "name", json_object_new_string(involved->name));
    json_object_object_add(obj, "namespace", json_object_new_string(involved->ns));
    if (involved->uid)
        json_object_object_add(obj, "uid", json_object_new_string(involved->uid));
    json_object_object_add(ev, "involvedObject", obj);
    json_object_object_add(ev, "reason", json_object_new_string(reason));
    json_object_object_add(ev, "message", json_object_new_string(message ? message : ""));
    json_object_object_add(ev, "type", json_object_new_string(type ? type : "Normal"));
    json_object_object_add(src, "component", json_object_new_string("gpureclaim-enforcer"));
    json_object_object_add(ev, "source", src);
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "count", json_object_new_int(1));
    json_object_object_add(ev, "reportingComponent",
                           json_object_new_string("gpureclaim.io/enforcer"));
    json_object_object_add(ev, "reportingInstance", json_object_new_string(k->instance));
    if (action)
        json_object_object_add(ev, "action", json_object_new_string(action));
    char *body = kube_json_take(ev);
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
