/*
 * The pure half of the Kubernetes client (kube_json.c): the objects the enforcer reads from
 * the API (free, copy, look-ups), the parsers of the API's answers (objects, lists, Scale,
 * Status, access reviews, discovery documents), the mapping of an HTTP answer to a
 * kube_result, and the builders of every request body (kube_body_*). No I/O: kube.c (kube.h)
 * makes the calls with these, pressure.c reads GPU pressure from the lists with them, and
 * fuzz/fuzz_kube.c reaches all of it without a network.
 */
#ifndef GPURECLAIM_KUBE_JSON_H
#define GPURECLAIM_KUBE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object; /* json-c's, for the helpers pressure.c shares */

enum kube_result {
    KUBE_OK = 0,
    KUBE_NOT_FOUND,   /* 404: the object is already gone */
    KUBE_CONFLICT,    /* 409 or a uid mismatch: a replacement object, never act on it */
    KUBE_RETRY_LATER, /* 429 (a PodDisruptionBudget or rate limiting) or 503: next cycle */
    KUBE_FORBIDDEN,   /* 403: RBAC does not allow it */
    KUBE_UNSUPPORTED, /* a kind the API does not serve, or a call it has no way for: do not act */
    KUBE_ERROR,       /* 5xx, 401, other 4xx, timeout, transport, malformed JSON */
    KUBE_CANCELLED,   /* not sent: the client was told to stop (kube_cfg.stop) */
};

/*
 * "ok", "not_found", "conflict", "retry_later", "forbidden", "unsupported", "error",
 * "cancelled".
 */
const char *kube_result_name(enum kube_result r);

/* Identity of an object: what actions, events and annotations are aimed at. */
struct kube_ref {
    char *api_version; /* "v1", "apps/v1", "batch/v1", "kueue.x-k8s.io/v1beta1" */
    char *kind;        /* "Pod", "Deployment", ... */
    char *ns;
    char *name;
    char *uid;
};

struct kube_kv {
    char *key, *value;
};

struct kube_owner_ref {
    char *api_version, *kind, *name, *uid;
    bool controller;
};

struct kube_condition {
    char *type, *status, *reason, *message; /* NULL when absent */
};

/* The parts of any object the enforcer reads; pod-only fields stay empty for others. */
struct kube_obj {
    struct kube_ref ref;
    char *creation_timestamp; /* RFC 3339, or NULL */
    char *deletion_timestamp; /* non-NULL once the object is terminating */
    struct kube_kv *labels;
    size_t nlabels;
    struct kube_kv *annotations;
    size_t nannotations;
    struct kube_owner_ref *owners;
    size_t nowners;
    char *phase; /* pods: status.phase */
    struct kube_condition *conditions;
    size_t nconditions;
    bool has_replicas; /* spec.replicas (Deployment, StatefulSet, ReplicaSet) */
    int64_t replicas;
    bool suspended;         /* Job spec.suspend */
    char *resource_version; /* metadata.resourceVersion, or NULL */
    int64_t generation;     /* metadata.generation, 0 when absent */
    /* The object's JSON as the API returned it (NUL-terminated), so that any field of any
       kind can be read (kinds_is_stopped, restore); NULL for objects not read from JSON. */
    char *raw;
    size_t raw_len;
};

void kube_ref_free(struct kube_ref *r);
void kube_obj_free(struct kube_obj *o);
/* Deep copy of `src` into `dst`. */
void kube_ref_copy(struct kube_ref *dst, const struct kube_ref *src);
void kube_obj_copy(struct kube_obj *dst, const struct kube_obj *src);
/* Value of label / annotation `key`, or NULL. */
const char *kube_label(const struct kube_obj *o, const char *key);
const char *kube_annotation(const struct kube_obj *o, const char *key);
/* The ownerReference with controller: true, or NULL. */
const struct kube_owner_ref *kube_controller_ref(const struct kube_obj *o);

/* ---- pure parsers (no I/O, kube_json.c) ------------------------------------------------ */

/* A single object (Pod, ReplicaSet, Job, Workload, ...). 0, or -1 with a message. */
int kube_parse_obj(const char *body, size_t len, struct kube_obj *out, char *err, size_t errlen);

/* An autoscaling/v1 Scale: spec.replicas (absent means 0, as the API omits zero). */
int kube_parse_scale(const char *body, size_t len, int64_t *replicas, char *err, size_t errlen);

/* A meta/v1 Status as sent with every error answer. Fields are NULL/0 when absent. */
struct kube_status {
    char *status; /* "Success" / "Failure" */
    char *reason; /* "NotFound", "Conflict", "TooManyRequests", ... */
    char *message;
    long code;
    bool disruption_budget; /* details.causes[].reason == "DisruptionBudget" */
    long retry_after;       /* details.retryAfterSeconds, or -1 */
};
int kube_parse_status(const char *body, size_t len, struct kube_status *st, char *err,
                      size_t errlen);
void kube_status_free(struct kube_status *st);

/*
 * Map an HTTP answer to a result and a message "<what>: HTTP 409 Conflict: <Status message>"
 * (no message and KUBE_OK for 2xx). Pure; used by every call and by the fuzz target.
 */
enum kube_result kube_classify(long http_status, const char *body, size_t len, const char *what,
                               char *err, size_t errlen);

/* A list (e.g. a WorkloadList): the items parsed as objects. Caller frees each and the array. */
int kube_parse_list(const char *body, size_t len, struct kube_obj **items, size_t *n, char *err,
                    size_t errlen);

/*
 * For readers of lists beside kube_json.c (pressure.c): a list answer's envelope parsed
 * strictly (the root, which the caller puts, and its "items" array in *items; NULL with a
 * message, `what` naming the document), and one item filled into `o` as kube_parse_obj does
 * (list items carry no kind/apiVersion: those stay NULL; -1 with a message, `o` freed).
 */
struct json_object *kube_list_parse(const char *body, size_t len, const char *what,
                                    struct json_object **items, char *err, size_t errlen);
int kube_obj_from_json(struct json_object *root, struct kube_obj *o, char *err, size_t errlen);

/* One request to authorize (resourceAttributes of a SelfSubjectAccessReview). */
struct kube_access {
    const char *ns;          /* "" or NULL: every namespace */
    const char *verb;        /* get, list, patch, delete, create, update */
    const char *group;       /* "" core */
    const char *resource;    /* plural: "deployments" */
    const char *subresource; /* NULL, "scale", "eviction" */
    const char *name;        /* NULL: any name */
};

enum { KUBE_ACCESS_UNKNOWN = -1, KUBE_ACCESS_DENIED = 0, KUBE_ACCESS_ALLOWED = 1 };

/*
 * A SelfSubjectAccessReview answer: *verdict KUBE_ACCESS_ALLOWED (status.allowed),
 * KUBE_ACCESS_DENIED (status.denied, or not allowed without an evaluationError) or
 * KUBE_ACCESS_UNKNOWN (not allowed, not denied, an evaluationError: nothing decided);
 * *reason the evaluationError or status.reason (malloc'd, NULL when none). 0, or -1 with a
 * message (no status, no status.allowed, wrong types, allowed and denied at once).
 */
int kube_parse_ssar(const char *body, size_t len, int *verdict, char **reason, char *err,
                    size_t errlen);

/* ---- pure request bodies (no I/O, kube_json.c) ----------------------------------------- */

/*
 * Each returns the exact JSON a write sends, malloc'd (the caller frees it). A merge patch
 * carries {"metadata":{"uid":U}} when `uid` is not NULL: the API answers 409 when the object
 * now has another uid, so a replacement of the same name is never changed.
 */
/* {"metadata":{"uid":U,"annotations":{KEY:VALUE}}}; a NULL value is null (removes it). */
char *kube_body_annotate(const char *uid, const char *key, const char *value);
/* {"metadata":{"uid":U},"spec":{"replicas":0}} for a /scale subresource. */
char *kube_body_scale_zero(const char *uid);
/* {"metadata":{"uid":U},"spec":{"suspend":true}} for a Job. */
char *kube_body_suspend(const char *uid);
/* {"metadata":{"uid":U},"spec":{"active":false}} for a Kueue Workload. */
char *kube_body_deactivate(const char *uid);
/* A policy/v1 Eviction of pod NS/NAME with deleteOptions.preconditions.uid = UID. */
char *kube_body_eviction(const char *ns, const char *name, const char *uid);
/* v1 DeleteOptions with propagationPolicy and preconditions.uid = UID. */
char *kube_body_delete(const char *propagation, const char *uid);
/* The same with preconditions.resourceVersion = RV as well when `resource_version` is set. */
char *kube_body_delete_options(const char *propagation, const char *uid,
                               const char *resource_version);

/* An authorization.k8s.io/v1 SelfSubjectAccessReview asking for `a`. */
char *kube_body_ssar(const struct kube_access *a);

/* A core/v1 Event (see kube_post_event); `involved`, `name`, `reason`, `time` are required. */
struct kube_event {
    const struct kube_ref *involved;
    const char *name;     /* metadata.name, unique in the namespace */
    const char *reason;   /* e.g. "ReclaimNotice" */
    const char *message;  /* NULL: "" */
    const char *type;     /* NULL: "Normal" */
    const char *action;   /* NULL: omitted */
    const char *time;     /* RFC 3339: firstTimestamp and lastTimestamp */
    const char *instance; /* reportingInstance */
};
char *kube_body_event(const struct kube_event *e);

/*
 * Discovery documents. An APIResourceList (GET /api/v1, /apis/GROUP/VERSION): each top-level
 * resource (no '/' in its name) with its kind, plural, namespaced, and has_scale when a
 * "PLURAL/scale" subresource is listed. An APIGroupList (GET /apis): the preferred version of
 * `group`, NULL (and 0) when the group is not served, and when `versions` is not NULL every
 * version it serves, in the order listed (*nversions of them, each and the array owned by the
 * caller). Pure; -1 with a message when malformed.
 */
struct kube_api_resource {
    char *kind, *plural;
    bool namespaced, has_scale;
};
int kube_parse_resource_list(const char *body, size_t len, struct kube_api_resource **out,
                             size_t *n, char *err, size_t errlen);
void kube_api_resources_free(struct kube_api_resource *r, size_t n);
int kube_parse_group_list(const char *body, size_t len, const char *group, char **preferred,
                          char ***versions, size_t *nversions, char *err, size_t errlen);

/*
 * A merge patch as sent by kube_patch: `patch` (a JSON object, RFC 7386) with
 * metadata.uid = `uid` and, when not NULL, metadata.resourceVersion = `resource_version`
 * added (replacing any the patch held). NULL with a message when `patch` is not a JSON object.
 */
char *kube_body_merge(const char *uid, const char *resource_version, const char *patch, char *err,
                      size_t errlen);

#endif
