/*
 * What `restore` does once cmd_restore.c has read its flags (restore.h): the target and kind a
 * user typed, then read, decide
 * (restore_plan, restore_plan.c), undo, tell the owner (an Event) and audit, through the
 * Kubernetes calls of a struct restore_api, so that the command's whole path is tested against
 * a fake as the action engine's is; act_kube_restore_api (act_kube.c) gives the real calls.
 */
#include "restore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "audit.h"
#include "log.h"
#include "util.h"

int restore_target_parse(const char *target, const char *ns_flag, bool ns_set,
                         struct restore_target *t, char *err, size_t errlen)
{
    /* NS/KIND/NAME, or KIND/NAME in --namespace */
    char *spec = xstrdup(target);
    const char *ns = NULL, *kind = NULL, *name = NULL;
    char *a = strchr(spec, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    *t = (struct restore_target){0};
    if (a && b && !strchr(b + 1, '/')) {
        *a = *b = '\0';
        ns = spec, kind = a + 1, name = b + 1;
        if (ns_set && strcmp(ns_flag, ns) != 0) {
            snprintf(err, errlen, "'%s' names namespace '%s', --namespace says '%s'", target, ns,
                     ns_flag);
            free(spec);
            return -1;
        }
    } else if (a && !b) {
        *a = '\0';
        ns = ns_flag, kind = spec, name = a + 1;
    }
    if (!kind || !*kind || !name || !*name || !ns || !*ns) {
        snprintf(err, errlen, "invalid target '%s': want [NS/]KIND/NAME, e.g. ml/notebook/alice",
                 target);
        free(spec);
        return -1;
    }
    *t = (struct restore_target){spec, ns, kind, name};
    return 0;
}

void restore_target_free(struct restore_target *t)
{
    free(t->spec);
    *t = (struct restore_target){0};
}

const struct kind_def *restore_kind(const struct kinds *t, const char *want, char *err,
                                    size_t errlen)
{
    const char *dot = strchr(want, '.');
    size_t n = dot ? (size_t)(dot - want) : strlen(want);
    const struct kind_def *found = NULL;
    struct sbuf names = {0};
    for (size_t i = 0; i < kinds_count(t); i++) {
        const struct kind_def *d = kinds_at(t, i);
        bool kind = strlen(d->kind) == n && strncasecmp(d->kind, want, n) == 0;
        bool plural =
            d->resource && strlen(d->resource) == n && strncasecmp(d->resource, want, n) == 0;
        if (!(kind || plural) || (dot && strcasecmp(dot + 1, d->group) != 0))
            continue;
        bool dup = false; /* a user row replacing a built-in one comes first */
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp(kinds_at(t, j)->kind, d->kind) == 0 &&
                  strcmp(kinds_at(t, j)->group, d->group) == 0;
        if (dup)
            continue;
        sbuf_printf(&names, "%s%s%s%s", names.len ? ", " : "", d->kind, d->group[0] ? "." : "",
                    d->group);
        /* As kubectl resolves "job": a Kubernetes group (no dot: "", "apps", "batch") before
           a custom resource's of the same name (batch.volcano.sh's Job). */
        bool builtin = !strchr(d->group, '.');
        if (found && builtin != !strchr(found->group, '.')) {
            if (builtin)
                found = d;
            continue;
        }
        if (found) {
            snprintf(err, errlen, "kind '%s' is ambiguous: %s; name it with its group", want,
                     names.buf);
            sbuf_free(&names);
            return NULL;
        }
        found = d;
    }
    sbuf_free(&names);
    if (!found)
        snprintf(err, errlen, "kind '%s' is not in the workload kinds table: %s", want,
                 KINDS_HOW_TO_ADD);
    return found;
}

/* Say why on `errout` and in the audit trail; returns restore_run's status for it. */
static int restore_fail(struct audit *au, FILE *errout, const struct kube_ref *ref,
                        const struct restore_obj *o, const char *result, long status,
                        const char *msg)
{
    fprintf(errout, "error: %s\n", msg);
    struct labels none = {0};
    struct audit_ref chain = {ref->kind, ref->ns, ref->name, ref->uid};
    struct audit_rec r = {.time = NAN,
                          .event = "restore",
                          .rule = o && o->rec.rule ? o->rec.rule : NULL,
                          .workload = &none,
                          .chain = &chain,
                          .nchain = 1,
                          .action = o && o->rec.action ? o->rec.action : NULL,
                          .result = result,
                          .api_status = status,
                          .message = msg,
                          .act_after = NAN};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r.time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    audit_write(au, &r);
    return 1;
}

int restore_run(const struct restore_api *api, const struct kind_def *def, const char *ns,
                const char *name, bool dry_run, struct audit *au, FILE *out, FILE *errout)
{
    int status = 1;
    struct kube_obj obj = {0};
    struct restore_obj o = {0};
    struct restore_op op = {0};
    char err[1024], msg[1024];
    char api_version[256];
    snprintf(api_version, sizeof(api_version), "%s%s%s", def->group, def->group[0] ? "/" : "",
             def->version);
    struct kube_ref ref = {api_version, (char *)def->kind, (char *)ns, (char *)name, NULL};
    enum kube_result r = api->get(api->arg, &ref, &obj, err, sizeof(err));
    if (r == KUBE_NOT_FOUND) {
        /* The record of a reclaim lives on the object: a reclaim by delete took it with it. */
        snprintf(msg, sizeof(msg),
                 "%s %s/%s does not exist: nothing to restore (a reclaim by delete cannot be "
                 "undone: re-create it from its source); %s",
                 def->kind, ns, name, err);
        status = restore_fail(au, errout, &ref, NULL, kube_result_name(r),
                              api->last_status(api->arg), msg);
        goto out;
    }
    if (r != KUBE_OK) {
        snprintf(msg, sizeof(msg), "cannot read %s %s/%s: %s", def->kind, ns, name, err);
        status = restore_fail(au, errout, &ref, NULL, kube_result_name(r),
                              api->last_status(api->arg), msg);
        goto out;
    }
    ref.uid = obj.ref.uid;
    if (!obj.raw || restore_obj_parse(obj.raw, obj.raw_len, &o, err, sizeof(err)) < 0) {
        snprintf(msg, sizeof(msg), "cannot read %s %s/%s: %s", def->kind, ns, name,
                 obj.raw ? err : "no JSON");
        status = restore_fail(au, errout, &ref, NULL, "error", 0, msg);
        goto out;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec;
    /* A command's effect is in the object's status, which the row's way reads. */
    const struct kind_way *cmd_way = NULL;
    for (size_t wi = 0; wi < KINDS_NACTIONS && !cmd_way; wi++)
        if (def->ways[wi].method == KIND_COMMAND)
            cmd_way = &def->ways[wi];
    if (o.rec.method == KIND_COMMAND && cmd_way)
        o.stopped = kinds_is_stopped(cmd_way, obj.raw, obj.raw_len, err, sizeof(err));
    if (restore_plan(&o, now, &op, msg, sizeof(msg)) < 0) {
        status = restore_fail(au, errout, &ref, &o, "refused", 0, msg);
        goto out;
    }
    if (dry_run) {
        fprintf(out, "dry run: would %s\n", op.what);
        fprintf(out, "  then merge-patch %s/%s with %s\n", ns, name, op.patch);
        status = 0;
        goto out;
    }
    if (op.method == KIND_SCALE) {
        int64_t previous = 0;
        r = api->scale(api->arg, &ref, obj.resource_version, op.replicas, &previous, err,
                       sizeof(err));
        if (r == KUBE_OK)
            r = api->patch(api->arg, &ref, api->last_resource_version(api->arg), op.patch, err,
                           sizeof(err));
    } else if (op.method == KIND_COMMAND) {
        /* The command first: its controller then changes the object's status at any time, so
           the annotations follow with the uid precondition only (what was read was checked). */
        r = api->command(api->arg, cmd_way, &obj, true, err, sizeof(err));
        if (r == KUBE_OK)
            r = api->patch(api->arg, &ref, NULL, op.patch, err, sizeof(err));
    } else {
        r = api->patch(api->arg, &ref, obj.resource_version, op.patch, err, sizeof(err));
    }
    if (r != KUBE_OK) {
        snprintf(msg, sizeof(msg), "cannot %s: %s%s", op.what, err,
                 r == KUBE_CONFLICT ? " (it changed while restoring: run restore again to "
                                      "check it anew)"
                                    : "");
        status = restore_fail(au, errout, &ref, &o, kube_result_name(r), api->last_status(api->arg),
                              msg);
        goto out;
    }
    snprintf(msg, sizeof(msg), "restored: %s (reclaimed by rule '%s'); its idle window starts now",
             op.what, o.rec.rule ? o.rec.rule : "?");
    char eerr[512] = "";
    if (api->post_event(api->arg, &ref, "IdleGPUReclaimRestored", msg, "Normal", "Restore", eerr,
                        sizeof(eerr)) != KUBE_OK)
        log_warn("cannot post the restore event on %s '%s/%s': %s", def->kind, ns, name, eerr);
    fprintf(out, "%s\n", msg);
    struct labels none = {0};
    struct audit_ref chain = {def->kind, ns, name, ref.uid};
    audit_write(au, &(struct audit_rec){.time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
                                        .event = "restore",
                                        .rule = o.rec.rule,
                                        .workload = &none,
                                        .chain = &chain,
                                        .nchain = 1,
                                        .action = o.rec.action,
                                        .result = "ok",
                                        .message = msg,
                                        .act_after = NAN});
    status = 0;
out:
    restore_op_free(&op);
    restore_obj_free(&o);
    kube_obj_free(&obj);
    return status;
}
