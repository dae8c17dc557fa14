/*
 * The look-up of backtest's and recommend's workloads as they are now (btlookup.h): one
 * act_describe per workload, the very resolve-only path `plan` shows targets with, so what
 * counts as "run would not act on it" is written once, in act.c and its backends.
 */
#include "btlookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "annot.h"
#include "kinds.h"

struct btl {
    struct act_backend *kube, *runtime;
    char *protected_ns;
    double now;
    struct strset index; /* key -> verdict index + 1 */
    char **keys;         /* the strings of `index`, owned here */
    struct btl_verdict **v;
    size_t n;
};

struct btl *btl_new(struct act_backend *kube, struct act_backend *runtime,
                    const char *protected_namespaces, double now)
{
    struct btl *l = xcalloc(1, sizeof(*l));
    l->kube = kube;
    l->runtime = runtime;
    l->protected_ns = protected_namespaces ? xstrdup(protected_namespaces) : NULL;
    l->now = now;
    return l;
}

void btl_free(struct btl *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]->why);
        free(l->v[i]->rule);
        free(l->v[i]->key);
        labels_free(&l->v[i]->identity);
        free(l->v[i]);
        free(l->keys[i]);
    }
    free(l->v);
    free(l->keys);
    strset_free(&l->index);
    if (l->kube)
        l->kube->free(l->kube);
    if (l->runtime)
        l->runtime->free(l->runtime);
    free(l->protected_ns);
    free(l);
}

bool btl_can(const struct btl *l, enum rule_action action)
{
    return l && (action == ACTION_STOP ? l->runtime : l->kube) != NULL;
}

/* What act_describe's answer means for the counts. */
static void btl_judge(struct btl *l, struct act_backend *b, const struct decision_rec *d,
                      struct btl_verdict *v)
{
    if (!b) {
        v->state = BTL_UNCHECKED;
        v->why = xstrdup(d->rule->action == ACTION_STOP
                             ? "no container runtime to look it up in (--runtime.socket)"
                             : "no Kubernetes API to look it up in (--kube.api-url, or in a pod)");
        return;
    }
    char *how = NULL, note[400] = "", err[768] = "";
    bool kept = false;
    enum act_result r = act_describe(b, d, l->protected_ns, l->now, &how, note, sizeof(note), &kept,
                                     err, sizeof(err));
    free(how);
    if (r == ACT_OK && !kept) {
        v->state = BTL_COUNTED;
        v->why = xstrdup("");
    } else if (r == ACT_OK) {
        /* The owner asks for time now: run would not act while it is in force. */
        v->state = BTL_LEFT_OUT;
        v->why = xstrdup(note);
    } else if (r == ACT_UNSUPPORTED) {
        /* What `run` skips every cycle without acting (act_candidate): exempt, protected,
           out of the runtime's scope, a kind with no way for the action, an owner of a kind
           the API does not serve, labels that name no object. */
        v->state = BTL_LEFT_OUT;
        v->why = xstrdup(str_has_prefix(err, "kept: ") ? err + 6 : err);
    } else {
        /*
         * Not found now, 403, an API error: only a keep. The backtest's count is a
         * prediction of what `run` would do; leaving out a workload it cannot check would
         * hide a reclaim `run` might make, so it stays counted as the history shows it.
         */
        v->state = BTL_UNCHECKED;
        v->why = r == ACT_GONE ? xasprintf("not found now: %s", err)
                               : xasprintf("%s: %s", act_result_name(r), err);
    }
}

const struct btl_verdict *btl_check(struct btl *l, const struct kinds *kinds,
                                    const struct decision_rec *d, const char *key)
{
    if (!l)
        return NULL;
    const struct rule *r = d->rule;
    /* Everything the answer depends on besides the objects themselves. A table without rows
       of its file is the built-in one, whichever load made it (recommend's confirmation loads
       the file it wrote: the same workloads, not asked again); containers have no kinds. */
    char kt[32] = "builtin";
    if (r->action == ACTION_STOP)
        snprintf(kt, sizeof(kt), "-");
    else if (kinds && kinds_user_count(kinds) > 0)
        snprintf(kt, sizeof(kt), "%p", (const void *)kinds);
    char *k = xasprintf("%d\x1f%s\x1f%.17g\x1f%s", (int)r->action, kt, r->max_keep_until, key);
    const void *got = strset_get(&l->index, k, strlen(k));
    if (got) {
        free(k);
        return l->v[(size_t)(uintptr_t)got - 1];
    }
    struct act_backend *b = r->action == ACTION_STOP ? l->runtime : l->kube;
    if (b && b->set_kinds)
        b->set_kinds(b, kinds);
    struct btl_verdict *v = xcalloc(1, sizeof(*v));
    btl_judge(l, b, d, v);
    v->runtime = r->action == ACTION_STOP;
    v->rule = xstrdup(r->name);
    v->key = xstrdup(key);
    labels_copy(&v->identity, &d->identity);
    l->v = xgrow(l->v, l->n, sizeof(*l->v));
    l->keys = xgrow(l->keys, l->n, sizeof(*l->keys));
    l->keys[l->n] = k;
    l->v[l->n++] = v;
    strset_put(&l->index, k, strlen(k), (void *)(uintptr_t)l->n);
    return v;
}

const struct btl_verdict *const *btl_verdicts(const struct btl *l, size_t *n)
{
    *n = l ? l->n : 0;
    return l ? (const struct btl_verdict *const *)l->v : NULL;
}

void btl_count(const struct btl *l, size_t counts[2][3])
{
    memset(counts, 0, 2 * sizeof(*counts));
    for (size_t i = 0; l && i < l->n; i++)
        counts[l->v[i]->runtime][l->v[i]->state]++;
}

/* One backend's part of btl_note. */
static void btl_note_one(const struct btl *l, bool runtime, const size_t c[3], struct sbuf *out)
{
    size_t n = c[BTL_COUNTED] + c[BTL_LEFT_OUT] + c[BTL_UNCHECKED];
    if (out->len)
        sbuf_puts(out, "; ");
    bool can = btl_can(l, runtime ? ACTION_STOP : ACTION_DELETE);
    if (!can && runtime)
        sbuf_puts(out, "not checked without a container runtime (--runtime.socket): " ANNOT_EXEMPT
                       " labels on containers, --runtime.scope-label");
    else if (!can)
        sbuf_puts(out, "not checked without the Kubernetes API (--kube.api-url, or in a pod): "
                       "owner chains and workload kinds, keep-until annotations, " ANNOT_EXEMPT
                       " labels on objects");
    else
        sbuf_printf(out,
                    "looked up as they are now in the %s (reads only, once per workload): %s: "
                    "%zu workload%s, %zu left out, %zu not checked (counted)",
                    runtime ? "container runtime" : "Kubernetes API",
                    runtime
                        ? ANNOT_EXEMPT " and --runtime.scope-label on containers"
                        : "owner chains and workload kinds, keep-until annotations, " ANNOT_EXEMPT
                          ", protected namespaces",
                    n, n == 1 ? "" : "s", c[BTL_LEFT_OUT], c[BTL_UNCHECKED]);
}

void btl_note(const struct btl *l, bool kube, bool runtime, const size_t counts[2][3],
              struct sbuf *out)
{
    struct sbuf b = {0};
    if (kube)
        btl_note_one(l, false, counts[0], &b);
    if (runtime)
        btl_note_one(l, true, counts[1], &b);
    if (b.len)
        sbuf_puts(out, b.buf);
    sbuf_free(&b);
}
