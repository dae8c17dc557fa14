/*
 * What the history cannot tell, asked where it can be (issue 32): for `backtest` and
 * `recommend`, each workload the simulation is about to notice is looked up as it is now in
 * the Kubernetes API or the container runtime, through `run`'s own resolve-only path
 * (act_describe: the owner chain, the workload kind and whether it has a way for the rule's
 * action, gpureclaim.io/exempt anywhere on the chain or on the container, --runtime.scope-label,
 * protected namespaces, the owner's keep-until), and the simulation leaves out of its counts
 * what `run` would never act on, naming each and why.
 *
 * Once per workload, not per cycle: the answers are kept here, shared by every simulation of
 * one command (the rules and --compare's, every grid point of `recommend`), keyed by what the
 * answer depends on (the action, the kinds table when the rules file adds rows to it,
 * maxKeepUntil, the identity). Read-only: the
 * backends' resolve only GETs (act_describe), nothing here writes.
 *
 * Only a keep: a workload the look-up cannot resolve (an API error, 403, not found now, no
 * backend for its action) is "not checked" and stays counted as the history shows it.
 */
#ifndef GPURECLAIM_BTLOOKUP_H
#define GPURECLAIM_BTLOOKUP_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "util.h"

struct act_backend;
struct kinds;

enum btl_state {
    BTL_COUNTED = 0, /* looked up: `run` would act on it; counted */
    BTL_LEFT_OUT,    /* looked up: `run` would never act on it (why says why); not counted */
    BTL_UNCHECKED,   /* could not be looked up (why says why); counted as the history shows */
};

/* One workload's answer. */
struct btl_verdict {
    enum btl_state state;
    char *why;              /* the reason, "" when counted */
    char *rule;             /* the rule that first asked */
    struct labels identity; /* its identity labels */
    char *key;              /* labels_format(identity) */
    bool runtime;           /* asked of the container runtime (action stop), else Kubernetes */
};

struct btl;

/*
 * A look-up through `kube` (Kubernetes actions) and `runtime` (action stop), either NULL
 * when not configured (its workloads are then not checked); both taken over. The owner's
 * keep-until is judged at `now` (wall time: the objects as they are now).
 * `protected_namespaces` as act_cfg's (NULL: the default).
 */
struct btl *btl_new(struct act_backend *kube, struct act_backend *runtime,
                    const char *protected_namespaces, double now);
void btl_free(struct btl *l);

/*
 * The verdict on the workload of reclaim decision `d` (its identity `key`, labels_format of
 * d->identity) under the kinds table `kinds` (the ruleset's); looked up on the first call
 * only. `l` may be NULL: nothing can be checked, NULL is returned.
 */
const struct btl_verdict *btl_check(struct btl *l, const struct kinds *kinds,
                                    const struct decision_rec *d, const char *key);

/* Whether workloads of `action` can be looked up (a backend for it is configured). */
bool btl_can(const struct btl *l, enum rule_action action);

/* The verdicts, in the order they were first asked for. */
const struct btl_verdict *const *btl_verdicts(const struct btl *l, size_t *n);

/* The verdicts of `l` (may be NULL) by backend (0 Kubernetes, 1 runtime) and state. */
void btl_count(const struct btl *l, size_t counts[2][3]);

/*
 * One sentence on what was and was not checked for rules whose actions include a Kubernetes
 * one (`kube`) and stop (`runtime`): for each, what was looked up and `counts` (as btl_count
 * fills them, for the workloads the sentence is about), or what could not be checked without
 * that access. `l` may be NULL (nothing configured).
 */
void btl_note(const struct btl *l, bool kube, bool runtime, const size_t counts[2][3],
              struct sbuf *out);

#endif
