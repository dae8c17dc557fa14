/*
 * The table of workload kinds the Kubernetes backend can act on: for each kind its
 * group/version/kind, whether its controller owns and reconciles its children, and for each
 * rule action how the kind is stopped, how the stop is undone and how a stopped object is
 * recognised. One table, as data: the owner walk (act_kube.c), the action calls (kube.c),
 * `plan`/`explain`, `restore` and the RBAC check all read it, and nothing else in the code
 * branches on a kind's name.
 *
 * Built-in rows are verified against each project's own source or CRDs
 * (docs/workload-kinds.md cites repository, path and commit for each). Users add rows without
 * a rebuild in the rules file's `kinds:` section (or a file beside it), parsed with the same
 * strict YAML loader and file:line:col errors as the rules; a user row for a group/kind that
 * is built in replaces the built-in one (`check` says so).
 *
 * Principle: a kind that is not in the table is never acted on, and an action a kind has no
 * way for (method KIND_NONE) is never replaced by another one: the workload is kept, with a
 * reason that names the kind and the action.
 */
#ifndef GPURECLAIM_KINDS_H
#define GPURECLAIM_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"

/* How one rule action is carried out on a kind. */
enum kind_method {
    KIND_NONE = 0, /* the kind cannot do this action: keep the workload, say so */
    KIND_SCALE,    /* the /scale subresource to 0; undone by scaling back to the replicas
                      recorded before (annotation gpureclaim.io/replicas-before-reclaim) */
    KIND_PATCH,    /* RFC 7386 merge patch `patch` on the object; undone by `unpatch` */
    KIND_ANNOTATE, /* set annotation `key` to `value` (NULL value: the RFC 3339 time of the
                      action, as Kubeflow's kubeflow-resource-stopped); undone by removing it */
    KIND_DELETE,   /* DELETE with a uid precondition, propagationPolicy Background; no undo */
    KIND_EVICT,    /* pods only: a policy/v1 Eviction; no undo (the controller re-creates) */
};

/* "none", "scale", "patch", "annotate", "delete", "evict". */
const char *kinds_method_name(enum kind_method m);

struct kind_way {
    enum kind_method method;
    const char *patch; /* KIND_PATCH: JSON merge patch that stops, e.g. {"spec":{"suspend":true}} */
    const char *unpatch; /* KIND_PATCH: JSON merge patch that undoes it; NULL: no undo */
    const char *key;     /* KIND_ANNOTATE: the annotation */
    const char *value;   /* KIND_ANNOTATE: its value; NULL: the action's RFC 3339 time */
};

#define KINDS_NACTIONS (ACTION_STOP + 1) /* ways[] is indexed by enum rule_action */

struct kind_def {
    const char *group;   /* "" for the core group, "apps", "kubeflow.org", ... */
    const char *version; /* "v1", "v1beta1", ... (the version the row was verified at) */
    const char *kind;    /* "Deployment", "Notebook", ... */
    /* Its controller owns and reconciles the children it creates: acting on a child is
       undone, so the walk acts here (or higher), never below. */
    bool reconciles;
    struct kind_way ways[KINDS_NACTIONS];
    /* Where the row comes from: "docs/workload-kinds.md#notebook" for a built-in row, or
       "FILE:LINE:COL" of a user row. */
    const char *source;
};

/* A table: the built-in rows plus a ruleset's user rows. */
struct kinds;

/* The built-in rows only (static storage; never freed). */
const struct kinds *kinds_builtin(void);

/*
 * The row for apiVersion ("apps/v1", "v1", "kubeflow.org/v1") and kind in `t` (NULL: the
 * built-in table): user rows first, then built-in ones. A row matches on group and kind; a
 * different version of the same group and kind matches too (CRDs serve several versions of
 * one object), which `explain` shows by the row's own version. NULL when not in the table.
 */
const struct kind_def *kinds_find(const struct kinds *t, const char *api_version, const char *kind);

/* The rows in table order (user rows first), for `plan`, the RBAC check and the docs. */
size_t kinds_count(const struct kinds *t);
const struct kind_def *kinds_at(const struct kinds *t, size_t i);

/*
 * Is `obj_json` (an object as the API returned it) stopped by `way`? KIND_SCALE:
 * spec.replicas is 0 or absent; KIND_PATCH: every leaf of `patch` has that value in the
 * object; KIND_ANNOTATE: the annotation is present (with `value`, when set). Pure. -1 with a
 * message when the JSON cannot be parsed; KIND_DELETE/KIND_EVICT/KIND_NONE: 0.
 */
int kinds_is_stopped(const struct kind_way *way, const char *obj_json, size_t len, char *err,
                     size_t errlen);

/* The verbs (get, patch, delete, create) a way needs on the kind's resource, for RBAC. */
size_t kinds_verbs(const struct kind_way *way, const char **verbs, size_t max);

/* How to tell a user to add a kind: "add it under kinds: in the rules file (rules/README.md)". */
#define KINDS_HOW_TO_ADD                                                                           \
    "add it under 'kinds:' in the rules file (see rules/README.md, Workload kinds)"

#endif
