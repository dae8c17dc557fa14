/*
 * The way back: what `gpureclaim-enforcer restore` does to undo a reclaim, and what the
 * engine records on the object at action time so that it can (docs/action-lifecycle.md,
 * "Restore").
 *
 * The object itself carries the record, not the enforcer's state file: a restore may run from
 * an SRE's laptop, after a failover, or after the state file was lost. When the engine acts
 * (scale to zero, a stop patch, a stop annotation), it adds to its notice annotation
 * (gpureclaim.io/reclaim-notice, next to actedAt) an `acted` record: the way used, the uid of
 * the object acted on, its metadata.generation after the action, and what undoing needs (the
 * replicas before, the undo patch, the stop annotation and its exact value). `restore` reads
 * the object, and refuses unless the object is still the one acted on and still as the action
 * left it:
 *
 *   - another uid: the object was replaced (deleted and re-created under the same name);
 *   - scale and patch ways: another metadata.generation. The API server bumps it on every
 *     change of the spec (a /scale included), and not for metadata or status, so a spec
 *     changed by anyone since the action (the platform restarted it, an owner edited it, a
 *     GitOps tool synced it) shows; writing our own record, an annotation, does not bump it;
 *   - annotate way: a stop annotation does not bump the generation, so the annotation must
 *     still be there with exactly the value the engine wrote (Kubeflow's "Start" removes it:
 *     the workload was restarted through the platform already).
 *
 *   - command way (a Volcano Job): a command changes the object's status only, so the object
 *     must still read as stopped by the row's way (obj.stopped), besides the generation.
 *
 * Otherwise it undoes the stop (the /scale back to the recorded replicas, the undo patch,
 * removing the stop annotation, or the row's undo command) with a resourceVersion precondition,
 * removes the notice and writes gpureclaim.io/restored-at, from which the engine counts a fresh
 * idle window: a restored workload is not reclaimed again until it has been idle for a whole idle
 * timer after the restore.
 *
 * The record, the reading of the object and the decision are pure (restore_plan.c: JSON in, JSON
 * and sentences out). The command itself (restore_run, restore_run.c) makes its Kubernetes
 * calls through a small vtable, struct restore_api, as the action engine does through its
 * backends (act.h), so that its whole path is tested against a fake
 * (tests/unit/test_restore.c); cmd_restore.c only turns the flags into a kube client, a kinds table
 * and an audit file, and calls it.
 */
#ifndef GPURECLAIM_RESTORE_H
#define GPURECLAIM_RESTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kinds.h"
#include "kube_json.h"

/* How an object was acted on, as recorded in its notice annotation's `acted` record. */
struct restore_record {
    enum kind_method method; /* KIND_NONE: no (readable) record */
    char *uid;               /* the object acted on */
    bool has_generation;
    int64_t generation;      /* metadata.generation after the action */
    int64_t replicas_before; /* KIND_SCALE */
    char *undo;              /* KIND_PATCH: the merge patch that undoes the stop, or NULL */
    char *key, *value;       /* KIND_ANNOTATE: the stop annotation and the value written */
    double acted;            /* actedAt; NaN when absent */
    char *rule, *action;     /* from the notice */
};

void restore_record_free(struct restore_record *r);

/*
 * The notice annotation `notice_json` with the `acted` record of `r` added (r->acted,
 * rule and action are not written: the notice has them). Returns a malloc'd string, or NULL
 * when `notice_json` is not a JSON object.
 */
char *restore_record_add(const char *notice_json, const struct restore_record *r);

/*
 * The object as `restore` needs it, from its JSON (kube_get's raw): identity, generation, the
 * annotations it reads and the record in its notice. Strings are NULL when absent.
 */
struct restore_obj {
    char *kind, *ns, *name, *uid;
    bool has_generation;
    int64_t generation;
    char *notice;              /* gpureclaim.io/reclaim-notice */
    char *restored_at;         /* gpureclaim.io/restored-at */
    struct restore_record rec; /* from the notice; method KIND_NONE when there is none */
    char rec_err[160];         /* why the notice's record could not be read, "" if it could */
    char *stop_value;          /* the value of the record's stop annotation (KIND_ANNOTATE) */
    bool has_stop;             /* that annotation is present */
    /* KIND_COMMAND: whether the object still reads as stopped by the row's command way
       (kinds_is_stopped; the caller sets it, -1 unknown): a command is carried out by the
       platform, and nothing else on the object says whether it was undone since. */
    int stopped;
};

/* Parse an object. 0, or -1 with a message when it is not a JSON object with metadata. */
int restore_obj_parse(const char *json, size_t len, struct restore_obj *o, char *err,
                      size_t errlen);
void restore_obj_free(struct restore_obj *o);

/* Read a notice's `acted` record (and actedAt, rule, action). -1 with a message. */
int restore_record_parse(const char *notice_json, struct restore_record *r, char *err,
                         size_t errlen);

/* What restore will do. */
struct restore_op {
    enum kind_method method; /* KIND_SCALE, KIND_PATCH, KIND_ANNOTATE or KIND_COMMAND */
    int64_t replicas;        /* KIND_SCALE: scale back to this */
    /*
     * KIND_PATCH, KIND_ANNOTATE: the one merge patch that undoes the stop and updates the
     * annotations (notice removed, restored-at written), sent with a resourceVersion
     * precondition. KIND_SCALE, KIND_COMMAND: the annotation patch sent after the /scale or
     * the undo command.
     */
    char *patch;
    char what[256]; /* "scale Deployment ml/x back to 2 replicas", for output and audit */
};

/*
 * Decide: 0 with `op` filled, or -1 with the reason for refusing in `msg` (one sentence, no
 * final full stop). `now` is written as restored-at.
 */
int restore_plan(const struct restore_obj *obj, double now, struct restore_op *op, char *msg,
                 size_t msglen);
void restore_op_free(struct restore_op *op);

/*
 * The sentence telling an owner how to bring a workload back after `method` on KIND NS/NAME:
 * the restore command, and the platform's own path (scale back, remove the annotation, apply
 * the undo patch, create the undo command), or, after a delete, that there is none. `key` and
 * `undo` as in kind_way; for KIND_COMMAND the command's kind and its undo action.
 * NULL for evict and none (the controller re-creates an evicted pod). Caller frees.
 */
char *restore_hint(enum kind_method method, const char *kind, const char *ns, const char *name,
                   const char *key, const char *undo);

/* ---- the `restore` command (restore_run.c) ------------------------------------------------- */

/* What `restore` was asked for: [NS/]KIND/NAME split, the strings pointing into `spec`. */
struct restore_target {
    char *spec;
    const char *ns, *kind, *name;
};

/*
 * Split `target`, NS/KIND/NAME or KIND/NAME in namespace `ns_flag` (--namespace; `ns_set`: it
 * was given, and then must agree with a target that names its namespace). 0, or -1 with the
 * message (a usage error).
 */
int restore_target_parse(const char *target, const char *ns_flag, bool ns_set,
                         struct restore_target *t, char *err, size_t errlen);
void restore_target_free(struct restore_target *t);

/*
 * The row of table `t` for KIND as the user typed it: matched without regard to case against
 * the rows' kinds and resources ("Notebook", "notebook", "notebooks"), optionally with its
 * group ("notebooks.kubeflow.org"), as kubectl names resources. NULL with a message when no
 * row or more than one matches.
 */
const struct kind_def *restore_kind(const struct kinds *t, const char *want, char *err,
                                    size_t errlen);

/*
 * The Kubernetes calls `restore` makes, each as its kube.h namesake with `arg` for the
 * client, and `command` as act_kube_command (a KIND_COMMAND way's undo command).
 * act_kube_restore_api (act.h) gives the real ones: the Kubernetes backend owns the calls that
 * act, and the ones that undo.
 */
struct restore_api {
    void *arg;
    enum kube_result (*get)(void *arg, const struct kube_ref *ref, struct kube_obj *obj, char *err,
                            size_t errlen);
    enum kube_result (*scale)(void *arg, const struct kube_ref *ref, const char *resource_version,
                              int64_t replicas, int64_t *previous, char *err, size_t errlen);
    enum kube_result (*patch)(void *arg, const struct kube_ref *ref, const char *resource_version,
                              const char *merge_patch, char *err, size_t errlen);
    enum kube_result (*post_event)(void *arg, const struct kube_ref *involved, const char *reason,
                                   const char *message, const char *type, const char *action,
                                   char *err, size_t errlen);
    long (*last_status)(void *arg);
    const char *(*last_resource_version)(void *arg);
    enum kube_result (*command)(void *arg, const struct kind_way *way, const struct kube_obj *obj,
                                bool undo, char *err, size_t errlen);
};

struct audit;

/*
 * `restore`: read the object KIND NS/NAME of row `def`, decide (restore_plan) and, unless
 * `dry_run`, undo the stop with a resourceVersion precondition (a command way: its undo
 * command, then the annotations with the uid precondition only), post an Event on the object
 * and append an audit line to `au` (NULL: none). What it did, or would do, goes to `out`; the
 * reason for a refusal or a failure to `errout` ("error: <sentence>") and, as result
 * "refused" or the API's, to the audit trail. Returns 0 restored (or, with `dry_run`, would
 * be), 1 refused or failed.
 */
int restore_run(const struct restore_api *api, const struct kind_def *def, const char *ns,
                const char *name, bool dry_run, struct audit *au, FILE *out, FILE *errout);

#endif
