/*
 * Kubernetes API client for the calls the enforcer makes: read a pod and walk its controller
 * owner chain to the root owner, act on that owner (scale to zero, suspend a Job or deactivate
 * its Kueue Workload, evict or delete with a uid precondition), leave a notice (core/v1 Event,
 * annotation) and confirm GPU pressure from the scheduler's Pending-pod conditions.
 *
 * Every call re-reads the service-account token (the kubelet rotates it) and retries once on
 * 401. Each network call returns a `kube_result` the action engine can act on, and a message
 * in `err` that carries the API's Status message and reason. All JSON parsing and building is
 * in the pure kube_parse_* and kube_body_* functions of kube_json.c (kube_json.h, fuzzed by
 * fuzz/fuzz_kube.c), what a list says of GPU pressure in pressure.c (pressure.h); the calls
 * are in kube.c.
 * Request shapes and answers follow docs/backend-apis.md §6.
 */
#ifndef GPURECLAIM_KUBE_H
#define GPURECLAIM_KUBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube_json.h"
#include "pressure.h"

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
 * GET /api/v1/pods?fieldSelector=status.phase%3DPending and read what the scheduler says of
 * `resource` (pressure_parse_pending: the pods it could not place for lack of it, their
 * requests, and whether the name is ambiguous).
 */
enum kube_result kube_pending_for_resource(struct kube *k, const char *resource,
                                           struct pressure_demand *out, char *err, size_t errlen);

/*
 * GET /apis/kueue.x-k8s.io/VERSION/workloads (all namespaces), VERSION the one discovery
 * serves Workloads at (kube_kueue_resource), and count the Workloads waiting for quota of
 * `resource` (pressure_parse_kueue). Suspended Kueue jobs have no pods, so
 * kube_pending_for_resource cannot see them. KUBE_NOT_FOUND when the API does not serve
 * Kueue Workloads (Kueue is not installed).
 */
enum kube_result kube_kueue_waiting_for_resource(struct kube *k, const char *resource,
                                                 const char *const *skip_uids, size_t nskip,
                                                 struct pressure_demand *out, char *err,
                                                 size_t errlen);

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
 * metadata.generation in the answer to the last successful patch (after kube_scale_to_zero, the
 * generation its annotation's answer showed plus the one its /scale adds), or 0 when unknown.
 */
int64_t kube_last_generation(const struct kube *k);
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
