/*
 * The action engine: turns the cycle's `reclaim` decisions into notices and, after the
 * rule's notice period, into exactly one action per workload, through one of two backends
 * behind a small vtable (act_kube.c: the Kubernetes API; act_runtime.c: a Docker/Podman API).
 *
 * Per cycle (act_cycle, after decide()):
 *  - candidates are `reclaim` decisions of rules whose action is not `report`;
 *  - dry run (global --dry-run, the default, or rule dryRun) only logs and audits
 *    "dry_run", once per workload while it stays idle, and never calls a mutating API;
 *  - never touched: protected namespaces, objects carrying gpureclaim.io/exempt=true (label
 *    or annotation on the pod or its root owner, or a container label);
 *  - first cycle: resolve the target, post the notice (Kubernetes: Event + annotation on the
 *    root owner; containers: audit and log only), record it with act_after = now + notice
 *    period; with a notice period of 0 the action follows in the same cycle. For
 *    DuringGPUPressure rules with a pressure check set (act_set_kube_confirm) the notice is
 *    posted only once the API confirms the pressure (else skipped "pressure_not_confirmed",
 *    nothing posted), and the check is made again before the action;
 *  - an object created after the start of the idle window (a StatefulSet pod or a
 *    `jupyter-<user>` pod re-created under the same name, a container re-created under the
 *    same name) is not noticed nor acted on: the idle evidence before its creation belongs to
 *    its predecessor. It is skipped as `too_young` (audited once) until its own idle window
 *    is complete;
 *  - continuous idleness since the notice: each cycle whose idle run reaches back to the
 *    time idleness was last proven (at first the notice) extends the proof to now; a cycle
 *    whose idle run starts later (the workload was busy, or not proven idle, in between,
 *    even if no cycle saw it) spares the notice, so an action always follows idleness
 *    without a break since before the notice;
 *  - at or after act_after, only if this cycle again says `reclaim` and the object is the
 *    same (uid / container id), still running and not terminating: act, within the rule's
 *    maxTerminationsPerCycle and the global hourly cap (counted from the ledger, so it
 *    survives restarts) and, for DuringGPUPressure rules when a pressure check is set
 *    (act_set_kube_confirm), only once the API shows a pod waiting for the GPU resource
 *    (else skipped "pressure_not_confirmed", still pending). ok -> acted, never again;
 *    retry/error/forbidden -> stays pending and is retried next cycle; gone -> closed;
 *    conflict (a replacement object) -> closed without acting, never retried on the
 *    replacement;
 *  - a pending notice whose workload is now `keep` for a definite reason (active, gap,
 *    stale, too_young, not_a_number, exempt, rule_disabled) is withdrawn and audited
 *    "spared". no_data, query_error and the pressure/cap reasons prove nothing about the
 *    workload, so the notice stays pending (no action, no spare). A workload absent from the
 *    decisions (rule removed, series gone) keeps its notice until it expires, pending_ttl
 *    (24 h) after its planned time: acting then would act on a stale decision, and sparing it
 *    at once would reset the notice on every Prometheus hiccup.
 * The ledger (ledger.h) is saved before every mutating call (write-ahead) and after it.
 *
 * Stopping (act_set_stop): once the flag is set no new API call starts, neither here nor
 * inside a backend operation that needs several; the call under way finishes and its result
 * is written to the ledger and the audit trail. Whatever was not started stays as it is in
 * the ledger (a pending notice stays pending) for the next start.
 */
#ifndef GPURECLAIM_ACT_H
#define GPURECLAIM_ACT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "docker.h"
#include "expo.h"
#include "kube.h"
#include "ledger.h"
#include "rules.h"

#define ACT_PENDING_TTL (24 * 3600.0)
#define ACT_DONE_TTL    (7 * 24 * 3600.0)

enum act_result {
    ACT_OK = 0,
    ACT_GONE,        /* 404, already stopped (304), not running: nothing left to do */
    ACT_CONFLICT,    /* the object was replaced (uid mismatch, 409): never act on it */
    ACT_RETRY,       /* 429 (PodDisruptionBudget), 503: try again next cycle */
    ACT_FORBIDDEN,   /* 403: RBAC; retried, since an operator may fix it */
    ACT_UNSUPPORTED, /* the action does not apply to this kind of object */
    ACT_ERROR,       /* anything else: retried next cycle */
    ACT_CANCELLED,   /* not (fully) done: the enforcer is stopping; retried at the next start */
};

/* "ok", "gone", "conflict", "retry", "forbidden", "unsupported", "error", "cancelled". */
const char *act_result_name(enum act_result r);

/* What became of an object acted on (act_backend.back). */
enum act_back {
    ACT_BACK_STOPPED = 0, /* still as the action left it */
    ACT_BACK_RUNNING,     /* runs again: restored, or started through its platform */
    ACT_BACK_GONE,        /* deleted or replaced (another uid) */
    ACT_BACK_UNKNOWN,     /* could not be read: this interval is not counted */
};

#define ACT_CHAIN_MAX 10

struct act_obj {
    char *api_version, *kind, *ns, *name, *uid; /* never NULL once resolved ("" if unknown) */
    char *keep_until; /* its gpureclaim.io/keep-until annotation (keep.h), or NULL */
};

/* The live object behind a decision and its owner chain. */
struct act_target {
    struct act_obj chain[ACT_CHAIN_MAX]; /* [0] the pod or container, [nchain-1] root owner */
    size_t nchain;
    bool exempt;        /* gpureclaim.io/exempt=true somewhere in the chain */
    bool out_of_scope;  /* lacks the backend's scope label (--runtime.scope-label) */
    bool running;       /* the pod or container is still running */
    bool terminating;   /* deletion under way */
    double created;     /* Unix time [0] was created (pod creationTimestamp, container
                           Created); NaN when unreadable, which counts as too young */
    double restarted;   /* the latest gpureclaim.io/restored-at on the chain: the workload was
                           brought back then, and its idle window must lie after it. NaN: none;
                           +Inf: unreadable, which counts as too young like `created` */
    char *notice;       /* the notice annotation found on the root owner (JSON), or NULL: how a
                           replica that becomes the leader learns of a notice another gave */
    char *how;          /* what the action does, in the backend's words, for `plan`, `explain`
                           and the audit trail: "annotate Notebook ml/alice
                           kubeflow-resource-stopped", "scale Deployment ml/x to 0"; NULL:
                           nothing more than the action's name */
    char *restore_hint; /* how to bring the workload back after the action, for the notice,
                           the action's Event and audit line ("" or NULL: nothing to say) */
    void *priv;         /* backend data, released by target_free */
};

/* What a notice says: the planned time, and the text for events and annotations. */
struct act_notice {
    double act_after;
    const char *message;    /* one human sentence */
    const char *annotation; /* JSON: actAt, rule, action, idleSince, window, threshold,
                               noticedAt, uid (of chain[0]), and actedAt once acted on */
};

/*
 * A backend. Implementations embed this struct first and cast back (container_of).
 * Every call returns an act_result and, unless ACT_OK, a message in err.
 */
struct act_backend {
    const char *name; /* "kubernetes", "runtime" */
    /* Find the live object of decision `d` (identity labels) and its chain. */
    enum act_result (*resolve)(struct act_backend *b, const struct decision_rec *d,
                               struct act_target *t, char *err, size_t errlen);
    enum act_result (*notice)(struct act_backend *b, const struct act_target *t,
                              const struct act_notice *n, char *err, size_t errlen);
    /* Remove the notice recorded in `e` (its root_* fields). `why` (NULL: say nothing) is
       told to the owner as well (Kubernetes: a Normal Event on the root owner). */
    enum act_result (*withdraw)(struct act_backend *b, const struct ledger_entry *e,
                                const char *why, char *err, size_t errlen);
    /* Perform `action` on `t`; *api_status gets the HTTP status when the backend knows it. */
    enum act_result (*act)(struct act_backend *b, const struct act_target *t,
                           enum rule_action action, long *api_status, char *err, size_t errlen);
    void (*target_free)(struct act_backend *b, struct act_target *t);
    void (*free)(struct act_backend *b);
    /* Optional: replace the notice record on the object (n->annotation only, no Event), to
       write actedAt after an action so that another replica never acts again. */
    enum act_result (*record)(struct act_backend *b, const struct act_target *t,
                              const struct act_notice *n, char *err, size_t errlen);
    /* Optional: the workload-kinds table to choose targets by (act_set_kinds). */
    void (*set_kinds)(struct act_backend *b, const struct kinds *t);
    /* Optional: after an action with a way back, what became of the object acted on (the
       root of acted entry `e`), for the GPU time the action freed (act_freed); *when gets
       the time it ran again when the backend knows it (restored-at), else NaN. */
    enum act_back (*back)(struct act_backend *b, const struct ledger_entry *e, double *when,
                          char *err, size_t errlen);
};

struct kinds;

/*
 * A check run before noticing and before acting on a DuringGPUPressure decision, as the
 * Prometheus signal cannot
 * tell why a pod is pending: ACT_OK when the API confirms that something other than the
 * candidate `t` (the resolved target, NULL when unknown) waits for d->resource; otherwise
 * the action waits for a later cycle (ACT_RETRY: nothing waits for it; anything else: the
 * check failed), with a message in err.
 */
typedef enum act_result (*act_confirm_fn)(struct act_backend *b, const struct decision_rec *d,
                                          const struct act_target *t, char *err, size_t errlen);

struct act_cfg {
    const char *state_file;           /* --state.file; NULL: memory only (tests) */
    const char *audit_file;           /* --audit.file; "-" stdout; NULL: none */
    const char *protected_namespaces; /* comma list; NULL: ANNOT_PROTECTED_DEFAULT; "": none */
    unsigned max_actions_per_hour;    /* --enforce.max-actions-per-hour; 0: no cap */
    double pending_ttl;               /* 0: ACT_PENDING_TTL */
    double done_ttl;                  /* 0: ACT_DONE_TTL */
};

struct act;

/*
 * Load the ledger and open the audit file. Returns NULL with a message when the state file
 * is unreadable or corrupt, cannot be written, or the audit file cannot be opened: the
 * enforcer must then refuse to start rather than forget what it did.
 */
struct act *act_new(const struct act_cfg *cfg, char *err, size_t errlen);
/* Install a backend (taken over, freed by act_free); NULL leaves that kind unconfigured. */
void act_set_kube(struct act *a, struct act_backend *b);
void act_set_runtime(struct act *a, struct act_backend *b);
/*
 * The workload-kinds table of the rules in force (ruleset.kinds; NULL: the built-in one),
 * handed to the backends that choose targets by it; set again after a reload. Not taken over.
 */
void act_set_kinds(struct act *a, const struct kinds *t);
/*
 * Resolve-only, for `plan` and `explain`: what the engine would act on for `d` (a reclaim
 * decision) and how, from the same resolve as a cycle, which only reads (GETs): ACT_OK with
 * *how ("scale Deployment ml/x to 0"; the caller frees it), or another result with the reason
 * nothing would be done in err (the kind is unknown, the action is one the kind cannot do,
 * 403, exempt, a protected namespace). `protected_namespaces` as act_cfg's (NULL: the
 * default). No backend for the rule's action: ACT_UNSUPPORTED. `note` (may be NULL) gets what
 * the objects say beyond the data at `now`: the owner's keep-until as the engine would judge
 * it (its maximum counted from the notice on the object, else from now) and a restart that
 * keeps the workload too young; "" when nothing; `kept` (may be NULL; needs `note`) whether
 * that keep-until is in force at `now`. Shared with `backtest` and `recommend` (btlookup.h),
 * which leave out what this says `run` would not act on.
 */
enum act_result act_describe(struct act_backend *b, const struct decision_rec *d,
                             const char *protected_namespaces, double now, char **how, char *note,
                             size_t notelen, bool *kept, char *err, size_t errlen);
/*
 * The full-window proof of a decision `run` made from state carried between cycles (issue 26,
 * decision_rec.proof DECIDE_PROOF_INCREMENTAL): true when the workload's series, read again
 * over the whole window, still make decide() say reclaim, and then *proven (a copy of *d) gets
 * the full proof's window statistics and detail, which a carried proof has not; false (with
 * why in msg) otherwise, or when the read failed. Asked only before a notice, a dry-run report
 * or an action.
 */
typedef bool (*act_reprove_fn)(void *arg, const struct decision_rec *d, double now,
                               struct decision_rec *proven, char *msg, size_t msglen);
/* Install it (NULL: an incremental decision is never noticed, reported or acted on). */
void act_set_reprove(struct act *a, act_reprove_fn fn, void *arg);
/* Confirm pressure with `fn` before acting through the Kubernetes backend (NULL: never). */
void act_set_kube_confirm(struct act *a, act_confirm_fn fn);
/* Stop starting API calls once *flag is non-zero (see the top of this file); NULL: never. */
void act_set_stop(struct act *a, const volatile sig_atomic_t *flag);
/*
 * The same for leadership: while fn(arg) returns false (a replica that is not, or no longer,
 * the Lease holder) no API call starts; checked wherever the stop flag is, so a leader that
 * loses the Lease mid-cycle stops before its next call. NULL: always allowed.
 */
void act_set_gate(struct act *a, bool (*fn)(void *arg), void *arg);
/* Send the rules' webhook notices through `n` (taken over, drained by act_free); NULL: none. */
struct notify;
void act_set_notify(struct act *a, struct notify *n);
void act_free(struct act *a);

/* One evaluation cycle (see the top of this file). `ds` are this cycle's decisions. */
void act_cycle(struct act *a, const struct decisions *ds, double now);
/* act_cycle with keys[i] = labels_format(&ds->v[i].identity), the caller's (the backtest
   keeps each workload's; formatting every record's labels at every cycle was 4 % of it). */
void act_cycle_keyed(struct act *a, const struct decisions *ds, char *const *keys, double now);

/* The engine's counters and gauges (see the top of act.c for the list). */
void act_metrics(const struct act *a, struct expo *e);

/* The ledger, read-only, for tests and `explain`. */
const struct ledger *act_ledger(const struct act *a);
/*
 * Forget the acted entries no later cycle can read differently from a newer one
 * (ledger_drop_superseded, whose conditions the backend's world must meet: uids never taken
 * again, creation times never going back): for the backtest's simulation, whose ledger
 * otherwise grows by an entry per reclaim over its whole range. Nothing is saved here (the
 * backtest has no state file). Returns how many were dropped.
 */
size_t act_forget_superseded(struct act *a);

/*
 * The owner's keep-until on the chain of `t` under rule `r` (keep.h), the maximum counted
 * from `from` (the notice; now when there is none yet): for the engine and for `plan` and
 * `explain`. v->where is NULL (the message names the object).
 */
struct keep_verdict;
void act_keep_verdict(const struct rule *r, const struct act_target *t, double from, double now,
                      struct keep_verdict *v);

/* The noticedAt of an open notice annotation of rule `rule` (not acted on); NaN otherwise. */
double act_notice_noticed(const char *notice, const char *rule);

/* A comma-separated namespace list contains `ns`. */
bool act_ns_in_list(const char *list, const char *ns);

/* For backends: the label `name` of a decision, from its identity labels first, else any. */
const char *act_label(const struct decision_rec *d, const char *name);
/*
 * For backends' target_free: free the chain's strings and zero `t`. A backend releases its
 * own t->priv first.
 */
void act_target_clear(struct act_target *t);

/*
 * Backends. act_runtime_new: containers named by the decision's container_id,
 * container_name, container or name label (first present), stopped with `stop_timeout`
 * seconds between SIGTERM and SIGKILL. act_kube_new: pods named by the namespace and pod
 * labels; the client `k` is taken over.
 */
struct act_backend *act_runtime_new(const struct docker_cfg *cfg, int stop_timeout,
                                    const char *scope_label);
struct kube;
struct act_backend *act_kube_new(struct kube *k);
/*
 * The workload-kinds table (kinds.h) the Kubernetes backend `b` reads to choose the object
 * acted on and how: the ruleset's (rules.h, ruleset.kinds), set again when the rules are
 * reloaded. NULL: the built-in table. Not taken over.
 */
void act_kube_set_kinds(struct act_backend *b, const struct kinds *t);
/*
 * Create the command of a KIND_COMMAND way (kinds.h) about `o` as read: its stop action, or
 * its undo action when `undo` is set (`restore`). 201 is KUBE_OK; a command of ours still there
 * (not yet carried out by the platform's controller) is KUBE_CONFLICT, with a message saying so.
 */
struct kind_way;
enum kube_result act_kube_command(struct kube *k, const struct kind_way *way,
                                  const struct kube_obj *o, bool undo, char *err, size_t errlen);
/*
 * The Kubernetes calls of `restore` (restore.h) on client `k`: kube_get, kube_scale,
 * kube_patch, kube_post_event, kube_last_status, kube_last_resource_version and
 * act_kube_command.
 */
struct restore_api;
void act_kube_restore_api(struct kube *k, struct restore_api *api);
/*
 * The act_confirm_fn of --kube.confirm-pressure, for a backend from act_kube_new: lists the
 * Pending pods and confirms when one is unschedulable for lack of the workload's GPU
 * resource (kube_pending_for_resource); else lists the Kueue Workloads and confirms when one
 * other than the candidate's own (any uid of `t`'s chain) waits for quota of that resource
 * (kube_kueue_waiting_for_resource). API not serving Kueue: nothing waits there. Names are
 * compared after sanitizing (pressure.h); a resource name that is ambiguous once sanitized
 * confirms nothing (ACT_RETRY, err says which names).
 */
enum act_result act_kube_confirm_pressure(struct act_backend *b, const struct decision_rec *d,
                                          const struct act_target *t, char *err, size_t errlen);

#endif
