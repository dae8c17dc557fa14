/*
 * Kubernetes API client for the calls the enforcer makes: read a pod and walk its controller
 * owner chain to the root owner, act on that owner (scale to zero, suspend a Job or deactivate
 * its Kueue Workload, evict or delete with a uid precondition), leave a notice (core/v1 Event,
 * annotation) and confirm GPU pressure from the scheduler's Pending-pod conditions.
 *
 * Every call re-reads the service-account token (the kubelet rotates it) and retries once on
 * 401. Each network call returns a `kube_result` the action engine can act on, and a message
 * in `err` that carries the API's Status message and reason. All JSON parsing and building is
 * in the pure kube_parse_* and kube_body_* functions of kube_json.c (fuzzed by
 * fuzz/fuzz_kube.c); the calls are in kube.c.
 * Request shapes and answers follow docs/backend-apis.md §6.
 */
#ifndef GPURECLAIM_KUBE_H
#define GPURECLAIM_KUBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct kube_cfg {
    const char *api_url;    /* NULL: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT */
    const char *token_file; /* NULL: KUBE_SA_DIR "/token"; "" sends no token */
    const char *ca_file;    /* NULL: KUBE_SA_DIR "/ca.crt" for https, none for http */
    bool insecure;          /* --kube.insecure-skip-tls-verify: logs a warning */
    double timeout;         /* seconds per request; 0 = 10 s */
    const char *instance;   /* Event reportingInstance; NULL: $POD_NAME or the host name */
    /* A token over plain http:// can be read and replayed by anyone on the path: kube_new
       refuses it unless this is set (--kube.allow-insecure-credentials). */
    bool allow_insecure_credentials;
    /* Once *stop is non-zero (SIGTERM), no new request starts: every call returns
       KUBE_CANCELLED. A request under way finishes (bounded by `timeout`). NULL: never (a
       client that must still call after the signal, e.g. to release a leader Lease). */
    const volatile sig_atomic_t *stop;
    /* When set and it returns false, no new request starts either (KUBE_CANCELLED): the
       action engine's client of a replica that is not, or no longer, the leader (lease.h). */
    bool (*gate)(void *arg);
    void *gate_arg;
};

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kube;

/*
 * Create a client. Returns NULL with a message when the in-cluster defaults are needed but
 * KUBERNETES_SERVICE_HOST/PORT are unset, the URL is not http(s), or a token file is set for
 * an http:// URL without allow_insecure_credentials. The token file is not read here: it is
 * read on every request.
 */
struct kube *kube_new(const struct kube_cfg *cfg, char *err, size_t errlen);
void kube_free(struct kube *k);

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
 * A PodList: how many pods wait for `resource` (e.g. "amd.com/gpu") according to the scheduler
 * (PodScheduled False, reason Unschedulable, message containing "Insufficient <resource>"),
 * and the sum of their containers' requests (limits when no request) of that resource.
 */
int kube_parse_pending(const char *body, size_t len, const char *resource, size_t *count,
                       int64_t *requested, char *err, size_t errlen);

/*
 * A Kueue WorkloadList: how many Workloads wait for quota of `resource`: a condition
 * QuotaReserved False whose message says "insufficient unused quota for <resource> in flavor"
 * (Kueue's wording), and none of: QuotaReserved True, Finished True, spec.active false, a
 * deletionTimestamp, or a uid, controller owner uid or kueue.x-k8s.io/job-uid label among
 * `skip_uids` (the reclaim candidate's own chain: its own Workload is no demand).
 */
int kube_parse_kueue_waiting(const char *body, size_t len, const char *resource,
                             const char *const *skip_uids, size_t nskip, size_t *count, char *err,
                             size_t errlen);

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
 * `group`, NULL (and 0) when the group is not served. Pure; -1 with a message when malformed.
 */
struct kube_api_resource {
    char *kind, *plural;
    bool namespaced, has_scale;
};
int kube_parse_resource_list(const char *body, size_t len, struct kube_api_resource **out,
                             size_t *n, char *err, size_t errlen);
void kube_api_resources_free(struct kube_api_resource *r, size_t n);
int kube_parse_group_list(const char *body, size_t len, const char *group, char **preferred,
                          char *err, size_t errlen);

/*
 * A merge patch as sent by kube_patch: `patch` (a JSON object, RFC 7386) with
 * metadata.uid = `uid` and, when not NULL, metadata.resourceVersion = `resource_version`
 * added (replacing any the patch held). NULL with a message when `patch` is not a JSON object.
 */
char *kube_body_merge(const char *uid, const char *resource_version, const char *patch, char *err,
                      size_t errlen);

/* ---- calls ------------------------------------------------------------------------------ */

/*
 * The REST resource serving `kind` of `api_version` ("v1", "apps/v1", "kubeflow.org/v1"), as
 * API discovery says: GET /api/v1 or /apis/GROUP/VERSION (an APIResourceList). When that
 * version is no longer served (404), GET /apis (an APIGroupList) gives the group's preferred
 * version, which is used instead (out->version says which). Plurals are never guessed.
 * Answers are cached per client: a kind missing from a cached list refetches that list, at
 * most once per KUBE_DISCO_REFRESH seconds (a CRD installed since); at most KUBE_DISCO_MAX
 * lists are kept. The resources compiled into kube-apiserver (core, apps, batch and
 * coordination.k8s.io at v1) are known without a request: they cannot be removed or renamed.
 * KUBE_UNSUPPORTED when the API does not serve the kind (err names it); KUBE_FORBIDDEN,
 * KUBE_ERROR, KUBE_CANCELLED as for any call. Free `out` with kube_resource_free.
 */
struct kube_resource {
    char *group;   /* "" for the core group */
    char *version; /* the served version used in paths */
    char *plural;
    bool namespaced;
    bool has_scale; /* a /scale subresource */
};
#define KUBE_DISCO_REFRESH 30.0
#define KUBE_DISCO_MAX     64
enum kube_result kube_resource_of(struct kube *k, const char *api_version, const char *kind,
                                  struct kube_resource *out, char *err, size_t errlen);
void kube_resource_free(struct kube_resource *r);

/* GET /api/v1/namespaces/NS/pods/NAME into `pod` (free with kube_obj_free on KUBE_OK). */
enum kube_result kube_get_pod(struct kube *k, const char *ns, const char *name,
                              struct kube_obj *pod, char *err, size_t errlen);

/* GET the object `ref` names, of any kind the API serves (kube_resource_of). */
enum kube_result kube_get(struct kube *k, const struct kube_ref *ref, struct kube_obj *obj,
                          char *err, size_t errlen);

#define KUBE_CHAIN_MAX 8 /* owner levels followed above the pod */

/*
 * obj[0] is the pod, obj[n - 1] the topmost owner read. Owners are followed through
 * controller ownerReferences only, of any kind the API serves (kube_resource_of): which
 * object is acted on is the caller's choice (act_kube.c, from the kinds table). `kueue` is set
 * when obj[n - 1] has label kueue.x-k8s.io/queue-name.
 */
struct kube_chain {
    struct kube_obj obj[KUBE_CHAIN_MAX + 1];
    size_t n;
    bool kueue;
    struct kube_owner_ref unknown; /* with KUBE_UNSUPPORTED: the owner the API does not serve */
};

/* Should the walk read `owner`, the controller of `child`? false ends the chain at `child`. */
typedef bool (*kube_climb_fn)(void *arg, const struct kube_obj *child,
                              const struct kube_owner_ref *owner);

/*
 * Walk the chain from `pod` (copied into obj[0]), asking `climb` (NULL: always) before each
 * owner. KUBE_OK with the chain; KUBE_UNSUPPORTED when the API does not serve an owner's kind
 * (chain ends below it, `unknown` names it); KUBE_CONFLICT when an owner's uid differs from
 * the reference (replaced); KUBE_NOT_FOUND when an owner is gone; KUBE_ERROR past
 * KUBE_CHAIN_MAX levels. Free with kube_chain_free.
 */
enum kube_result kube_owner_walk(struct kube *k, const struct kube_obj *pod, kube_climb_fn climb,
                                 void *arg, struct kube_chain *chain, char *err, size_t errlen);
/* kube_owner_walk climbing every controller reference. */
enum kube_result kube_root_owner(struct kube *k, const struct kube_obj *pod,
                                 struct kube_chain *chain, char *err, size_t errlen);
void kube_chain_free(struct kube_chain *chain);

/*
 * Every write below names the object by ref->uid (refused without one: KUBE_UNSUPPORTED for
 * patch and scale, KUBE_ERROR for delete and evict) and, when `resource_version` is not NULL,
 * by the resourceVersion read when the decision to act was made. The API answers 409
 * Conflict to either precondition (KUBE_CONFLICT): the object was replaced or changed since it
 * was read, and the write is not retried on it.
 */

/*
 * RFC 7386 merge patch `merge_patch` (a JSON object) on the object, with metadata.uid and
 * metadata.resourceVersion preconditions added (kube_body_merge).
 */
enum kube_result kube_patch(struct kube *k, const struct kube_ref *ref,
                            const char *resource_version, const char *merge_patch, char *err,
                            size_t errlen);

/*
 * Set the replicas of any kind with a /scale subresource: GET .../scale (*previous gets its
 * spec.replicas), then, unless already at `replicas`, merge-patch .../scale with
 * {"metadata":{"uid":U,"resourceVersion":RV},"spec":{"replicas":N}}: the scale subresource
 * compares both with its parent's and answers 409 on a mismatch (kubernetes/kubernetes
 * pkg/registry/apps/deployment/storage/storage.go, scaleUpdatedObjectInfo), so a replacement
 * or a changed object is never scaled. No scale subresource: KUBE_UNSUPPORTED.
 */
enum kube_result kube_scale(struct kube *k, const struct kube_ref *ref,
                            const char *resource_version, int64_t replicas, int64_t *previous,
                            char *err, size_t errlen);

/*
 * kube_scale to 0 that first records the count: GET .../scale, merge-patch the object's
 * annotation ANNOT_REPLICAS_BEFORE=<N> (uid and resourceVersion preconditions), then
 * patch .../scale to 0 with the resourceVersion that annotation produced. *previous gets N.
 * Already at 0: nothing is patched (the recorded count is kept), *previous = 0, KUBE_OK.
 */
enum kube_result kube_scale_to_zero(struct kube *k, const struct kube_ref *owner,
                                    const char *resource_version, int64_t *previous, char *err,
                                    size_t errlen);

/*
 * Deactivate the Kueue Workload of a Kueue-managed object (label kueue.x-k8s.io/queue-name;
 * Kueue owns its spec.suspend and would undo a patch): the Workload labelled
 * kueue.x-k8s.io/job-uid=<uid> gets {"metadata":{"uid":W},"spec":{"active":false}}. No such
 * Workload, or more than one, is KUBE_ERROR.
 */
enum kube_result kube_kueue_deactivate(struct kube *k, const struct kube_obj *job, char *err,
                                       size_t errlen);

/*
 * Suspend `job` as read (labels, uid, resourceVersion): kube_kueue_deactivate when
 * Kueue-managed, else kube_patch {"spec":{"suspend":true}}.
 */
enum kube_result kube_suspend(struct kube *k, const struct kube_obj *job, char *err, size_t errlen);

/*
 * POST a policy/v1 Eviction for pod NS/NAME with preconditions.uid = UID. 2xx is KUBE_OK; 429
 * blocked by a PodDisruptionBudget is KUBE_RETRY_LATER with the API's message.
 */
enum kube_result kube_evict(struct kube *k, const char *ns, const char *name, const char *uid,
                            char *err, size_t errlen);

/*
 * DELETE the object with DeleteOptions {propagationPolicy, preconditions.uid = ref->uid and
 * resourceVersion when set}. `propagation`: "Background" (NULL), "Foreground" or "Orphan".
 * 200/202 KUBE_OK, 404 KUBE_NOT_FOUND, 409 KUBE_CONFLICT (replaced or changed: nothing was
 * deleted).
 */
enum kube_result kube_delete(struct kube *k, const struct kube_ref *ref, const char *propagation,
                             const char *resource_version, char *err, size_t errlen);

/*
 * POST a core/v1 Event about `involved` in its namespace: unique name "<name>.<hex ns time>",
 * source.component "gpureclaim-enforcer", reportingComponent "gpureclaim.io/enforcer",
 * first/lastTimestamp now, count 1, no eventTime. `type` is "Normal" or "Warning" (NULL:
 * Normal); `action` may be NULL.
 */
enum kube_result kube_post_event(struct kube *k, const struct kube_ref *involved,
                                 const char *reason, const char *message, const char *type,
                                 const char *action, char *err, size_t errlen);

/*
 * Merge-patch annotation `key` = `value` on the object (NULL value removes it), with a
 * metadata.uid precondition when ref->uid is set, and no resourceVersion: the notice is the
 * enforcer's own record, written whatever else changed. Used for ANNOT_NOTICE (the value is the
 * RFC 3339 time of the planned action, the rule, window and threshold).
 */
enum kube_result kube_annotate(struct kube *k, const struct kube_ref *ref, const char *key,
                               const char *value, char *err, size_t errlen);

/*
 * GET /api/v1/pods?fieldSelector=status.phase%3DPending and count the pods the scheduler
 * could not place for lack of `resource` (see kube_parse_pending). `requested` may be NULL.
 */
enum kube_result kube_pending_for_resource(struct kube *k, const char *resource, size_t *count,
                                           int64_t *requested, char *err, size_t errlen);

/*
 * GET /apis/kueue.x-k8s.io/v1beta1/workloads (all namespaces) and count the Workloads waiting
 * for quota of `resource` (kube_parse_kueue_waiting). Suspended Kueue jobs have no pods, so
 * kube_pending_for_resource cannot see them. KUBE_NOT_FOUND when the API does not serve
 * Kueue Workloads (Kueue is not installed).
 */
enum kube_result kube_kueue_waiting_for_resource(struct kube *k, const char *resource,
                                                 const char *const *skip_uids, size_t nskip,
                                                 size_t *count, char *err, size_t errlen);

/*
 * POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews asking whether this client may
 * do `a`: KUBE_OK with *verdict and `reason` (may be ""); any other result (the review itself
 * forbidden, the API down, an answer that decides nothing readable) leaves *verdict
 * KUBE_ACCESS_UNKNOWN: a failed check is never a grant.
 */
enum kube_result kube_access_review(struct kube *k, const struct kube_access *a, int *verdict,
                                    char *reason, size_t reasonlen, char *err, size_t errlen);

/* HTTP status of the client's last answer (after a 401 retry, the retry's); 0 when none. */
long kube_last_status(const struct kube *k);
/* metadata.resourceVersion in the answer to the last successful patch, or NULL. */
const char *kube_last_resource_version(const struct kube *k);
/*
 * The object in the answer to the last successful merge patch (NUL-terminated JSON, its length
 * in *len), or NULL: what the API stored, which may lack a field the patch set (a structural
 * CRD prunes a field its installed release does not have, and answers 200 all the same).
 */
const char *kube_last_answer(const struct kube *k, size_t *len);

/*
 * One call on any path for clients of other API groups (the leader-election Lease): `body`,
 * when not NULL, is sent as application/json. The HTTP status and the answer's body (always
 * set, "" when none; the caller frees it) are returned whatever the classification.
 */
enum kube_result kube_request(struct kube *k, const char *method, const char *path,
                              const char *body, const char *what, long *status, char **resp_body,
                              size_t *resp_len, char *err, size_t errlen);

#endif
