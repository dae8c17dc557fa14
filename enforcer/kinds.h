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
 * a rebuild in the rules file's `kinds:` section (rules/README.md, Workload kinds), parsed with
 * the same strict YAML loader and file:line:col errors as the rules, into struct
 * ruleset.kinds; a user row for a group/kind that is built in replaces the built-in one whole
 * (`check` prints a note, kept in ruleset.notes).
 *
 * Principle: a kind that is not in the table is never acted on, and an action a kind has no
 * way for (method KIND_NONE) is never replaced by another one: the workload is kept, with a
 * reason that names the kind and the action.
 */
#ifndef GPURECLAIM_KINDS_H
#define GPURECLAIM_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include "action.h"

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
    KIND_COMMAND,  /* create a command object naming the object, as the platform's own CLI does
                      (a Volcano Job: a bus.volcano.sh/v1alpha1 Command AbortJob, which is what
                      `vcctl job suspend` creates); undone by the command `command.undo`
                      (ResumeJob). Built-in rows only: a `kinds:` row cannot use it */
};

/* "none", "scale", "patch", "annotate", "delete", "evict", "command". */
const char *kinds_method_name(enum kind_method m);

/*
 * KIND_COMMAND: the command object's type and actions. The object is created in the target's
 * namespace, named NAME-gpureclaim-ACTION (lower case) so that a command its controller has not
 * carried out yet makes a second one fail with 409 AlreadyExists instead of piling up, with the
 * target as its controller owner and in `target` (kinds_command_body).
 */
struct kind_command {
    const char *group, *version, *kind, *resource; /* "bus.volcano.sh", "v1alpha1", "Command",
                                                      "commands" */
    const char *stop;                              /* the action that stops: "AbortJob" */
    const char *undo;                              /* the action that undoes it: "ResumeJob" */
};

struct kind_way {
    enum kind_method method;
    const char *patch; /* KIND_PATCH: JSON merge patch that stops, e.g. {"spec":{"suspend":true}} */
    const char *unpatch; /* KIND_PATCH: JSON merge patch that undoes it; NULL: no undo */
    const char *key;     /* KIND_ANNOTATE: the annotation */
    const char *value;   /* KIND_ANNOTATE: its value; NULL: the action's RFC 3339 time */
    /* Any method but KIND_NONE: a JSON object whose every leaf must hold in the object before
       acting (kinds_can_act), as in kinds_is_stopped's KIND_PATCH test; NULL: none. A RayJob
       may be suspended only with spec.shutdownAfterJobFinishes true, no clusterSelector and
       status.jobDeploymentStatus Running: otherwise KubeRay fails it for good. */
    const char *requires;
    struct kind_command command; /* KIND_COMMAND */
    /* KIND_COMMAND: how a stopped object is recognised, a JSON array of objects: stopped when
       every leaf of one of them holds (a command is carried out later, by the platform's
       controller, so the object itself says whether it was: a Volcano Job in phase Aborting
       or Aborted). */
    const char *stopped;
};

#define KINDS_NACTIONS (ACTION_STOP + 1) /* ways[] is indexed by enum rule_action */

struct kind_def {
    const char *group;   /* "" for the core group, "apps", "kubeflow.org", ... */
    const char *version; /* "v1", "v1beta1", ... (the version the row was verified at) */
    const char *kind;    /* "Deployment", "Notebook", ... */
    /*
     * Its controller owns and reconciles the children it creates: acting on a child is
     * undone, so the walk acts here (or higher), never below. The owner walk starts at the
     * pod and, for each controller ownerReference in turn:
     *  - owner's row reconciles: climb to the owner and go on from it;
     *  - owner's row does not reconcile (CronJob above a Job: a schedule, which creates runs
     *    but never restores one): stop, and act on the object below it;
     *  - owner has no row: climb through it too, since whether it reconciles is unknown and
     *    acting below it could be undone; when the topmost object reached has no row, keep
     *    the workload, naming its kind and KINDS_HOW_TO_ADD (never act below an unknown top).
     * The action goes to the topmost object reached, with that object's row's way for the
     * rule's action (KIND_NONE there: keep, naming the kind and the action), except evict,
     * which always goes to the pod with the Pod row's way. Pod reconciles: a LeaderWorkerSet's
     * worker StatefulSet has the group's leader pod as its controller, and LWS re-applies it.
     */
    bool reconciles;
    struct kind_way ways[KINDS_NACTIONS];
    /* Where the row comes from: "docs/workload-kinds.md#notebook" for a built-in row, or
       "FILE:LINE:COL" of a user row. */
    const char *source;
    /* The resource (plural) of a built-in row as its project's CRD names it, for the RBAC
       manifest and its test; NULL on user rows. The walk resolves resources through API
       discovery, never from this. */
    const char *resource;
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
 * object; KIND_ANNOTATE: the annotation is present (with `value`, when set); KIND_COMMAND: every
 * leaf of one element of `stopped` holds. Pure. -1 with a message when the JSON cannot be
 * parsed; KIND_DELETE/KIND_EVICT/KIND_NONE: 0.
 * Test the API's answer to a KIND_PATCH or KIND_ANNOTATE write with it too: a structural CRD
 * prunes a field its installed release does not have (RayService spec.suspend before KubeRay
 * 1.7.0) and answers 200, so 0 there means this cluster's release cannot do the action.
 * Kueue owns spec.suspend of the objects it admits (label kueue.x-k8s.io/queue-name): for those
 * a suspend patch is undone at the next admission, and kube.c deactivates the Kueue Workload.
 */
int kinds_is_stopped(const struct kind_way *way, const char *obj_json, size_t len, char *err,
                     size_t errlen);

/*
 * May `way` act on `obj_json` (the object as the API returned it)? 1 when it has no `requires`
 * or every leaf of it holds; 0 when one does not, with `why` naming it ("spec.
 * shutdownAfterJobFinishes must be true"); -1 with a message when the JSON cannot be parsed.
 * The caller keeps the workload on 0, with `why` in its reason. Pure.
 */
int kinds_can_act(const struct kind_way *way, const char *obj_json, size_t len, char *why,
                  size_t whylen);

/*
 * The verbs (get, patch, delete) a way needs on the kind's resource itself, for RBAC: get to
 * read it, patch for every acting way (the notice annotation and the write-ahead record go on
 * the object acted on, and scale records the replicas before), delete for KIND_DELETE. None
 * for KIND_NONE. Subresources (scale, eviction) are in kinds_perms(). Returns the count
 * (at most 3), filling at most `max`.
 */
size_t kinds_verbs(const struct kind_way *way, const char **verbs, size_t max);

/* One permission a way needs: `verb` on the kind's resource, or on its `subresource`, or on
   another resource (`group`, `resource`: a KIND_COMMAND's command objects). */
struct kind_perm {
    const char *subresource; /* NULL: the resource itself; "scale"; "eviction" (pods) */
    const char *verb;
    const char *group, *resource; /* NULL: the row's own; else another resource's */
};

/*
 * Every permission a way needs, subresources included: kinds_verbs() plus get and patch on
 * "scale" for KIND_SCALE, for KIND_EVICT create on "eviction" (besides get on the pod), and
 * for KIND_COMMAND create on the command's resource in its group. Returns the count (at most
 * 5), filling at most `max`.
 */
size_t kinds_perms(const struct kind_way *way, struct kind_perm *perms, size_t max);

/*
 * The permissions the owner walk needs on a row whatever the rule's action: get on every row
 * whose controller reconciles (the walk reads it to climb) and on Pod (the start). Returns the
 * count (0 or 1).
 */
size_t kinds_walk_perms(const struct kind_def *def, struct kind_perm *perms, size_t max);

/*
 * The JSON body that creates `way`'s command (KIND_COMMAND) about the object `api_version`
 * `kind` NS/NAME with `uid`: its `stop` action, or its `undo` action when `undo` is set. The
 * object is the command's controller owner and its `target`, as Volcano's vcctl sets them
 * (its job controller finds the Job by the target's name). *name gets the command's name
 * (caller frees). NULL when the way is not a command. Pure.
 */
char *kinds_command_body(const struct kind_way *way, const char *api_version, const char *kind,
                         const char *ns, const char *name, const char *uid, bool undo,
                         char **cmd_name);

/* ---- the `kinds:` section of a rules file (rules.c calls these) --------------------------- */

struct ydom_node;

/* Receives each problem of a `kinds:` section at its position; `note` is true for a note
   (a user row replacing a built-in one), false for an error. */
typedef void (*kinds_report_fn)(void *arg, int line, int col, bool note, const char *msg);

/*
 * Build a table from the `kinds:` sequence `seq` of `file` (NULL: no section, the built-in
 * rows only), reporting every problem through `report`. Returns a new table, never NULL; it
 * holds the rows that were valid, and the caller discards it when an error was reported.
 */
struct kinds *kinds_parse(const struct ydom_node *seq, const char *file, kinds_report_fn report,
                          void *arg);
void kinds_free(struct kinds *t);

/* The user rows of `t` (those before the built-in ones in kinds_at order). */
size_t kinds_user_count(const struct kinds *t);

/* How to tell a user to add a kind: "add it under kinds: in the rules file (rules/README.md)". */
#define KINDS_HOW_TO_ADD                                                                           \
    "add it under 'kinds:' in the rules file (see rules/README.md, Workload kinds)"

#endif
