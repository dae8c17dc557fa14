/*
 * Action backend for Kubernetes workloads (act.h, kube.h).
 *
 * A decision names a pod by its namespace and pod labels. The pod is read and its controller
 * owner chain walked to the root owner (kube_root_owner), because acting on a controlled pod
 * only gets it recreated: scaleToZero, suspend and delete go to the root owner, evict to the
 * pod. Notices are an annotation (KUBE_ANN_NOTICE) on the root owner, which is required, and
 * a Warning Event on it, which is best effort: without RBAC for events the annotation still
 * tells the owner, and failing the notice for it would block every action. An owner kind the
 * client does not follow (a CRD operator above a StatefulSet, say) is not acted on at all:
 * acting below it would be reverted by that operator or, worse, fight it. With
 * --kube.confirm-pressure the engine also asks this backend, before acting on a
 * DuringGPUPressure decision, whether the scheduler really leaves a pod pending for lack of the
 * workload's GPU resource, or Kueue a Workload waiting for its quota
 * (act_kube_confirm_pressure).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "kube.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

struct act_kube {
    struct act_backend base; /* first: the engine holds a pointer to it */
    struct kube *k;
};

static struct act_kube *act_kube_of(struct act_backend *b)
{
    return (struct act_kube *)b;
}

static enum act_result act_kube_map(enum kube_result r)
{
    switch (r) {
    case KUBE_OK:
        return ACT_OK;
    case KUBE_NOT_FOUND:
        return ACT_GONE;
    case KUBE_CONFLICT:
        return ACT_CONFLICT;
    case KUBE_RETRY_LATER:
        return ACT_RETRY;
    case KUBE_FORBIDDEN:
        return ACT_FORBIDDEN;
    case KUBE_UNSUPPORTED:
        return ACT_UNSUPPORTED;
    case KUBE_CANCELLED:
        return ACT_CANCELLED;
    default:
        return ACT_ERROR;
    }
}

static char *act_kube_dup(const char *s)
{
    return xstrdup(s ? s : "");
}

static bool act_kube_exempt(const struct kube_obj *o)
{
    const char *l = kube_label(o, ACT_EXEMPT_KEY);
    const char *a = kube_annotation(o, ACT_EXEMPT_KEY);
    return (l && strcmp(l, "true") == 0) || (a && strcmp(a, "true") == 0);
}

static void act_kube_target_free(struct act_backend *b, struct act_target *t)
{
    if (t->priv) {
        kube_chain_free(t->priv);
        free(t->priv);
    }
    act_target_clear(t);
}

static enum act_result act_kube_resolve(struct act_backend *b, const struct decision_rec *d,
                                        struct act_target *t, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    const char *ns = act_label(d, "namespace");
    const char *name = act_label(d, "pod");
    if (!ns || !*ns || !name || !*name) {
        snprintf(err, errlen, "no namespace and pod labels to find the pod by");
        return ACT_UNSUPPORTED;
    }
    struct kube_obj pod;
    enum kube_result r = kube_get_pod(ak->k, ns, name, &pod, err, errlen);
    if (r != KUBE_OK)
        return act_kube_map(r);
    struct kube_chain *chain = xcalloc(1, sizeof(*chain));
    r = kube_root_owner(ak->k, &pod, chain, err, errlen);
    kube_obj_free(&pod);
    if (r != KUBE_OK || chain->n == 0 || chain->n > ACT_CHAIN_MAX) {
        if (r == KUBE_OK)
            snprintf(err, errlen, "owner chain of pod '%s/%s' is too long", ns, name);
        kube_chain_free(chain);
        free(chain);
        return r == KUBE_OK ? ACT_ERROR : act_kube_map(r);
    }
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < chain->n; i++) {
        const struct kube_obj *o = &chain->obj[i];
        t->chain[i] = (struct act_obj){act_kube_dup(o->ref.api_version), act_kube_dup(o->ref.kind),
                                       act_kube_dup(o->ref.ns ? o->ref.ns : ns),
                                       act_kube_dup(o->ref.name), act_kube_dup(o->ref.uid)};
        t->exempt |= act_kube_exempt(o);
        t->terminating |= o->deletion_timestamp != NULL;
    }
    t->nchain = chain->n;
    t->running = chain->obj[0].phase && strcmp(chain->obj[0].phase, "Running") == 0;
    /* The pod's own age: a pod re-created under the same name is younger than its series. */
    char perr[128];
    const char *created = chain->obj[0].creation_timestamp;
    if (!created || rfc3339_parse(created, &t->created, perr, sizeof(perr)) < 0)
        t->created = NAN;
    const char *notice = kube_annotation(&chain->obj[chain->n - 1], KUBE_ANN_NOTICE);
    t->notice = notice && *notice ? xstrdup(notice) : NULL;
    t->priv = chain;
    return ACT_OK;
}

static struct kube_ref act_kube_ref(const struct act_obj *o)
{
    return (struct kube_ref){o->api_version, o->kind, o->ns, o->name, o->uid};
}

static enum act_result act_kube_notice(struct act_backend *b, const struct act_target *t,
                                       const struct act_notice *n, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    struct kube_ref root = act_kube_ref(&t->chain[t->nchain - 1]);
    enum kube_result r = kube_annotate(ak->k, &root, KUBE_ANN_NOTICE, n->annotation, err, errlen);
    if (r != KUBE_OK)
        return act_kube_map(r);
    /* Our own annotation changed the object's resourceVersion: an action in this same cycle
       (notice period 0) carries the new one, which still tells any other change apart. */
    struct kube_chain *chain = t->priv;
    const char *rv = kube_last_resource_version(ak->k);
    if (chain && chain->n > 0 && rv) {
        free(chain->obj[chain->n - 1].resource_version);
        chain->obj[chain->n - 1].resource_version = xstrdup(rv);
    }
    char eerr[512] = "";
    enum kube_result er = kube_post_event(ak->k, &root, "IdleGPUReclaimNotice", n->message,
                                          "Warning", "Notice", eerr, sizeof(eerr));
    if (er != KUBE_OK && er != KUBE_CANCELLED)
        log_warn("cannot post the notice event on %s '%s/%s': %s", root.kind, root.ns, root.name,
                 eerr);
    return ACT_OK;
}

static enum act_result act_kube_record(struct act_backend *b, const struct act_target *t,
                                       const struct act_notice *n, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    struct kube_ref root = act_kube_ref(&t->chain[t->nchain - 1]);
    return act_kube_map(kube_annotate(ak->k, &root, KUBE_ANN_NOTICE, n->annotation, err, errlen));
}

static enum act_result act_kube_withdraw(struct act_backend *b, const struct ledger_entry *e,
                                         const char *why, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    if (!e->root_kind[0])
        return ACT_OK;
    struct kube_ref root = {e->root_api, e->root_kind, e->root_ns, e->root_name, e->root_uid};
    enum kube_result r = kube_annotate(ak->k, &root, KUBE_ANN_NOTICE, NULL, err, errlen);
    /* gone or replaced: there is no annotation left to remove, nor anyone to tell */
    if (r == KUBE_NOT_FOUND || r == KUBE_CONFLICT)
        return ACT_OK;
    if (r == KUBE_OK && why) {
        /* Best effort, like the notice's own Event: the annotation is what counts. */
        char *msg = xasprintf("idle GPU reclaim withdrawn: %s", why);
        char eerr[512] = "";
        enum kube_result er = kube_post_event(ak->k, &root, "IdleGPUReclaimSpared", msg, "Normal",
                                              "Spare", eerr, sizeof(eerr));
        if (er != KUBE_OK && er != KUBE_CANCELLED)
            log_warn("cannot post the spare event on %s '%s/%s': %s", root.kind, root.ns, root.name,
                     eerr);
        free(msg);
    }
    return act_kube_map(r);
}

static enum act_result act_kube_act(struct act_backend *b, const struct act_target *t,
                                    enum rule_action action, long *api_status, char *err,
                                    size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    const struct kube_chain *chain = t->priv;
    struct kube_ref root = act_kube_ref(&t->chain[t->nchain - 1]);
    const struct act_obj *pod = &t->chain[0];
    enum kube_result r;
    int64_t previous = 0;
    const char *what;
    switch (action) {
    case ACTION_SCALE_TO_ZERO:
        r = kube_scale_to_zero(ak->k, &root,
                               chain ? chain->obj[chain->n - 1].resource_version : NULL, &previous,
                               err, errlen);
        what = "ScaleToZero";
        break;
    case ACTION_SUSPEND:
        if (!chain || strcmp(root.kind, "Job") != 0) {
            snprintf(err, errlen, "cannot suspend %s '%s/%s': only Jobs can be suspended",
                     root.kind, root.ns, root.name);
            return ACT_UNSUPPORTED;
        }
        r = kube_suspend(ak->k, &chain->obj[chain->n - 1], err, errlen);
        what = "Suspend";
        break;
    case ACTION_EVICT:
        r = kube_evict(ak->k, pod->ns, pod->name, pod->uid, err, errlen);
        what = "Evict";
        break;
    case ACTION_DELETE:
        r = kube_delete(ak->k, &root, "Background",
                        chain ? chain->obj[chain->n - 1].resource_version : NULL, err, errlen);
        what = "Delete";
        break;
    default:
        snprintf(err, errlen, "action '%s' does not apply to Kubernetes workloads",
                 rules_action_name(action));
        return ACT_UNSUPPORTED;
    }
    /* The action's own status (201 for an eviction), before the event call replaces it; 0
       when the action was refused before any request. */
    *api_status = kube_last_status(ak->k);
    if (r == KUBE_OK) {
        char *msg = action == ACTION_SCALE_TO_ZERO
                        ? xasprintf("idle GPU reclaimed: scaled from %lld to 0 replicas "
                                    "(previous count in annotation %s)",
                                    (long long)previous, KUBE_ANN_REPLICAS_BEFORE)
                        : xasprintf("idle GPU reclaimed: %s", rules_action_name(action));
        char eerr[512] = "";
        /* an evicted pod's event goes to its root owner, which outlives it */
        enum kube_result er = kube_post_event(ak->k, &root, "IdleGPUReclaimed", msg, "Warning",
                                              what, eerr, sizeof(eerr));
        if (er == KUBE_CANCELLED)
            log_info("not posting the event on %s '%s/%s': the enforcer is stopping", root.kind,
                     root.ns, root.name);
        else if (er != KUBE_OK)
            log_warn("cannot post the event on %s '%s/%s': %s", root.kind, root.ns, root.name,
                     eerr);
        free(msg);
    }
    return act_kube_map(r);
}

/*
 * The Prometheus pending signal (kube-state-metrics) counts every unschedulable pod, gated
 * and Kueue-held ones included, and cannot say why it is pending; the scheduler's
 * PodScheduled message can ("Insufficient amd.com/gpu", docs/decision-semantics.md §9.3).
 */
enum act_result act_kube_confirm_pressure(struct act_backend *b, const struct decision_rec *d,
                                          const struct act_target *t, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    if (!d->resource[0]) {
        snprintf(err, errlen, "no GPU resource known for the workload: cannot confirm pressure");
        return ACT_RETRY;
    }
    size_t count = 0;
    int64_t requested = 0;
    enum kube_result r =
        kube_pending_for_resource(ak->k, d->resource, &count, &requested, err, errlen);
    if (r != KUBE_OK) {
        /* ACT_RETRY would read as "nothing waits": a throttled list proves nothing. */
        enum act_result ar = act_kube_map(r);
        return ar == ACT_RETRY ? ACT_ERROR : ar;
    }
    if (count > 0) {
        log_debug("GPU pressure confirmed: %zu Pending pods wait for %lld '%s'", count,
                  (long long)requested, d->resource);
        return ACT_OK;
    }
    /*
     * A Kueue job waiting for quota is suspended and has no pods, so no pod is unschedulable:
     * its Workload's QuotaReserved condition is the demand (docs/decision-semantics.md §9.3).
     * The candidate's own Workload never counts: its uids are skipped.
     */
    const char *skip[ACT_CHAIN_MAX];
    size_t nskip = 0;
    for (size_t i = 0; t && i < t->nchain && i < ACT_CHAIN_MAX; i++)
        skip[nskip++] = t->chain[i].uid;
    r = kube_kueue_waiting_for_resource(ak->k, d->resource, skip, nskip, &count, err, errlen);
    if (r == KUBE_NOT_FOUND) {
        snprintf(err, errlen,
                 "no Pending pod is unschedulable for lack of '%s' (the API serves no Kueue "
                 "Workloads)",
                 d->resource);
        return ACT_RETRY;
    }
    if (r != KUBE_OK) {
        enum act_result ar = act_kube_map(r);
        return ar == ACT_RETRY ? ACT_ERROR : ar;
    }
    if (count == 0) {
        snprintf(err, errlen,
                 "no Pending pod is unschedulable for lack of '%s' and no Kueue Workload waits "
                 "for its quota",
                 d->resource);
        return ACT_RETRY;
    }
    log_debug("GPU pressure confirmed: %zu Kueue Workloads wait for quota of '%s'", count,
              d->resource);
    return ACT_OK;
}

static void act_kube_free(struct act_backend *b)
{
    struct act_kube *ak = act_kube_of(b);
    kube_free(ak->k);
    free(ak);
}

struct act_backend *act_kube_new(struct kube *k)
{
    struct act_kube *ak = xcalloc(1, sizeof(*ak));
    ak->base = (struct act_backend){
        .name = "kubernetes",
        .resolve = act_kube_resolve,
        .notice = act_kube_notice,
        .withdraw = act_kube_withdraw,
        .record = act_kube_record,
        .act = act_kube_act,
        .target_free = act_kube_target_free,
        .free = act_kube_free,
    };
    ak->k = k;
    return &ak->base;
}
