/*
 * Action backend for Kubernetes workloads (act.h, kube.h, kinds.h).
 *
 * A decision names a pod by its namespace and pod labels. The pod is read and its controller
 * owner chain walked upwards through objects of any kind (kube_owner_walk, API discovery),
 * because acting on a controlled object only gets it recreated: the action goes to the
 * topmost object reached, as the workload-kinds table says (docs/workload-kinds.md). The
 * walk climbs every controller reference except into an owner whose row does not reconcile
 * its children (a CronJob above a Job: a schedule, which never restores a run), and climbs
 * through owners the table does not know, so that a known owner above them is found; when
 * the topmost object reached is a kind the table does not know, nothing is done and the
 * reason names the kind and how to add it, as acting below an unknown controller would be
 * undone by it or, worse, fight it. A rule action the chosen kind has no way for (KIND_NONE),
 * or whose `requires` does not hold, keeps the workload with its own reason: never another
 * action instead. Each way is carried out from the table's data: KIND_SCALE through /scale
 * with the replicas-before annotation, KIND_PATCH as a merge patch (for an object Kueue
 * manages, label kueue.x-k8s.io/queue-name, its Workload is deactivated instead: Kueue owns
 * the suspension of what it admits), KIND_ANNOTATE as a merge patch of the annotation,
 * KIND_DELETE and KIND_EVICT (always the pod, with the Pod row's way). Every write names the
 * object by uid and by the resourceVersion read in this cycle.
 *
 * Notices are an annotation (ANNOT_NOTICE) on the object acted on, which is required, and
 * a Warning Event on it, which is best effort: without RBAC for events the annotation still
 * tells the owner, and failing the notice for it would block every action. With
 * --kube.confirm-pressure the engine also asks this backend, before acting on a
 * DuringGPUPressure decision, whether the scheduler really leaves a pod pending for lack of the
 * workload's GPU resource, or Kueue a Workload waiting for its quota
 * (act_kube_confirm_pressure).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "annot.h"
#include "kinds.h"
#include "kube.h"
#include "log.h"
#include "pressure.h"
#include "restore.h"
#include "rfc3339.h"
#include "util.h"

struct act_kube {
    struct act_backend base; /* first: the engine holds a pointer to it */
    struct kube *k;
    const struct kinds *kinds; /* NULL: kinds_builtin() */
    /* What the last successful action did, for the record written after it (act_kube_record):
       `restore` undoes the action from that record on the object. */
    struct restore_record last;
};

/* t->priv: the chain read, up to the object acted on, and how that object is stopped. */
struct act_kube_target {
    struct kube_chain chain;
    const struct kind_def *def; /* the row of chain.obj[n - 1] */
    const struct kind_way *way; /* the way of the rule's action (the Pod row's for evict) */
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
    const char *l = kube_label(o, ANNOT_EXEMPT);
    const char *a = kube_annotation(o, ANNOT_EXEMPT);
    return (l && strcmp(l, "true") == 0) || (a && strcmp(a, "true") == 0);
}

static void act_kube_target_free(struct act_backend *b, struct act_target *t)
{
    (void)b;
    struct act_kube_target *kt = t->priv;
    if (kt) {
        kube_chain_free(&kt->chain);
        free(kt);
    }
    act_target_clear(t);
}

void act_kube_set_kinds(struct act_backend *b, const struct kinds *t)
{
    act_kube_of(b)->kinds = t;
}

/* The walk stops below an owner whose row says it does not reconcile its children. */
static bool act_kube_climb(void *arg, const struct kube_obj *child,
                           const struct kube_owner_ref *owner)
{
    (void)child;
    const struct kind_def *def = kinds_find(arg, owner->api_version, owner->kind);
    return !def || def->reconciles;
}

/* "Notebook ml/alice" */
static char *act_kube_obj_name(const struct kube_obj *o)
{
    if (o->ref.ns && o->ref.ns[0])
        return xasprintf("%s %s/%s", o->ref.kind, o->ref.ns, o->ref.name);
    return xasprintf("%s %s", o->ref.kind, o->ref.name);
}

/* What carrying out `way` on `o` does, in words (act_target.how). */
static char *act_kube_how(const struct kind_way *way, const struct kube_obj *o, bool kueue)
{
    char *name = act_kube_obj_name(o), *how;
    switch (way->method) {
    case KIND_SCALE:
        how = xasprintf("scale %s to 0", name);
        break;
    case KIND_PATCH:
        how = kueue ? xasprintf("deactivate the Kueue workload of %s", name)
                    : xasprintf("patch %s %s", name, way->patch ? way->patch : "{}");
        break;
    case KIND_ANNOTATE:
        how = way->value ? xasprintf("annotate %s %s=%s", name, way->key, way->value)
                         : xasprintf("annotate %s %s", name, way->key);
        break;
    case KIND_DELETE:
        how = xasprintf("delete %s", name);
        break;
    case KIND_EVICT:
        how = xasprintf("evict %s", name);
        break;
    case KIND_COMMAND:
        how = xasprintf("create a %s/%s %s %s for %s", way->command.group, way->command.version,
                        way->command.kind, way->command.stop, name);
        break;
    default:
        how = xasprintf("nothing on %s", name);
        break;
    }
    free(name);
    return how;
}

/*
 * Choose the object acted on and its way for `action` in the chain read: its top. 0, or -1
 * with the reason the workload is kept in err.
 */
static int act_kube_choose(const struct kinds *kinds, struct act_kube_target *kt,
                           enum rule_action action, char *err, size_t errlen)
{
    const struct kube_chain *ch = &kt->chain;
    const struct kube_obj *top = &ch->obj[ch->n - 1];
    const struct kube_obj *pod = &ch->obj[0];
    kt->def = kinds_find(kinds, top->ref.api_version, top->ref.kind);
    if (!kt->def) {
        /* Below an unknown controller any action would be undone by it, or fight it. */
        char *name = act_kube_obj_name(top);
        snprintf(err, errlen,
                 "kept: the top owner %s (apiVersion '%s') of pod '%s/%s' is a kind gpureclaim "
                 "does not know, and acting below it would be undone by its controller; to "
                 "reclaim it, %s",
                 name, top->ref.api_version, pod->ref.ns ? pod->ref.ns : "", pod->ref.name,
                 KINDS_HOW_TO_ADD);
        free(name);
        return -1;
    }
    const struct kind_def *wdef = kt->def;
    const struct kube_obj *on = top;
    if (action == ACTION_EVICT) {
        /* An eviction is of the pod, whatever owns it. */
        wdef = kinds_find(kinds, pod->ref.api_version, pod->ref.kind);
        on = pod;
    }
    if (action < 0 || action >= KINDS_NACTIONS || !wdef || wdef->ways[action].method == KIND_NONE) {
        char *name = act_kube_obj_name(on);
        snprintf(err, errlen,
                 "kept: %s cannot be reclaimed by action '%s': the kinds table (%s) has no way "
                 "for it on kind %s; use an action the kind supports",
                 name, rules_action_name(action), wdef ? wdef->source : "no row", on->ref.kind);
        free(name);
        return -1;
    }
    kt->way = &wdef->ways[action];
    char why[256] = "";
    int ok = on->raw ? kinds_can_act(kt->way, on->raw, on->raw_len, why, sizeof(why)) : 1;
    if (ok <= 0) {
        char *name = act_kube_obj_name(on);
        snprintf(err, errlen, "kept: %s cannot be %s now: %s", name,
                 kinds_method_name(kt->way->method), why[0] ? why : "unreadable object");
        free(name);
        return -1;
    }
    return 0;
}

/* How the owner brings the workload back after acting on `top` by `way` (restore.h). */
static char *act_kube_hint(const struct kinds *kinds, const struct kind_way *way,
                           const struct kube_obj *top, bool kueue)
{
    if (kueue && way->method == KIND_PATCH) /* Kueue owns spec.suspend: its Workload is used */
        return xasprintf("to bring it back: set spec.active to true on the Kueue Workload of "
                         "%s %s/%s",
                         top->ref.kind, top->ref.ns, top->ref.name);
    if (way->method == KIND_COMMAND) {
        /* `restore` takes a bare kind as Kubernetes' own (a Job is batch's): name its group */
        const struct kind_def *d = kinds_find(kinds, top->ref.api_version, top->ref.kind);
        char *kind =
            d && d->group[0] ? xasprintf("%s.%s", d->kind, d->group) : xstrdup(top->ref.kind);
        char *h = restore_hint(way->method, kind, top->ref.ns, top->ref.name, way->command.kind,
                               way->command.undo);
        free(kind);
        return h;
    }
    return restore_hint(way->method, top->ref.kind, top->ref.ns, top->ref.name, way->key,
                        way->unpatch);
}

/*
 * Remember what a successful action on `root` (as read before it) did by `way`, for the record
 * written right after it (act_kube_record): the replicas before a scale, the undo patch, the
 * stop annotation and the exact value written, and the object as the action left it: the
 * digest of its spec (`digest`, restore_spec_digest, NULL when it could not be read back) and
 * its metadata.generation (`generation`, as answered; 0 unknown). `restore` compares the
 * digest, not the generation: kube-apiserver moves a Deployment's generation for an annotation
 * too (restore.h), so the record's own write would read as a change. Without a digest the
 * record falls back to the generation, which `restore` then compares as older records are.
 * Nothing is recorded when there is nothing to undo (no way back, already at 0 or already
 * stopped before).
 */
static void act_kube_note_acted(struct act_kube *ak, const struct kind_way *way,
                                const struct kube_obj *root, bool changed, int64_t previous,
                                const char *value, const char *digest, int64_t generation)
{
    const char *root_uid = root->ref.uid;
    restore_record_free(&ak->last);
    if (!changed || !root_uid)
        return;
    if (generation > 0) {
        ak->last.has_generation = true;
        ak->last.generation = generation;
    } else if (root->generation > 0) {
        /* A command changes the object's status, not its spec (its controller does the rest). */
        ak->last.has_generation = true;
        ak->last.generation =
            root->generation + (way->method == KIND_SCALE || way->method == KIND_PATCH ? 1 : 0);
    }
    if (digest && *digest)
        ak->last.spec_digest = xstrdup(digest);
    switch (way->method) {
    case KIND_SCALE:
        if (previous <= 0)
            return;
        ak->last.replicas_before = previous;
        break;
    case KIND_PATCH:
        if (!way->unpatch)
            return;
        ak->last.undo = xstrdup(way->unpatch);
        break;
    case KIND_ANNOTATE:
        if (!way->key || !value)
            return;
        ak->last.key = xstrdup(way->key);
        ak->last.value = xstrdup(value);
        break;
    case KIND_COMMAND:
        break; /* restore creates the row's undo command */
    default:
        return;
    }
    ak->last.method = way->method;
    ak->last.uid = xstrdup(root_uid);
}

static enum act_result act_kube_resolve(struct act_backend *b, const struct decision_rec *d,
                                        struct act_target *t, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    const struct kinds *kinds = ak->kinds ? ak->kinds : kinds_builtin();
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
    struct act_kube_target *kt = xcalloc(1, sizeof(*kt));
    r = kube_owner_walk(ak->k, &pod, act_kube_climb, (void *)kinds, &kt->chain, err, errlen);
    kube_obj_free(&pod);
    if (r == KUBE_UNSUPPORTED) {
        /* An owner of a kind the API does not serve: nothing above it can be known. */
        char why[768];
        snprintf(why, sizeof(why), "kept: %s", err);
        snprintf(err, errlen, "%s", why);
    }
    if (r != KUBE_OK || kt->chain.n == 0 || kt->chain.n > ACT_CHAIN_MAX) {
        if (r == KUBE_OK)
            snprintf(err, errlen, "owner chain of pod '%s/%s' is too long", ns, name);
        kube_chain_free(&kt->chain);
        free(kt);
        return r == KUBE_OK ? ACT_ERROR : act_kube_map(r);
    }
    const struct kube_chain *chain = &kt->chain;
    enum rule_action action = d->rule ? d->rule->action : ACTION_DELETE;
    bool chosen = act_kube_choose(kinds, kt, action, err, errlen) == 0;
    memset(t, 0, sizeof(*t));
    t->restarted = NAN;
    for (size_t i = 0; i < chain->n; i++) {
        const struct kube_obj *o = &chain->obj[i];
        const char *keep = kube_annotation(o, ANNOT_KEEP_UNTIL);
        t->chain[i] = (struct act_obj){act_kube_dup(o->ref.api_version),
                                       act_kube_dup(o->ref.kind),
                                       act_kube_dup(o->ref.ns ? o->ref.ns : ns),
                                       act_kube_dup(o->ref.name),
                                       act_kube_dup(o->ref.uid),
                                       keep ? xstrdup(keep) : NULL};
        t->exempt |= act_kube_exempt(o);
        t->terminating |= o->deletion_timestamp != NULL;
        /* Brought back by `restore`: the latest time counts; one that cannot be read counts
           as a restart that cannot be ruled out (act_young keeps it). */
        const char *restored = kube_annotation(o, ANNOT_RESTORED_AT);
        double at;
        char rerr[128];
        if (restored && rfc3339_parse(restored, &at, rerr, sizeof(rerr)) < 0)
            at = INFINITY;
        if (restored && !(t->restarted >= at))
            t->restarted = at;
    }
    t->nchain = chain->n;
    if (!chosen) {
        /* Exempt anywhere in the chain is the first reason, as for a kind that can act. */
        if (t->exempt) {
            t->priv = kt;
            kt->way = NULL;
            return ACT_OK;
        }
        act_target_clear(t);
        kube_chain_free(&kt->chain);
        free(kt);
        return ACT_UNSUPPORTED;
    }
    t->running = chain->obj[0].phase && strcmp(chain->obj[0].phase, "Running") == 0;
    /* The pod's own age: a pod re-created under the same name is younger than its series. */
    char perr[128];
    const char *created = chain->obj[0].creation_timestamp;
    if (!created || rfc3339_parse(created, &t->created, perr, sizeof(perr)) < 0)
        t->created = NAN;
    const char *notice = kube_annotation(&chain->obj[chain->n - 1], ANNOT_NOTICE);
    t->notice = notice && *notice ? xstrdup(notice) : NULL;
    t->how =
        act_kube_how(kt->way, action == ACTION_EVICT ? &chain->obj[0] : &chain->obj[chain->n - 1],
                     chain->kueue && kt->way->method == KIND_PATCH);
    if (action != ACTION_EVICT)
        t->restore_hint = act_kube_hint(kinds, kt->way, &chain->obj[chain->n - 1], chain->kueue);
    t->priv = kt;
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
    enum kube_result r = kube_annotate(ak->k, &root, ANNOT_NOTICE, n->annotation, err, errlen);
    if (r != KUBE_OK)
        return act_kube_map(r);
    /* Our own annotation changed the object's resourceVersion: an action in this same cycle
       (notice period 0) carries the new one, but only when the answer shows the spec as read:
       the annotation has no resourceVersion precondition, so a change someone else made since
       the read is in the answer too, and must still fail the action's precondition. */
    struct act_kube_target *kt = t->priv;
    const char *rv = kube_last_resource_version(ak->k);
    size_t alen = 0;
    const char *answer = kube_last_answer(ak->k, &alen);
    char was[RESTORE_DIGEST_LEN] = "", is[RESTORE_DIGEST_LEN] = "", derr[160];
    const struct kube_obj *read = kt && kt->chain.n > 0 ? &kt->chain.obj[kt->chain.n - 1] : NULL;
    bool same = read && read->raw && answer &&
                restore_spec_digest(read->raw, read->raw_len, was, derr, sizeof(derr)) == 0 &&
                restore_spec_digest(answer, alen, is, derr, sizeof(derr)) == 0 &&
                strcmp(was, is) == 0;
    if (kt && kt->chain.n > 0 && rv && same) {
        free(kt->chain.obj[kt->chain.n - 1].resource_version);
        kt->chain.obj[kt->chain.n - 1].resource_version = xstrdup(rv);
    }
    char eerr[512] = "";
    enum kube_result er = kube_post_event(ak->k, &root, "IdleGPUReclaimNotice", n->message,
                                          "Warning", "Notice", eerr, sizeof(eerr));
    if (er != KUBE_OK && er != KUBE_CANCELLED)
        log_warn("cannot post the notice event on %s '%s/%s': %s", root.kind, root.ns, root.name,
                 eerr);
    return ACT_OK;
}

/*
 * actedAt on the notice, and with it the `acted` record of the action this backend just made
 * on that very object (restore.h): how to undo it, and what the object looked like after it,
 * so that `restore` can tell a change made since.
 */
static enum act_result act_kube_record(struct act_backend *b, const struct act_target *t,
                                       const struct act_notice *n, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    struct kube_ref root = act_kube_ref(&t->chain[t->nchain - 1]);
    char *with = NULL;
    if (ak->last.method != KIND_NONE && ak->last.uid && strcmp(ak->last.uid, root.uid) == 0)
        with = restore_record_add(n->annotation, &ak->last);
    restore_record_free(&ak->last);
    enum kube_result r =
        kube_annotate(ak->k, &root, ANNOT_NOTICE, with ? with : n->annotation, err, errlen);
    free(with);
    return act_kube_map(r);
}

static enum act_result act_kube_withdraw(struct act_backend *b, const struct ledger_entry *e,
                                         const char *why, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    if (!e->root_kind[0])
        return ACT_OK;
    struct kube_ref root = {e->root_api, e->root_kind, e->root_ns, e->root_name, e->root_uid};
    enum kube_result r = kube_annotate(ak->k, &root, ANNOT_NOTICE, NULL, err, errlen);
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

/*
 * Create `way`'s command about `o` (its undo command when `undo` is set), as the platform's
 * CLI does. The platform's controller carries it out later and deletes it: the object's status
 * says when it has (kinds_is_stopped). A command of ours it has not carried out yet is still
 * there under the same name, so a second one is 409 AlreadyExists (KUBE_CONFLICT), said as such.
 */
enum kube_result act_kube_command(struct kube *k, const struct kind_way *way,
                                  const struct kube_obj *o, bool undo, char *err, size_t errlen)
{
    char *name = NULL;
    char *body = kinds_command_body(way, o->ref.api_version, o->ref.kind, o->ref.ns, o->ref.name,
                                    o->ref.uid, undo, &name);
    if (!body) {
        snprintf(err, errlen, "cannot make a command for %s '%s': no command way, or no uid",
                 o->ref.kind, o->ref.name);
        return KUBE_UNSUPPORTED;
    }
    const struct kind_command *c = &way->command;
    char *path =
        xasprintf("/apis/%s/%s/namespaces/%s/%s", c->group, c->version, o->ref.ns, c->resource);
    char *what = xasprintf("create %s %s '%s' for %s '%s/%s'", c->kind, undo ? c->undo : c->stop,
                           name, o->ref.kind, o->ref.ns, o->ref.name);
    long status = 0;
    char *resp = NULL;
    size_t rlen = 0;
    enum kube_result r =
        kube_request(k, "POST", path, body, what, &status, &resp, &rlen, err, errlen);
    if (r == KUBE_CONFLICT) {
        char why[512];
        snprintf(why, sizeof(why), "%s", err);
        snprintf(err, errlen,
                 "%s: %s %s '%s' is still there, not carried out: is the %s controller running "
                 "and taking commands? (%s)",
                 what, c->kind, undo ? c->undo : c->stop, name, o->ref.kind, why);
    }
    free(resp);
    free(what);
    free(path);
    free(body);
    free(name);
    return r;
}

/* Carry out kt->way on the chosen object (the pod for evict). */
static enum kube_result act_kube_do(struct act_kube *ak, const struct act_kube_target *kt,
                                    int64_t *previous, char *value, size_t valuelen, char *err,
                                    size_t errlen)
{
    const struct kube_chain *ch = &kt->chain;
    const struct kube_obj *top = &ch->obj[ch->n - 1];
    const struct kube_obj *pod = &ch->obj[0];
    const struct kind_way *way = kt->way;
    /* Already stopped this way (another replica acted, or the user did): nothing to write,
       and rewriting a stop annotation would move its time. */
    char serr[128];
    if (way->method != KIND_SCALE && top->raw &&
        kinds_is_stopped(way, top->raw, top->raw_len, serr, sizeof(serr)) == 1) {
        *previous = -1; /* nothing written: nothing of ours to undo */
        return KUBE_OK;
    }
    switch (way->method) {
    case KIND_SCALE:
        return kube_scale_to_zero(ak->k, &top->ref, top->resource_version, previous, err, errlen);
    case KIND_PATCH:
        if (ch->kueue)
            return kube_kueue_deactivate(ak->k, top, err, errlen);
        return kube_patch(ak->k, &top->ref, top->resource_version, way->patch, err, errlen);
    case KIND_ANNOTATE: {
        char now[40];
        rfc3339_format(now, sizeof(now), (double)time(NULL), RFC3339_SEC);
        snprintf(value, valuelen, "%s", way->value ? way->value : now);
        char *body = kube_body_annotate(NULL, way->key, value);
        enum kube_result r = kube_patch(ak->k, &top->ref, top->resource_version, body, err, errlen);
        free(body);
        return r;
    }
    case KIND_DELETE:
        return kube_delete(ak->k, &top->ref, "Background", top->resource_version, err, errlen);
    case KIND_EVICT:
        return kube_evict(ak->k, pod->ref.ns, pod->ref.name, pod->ref.uid, err, errlen);
    case KIND_COMMAND:
        return act_kube_command(ak->k, way, top, false, err, errlen);
    default:
        snprintf(err, errlen, "no way to act on %s '%s'", top->ref.kind, top->ref.name);
        return KUBE_UNSUPPORTED;
    }
}

/*
 * A stop patch or annotation the API accepted (2xx) stops nothing when the stored object lacks
 * what was written: a structural CRD prunes a field its installed release does not have (a
 * RayService spec.suspend before KubeRay 1.7.0) and answers 200 all the same. The answer is
 * the object as stored; unless kinds_is_stopped says it is stopped this way, the action is an
 * error (retried next cycle, never recorded as acted), with a message that names the kind, the
 * way and the likely cause. (An annotation that is stored but ignored, KServe before 0.15.1
 * with serving.kserve.io/stop, cannot be told from the answer.)
 */
static enum kube_result act_kube_check_stopped(struct act_kube *ak, const struct kind_way *way,
                                               const struct kube_obj *top, char *err, size_t errlen)
{
    size_t len = 0;
    const char *answer = kube_last_answer(ak->k, &len);
    char serr[160] = "";
    int stopped = answer ? kinds_is_stopped(way, answer, len, serr, sizeof(serr)) : -1;
    if (stopped == 1)
        return KUBE_OK;
    char *name = act_kube_obj_name(top);
    if (stopped < 0)
        snprintf(err, errlen,
                 "%s accepted the %s way but its answer cannot be read (%s): not counted as "
                 "stopped",
                 name, kinds_method_name(way->method), serr[0] ? serr : "no answer");
    else if (way->method == KIND_PATCH)
        snprintf(err, errlen,
                 "%s accepted the patch way %s but is not stopped: the API dropped the field, "
                 "most likely because the %s CRD installed in this cluster has no such field "
                 "(an older release of its operator); not counted as acted",
                 name, way->patch ? way->patch : "{}", top->ref.kind);
    else
        snprintf(err, errlen,
                 "%s accepted the annotate way %s but does not carry it: the API dropped the "
                 "annotation, most likely a webhook or controller of kind %s removes it; not "
                 "counted as acted",
                 name, way->key ? way->key : "", top->ref.kind);
    free(name);
    return KUBE_ERROR;
}

/*
 * The object `top` as the action just left it: the digest of its spec into `digest` ("" when it
 * cannot be known) and its generation (0 unknown). A patch or an annotation is answered with
 * the object as stored. A /scale is answered with a Scale, so the object is read again, and
 * taken only at the generation the scale left (kube_last_generation): a later generation is a
 * spec changed by someone else in between, which the record must not take for ours. A
 * command changes the object's status only: the object as read is as it left it.
 */
static int64_t act_kube_left(struct act_kube *ak, const struct kind_way *way,
                             const struct kube_obj *top, int64_t previous,
                             char digest[RESTORE_DIGEST_LEN])
{
    char derr[160];
    digest[0] = '\0';
    if (previous < 0)
        return 0;
    switch (way->method) {
    case KIND_PATCH:
    case KIND_ANNOTATE: {
        size_t len = 0;
        const char *answer = kube_last_answer(ak->k, &len);
        int64_t gen = kube_last_generation(ak->k);
        if (!answer || restore_spec_digest(answer, len, digest, derr, sizeof(derr)) < 0)
            return 0;
        return gen;
    }
    case KIND_SCALE: {
        int64_t want = kube_last_generation(ak->k);
        struct kube_obj now = {0};
        char gerr[512];
        enum kube_result r = kube_get(ak->k, &top->ref, &now, gerr, sizeof(gerr));
        if (r != KUBE_OK || !now.raw || want <= 0 || now.generation != want ||
            (top->ref.uid && (!now.ref.uid || strcmp(now.ref.uid, top->ref.uid) != 0))) {
            log_warn("cannot read back %s '%s/%s' as the scale left it (generation %lld, "
                     "expected %lld%s%s): its record falls back to the generation",
                     top->ref.kind, top->ref.ns ? top->ref.ns : "", top->ref.name,
                     (long long)now.generation, (long long)want, r != KUBE_OK ? ": " : "",
                     r != KUBE_OK ? gerr : "");
            kube_obj_free(&now);
            return 0;
        }
        if (restore_spec_digest(now.raw, now.raw_len, digest, derr, sizeof(derr)) < 0)
            digest[0] = '\0';
        kube_obj_free(&now);
        return want;
    }
    case KIND_COMMAND:
        if (top->raw && restore_spec_digest(top->raw, top->raw_len, digest, derr, sizeof(derr)) < 0)
            digest[0] = '\0';
        return top->generation;
    default:
        return 0;
    }
}

/* Attempts of a write refused with 409 Conflict, the first included (act_kube_reread). */
#define ACT_KUBE_ATTEMPTS 5

/*
 * After a write of kt->way on the object acted on was refused with 409 Conflict: read it again
 * and say whether the write may be made again with its new resourceVersion. A controller
 * writes an object's status at any time (the Deployment and StatefulSet controllers do at once
 * after a change of it), and a write that carried the resourceVersion read before is refused
 * then although nothing the decision rests on changed; a faithful client re-reads and retries
 * (client-go's retry.RetryOnConflict). The decision rests on the object that was read: so it
 * must still be the same one (uid), not terminating, not exempt, its spec unchanged (the
 * digest of all but metadata and status, restore_spec_digest) and the way still possible
 * (kinds_can_act). Then the chain's top is replaced by what was read and KUBE_OK returned;
 * otherwise the result to report, with the reason it is kept in err (a replacement or a
 * changed spec is KUBE_CONFLICT: never retried).
 */
static enum kube_result act_kube_reread(struct act_kube *ak, struct act_kube_target *kt, char *err,
                                        size_t errlen)
{
    struct kube_obj *top = &kt->chain.obj[kt->chain.n - 1];
    char *name = act_kube_obj_name(top);
    struct kube_obj now = {0};
    char gerr[512] = "", was[RESTORE_DIGEST_LEN] = "", is[RESTORE_DIGEST_LEN] = "", derr[160];
    char why[256] = "";
    enum kube_result r = kube_get(ak->k, &top->ref, &now, gerr, sizeof(gerr));
    if (r != KUBE_OK) {
        snprintf(err, errlen, "%s was changed by another writer (409) and cannot be read again: %s",
                 name, gerr);
    } else if (!now.ref.uid || !top->ref.uid || strcmp(now.ref.uid, top->ref.uid) != 0) {
        snprintf(err, errlen, "kept: %s was replaced since it was read (uid '%s', read '%s')", name,
                 now.ref.uid ? now.ref.uid : "", top->ref.uid ? top->ref.uid : "");
        r = KUBE_CONFLICT;
    } else if (now.deletion_timestamp || act_kube_exempt(&now)) {
        snprintf(err, errlen, "kept: %s changed since it was read: it is %s now", name,
                 now.deletion_timestamp ? "terminating" : "labelled " ANNOT_EXEMPT "=true");
        r = KUBE_CONFLICT;
    } else if (!top->raw || !now.raw ||
               restore_spec_digest(top->raw, top->raw_len, was, derr, sizeof(derr)) < 0 ||
               restore_spec_digest(now.raw, now.raw_len, is, derr, sizeof(derr)) < 0) {
        snprintf(err, errlen,
                 "kept: %s was changed by another writer (409) and whether its spec "
                 "changed cannot be told",
                 name);
        r = KUBE_CONFLICT;
    } else if (strcmp(was, is) != 0) {
        snprintf(err, errlen,
                 "kept: %s changed since it was read: its spec is not the one the decision was "
                 "made on (someone else changed it)",
                 name);
        r = KUBE_CONFLICT;
    } else if (kinds_can_act(kt->way, now.raw, now.raw_len, why, sizeof(why)) <= 0) {
        snprintf(err, errlen, "kept: %s cannot be %s now: %s", name,
                 kinds_method_name(kt->way->method), why[0] ? why : "unreadable object");
        r = KUBE_CONFLICT;
    }
    if (r == KUBE_OK) {
        kube_obj_free(top);
        *top = now;
    } else {
        kube_obj_free(&now);
    }
    free(name);
    return r;
}

/* The ways whose writes carry the resourceVersion read, and may be made again after a 409. */
static bool act_kube_may_retry(const struct act_kube_target *kt, enum rule_action action)
{
    switch (kt->way->method) {
    case KIND_SCALE:
    case KIND_ANNOTATE:
    case KIND_DELETE:
        return action != ACTION_EVICT;
    case KIND_PATCH:
        return action != ACTION_EVICT && !kt->chain.kueue;
    default:
        return false; /* evict: uid only; a command's 409 is AlreadyExists */
    }
}

static enum act_result act_kube_act(struct act_backend *b, const struct act_target *t,
                                    enum rule_action action, long *api_status, char *err,
                                    size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    const struct act_kube_target *kt = t->priv;
    struct kube_ref root = act_kube_ref(&t->chain[t->nchain - 1]);
    static const char *const event_action[KINDS_NACTIONS] = {
        [ACTION_SCALE_TO_ZERO] = "ScaleToZero",
        [ACTION_SUSPEND] = "Suspend",
        [ACTION_EVICT] = "Evict",
        [ACTION_DELETE] = "Delete",
    };
    if (!kt || !kt->way || action < 0 || action >= KINDS_NACTIONS || !event_action[action]) {
        snprintf(err, errlen, "action '%s' does not apply to %s '%s/%s'", rules_action_name(action),
                 root.kind, root.ns, root.name);
        return ACT_UNSUPPORTED;
    }
    int64_t previous = 0;
    char value[128] = "";
    *api_status = 0;
    restore_record_free(&ak->last);
    enum kube_result r = act_kube_do(ak, kt, &previous, value, sizeof(value), err, errlen);
    for (int attempt = 2;
         r == KUBE_CONFLICT && act_kube_may_retry(kt, action) && attempt <= ACT_KUBE_ATTEMPTS;
         attempt++) {
        char conflict[512], why[768];
        snprintf(conflict, sizeof(conflict), "%s", err);
        long status = kube_last_status(ak->k);
        r = act_kube_reread(ak, (struct act_kube_target *)kt, why, sizeof(why));
        if (r != KUBE_OK) {
            /* the audit keeps the write's 409 and its message, after the reason */
            snprintf(err, errlen, "%s (the write got: %s)", why, conflict);
            *api_status = status;
            log_debug("act on %s '%s/%s': 409 Conflict; not retried: %s", root.kind, root.ns,
                      root.name, err);
            break;
        }
        log_debug("act on %s '%s/%s': 409 Conflict (%s); read again, unchanged: attempt %d of %d",
                  root.kind, root.ns, root.name, conflict, attempt, ACT_KUBE_ATTEMPTS);
        previous = 0;
        value[0] = '\0';
        r = act_kube_do(ak, kt, &previous, value, sizeof(value), err, errlen);
    }
    /* The action's own status (201 for an eviction), before the event call replaces it; 0
       when the action was refused before any request. A 409 not retried set it above. */
    if (r != KUBE_CONFLICT || *api_status == 0)
        *api_status = kube_last_status(ak->k);
    /* A stop written by merge patch (not a Kueue Workload deactivated in the object's stead,
       and not when it was already stopped): did the API keep it? */
    const struct kube_obj *written = &kt->chain.obj[kt->chain.n - 1];
    if (r == KUBE_OK && previous >= 0 && action != ACTION_EVICT &&
        (kt->way->method == KIND_ANNOTATE || (kt->way->method == KIND_PATCH && !kt->chain.kueue)))
        r = act_kube_check_stopped(ak, kt->way, written, err, errlen);
    if (r == KUBE_OK) {
        /* What undoing needs (restore.h): not for a Kueue Workload deactivated in the object's
           stead, nor when nothing was written (already stopped, already at 0). */
        const struct kube_obj *top = &kt->chain.obj[kt->chain.n - 1];
        if (action != ACTION_EVICT && !(kt->chain.kueue && kt->way->method == KIND_PATCH)) {
            char digest[RESTORE_DIGEST_LEN] = "";
            int64_t gen = act_kube_left(ak, kt->way, top, previous, digest);
            act_kube_note_acted(ak, kt->way, top, previous >= 0, previous, value[0] ? value : NULL,
                                digest, gen);
        }
        char *done =
            kt->way->method == KIND_SCALE
                ? xasprintf("idle GPU reclaimed: scaled from %lld to 0 replicas "
                            "(previous count in annotation %s)",
                            (long long)previous, ANNOT_REPLICAS_BEFORE)
                : xasprintf("idle GPU reclaimed: %s", t->how ? t->how : rules_action_name(action));
        char *msg = t->restore_hint && *t->restore_hint ? xasprintf("%s; %s", done, t->restore_hint)
                                                        : xstrdup(done);
        free(done);
        char eerr[512] = "";
        /* an evicted pod's event goes to the object acted on above it, which outlives it */
        enum kube_result er = kube_post_event(ak->k, &root, "IdleGPUReclaimed", msg, "Warning",
                                              event_action[action], eerr, sizeof(eerr));
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
    struct pressure_demand pd;
    enum kube_result r = kube_pending_for_resource(ak->k, d->resource, &pd, err, errlen);
    if (r != KUBE_OK) {
        /* ACT_RETRY would read as "nothing waits": a throttled list proves nothing. */
        enum act_result ar = act_kube_map(r);
        return ar == ACT_RETRY ? ACT_ERROR : ar;
    }
    /* Two resources read alike once sanitized: which one waits is unknown, so nothing does. */
    if (pd.ambiguous) {
        char why[768];
        pressure_ambiguity(&pd, d->resource, why, sizeof(why));
        snprintf(err, errlen, "cannot tell which Pending pods wait for it: %s", why);
        return ACT_RETRY;
    }
    if (pd.count > 0) {
        log_debug("GPU pressure confirmed: %zu Pending pods wait for %lld '%s'", pd.count,
                  (long long)pd.requested, d->resource);
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
    r = kube_kueue_waiting_for_resource(ak->k, d->resource, skip, nskip, &pd, err, errlen);
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
    if (pd.ambiguous) {
        char why[768];
        pressure_ambiguity(&pd, d->resource, why, sizeof(why));
        snprintf(err, errlen,
                 "no Pending pod is unschedulable for lack of '%s', and which Kueue Workloads "
                 "wait for its quota is unknown: %s",
                 d->resource, why);
        return ACT_RETRY;
    }
    if (pd.count == 0) {
        snprintf(err, errlen,
                 "no Pending pod is unschedulable for lack of '%s' and no Kueue Workload waits "
                 "for its quota",
                 d->resource);
        return ACT_RETRY;
    }
    log_debug("GPU pressure confirmed: %zu Kueue Workloads wait for quota of '%s'", pd.count,
              d->resource);
    return ACT_OK;
}

static void act_kube_free(struct act_backend *b)
{
    struct act_kube *ak = act_kube_of(b);
    kube_free(ak->k);
    restore_record_free(&ak->last);
    free(ak);
}

/*
 * What became of the object an acted entry stopped: read it and ask restore whether it is
 * still as the action left it (the same uid, the same generation for a scale or a patch, the
 * stop annotation still there with the value written). Anything else means it runs again:
 * restored (restored-at says when), or started through its platform or edited since.
 */
static enum act_back act_kube_back(struct act_backend *b, const struct ledger_entry *e,
                                   double *when, char *err, size_t errlen)
{
    struct act_kube *ak = act_kube_of(b);
    *when = NAN;
    struct kube_ref ref = {e->root_api, e->root_kind, e->root_ns, e->root_name, NULL};
    struct kube_obj obj = {0};
    enum kube_result r = kube_get(ak->k, &ref, &obj, err, errlen);
    if (r == KUBE_NOT_FOUND) {
        kube_obj_free(&obj);
        return ACT_BACK_GONE;
    }
    if (r != KUBE_OK || !obj.raw) {
        if (r == KUBE_OK)
            snprintf(err, errlen, "no JSON for %s '%s/%s'", e->root_kind, e->root_ns, e->root_name);
        kube_obj_free(&obj);
        return ACT_BACK_UNKNOWN;
    }
    if (e->root_uid[0] && obj.ref.uid && strcmp(obj.ref.uid, e->root_uid) != 0) {
        snprintf(err, errlen, "replaced: uid %s, acted on %s", obj.ref.uid, e->root_uid);
        kube_obj_free(&obj);
        return ACT_BACK_GONE;
    }
    struct restore_obj o = {0};
    struct restore_op op = {0};
    enum act_back res = ACT_BACK_UNKNOWN;
    char msg[256];
    if (restore_obj_parse(obj.raw, obj.raw_len, &o, err, errlen) < 0) {
        res = ACT_BACK_UNKNOWN;
    } else if (o.restored_at && rfc3339_parse(o.restored_at, when, msg, sizeof(msg)) == 0 &&
               *when >= e->updated) {
        res = ACT_BACK_RUNNING;
    } else if (o.rec.method == KIND_NONE) {
        /* No record of ours: nothing tells what "as the action left it" is. */
        *when = NAN;
        snprintf(err, errlen, "no record of the action on it%s%s", o.rec_err[0] ? ": " : "",
                 o.rec_err);
        res = ACT_BACK_UNKNOWN;
    } else {
        *when = NAN;
        res = restore_plan(&o, (double)time(NULL), &op, msg, sizeof(msg)) == 0 ? ACT_BACK_STOPPED
                                                                               : ACT_BACK_RUNNING;
    }
    restore_op_free(&op);
    restore_obj_free(&o);
    kube_obj_free(&obj);
    return res;
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
        .set_kinds = act_kube_set_kinds,
        .back = act_kube_back,
        .free = act_kube_free,
    };
    ak->k = k;
    return &ak->base;
}

/* ---- the calls of `restore` --------------------------------------------------------------- */

static enum kube_result act_kube_r_get(void *arg, const struct kube_ref *ref, struct kube_obj *obj,
                                       char *err, size_t errlen)
{
    return kube_get(arg, ref, obj, err, errlen);
}

static enum kube_result act_kube_r_scale(void *arg, const struct kube_ref *ref,
                                         const char *resource_version, int64_t replicas,
                                         int64_t *previous, char *err, size_t errlen)
{
    return kube_scale(arg, ref, resource_version, replicas, previous, err, errlen);
}

static enum kube_result act_kube_r_patch(void *arg, const struct kube_ref *ref,
                                         const char *resource_version, const char *merge_patch,
                                         char *err, size_t errlen)
{
    return kube_patch(arg, ref, resource_version, merge_patch, err, errlen);
}

static enum kube_result act_kube_r_event(void *arg, const struct kube_ref *involved,
                                         const char *reason, const char *message, const char *type,
                                         const char *action, char *err, size_t errlen)
{
    return kube_post_event(arg, involved, reason, message, type, action, err, errlen);
}

static long act_kube_r_status(void *arg)
{
    return kube_last_status(arg);
}

static const char *act_kube_r_rv(void *arg)
{
    return kube_last_resource_version(arg);
}

static enum kube_result act_kube_r_command(void *arg, const struct kind_way *way,
                                           const struct kube_obj *obj, bool undo, char *err,
                                           size_t errlen)
{
    return act_kube_command(arg, way, obj, undo, err, errlen);
}

void act_kube_restore_api(struct kube *k, struct restore_api *api)
{
    *api = (struct restore_api){k,
                                act_kube_r_get,
                                act_kube_r_scale,
                                act_kube_r_patch,
                                act_kube_r_event,
                                act_kube_r_status,
                                act_kube_r_rv,
                                act_kube_r_command};
}
