/*
 * The permission check of `run`: before any action is due, ask the API server with
 * SelfSubjectAccessReview for every verb the loaded rules can use, and report each one the
 * service account lacks as a metric and one log line, instead of failing at the first action
 * at 3 a.m. (docs/backend-apis.md §6.8).
 *
 * What the rules can use (perm_needs, pure): for each enabled rule whose action goes to the
 * Kubernetes API, on every kind of the rules' table (kinds.h) that could be acted on with that
 * action, the permissions of the kind's way (kinds_perms: the resource and its subresource,
 * such as deployments/scale or pods/eviction); get on every kind the owner walk reads
 * (kinds_walk_perms); create on events; for suspend, list and patch on Kueue Workloads (a
 * Kueue-managed Job is stopped through its Workload); for evict, patch on every kind the
 * notice can land on (the root owner). Each in every namespace the rule's scope names but the
 * protected ones, or in every namespace when it names none. With --kube.confirm-pressure and a
 * DuringGPUPressure rule: list pods and Kueue Workloads in every namespace. With --leader-elect:
 * get, update and create on the Lease.
 *
 * A review that cannot be made (the review itself forbidden, the API down, an answer that
 * decides nothing) leaves the permission unknown, never granted; the check is then repeated
 * before the next cycle until every permission is known. The check is repeated whenever new
 * rules are loaded.
 */
#ifndef GPURECLAIM_PERM_H
#define GPURECLAIM_PERM_H

#include <stdbool.h>
#include <stddef.h>

#include "expo.h"
#include "kube.h"
#include "rules.h"

struct perm_cfg {
    bool confirm_pressure; /* --kube.confirm-pressure */
    /* --enforce.protected-namespaces (comma list; NULL: ANNOT_PROTECTED_DEFAULT): nothing there
       is ever acted on, so nothing there is needed */
    const char *protected_namespaces;
    const char *lease_ns;   /* --leader-elect: the Lease's namespace; NULL: no election */
    const char *lease_name; /* its name */
};

/* One permission the rules can use, and (after a check) whether the account has it. */
struct perm_need {
    char *group;       /* "" core */
    char *resource;    /* plural; "" when the kind's resource is not in its row (a user row):
                          perm_check finds it through API discovery (kube_resource_of) */
    char *subresource; /* "" none */
    char *verb;
    char *ns;          /* "" every namespace */
    char *name;        /* "" any name */
    char *kind;        /* the kind it is for ("Deployment"), for messages; "" for others */
    char *api_version; /* of a kinds-table row ("example.com/v1"): to find an unknown
                          resource through discovery; "" for others */
    char *why;         /* who needs it: "rule 'idle' (scaleToZero)", "--leader-elect", ... */
    int verdict;       /* KUBE_ACCESS_* (kube.h); KUBE_ACCESS_UNKNOWN before a check */
};

/*
 * The permissions `rs` can use with `cfg`, deduplicated, in a stable order (rules, then
 * kinds in table order). Returns the count; *out is malloc'd (free with perm_needs_free).
 */
size_t perm_needs(const struct ruleset *rs, const struct perm_cfg *cfg, struct perm_need **out);
void perm_needs_free(struct perm_need *v, size_t n);

/* "get 'deployments.apps/scale' in namespace 'ml'", "list 'pods' in every namespace". */
char *perm_describe(const struct perm_need *n);

struct perm;

/* A checker over client `k` (taken over; give it the stop flag, no leader gate: a standby
   checks too, it may lead next). `cfg` strings are copied. */
struct perm *perm_new(struct kube *k, const struct perm_cfg *cfg);
void perm_free(struct perm *p);

/*
 * Check every permission `rs` can use: one review each, one log line for each missing or
 * undecided one. After a review call fails, the rest are not asked (each would wait for the
 * same timeout) and stay unknown, with one log line. `now` is the Unix time of the check.
 * NULL p: nothing.
 */
void perm_check(struct perm *p, const struct ruleset *rs, double now);

/* Did a review of the last check fail or decide nothing, or discovery fail, so that it is
   checked again before the next cycle? A kind the API does not serve stays unknown until
   the rules change. */
bool perm_incomplete(const struct perm *p);

/*
 * gpureclaim_enforcer_permission_missing{group,resource,subresource,verb,namespace} 1 for each
 * permission denied, ..._permission_unknown{...} 1 for each not decided,
 * ..._permission_checks{result=granted|missing|unknown} the counts of the last check, and
 * ..._permission_last_check_timestamp_seconds. NULL p or no check yet: nothing.
 */
void perm_metrics(const struct perm *p, struct expo *e);

#endif
