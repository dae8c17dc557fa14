/*
 * The JSON-lines audit trail (audit.h).
 *
 * Lines are built with json-c, so any label value (quotes, newlines, non-ASCII) is escaped
 * correctly, and written with a single fwrite plus fflush, so that readers tailing the file
 * never see half a record from this process. NaN statistics (a window without points) are
 * written as null because JSON has no NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "audit.h"
#include "jsonparse.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

struct audit {
    FILE *f; /* NULL: discard */
    bool owned;
    char *path;
    unsigned long failures;
};

struct audit *audit_open(const char *path, char *err, size_t errlen)
{
    struct audit *a = xcalloc(1, sizeof(*a));
    if (!path)
        return a;
    a->path = xstrdup(path);
    if (strcmp(path, "-") == 0) {
        a->f = stdout;
        return a;
    }
    a->f = fopen(path, "ae");
    if (!a->f) {
        snprintf(err, errlen, "cannot open audit file '%s': %m", path);
        free(a->path);
        free(a);
        return NULL;
    }
    a->owned = true;
    return a;
}

void audit_close(struct audit *a)
{
    if (!a)
        return;
    if (a->owned)
        fclose(a->f);
    free(a->path);
    free(a);
}

unsigned long audit_failures(const struct audit *a)
{
    return a->failures;
}

static json_object *audit_num(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *audit_time(double t)
{
    if (!isfinite(t))
        return NULL;
    char buf[40];
    rfc3339_format(buf, sizeof(buf), t, RFC3339_SEC);
    return json_object_new_string(buf);
}

static json_object *audit_str(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

char *audit_format(const struct audit_rec *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "time", audit_time(r->time));
    json_object_object_add(o, "event", audit_str(r->event));
    json_object_object_add(o, "rule", audit_str(r->rule));
    json_object *w = json_object_new_object();
    for (size_t i = 0; r->workload && i < r->workload->n; i++)
        json_object_object_add(w, r->workload->v[i].name,
                               json_object_new_string(r->workload->v[i].value));
    json_object_object_add(o, "workload", w);
    json_object *chain = json_object_new_array();
    for (size_t i = 0; i < r->nchain; i++) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "kind", audit_str(r->chain[i].kind));
        if (r->chain[i].ns && r->chain[i].ns[0])
            json_object_object_add(c, "namespace", audit_str(r->chain[i].ns));
        json_object_object_add(c, "name", audit_str(r->chain[i].name));
        json_object_object_add(c, "uid", audit_str(r->chain[i].uid));
        json_object_array_add(chain, c);
    }
    json_object_object_add(o, "owner_chain", chain);
    if (r->d) {
        json_object *win = json_object_new_object();
        json_object_object_add(win, "start", audit_time(r->d->window_start));
        json_object_object_add(win, "end", audit_time(r->d->window_end));
        json_object_object_add(win, "samples", json_object_new_int64((int64_t)r->d->samples));
        json_object_object_add(win, "max", audit_num(r->d->max));
        json_object_object_add(win, "mean", audit_num(r->d->mean));
        json_object_object_add(o, "window", win);
        json_object_object_add(o, "threshold_percent", audit_num(r->d->threshold));
        json_object_object_add(o, "idle_since", audit_time(r->d->idle_since));
        json_object_object_add(o, "decision", audit_str(decide_decision_name(r->d->decision)));
        json_object_object_add(o, "reason", audit_str(decide_reason_name(r->d->reason)));
        /* Which proof the line rests on (issue 26): a decision from carried state is proven
           again over the whole window before a notice, report or action. */
        json_object_object_add(o, "proof",
                               audit_str(r->d->proof == DECIDE_PROOF_FULL ? "full"
                                         : r->reproved                    ? "incremental+full"
                                                                          : "incremental"));
    }
    json_object_object_add(o, "action", audit_str(r->action));
    if (!isnan(r->act_after))
        json_object_object_add(o, "act_after", audit_time(r->act_after));
    json_object_object_add(o, "result", audit_str(r->result));
    if (r->api_status)
        json_object_object_add(o, "api_status", json_object_new_int64(r->api_status));
    json_object_object_add(o, "message", audit_str(r->message));
    char *line = xstrdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return line;
}

int audit_write(struct audit *a, const struct audit_rec *r)
{
    if (!a || !a->f)
        return 0;
    char *line = audit_format(r);
    size_t n = strlen(line);
    line[n] = '\n'; /* replaces the NUL; written with its length */
    int ret = 0;
    if (fwrite(line, 1, n + 1, a->f) != n + 1 || fflush(a->f) != 0) {
        a->failures++;
        log_cond("audit write", LOG_ERROR, "cannot write audit file '%s': %m", a->path);
        ret = -1;
    } else {
        log_cond_clear("audit write");
    }
    free(line);
    return ret;
}

/* A string member, or NULL when absent or null; -1 when it is there but not a string. */
static int audit_member_str(json_object *o, const char *key, char **out)
{
    json_object *v;
    *out = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return -1;
    *out = xstrdup(json_object_get_string(v));
    return 0;
}

int audit_parse_line(const char *s, size_t len, struct audit_line *out, char *err, size_t errlen)
{
    *out = (struct audit_line){.time = NAN};
    json_object *o = jsonparse_strict(s, len, 16, "audit line", err, errlen), *wl, *tm;
    if (!o)
        return -1;
    int rc = -1;
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "audit line is not a JSON object");
        goto out;
    }
    if (audit_member_str(o, "event", &out->event) < 0 || !out->event ||
        audit_member_str(o, "rule", &out->rule) < 0 || !out->rule ||
        audit_member_str(o, "result", &out->result) < 0) {
        snprintf(err, errlen, "audit line without string 'event' and 'rule'");
        goto out;
    }
    if (!json_object_object_get_ex(o, "time", &tm) || !json_object_is_type(tm, json_type_string) ||
        rfc3339_parse(json_object_get_string(tm), &out->time, err, errlen) != 0) {
        if (!json_object_is_type(tm, json_type_string))
            snprintf(err, errlen, "audit line without a 'time'");
        goto out;
    }
    /* The writer's RFC 3339 has four-digit years: a later time is not one it wrote. */
    if (!(out->time >= 0 && out->time < 253402300800.0)) {
        snprintf(err, errlen, "audit line: time '%s' is out of range", json_object_get_string(tm));
        goto out;
    }
    if (!json_object_object_get_ex(o, "workload", &wl) ||
        !json_object_is_type(wl, json_type_object)) {
        snprintf(err, errlen, "audit line without a 'workload' object");
        goto out;
    }
    json_object_object_foreach(wl, name, value)
    {
        if (!json_object_is_type(value, json_type_string)) {
            snprintf(err, errlen, "audit line: workload label '%s' is not a string", name);
            goto out;
        }
        labels_set(&out->workload, name, json_object_get_string(value));
    }
    rc = 0;
out:
    json_object_put(o);
    return rc;
}

void audit_line_free(struct audit_line *l)
{
    free(l->event);
    free(l->rule);
    free(l->result);
    labels_free(&l->workload);
    *l = (struct audit_line){.time = NAN};
}
