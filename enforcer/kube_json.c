/*
 * The pure half of the Kubernetes client (kube_json.h): the objects it reads (free, copy,
 * look-ups), every JSON parser of the API's answers (objects, lists, Scale, Status, access
 * reviews, discovery), the mapping of an HTTP answer to a kube_result and the builders of every
 * request body (kube_body_*: merge patches, Eviction, DeleteOptions, Event). No I/O: kube.c
 * makes the calls and hands the bodies here, and fuzz/fuzz_kube.c reaches all of it without a
 * network. What a list says of GPU pressure is pressure.c's. Parsing is strict (wrong types are
 * errors, not defaults).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonparse.h"
#include "kube_json.h"
#include "util.h"

/* Objects with managedFields nest deeper than anything we read; 64 leaves room. */
#define KUBE_JSON_DEPTH 64

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
    free(o->resource_version);
    free(o->raw);
    *o = (struct kube_obj){0};
}

void kube_obj_copy(struct kube_obj *dst, const struct kube_obj *src)
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
    dst->resource_version = kube_strdup_opt(src->resource_version);
    dst->generation = src->generation;
    if (src->raw) {
        dst->raw = xstrndup(src->raw, src->raw_len);
        dst->raw_len = src->raw_len;
    }
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
int kube_obj_from_json(json_object *root, struct kube_obj *o, char *err, size_t errlen)
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
        kube_str(meta, "resourceVersion", false, &o->resource_version, ctx, err, errlen) < 0 ||
        kube_str(meta, "creationTimestamp", false, &o->creation_timestamp, ctx, err, errlen) < 0 ||
        kube_str(meta, "deletionTimestamp", false, &o->deletion_timestamp, ctx, err, errlen) < 0 ||
        kube_parse_kv(meta, "labels", &o->labels, &o->nlabels, err, errlen) < 0 ||
        kube_parse_kv(meta, "annotations", &o->annotations, &o->nannotations, err, errlen) < 0 ||
        kube_parse_owner_refs(meta, o, err, errlen) < 0 ||
        kube_member(meta, "generation", json_type_int, &v, ctx, err, errlen) < 0)
        goto fail;
    o->generation = v ? json_object_get_int64(v) : 0;

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
    if (ret == 0) {
        out->raw = xstrndup(body, len);
        out->raw_len = len;
    }
    json_object_put(root);
    return ret;
}

/*
 * A list answer's envelope: the parsed root (the caller puts it) and its "items" array in
 * *items. The API always sends "items", even an empty one ("items": []), so a missing one is
 * an error. NULL with a message.
 */
json_object *kube_list_parse(const char *body, size_t len, const char *what, json_object **items,
                             char *err, size_t errlen)
{
    json_object *root = kube_json_parse(body, len, what, err, errlen);
    if (!root)
        return NULL;
    int r = kube_member(root, "items", json_type_array, items, "", err, errlen);
    if (r <= 0) {
        if (r == 0)
            snprintf(err, errlen, "'items' is missing");
        json_object_put(root);
        return NULL;
    }
    return root;
}

int kube_parse_list(const char *body, size_t len, struct kube_obj **items, size_t *n, char *err,
                    size_t errlen)
{
    *items = NULL;
    *n = 0;
    json_object *arr, *root = kube_list_parse(body, len, "list", &arr, err, errlen);
    if (!root)
        return -1;
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
        /* Each item's own JSON, as a GET of it would return (the list's items carry no
           kind or apiVersion, as the API server sends them). */
        size_t rl;
        const char *raw = json_object_to_json_string_length(
            e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &rl);
        (*items)[i].raw = xstrndup(raw, rl);
        (*items)[i].raw_len = rl;
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

/*
 * A SelfSubjectAccessReview as the API server answers it (authorization.k8s.io/v1,
 * kubernetes/api authorization/v1/types.go, SubjectAccessReviewStatus): status.allowed is
 * always sent; denied, reason and evaluationError only when set. An answer without a status,
 * or one that is not allowed, not denied and carries an evaluationError, decides nothing.
 */
int kube_parse_ssar(const char *body, size_t len, int *verdict, char **reason, char *err,
                    size_t errlen)
{
    *verdict = KUBE_ACCESS_UNKNOWN;
    *reason = NULL;
    json_object *root = kube_json_parse(body, len, "access review", err, errlen), *st, *v;
    if (!root)
        return -1;
    int ret = -1;
    bool allowed = false, denied = false;
    const char *why = NULL, *eval = NULL;
    if (kube_member(root, "status", json_type_object, &st, "", err, errlen) < 0)
        goto out;
    if (!st) {
        snprintf(err, errlen, "'status' is missing");
        goto out;
    }
    if (kube_member(st, "allowed", json_type_boolean, &v, "status.", err, errlen) < 0)
        goto out;
    if (!v) {
        snprintf(err, errlen, "'status.allowed' is missing");
        goto out;
    }
    allowed = json_object_get_boolean(v);
    if (kube_member(st, "denied", json_type_boolean, &v, "status.", err, errlen) < 0)
        goto out;
    denied = v && json_object_get_boolean(v);
    if (kube_member(st, "reason", json_type_string, &v, "status.", err, errlen) < 0)
        goto out;
    why = v ? json_object_get_string(v) : NULL;
    if (kube_member(st, "evaluationError", json_type_string, &v, "status.", err, errlen) < 0)
        goto out;
    eval = v ? json_object_get_string(v) : NULL;
    if (allowed && denied) {
        snprintf(err, errlen, "'status' is both allowed and denied");
        goto out;
    }
    if (allowed)
        *verdict = KUBE_ACCESS_ALLOWED;
    else if (denied || !eval || !*eval)
        *verdict = KUBE_ACCESS_DENIED;
    /* not allowed, not denied, an evaluation error: the authorizer could not decide */
    if (eval && *eval && !allowed && !denied)
        *reason = xstrdup(eval);
    else if (why && *why)
        *reason = xstrdup(why);
    ret = 0;
out:
    json_object_put(root);
    return ret;
}

/* ---- discovery ------------------------------------------------------------------------- */

void kube_api_resources_free(struct kube_api_resource *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].kind);
        free(r[i].plural);
    }
    free(r);
}

int kube_parse_resource_list(const char *body, size_t len, struct kube_api_resource **out,
                             size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    json_object *root = kube_json_parse(body, len, "APIResourceList", err, errlen), *arr;
    if (!root)
        return -1;
    int r = kube_member(root, "resources", json_type_array, &arr, "", err, errlen);
    if (r == 0)
        snprintf(err, errlen, "'resources' is missing");
    if (r <= 0) {
        json_object_put(root);
        return -1;
    }
    size_t cnt = json_object_array_length(arr);
    struct kube_api_resource *res = xcalloc(cnt + 1, sizeof(*res));
    size_t m = 0;
    int ret = 0;
    /* Top-level resources first, then their "PLURAL/scale" subresources. */
    for (int pass = 0; pass < 2 && ret == 0; pass++) {
        for (size_t i = 0; i < cnt; i++) {
            json_object *e = json_object_array_get_idx(arr, i), *ns;
            char *name = NULL, *kind = NULL;
            const char *ctx = "resources[].";
            if (!json_object_is_type(e, json_type_object)) {
                snprintf(err, errlen, "'resources[%zu]' is not an object", i);
                ret = -1;
                break;
            }
            if (kube_str(e, "name", true, &name, ctx, err, errlen) < 0 ||
                kube_str(e, "kind", true, &kind, ctx, err, errlen) < 0 ||
                kube_member(e, "namespaced", json_type_boolean, &ns, ctx, err, errlen) < 0) {
                free(name);
                free(kind);
                ret = -1;
                break;
            }
            const char *slash = strchr(name, '/');
            if (pass == 0 && !slash) {
                res[m++] = (struct kube_api_resource){kind, name, ns && json_object_get_boolean(ns),
                                                      false};
                continue;
            }
            if (pass == 1 && slash && strcmp(slash, "/scale") == 0) {
                for (size_t j = 0; j < m; j++)
                    if (strlen(res[j].plural) == (size_t)(slash - name) &&
                        strncmp(res[j].plural, name, (size_t)(slash - name)) == 0)
                        res[j].has_scale = true;
            }
            free(name);
            free(kind);
        }
    }
    json_object_put(root);
    if (ret < 0) {
        kube_api_resources_free(res, m);
        return -1;
    }
    *out = res;
    *n = m;
    return 0;
}

int kube_parse_group_list(const char *body, size_t len, const char *group, char **preferred,
                          char ***versions, size_t *nversions, char *err, size_t errlen)
{
    *preferred = NULL;
    if (versions) {
        *versions = NULL;
        *nversions = 0;
    }
    json_object *root = kube_json_parse(body, len, "APIGroupList", err, errlen), *arr;
    if (!root)
        return -1;
    int r = kube_member(root, "groups", json_type_array, &arr, "", err, errlen);
    if (r == 0)
        snprintf(err, errlen, "'groups' is missing");
    int ret = r <= 0 ? -1 : 0;
    for (size_t i = 0; ret == 0 && i < json_object_array_length(arr); i++) {
        json_object *g = json_object_array_get_idx(arr, i), *pv, *vs = NULL;
        char *name = NULL;
        if (!json_object_is_type(g, json_type_object)) {
            snprintf(err, errlen, "'groups[%zu]' is not an object", i);
            ret = -1;
        } else if (kube_str(g, "name", true, &name, "groups[].", err, errlen) < 0 ||
                   kube_member(g, "preferredVersion", json_type_object, &pv, "groups[].", err,
                               errlen) < 0 ||
                   kube_member(g, "versions", json_type_array, &vs, "groups[].", err, errlen) < 0) {
            ret = -1;
        } else if (strcmp(name, group) == 0 && pv) {
            free(*preferred);
            *preferred = NULL;
            if (kube_str(pv, "version", true, preferred, "groups[].preferredVersion.", err,
                         errlen) < 0)
                ret = -1;
            /* The served versions in the order listed (kube-apiserver's priority order). */
            for (size_t j = 0; ret == 0 && versions && vs && j < json_object_array_length(vs);
                 j++) {
                json_object *v = json_object_array_get_idx(vs, j);
                char *ver = NULL;
                if (!json_object_is_type(v, json_type_object) ||
                    kube_str(v, "version", true, &ver, "groups[].versions[].", err, errlen) < 0) {
                    if (!json_object_is_type(v, json_type_object))
                        snprintf(err, errlen, "'groups[].versions[%zu]' is not an object", j);
                    ret = -1;
                    break;
                }
                *versions = xrealloc(*versions, (*nversions + 1) * sizeof(**versions));
                (*versions)[(*nversions)++] = ver;
            }
        }
        free(name);
    }
    if (ret < 0) {
        free(*preferred);
        *preferred = NULL;
        for (size_t j = 0; versions && j < *nversions; j++)
            free((*versions)[j]);
        if (versions) {
            free(*versions);
            *versions = NULL;
            *nversions = 0;
        }
    }
    json_object_put(root);
    return ret;
}

/* ---- request bodies --------------------------------------------------------------------- */

/*
 * The JSON every write sends, built here so that kube.c's calls hold only a path, a method and
 * an answer, and so that the fuzz target and the unit tests see the exact bytes. Strings are
 * escaped by json-c; output is compact with '/' unescaped (what the API server and the fake
 * in tests/fakes/fake_kube.c compare).
 */
static char *kube_json_take(json_object *o)
{
    char *s = xstrdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
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

char *kube_body_annotate(const char *uid, const char *key, const char *value)
{
    json_object *meta, *ann = json_object_new_object();
    json_object *patch = kube_patch_with_uid(uid, &meta);
    json_object_object_add(ann, key, value ? json_object_new_string(value) : NULL);
    json_object_object_add(meta, "annotations", ann);
    return kube_json_take(patch);
}

/* {"metadata":{"uid":U},"spec":{FIELD:VALUE}}: the spec patches of the actions. */
static char *kube_body_spec(const char *uid, const char *field, json_object *value)
{
    json_object *meta, *spec = json_object_new_object();
    json_object *patch = kube_patch_with_uid(uid, &meta);
    json_object_object_add(spec, field, value);
    json_object_object_add(patch, "spec", spec);
    return kube_json_take(patch);
}

char *kube_body_scale_zero(const char *uid)
{
    return kube_body_spec(uid, "replicas", json_object_new_int(0));
}

char *kube_body_suspend(const char *uid)
{
    return kube_body_spec(uid, "suspend", json_object_new_boolean(1));
}

char *kube_body_deactivate(const char *uid)
{
    return kube_body_spec(uid, "active", json_object_new_boolean(0));
}

static void kube_add_str(json_object *o, const char *key, const char *value)
{
    json_object_object_add(o, key, json_object_new_string(value));
}

/* {"apiVersion":API,"kind":KIND}, the start of every object a call POSTs or DELETEs with. */
static json_object *kube_typed(const char *api_version, const char *kind)
{
    json_object *o = json_object_new_object();
    kube_add_str(o, "apiVersion", api_version);
    kube_add_str(o, "kind", kind);
    return o;
}

/* {"name":NAME,"namespace":NS} */
static json_object *kube_meta(const char *ns, const char *name)
{
    json_object *meta = json_object_new_object();
    kube_add_str(meta, "name", name);
    kube_add_str(meta, "namespace", ns);
    return meta;
}

/* Add "preconditions":{"uid":U} to DeleteOptions: the API deletes nothing on a mismatch. */
static void kube_add_preconditions(json_object *opts, const char *uid)
{
    json_object *pre = json_object_new_object();
    kube_add_str(pre, "uid", uid);
    json_object_object_add(opts, "preconditions", pre);
}

char *kube_body_eviction(const char *ns, const char *name, const char *uid)
{
    json_object *ev = kube_typed("policy/v1", "Eviction"), *opts = json_object_new_object();
    json_object_object_add(ev, "metadata", kube_meta(ns, name));
    kube_add_preconditions(opts, uid);
    json_object_object_add(ev, "deleteOptions", opts);
    return kube_json_take(ev);
}

char *kube_body_delete_options(const char *propagation, const char *uid,
                               const char *resource_version)
{
    json_object *opts = kube_typed("v1", "DeleteOptions"), *pre;
    kube_add_str(opts, "propagationPolicy", propagation);
    kube_add_preconditions(opts, uid);
    if (resource_version && json_object_object_get_ex(opts, "preconditions", &pre))
        kube_add_str(pre, "resourceVersion", resource_version);
    return kube_json_take(opts);
}

char *kube_body_ssar(const struct kube_access *a)
{
    json_object *o = kube_typed("authorization.k8s.io/v1", "SelfSubjectAccessReview");
    json_object *spec = json_object_new_object(), *ra = json_object_new_object();
    /* "" namespace: every namespace (a cluster-wide grant); omitted like the API's omitempty */
    const char *const keys[] = {"namespace", "verb", "group", "resource", "subresource", "name"};
    const char *const vals[] = {a->ns, a->verb, a->group, a->resource, a->subresource, a->name};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++)
        if (vals[i] && *vals[i])
            kube_add_str(ra, keys[i], vals[i]);
    json_object_object_add(spec, "resourceAttributes", ra);
    json_object_object_add(o, "spec", spec);
    return kube_json_take(o);
}

char *kube_body_delete(const char *propagation, const char *uid)
{
    return kube_body_delete_options(propagation, uid, NULL);
}

char *kube_body_merge(const char *uid, const char *resource_version, const char *patch, char *err,
                      size_t errlen)
{
    json_object *p =
        kube_json_parse(patch ? patch : "", patch ? strlen(patch) : 0, "merge patch", err, errlen);
    if (!p)
        return NULL;
    /* metadata first, with the preconditions before the patch's own metadata fields. */
    json_object *meta, *out = kube_patch_with_uid(uid, &meta), *pm = NULL;
    if (resource_version)
        kube_add_str(meta, "resourceVersion", resource_version);
    if (json_object_object_get_ex(p, "metadata", &pm) &&
        json_object_is_type(pm, json_type_object)) {
        json_object_object_foreach(pm, mk, mv)
        {
            if (strcmp(mk, "uid") != 0 && strcmp(mk, "resourceVersion") != 0)
                json_object_object_add(meta, mk, json_object_get(mv));
        }
    }
    json_object_object_foreach(p, k, v)
    {
        if (strcmp(k, "metadata") != 0)
            json_object_object_add(out, k, json_object_get(v));
    }
    json_object_put(p);
    return kube_json_take(out);
}

char *kube_body_event(const struct kube_event *e)
{
    const struct kube_ref *inv = e->involved;
    json_object *ev = kube_typed("v1", "Event"), *obj = json_object_new_object();
    json_object *src = json_object_new_object();
    json_object_object_add(ev, "metadata", kube_meta(inv->ns, e->name));
    if (inv->api_version)
        kube_add_str(obj, "apiVersion", inv->api_version);
    if (inv->kind)
        kube_add_str(obj, "kind", inv->kind);
    kube_add_str(obj, "name", inv->name);
    kube_add_str(obj, "namespace", inv->ns);
    if (inv->uid)
        kube_add_str(obj, "uid", inv->uid);
    json_object_object_add(ev, "involvedObject", obj);
    kube_add_str(ev, "reason", e->reason);
    kube_add_str(ev, "message", e->message ? e->message : "");
    kube_add_str(ev, "type", e->type ? e->type : "Normal");
    kube_add_str(src, "component", "gpureclaim-enforcer");
    json_object_object_add(ev, "source", src);
    kube_add_str(ev, "firstTimestamp", e->time);
    kube_add_str(ev, "lastTimestamp", e->time);
    json_object_object_add(ev, "count", json_object_new_int(1));
    kube_add_str(ev, "reportingComponent", "gpureclaim.io/enforcer");
    kube_add_str(ev, "reportingInstance", e->instance);
    if (e->action)
        kube_add_str(ev, "action", e->action);
    return kube_json_take(ev);
}
