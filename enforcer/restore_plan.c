/*
 * The way back (restore.h): the `acted` record the engine adds to its notice annotation, the
 * reading of an object by `restore`, the decision to undo or to refuse, and the sentence that
 * tells an owner how to come back. Pure: JSON in, JSON and text out (restore_run.c is the
 * command that makes the calls).
 */
#include "restore.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "annot.h"
#include "jsonparse.h"
#include "notice.h"
#include "rfc3339.h"
#include "util.h"

void restore_record_free(struct restore_record *r)
{
    free(r->uid);
    free(r->undo);
    free(r->key);
    free(r->value);
    free(r->rule);
    free(r->action);
    memset(r, 0, sizeof(*r));
}

static const struct {
    const char *name;
    enum kind_method m;
} restore_ways[] = {
    {"scale", KIND_SCALE},   {"patch", KIND_PATCH}, {"annotate", KIND_ANNOTATE},
    {"delete", KIND_DELETE}, {"evict", KIND_EVICT}, {"command", KIND_COMMAND},
};

static const char *restore_way_name(enum kind_method m)
{
    for (size_t i = 0; i < ARRAY_LEN(restore_ways); i++)
        if (restore_ways[i].m == m)
            return restore_ways[i].name;
    return "none";
}

char *restore_record_add(const char *notice_json, const struct restore_record *r)
{
    char err[160];
    struct notice n;
    if (notice_parse(notice_json, strlen(notice_json), &n, err, sizeof(err)) < 0) {
        notice_free(&n);
        return NULL;
    }
    /* A record read back replaces the one it had; the fields are the way's. */
    notice_acted_free(&n.acted);
    n.acted = (struct notice_acted){.present = true,
                                    .way = xstrdup(restore_way_name(r->method)),
                                    .uid = r->uid ? xstrdup(r->uid) : NULL,
                                    .has_generation = r->has_generation,
                                    .generation = r->generation};
    if (r->method == KIND_SCALE) {
        n.acted.has_replicas_before = true;
        n.acted.replicas_before = r->replicas_before;
    }
    if (r->method == KIND_PATCH && r->undo)
        n.acted.undo = xstrdup(r->undo);
    if (r->method == KIND_ANNOTATE && r->key) {
        n.acted.key = xstrdup(r->key);
        n.acted.value = xstrdup(r->value ? r->value : "");
    }
    char *s = notice_encode(&n);
    notice_free(&n);
    return s;
}

static const char *restore_str(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static char *restore_dup(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* An integer member (JSON integer only); false when absent or of another type. */
static bool restore_int(json_object *o, const char *key, int64_t *out)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return false;
    *out = json_object_get_int64(v);
    return true;
}

int restore_record_parse(const char *notice_json, struct restore_record *r, char *err,
                         size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->acted = NAN;
    struct notice n;
    if (notice_parse(notice_json, strlen(notice_json), &n, err, errlen) < 0) {
        notice_free(&n);
        return -1;
    }
    r->rule = restore_dup(n.rule);
    r->action = restore_dup(n.action);
    r->acted = n.acted_at;
    const struct notice_acted *a = &n.acted;
    if (!a->present) {
        notice_free(&n);
        return 0; /* method KIND_NONE: no record */
    }
    int ret = 0;
    for (size_t i = 0; a->way && i < ARRAY_LEN(restore_ways); i++)
        if (strcmp(a->way, restore_ways[i].name) == 0)
            r->method = restore_ways[i].m;
    r->uid = restore_dup(a->uid);
    r->has_generation = a->has_generation;
    r->generation = a->generation;
    switch (r->method) {
    case KIND_SCALE:
        if (!a->has_replicas_before || a->replicas_before < 0) {
            snprintf(err, errlen, "the record has no replica count from before the action");
            ret = -1;
        } else {
            r->replicas_before = a->replicas_before;
        }
        break;
    case KIND_PATCH:
        if (a->undo) {
            r->undo = xstrdup(a->undo);
        } else {
            snprintf(err, errlen, "the record has no undo patch");
            ret = -1;
        }
        break;
    case KIND_ANNOTATE:
        r->key = restore_dup(a->key);
        r->value = restore_dup(a->value);
        if (!r->key || !r->value) {
            snprintf(err, errlen, "the record does not name the stop annotation and its value");
            ret = -1;
        }
        break;
    case KIND_NONE:
        snprintf(err, errlen, "the record's way '%s' is unknown", a->way ? a->way : "");
        ret = -1;
        break;
    default:
        break; /* delete, evict: recorded, and nothing to undo */
    }
    if (ret == 0 && !r->uid) {
        snprintf(err, errlen, "the record has no uid");
        ret = -1;
    }
    notice_free(&n);
    return ret;
}

int restore_obj_parse(const char *json, size_t len, struct restore_obj *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->rec.acted = NAN;
    o->stopped = -1;
    json_object *root =
        jsonparse_strict(json, len, JSON_TOKENER_DEFAULT_DEPTH, "object", err, errlen);
    json_object *md = NULL, *ann = NULL;
    if (!root || !json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "metadata", &md) ||
        !json_object_is_type(md, json_type_object)) {
        if (root)
            snprintf(err, errlen, "the object has no metadata");
        json_object_put(root);
        return -1;
    }
    o->kind = restore_dup(restore_str(root, "kind"));
    o->ns = restore_dup(restore_str(md, "namespace"));
    o->name = restore_dup(restore_str(md, "name"));
    o->uid = restore_dup(restore_str(md, "uid"));
    o->has_generation = restore_int(md, "generation", &o->generation);
    if (json_object_object_get_ex(md, "annotations", &ann) &&
        json_object_is_type(ann, json_type_object)) {
        o->notice = restore_dup(restore_str(ann, ANNOT_NOTICE));
        o->restored_at = restore_dup(restore_str(ann, ANNOT_RESTORED_AT));
    }
    if (o->notice && restore_record_parse(o->notice, &o->rec, o->rec_err, sizeof(o->rec_err)) < 0 &&
        !o->rec_err[0])
        snprintf(o->rec_err, sizeof(o->rec_err), "unreadable");
    if (o->rec.method == KIND_ANNOTATE && o->rec.key && ann) {
        json_object *v;
        o->has_stop = json_object_object_get_ex(ann, o->rec.key, &v);
        o->stop_value = restore_dup(o->has_stop && json_object_is_type(v, json_type_string)
                                        ? json_object_get_string(v)
                                        : NULL);
    }
    json_object_put(root);
    return 0;
}

void restore_obj_free(struct restore_obj *o)
{
    free(o->kind);
    free(o->ns);
    free(o->name);
    free(o->uid);
    free(o->notice);
    free(o->restored_at);
    free(o->stop_value);
    restore_record_free(&o->rec);
    memset(o, 0, sizeof(*o));
}

void restore_op_free(struct restore_op *op)
{
    free(op->patch);
    memset(op, 0, sizeof(*op));
}

/*
 * The merge patch: `base` (the undo patch, or NULL) with metadata.annotations removing the
 * notice (and `also`, when set) and writing restored-at.
 */
static char *restore_patch(const char *base, const char *also, double now)
{
    char err[128], at[RFC3339_LEN];
    json_object *p = base ? jsonparse_strict(base, strlen(base), JSON_TOKENER_DEFAULT_DEPTH,
                                             "undo patch", err, sizeof(err))
                          : NULL;
    if (!p || !json_object_is_type(p, json_type_object)) {
        json_object_put(p);
        p = json_object_new_object();
    }
    json_object *md, *ann;
    if (!json_object_object_get_ex(p, "metadata", &md) ||
        !json_object_is_type(md, json_type_object)) {
        md = json_object_new_object();
        json_object_object_add(p, "metadata", md);
    }
    if (!json_object_object_get_ex(md, "annotations", &ann) ||
        !json_object_is_type(ann, json_type_object)) {
        ann = json_object_new_object();
        json_object_object_add(md, "annotations", ann);
    }
    json_object_object_add(ann, ANNOT_NOTICE, NULL);
    if (also)
        json_object_object_add(ann, also, NULL);
    rfc3339_format(at, sizeof(at), now, RFC3339_SEC);
    json_object_object_add(ann, ANNOT_RESTORED_AT, json_object_new_string(at));
    char *s = xstrdup(
        json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(p);
    return s;
}

int restore_plan(const struct restore_obj *obj, double now, struct restore_op *op, char *msg,
                 size_t msglen)
{
    memset(op, 0, sizeof(*op));
    const struct restore_record *r = &obj->rec;
    char what[200], t[RFC3339_LEN];
    snprintf(what, sizeof(what), "%s %s/%s", obj->kind ? obj->kind : "object",
             obj->ns ? obj->ns : "", obj->name ? obj->name : "");
    if (!obj->notice) {
        if (obj->restored_at)
            snprintf(msg, msglen, "%s was already restored at %s: nothing to undo", what,
                     obj->restored_at);
        else
            snprintf(msg, msglen,
                     "%s carries no %s annotation: gpureclaim did not reclaim it, nothing to "
                     "undo",
                     what, ANNOT_NOTICE);
        return -1;
    }
    if (isnan(r->acted)) {
        snprintf(msg, msglen,
                 "%s has a reclaim notice but was not acted on: nothing to undo (to keep it, "
                 "use it, or ask for time with gpureclaim.io/keep-until)",
                 what);
        return -1;
    }
    rfc3339_format(t, sizeof(t), r->acted, RFC3339_SEC);
    if (obj->rec_err[0] || r->method == KIND_NONE) {
        snprintf(msg, msglen,
                 "%s was acted on at %s but its notice does not record how (%s): undo it by "
                 "hand",
                 what, t, obj->rec_err[0] ? obj->rec_err : "no 'acted' record");
        return -1;
    }
    if (r->method == KIND_DELETE || r->method == KIND_EVICT) {
        snprintf(msg, msglen, "%s was acted on at %s with %s, which cannot be undone", what, t,
                 restore_way_name(r->method));
        return -1;
    }
    if (!obj->uid || strcmp(obj->uid, r->uid) != 0) {
        snprintf(msg, msglen,
                 "%s was replaced since the action (uid '%s', the action was on '%s'): refusing "
                 "to change the new object",
                 what, obj->uid ? obj->uid : "", r->uid);
        return -1;
    }
    if (r->method == KIND_COMMAND && obj->stopped != 1) {
        /* The platform carried out a command since (resumed it, or the run ended), or the
           object cannot say: undoing could restart what someone else stopped. */
        snprintf(msg, msglen,
                 "%s is not stopped as the action left it (%s): it was resumed or ended since "
                 "%s; refusing",
                 what,
                 obj->stopped == 0 ? "its status no longer says so" : "its status is unreadable",
                 t);
        return -1;
    }
    if (r->method == KIND_ANNOTATE) {
        if (!obj->has_stop) {
            snprintf(msg, msglen,
                     "%s no longer has the annotation '%s' set at %s: it was restarted through "
                     "its platform already; refusing",
                     what, r->key, t);
            return -1;
        }
        if (!obj->stop_value || strcmp(obj->stop_value, r->value) != 0) {
            snprintf(msg, msglen,
                     "%s changed since the action: annotation '%s' is '%.60s', the action set "
                     "'%.60s'; refusing",
                     what, r->key, obj->stop_value ? obj->stop_value : "(not a string)", r->value);
            return -1;
        }
    } else if (!r->has_generation || !obj->has_generation) {
        snprintf(msg, msglen,
                 "%s: no metadata.generation %s, so a change since the action cannot be ruled "
                 "out; refusing",
                 what, r->has_generation ? "on the object" : "in the record");
        return -1;
    } else if (obj->generation != r->generation) {
        snprintf(msg, msglen,
                 "%s changed since the action: its spec is at generation %" PRId64
                 ", the action left %" PRId64 " (changed by someone else since %s); refusing",
                 what, obj->generation, r->generation, t);
        return -1;
    }
    op->method = r->method;
    switch (r->method) {
    case KIND_SCALE:
        op->replicas = r->replicas_before;
        op->patch = restore_patch(NULL, ANNOT_REPLICAS_BEFORE, now);
        snprintf(op->what, sizeof(op->what), "scale %s back to %" PRId64 " replicas", what,
                 r->replicas_before);
        break;
    case KIND_PATCH:
        op->patch = restore_patch(r->undo, NULL, now);
        snprintf(op->what, sizeof(op->what), "patch %s with %.120s", what, r->undo);
        break;
    case KIND_COMMAND:
        op->patch = restore_patch(NULL, NULL, now);
        snprintf(op->what, sizeof(op->what), "create the command that resumes %s", what);
        break;
    default: /* KIND_ANNOTATE */
        op->patch = restore_patch(NULL, r->key, now);
        snprintf(op->what, sizeof(op->what), "remove annotation %s from %s", r->key, what);
        break;
    }
    return 0;
}

char *restore_hint(enum kind_method method, const char *kind, const char *ns, const char *name,
                   const char *key, const char *undo)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "gpureclaim-enforcer restore %s%s%s/%s", ns && *ns ? ns : "",
             ns && *ns ? "/" : "", kind, name);
    switch (method) {
    case KIND_SCALE:
        return xasprintf("to bring it back: %s, or scale %s %s back to the replicas in its "
                         "annotation %s",
                         cmd, kind, name, ANNOT_REPLICAS_BEFORE);
    case KIND_PATCH:
        return xasprintf("to bring it back: %s, or apply the merge patch %s to %s %s", cmd,
                         undo ? undo : "that undoes the stop", kind, name);
    case KIND_ANNOTATE:
        return xasprintf("to bring it back: %s, or remove the annotation %s from %s %s (the "
                         "platform's own start does that)",
                         cmd, key ? key : "", kind, name);
    case KIND_DELETE:
        return xasprintf("there is no way back through gpureclaim after a delete: re-create %s "
                         "%s from its source",
                         kind, name);
    case KIND_COMMAND: /* key: the command's kind, undo: its action that undoes the stop */
        return xasprintf("to bring it back: %s, or create a %s %s for %s %s (as its platform's "
                         "CLI resumes it)",
                         cmd, key ? key : "command", undo ? undo : "", kind, name);
    default:
        return NULL;
    }
}
