/*
 * The notice annotation's codec (notice.h): struct notice to JSON and back. It lives apart
 * from the engine and from `restore` because both read what the engine wrote, possibly from
 * another version or another replica, and an owner can edit the annotation: one strict parser,
 * fuzzed on its own (fuzz/fuzz_notice.c), rather than a lenient reading in each user.
 */
#include "notice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonparse.h"
#include "rfc3339.h"
#include "utf8.h"
#include "util.h"

void notice_init(struct notice *n)
{
    *n = (struct notice){.act_at = NAN, .idle_since = NAN, .noticed_at = NAN, .acted_at = NAN};
}

void notice_acted_free(struct notice_acted *a)
{
    free(a->way);
    free(a->uid);
    free(a->spec);
    free(a->undo);
    free(a->key);
    free(a->value);
    *a = (struct notice_acted){0};
}

void notice_free(struct notice *n)
{
    free(n->rule);
    free(n->action);
    free(n->window);
    free(n->threshold);
    free(n->uid);
    notice_acted_free(&n->acted);
    notice_init(n);
}

/* ---- encode ----------------------------------------------------------------------------- */

static void notice_add_str(json_object *o, const char *key, const char *v)
{
    if (v)
        json_object_object_add(o, key, json_object_new_string(v));
}

/* A time in whole seconds; "-" when NaN (rfc3339_format's mark for unknown). */
static void notice_add_time(json_object *o, const char *key, double t)
{
    char buf[RFC3339_LEN];
    rfc3339_format(buf, sizeof(buf), t, RFC3339_SEC);
    json_object_object_add(o, key, json_object_new_string(buf));
}

static json_object *notice_acted_json(const struct notice_acted *a)
{
    json_object *o = json_object_new_object();
    notice_add_str(o, "way", a->way);
    notice_add_str(o, "uid", a->uid);
    if (a->has_generation)
        json_object_object_add(o, "generation", json_object_new_int64(a->generation));
    notice_add_str(o, "specDigest", a->spec);
    if (a->has_replicas_before)
        json_object_object_add(o, "replicasBefore", json_object_new_int64(a->replicas_before));
    if (a->undo) {
        char err[128];
        json_object *u = jsonparse_strict(a->undo, strlen(a->undo), JSON_TOKENER_DEFAULT_DEPTH,
                                          "undo patch", err, sizeof(err));
        if (u)
            json_object_object_add(o, "undo", u);
    }
    notice_add_str(o, "key", a->key);
    notice_add_str(o, "value", a->value);
    return o;
}

/*
 * A JSON string as json-c writes it with JSON_C_TO_STRING_PLAIN (its json_escape_str): the
 * bytes up to the first NUL, with \b \n \r \t \f \" \\ and \/ escaped by name, any other
 * byte below a blank as \u00xx in lower-case hexadecimal, every other byte (DEL and UTF-8
 * included) as it is. test_notice compares it with json-c itself on random notices.
 */
static void notice_put_str(struct sbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sbuf_putc(b, '"');
    const char *run = s, *p = s;
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        char u[7];
        const char *esc;
        switch (c) {
        case '\b':
            esc = "\\b";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '/':
            esc = "\\/";
            break;
        default:
            if (c >= ' ')
                continue;
            u[0] = '\\', u[1] = 'u', u[2] = '0', u[3] = '0', u[4] = hex[c >> 4], u[5] = hex[c & 15],
            u[6] = '\0';
            esc = u;
        }
        sbuf_add(b, run, (size_t)(p - run));
        sbuf_puts(b, esc);
        run = p + 1;
    }
    sbuf_add(b, run, (size_t)(p - run));
    sbuf_putc(b, '"');
}

/* A member ("key":"value", after a comma unless first) of notice_encode's own writing. */
static void notice_put(struct sbuf *b, const char *key, const char *v)
{
    if (!v)
        return;
    if (b->len > 1) /* after the opening brace */
        sbuf_putc(b, ',');
    sbuf_putc(b, '"');
    sbuf_puts(b, key);
    sbuf_puts(b, "\":");
    notice_put_str(b, v);
}

static void notice_put_time(struct sbuf *b, const char *key, double t)
{
    char buf[RFC3339_LEN];
    notice_put(b, key, rfc3339_format(buf, sizeof(buf), t, RFC3339_SEC));
}

/* The notice through json-c's tree of objects: the writer of a notice with a record, and
   the reference test_notice holds notice_encode's own writing to. */
static char *notice_json(const struct notice *n)
{
    json_object *o = json_object_new_object();
    notice_add_time(o, "actAt", n->act_at);
    notice_add_str(o, "rule", n->rule);
    notice_add_str(o, "action", n->action);
    notice_add_time(o, "idleSince", n->idle_since);
    notice_add_str(o, "window", n->window);
    notice_add_str(o, "threshold", n->threshold);
    notice_add_time(o, "noticedAt", n->noticed_at);
    notice_add_str(o, "uid", n->uid);
    if (!isnan(n->acted_at))
        notice_add_time(o, "actedAt", n->acted_at);
    int flags = JSON_C_TO_STRING_PLAIN;
    if (n->acted.present) {
        json_object_object_add(o, "acted", notice_acted_json(&n->acted));
        /* The record was first written by re-serialising the notice this way: kept, so that
           the annotation's bytes stay what every version wrote. */
        flags |= JSON_C_TO_STRING_NOSLASHESCAPE;
    }
    char *s = xstrdup(json_object_to_json_string_ext(o, flags));
    json_object_put(o);
    return s;
}

char *notice_encode(const struct notice *n)
{
    if (n->acted.present)
        return notice_json(n);
    /* Written by hand, the bytes json-c writes (notice_put_str): the engine encodes a notice
       for every candidate it notices, and json-c's tree of objects was 17,000 instructions a
       notice, most of recommend's engine time (callgrind). A record's undo patch is parsed
       and written again by json-c (notice_json). */
    struct sbuf b = {0};
    sbuf_putc(&b, '{');
    notice_put_time(&b, "actAt", n->act_at);
    notice_put(&b, "rule", n->rule);
    notice_put(&b, "action", n->action);
    notice_put_time(&b, "idleSince", n->idle_since);
    notice_put(&b, "window", n->window);
    notice_put(&b, "threshold", n->threshold);
    notice_put_time(&b, "noticedAt", n->noticed_at);
    notice_put(&b, "uid", n->uid);
    if (!isnan(n->acted_at))
        notice_put_time(&b, "actedAt", n->acted_at);
    sbuf_putc(&b, '}');
    return sbuf_take(&b);
}

/* ---- parse ------------------------------------------------------------------------------ */

/*
 * Member `key` of `o` of type `type`: 1 with *v, 0 when absent or null, -1 with a message when
 * of another type.
 */
static int notice_member(json_object *o, const char *where, const char *key, json_type type,
                         json_object **v, char *err, size_t errlen)
{
    if (!json_object_object_get_ex(o, key, v) || !*v)
        return 0;
    if (json_object_is_type(*v, type))
        return 1;
    snprintf(err, errlen, "%s member '%s' is not %s", where, key,
             type == json_type_string ? "a string"
             : type == json_type_int  ? "an integer"
                                      : "an object");
    return -1;
}

/* A string member into *out (NULL when absent). Valid UTF-8 without NUL, else -1. */
static int notice_str(json_object *o, const char *where, const char *key, char **out, char *err,
                      size_t errlen)
{
    json_object *v;
    int r = notice_member(o, where, key, json_type_string, &v, err, errlen);
    if (r <= 0)
        return r;
    const char *s = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v);
    if (strlen(s) != len || !utf8_valid(s, len)) {
        snprintf(err, errlen, "%s member '%s' is not valid UTF-8 text", where, key);
        return -1;
    }
    *out = xstrdup(s);
    return 0;
}

/* A time member into *out, floored to whole seconds (NaN when absent, null or "-"). */
static int notice_time(json_object *o, const char *key, double *out, char *err, size_t errlen)
{
    char *s = NULL;
    if (notice_str(o, "notice", key, &s, err, errlen) < 0)
        return -1;
    int ret = 0;
    double t = NAN;
    char buf[RFC3339_LEN], perr[128];
    if (s && strcmp(s, "-") != 0) {
        if (rfc3339_parse(s, &t, perr, sizeof(perr)) < 0 ||
            strcmp(rfc3339_format(buf, sizeof(buf), t, RFC3339_SEC), "-") == 0) {
            snprintf(err, errlen, "notice member '%s' is not a time: '%.40s'", key, s);
            ret = -1;
        } else {
            t = floor(t);
        }
    }
    *out = ret == 0 ? t : NAN;
    free(s);
    return ret;
}

static int notice_int(json_object *o, const char *key, bool *has, int64_t *out, char *err,
                      size_t errlen)
{
    json_object *v;
    int r = notice_member(o, "acted record", key, json_type_int, &v, err, errlen);
    if (r > 0) {
        *has = true;
        *out = json_object_get_int64(v);
    }
    return r < 0 ? -1 : 0;
}

static int notice_acted_parse(json_object *a, struct notice_acted *out, char *err, size_t errlen)
{
    const char *w = "acted record";
    out->present = true;
    json_object *u;
    int r = notice_member(a, w, "undo", json_type_object, &u, err, errlen);
    if (r < 0)
        return -1;
    if (r > 0) {
        const char *s = json_object_to_json_string_ext(u, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!utf8_valid(s, strlen(s))) {
            snprintf(err, errlen, "acted record member 'undo' is not valid UTF-8 text");
            return -1;
        }
        out->undo = xstrdup(s);
    }
    if (notice_str(a, w, "way", &out->way, err, errlen) < 0 ||
        notice_str(a, w, "uid", &out->uid, err, errlen) < 0 ||
        notice_int(a, "generation", &out->has_generation, &out->generation, err, errlen) < 0 ||
        notice_str(a, w, "specDigest", &out->spec, err, errlen) < 0 ||
        notice_int(a, "replicasBefore", &out->has_replicas_before, &out->replicas_before, err,
                   errlen) < 0 ||
        notice_str(a, w, "key", &out->key, err, errlen) < 0 ||
        notice_str(a, w, "value", &out->value, err, errlen) < 0)
        return -1;
    return 0;
}

int notice_parse(const char *s, size_t len, struct notice *n, char *err, size_t errlen)
{
    notice_init(n);
    json_object *o = jsonparse_strict(s, len, JSON_TOKENER_DEFAULT_DEPTH, "notice", err, errlen);
    if (!o)
        return -1;
    int ret = -1;
    json_object *a;
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "the notice is not a JSON object");
        goto out;
    }
    if (notice_time(o, "actAt", &n->act_at, err, errlen) < 0 ||
        notice_str(o, "notice", "rule", &n->rule, err, errlen) < 0 ||
        notice_str(o, "notice", "action", &n->action, err, errlen) < 0 ||
        notice_time(o, "idleSince", &n->idle_since, err, errlen) < 0 ||
        notice_str(o, "notice", "window", &n->window, err, errlen) < 0 ||
        notice_str(o, "notice", "threshold", &n->threshold, err, errlen) < 0 ||
        notice_time(o, "noticedAt", &n->noticed_at, err, errlen) < 0 ||
        notice_str(o, "notice", "uid", &n->uid, err, errlen) < 0 ||
        notice_time(o, "actedAt", &n->acted_at, err, errlen) < 0)
        goto out;
    int r = notice_member(o, "notice", "acted", json_type_object, &a, err, errlen);
    if (r < 0 || (r > 0 && notice_acted_parse(a, &n->acted, err, errlen) < 0))
        goto out;
    ret = 0;
out:
    json_object_put(o);
    return ret;
}

/* ---- compare ---------------------------------------------------------------------------- */

static bool notice_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool notice_time_eq(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

bool notice_equal(const struct notice *a, const struct notice *b)
{
    const struct notice_acted *x = &a->acted, *y = &b->acted;
    return notice_time_eq(a->act_at, b->act_at) && notice_str_eq(a->rule, b->rule) &&
           notice_str_eq(a->action, b->action) && notice_time_eq(a->idle_since, b->idle_since) &&
           notice_str_eq(a->window, b->window) && notice_str_eq(a->threshold, b->threshold) &&
           notice_time_eq(a->noticed_at, b->noticed_at) && notice_str_eq(a->uid, b->uid) &&
           notice_time_eq(a->acted_at, b->acted_at) && x->present == y->present &&
           notice_str_eq(x->way, y->way) && notice_str_eq(x->uid, y->uid) &&
           x->has_generation == y->has_generation &&
           (!x->has_generation || x->generation == y->generation) &&
           notice_str_eq(x->spec, y->spec) && x->has_replicas_before == y->has_replicas_before &&
           (!x->has_replicas_before || x->replicas_before == y->replicas_before) &&
           notice_str_eq(x->undo, y->undo) && notice_str_eq(x->key, y->key) &&
           notice_str_eq(x->value, y->value);
}

/* ---- as read back ----------------------------------------------------------------------- */

static double notice_time_as_read(double t)
{
    char buf[RFC3339_LEN];
    return strcmp(rfc3339_format(buf, sizeof(buf), t, RFC3339_SEC), "-") == 0 ? NAN : floor(t);
}

static bool notice_str_as_read(const char *s, char **out)
{
    if (!s)
        return true;
    if (!utf8_valid(s, strlen(s)))
        return false;
    *out = xstrdup(s);
    return true;
}

int notice_as_read(const struct notice *n, struct notice *out)
{
    notice_init(out);
    if (n->acted.present)
        return -1;
    if (!notice_str_as_read(n->rule, &out->rule) || !notice_str_as_read(n->action, &out->action) ||
        !notice_str_as_read(n->window, &out->window) ||
        !notice_str_as_read(n->threshold, &out->threshold) ||
        !notice_str_as_read(n->uid, &out->uid)) {
        notice_free(out);
        return -1;
    }
    out->act_at = notice_time_as_read(n->act_at);
    out->idle_since = notice_time_as_read(n->idle_since);
    out->noticed_at = notice_time_as_read(n->noticed_at);
    /* Written only when set, so NaN stays NaN; "-" when not writable, read back as NaN. */
    out->acted_at = notice_time_as_read(n->acted_at);
    return 0;
}
