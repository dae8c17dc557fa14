/*
 * The strict, versioned rules loader: YAML DOM (yaml.h) -> struct ruleset (rules.h).
 *
 * Everything a rules file can say is checked here, once, at load time, so that decide.c can
 * trust every field: a mistyped key, a duplicate, a string where a number belongs or a
 * value outside its range is an error naming file:line:col, never a silent default (the
 * Kubeflow culler ignored renamed settings and fell back to 24 h, kubeflow#7053). Errors are
 * collected with their position and sorted, so one run shows every problem in file order.
 *
 * `defaults:` holds rule keys that every rule inherits key by key (`queries:` too, query by
 * query); a rule's own value wins. Cross-field constraints (toleratedGap against step and
 * idleTimer, points per window) are checked on the effective values after inheritance.
 * Each key's type, range, default and documentation is one row of key_specs: the parser,
 * the inheritance and the key tables of rules/README.md are driven by that table.
 */
#include "rules.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "file.h"
#include "kinds.h"
#include "util.h"
#include "utf8.h"
#include "ydom.h"

#define DEFAULT_Q_PENDING                                                                          \
    "sum by (resource) (kube_pod_container_resource_requests{resource=~\"amd_com_.+\"} * on "      \
    "(namespace, pod) group_left () max by (namespace, pod) (kube_pod_status_unschedulable == "    \
    "1))"

#define MAX_POINTS           11000
#define MAX_TERMINATIONS_CAP 10000
#define NAME_MAX_LEN         63

/* ---- error collection ------------------------------------------------------------------- */

struct perr {
    int line, col;
    size_t seq;
    char *msg;
};

struct ctx {
    const char *file;
    struct perr *v;
    size_t n;
    struct perr *notes; /* not errors: a user kind row replacing a built-in one */
    size_t nnotes;
    size_t re_insts; /* compiled regular expressions so far, against RULES_MAX_RE_INSTS */
};

static void err_pos(struct ctx *c, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void err_pos(struct ctx *c, int line, int col, const char *fmt, ...)
{
    struct sbuf s = {0};
    va_list ap;

    va_start(ap, fmt);
    sbuf_vprintf(&s, fmt, ap);
    va_end(ap);
    c->v = xgrow(c->v, c->n, sizeof(*c->v));
    c->v[c->n] = (struct perr){.line = line, .col = col, .seq = c->n, .msg = sbuf_take(&s)};
    c->n++;
}

#define err_at(c, node, ...) err_pos((c), (node)->line, (node)->col, __VA_ARGS__)

static int perr_cmp(const void *a, const void *b)
{
    const struct perr *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void errors_push(struct rules_errors *errs, char *msg)
{
    errs->msg = xgrow(errs->msg, errs->n, sizeof(*errs->msg));
    errs->msg[errs->n++] = msg;
}

/* Quote a scalar's text for a message (shortened, control characters replaced). */
#define QBUF 72
static const char *scalar_text(const struct ydom_node *n, char buf[QBUF])
{
    return ydom_printable(n->str, n->len, buf, QBUF);
}

/* ---- value parsers ---------------------------------------------------------------------- */

static const char *const day_names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

static bool valid_rule_name(const char *s, size_t len)
{
    if (len == 0 || len > NAME_MAX_LEN || strlen(s) != len)
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (!alnum && !(ch == '-' && i > 0 && i + 1 < len))
            return false;
    }
    return true;
}

/*
 * A label name as Prometheus 3 takes it: any non-empty UTF-8 (prometheus/common model.
 * UTF8Validation, the default since 3.0; docs/tsdb-engines.md). A name that is not a legacy
 * identifier is written quoted in every query built from it (labels_put_name), which 2.x and
 * VictoriaMetrics 1.79 refuse: such a rule then keeps on a query error, never reads more.
 */
static bool valid_label_name(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && utf8_valid(s, n);
}

/* A string scalar (quoted, or plain that is not a number/bool/null); NULL after an error. */
static const char *get_string(struct ctx *c, const struct ydom_node *v, const char *key)
{
    if (v->kind != YDOM_KIND_SCALAR || ydom_scalar_type(v) != YDOM_T_STRING) {
        err_at(c, v, "'%s' must be a string, got %s", key, ydom_type_name(v));
        return NULL;
    }
    if (strlen(v->str) != v->len) {
        err_at(c, v, "'%s' must not contain a NUL character", key);
        return NULL;
    }
    return v->str;
}

/* An item of a sequence of strings such as 'namespaces'. */
static const char *get_item(struct ctx *c, const struct ydom_node *v, const char *list)
{
    if (v->kind != YDOM_KIND_SCALAR || ydom_scalar_type(v) != YDOM_T_STRING) {
        err_at(c, v, "items of '%s' must be strings, got %s", list, ydom_type_name(v));
        return NULL;
    }
    if (strlen(v->str) != v->len) {
        err_at(c, v, "items of '%s' must not contain a NUL character", list);
        return NULL;
    }
    return v->str;
}

static int get_number(struct ctx *c, const struct ydom_node *v, const char *key, double *out)
{
    if (ydom_scalar_number(v, out) < 0) {
        err_at(c, v, "'%s' must be a number, got %s", key, ydom_type_name(v));
        return -1;
    }
    return 0;
}

static int get_bool(struct ctx *c, const struct ydom_node *v, const char *key, bool *out)
{
    if (ydom_scalar_bool(v, out) < 0) {
        err_at(c, v, "'%s' must be a boolean (true or false), got %s", key, ydom_type_name(v));
        return -1;
    }
    return 0;
}

/* Durations are plain or quoted strings; a bare number gets a hint about the missing unit. */
static int get_duration(struct ctx *c, const struct ydom_node *v, const char *key, double *out)
{
    char b[QBUF];

    if (v->kind != YDOM_KIND_SCALAR || ydom_scalar_type(v) == YDOM_T_NULL ||
        ydom_scalar_type(v) == YDOM_T_BOOL) {
        err_at(c, v, "'%s' must be a duration such as 15m, got %s", key, ydom_type_name(v));
        return -1;
    }
    if (strlen(v->str) != v->len || dur_parse(v->str, out) < 0) {
        if (ydom_scalar_type(v) == YDOM_T_INT || ydom_scalar_type(v) == YDOM_T_FLOAT)
            err_at(c, v, "invalid duration '%s' for '%s' (a unit is required, e.g. '%sm')",
                   scalar_text(v, b), key, scalar_text(v, b));
        else
            err_at(c, v, "invalid duration '%s' for '%s'", scalar_text(v, b), key);
        return -1;
    }
    return 0;
}

static int lookup_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

/* An entry of a list of mappings (exemptions, overrides, activeWindows); `what` names it. */
static bool expect_entry(struct ctx *c, const struct ydom_node *v, const char *what)
{
    if (v->kind == YDOM_KIND_MAPPING)
        return true;
    err_at(c, v, "%s must be a mapping, got %s", what, ydom_type_name(v));
    return false;
}

static bool expect_kind(struct ctx *c, const struct ydom_node *v, enum ydom_kind kind,
                        const char *key)
{
    if (v->kind == kind)
        return true;
    err_at(c, v, "'%s' must be a %s, got %s", key,
           kind == YDOM_KIND_MAPPING ? "mapping" : "sequence", ydom_type_name(v));
    return false;
}

/* ---- notify: webhook notices (notify.c) --------------------------------------------------- */

/*
 * `notify:` of a rule or of `defaults:`, merged key by key like `queries:`. The URL itself is
 * a secret, so a rules file only names the file holding it (urlFile), and `check` does not
 * read that file: it may be mounted only where the enforcer runs.
 */
struct notify_vals {
    const struct ydom_node *map; /* the mapping, for "missing urlFile" */
    const char *url_file;        /* NULL: not set here */
    int format;                  /* -1: not set here */
    bool has_events, bad;
    unsigned events;
};

static const char *const notify_event_names[] = {"notice", "action", "spare"};
static const char *const notify_format_names[] = {"json", "slack"};

static void parse_notify(struct ctx *c, const struct ydom_node *map, struct notify_vals *nv,
                         const char *where)
{
    char b[QBUF];

    nv->format = -1;
    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "notify")) {
        nv->bad = true;
        return;
    }
    nv->map = map;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        if (strcmp(k->str, "urlFile") == 0) {
            const char *s = get_string(c, val, "urlFile");
            if (s && s[0] != '/')
                err_at(c, val, "'urlFile' must be an absolute path, got '%s'", scalar_text(val, b));
            else if (s)
                nv->url_file = s;
            nv->bad |= nv->url_file == NULL;
        } else if (strcmp(k->str, "format") == 0) {
            const char *s = get_string(c, val, "format");
            nv->format = s ? lookup_name(s, notify_format_names, 2) : -1;
            if (s && nv->format < 0)
                err_at(c, val, "invalid notify format '%s' (expected json or slack)",
                       scalar_text(val, b));
            nv->bad |= nv->format < 0;
        } else if (strcmp(k->str, "events") == 0) {
            nv->has_events = true;
            if (!expect_kind(c, val, YDOM_KIND_SEQUENCE, "events")) {
                nv->bad = true;
                continue;
            }
            for (size_t j = 0; j < val->nitems; j++) {
                const char *s = get_item(c, val->items[j], "events");
                int e = s ? lookup_name(s, notify_event_names, 3) : -1;
                if (s && e < 0)
                    err_at(c, val->items[j],
                           "invalid notify event '%s' (expected notice, action or spare)",
                           scalar_text(val->items[j], b));
                else if (e >= 0 && (nv->events & (1u << e)))
                    err_at(c, val->items[j], "duplicate notify event '%s'", s);
                if (e < 0)
                    nv->bad = true;
                else
                    nv->events |= 1u << e;
            }
        } else {
            err_at(c, k, "unknown key '%s' in 'notify' of %s", scalar_text(k, b), where);
        }
    }
}

/* Merge the rule's `notify:` over the defaults'; events: [] turns notices off. */
static void finish_notify(struct ctx *c, struct rule *r, const struct notify_vals *rv,
                          const struct notify_vals *dv, const char *where)
{
    if (rv->bad || dv->bad || (!rv->map && !dv->map))
        return;
    const char *url = rv->url_file ? rv->url_file : dv->url_file;
    int format = rv->map && rv->format >= 0 ? rv->format : dv->map ? dv->format : -1;
    unsigned events = rv->has_events ? rv->events
                      : dv->has_events
                          ? dv->events
                          : RULE_NOTIFY_NOTICE | RULE_NOTIFY_ACTION | RULE_NOTIFY_SPARE;
    if (!events)
        return;
    if (!url) {
        err_at(c, rv->map ? rv->map : dv->map, "missing required key 'urlFile' in 'notify' of %s",
               where);
        return;
    }
    r->notify.url_file = xstrdup(url);
    r->notify.format = format > 0 ? NOTIFY_FORMAT_SLACK : NOTIFY_FORMAT_JSON;
    r->notify.events = events;
}

/* ---- the key specification --------------------------------------------------------------- */

/*
 * Every rule key is described once, in key_specs below: its type, where its effective value
 * lives in struct rule, its range, its built-in default, whether `defaults:` may set it, and
 * its documentation. Parsing, range checks, inheritance and the key tables of rules/README.md
 * (rules_schema_markdown) all read that table, in the manner of Redis's standardConfig table
 * (src/config.c) and h2o's configurator commands (lib/core/configurator.c). Built-in defaults
 * are written in rules-file syntax and loaded through the same parser as a `defaults:`
 * mapping, so a default is checked against its own range like any value a user writes.
 * Code of its own is left only to what a table row cannot say: the cross-key constraints
 * (toleratedGap against step and idleTimer, points per window, in finish_rule) and the keys
 * with an inner structure (scope, exemptions, overrides, activeWindows, notify).
 */

enum rkey {
    K_NAME,
    K_ENABLED,
    K_POLICY,
    K_THRESHOLD,
    K_IDLE_TIMER,
    K_STEP,
    K_TOLERATED_GAP,
    K_NOTICE_PERIOD,
    K_MAX_KEEP_UNTIL,
    K_MAX_TERMINATIONS,
    K_DRY_RUN,
    K_ACTION,
    K_IDENTITY,
    K_RESOURCE_LABEL,
    K_QUERIES,
    K_SCOPE,
    K_EXEMPTIONS,
    K_OVERRIDES,
    K_WINDOWS,
    K_NOTIFY,
    K_Q_ACTIVITY, /* the keys of `queries:` */
    K_Q_ALLOCATION,
    K_Q_PENDING,
    K_Q_PRIORITY,
    K__COUNT
};

enum ktype {
    KT_BOOL,     /* bool */
    KT_ENUM,     /* an enum (int-sized): one of `choices` */
    KT_PERCENT,  /* double: min < value <= max */
    KT_COUNT,    /* unsigned: an integer from min to max */
    KT_DURATION, /* double seconds, Prometheus syntax: from min to max when they are set */
    KT_LABEL,    /* char *: a Prometheus label name */
    KT_LABELS,   /* char ** and a size_t count at off_n: non-empty, unique label names */
    KT_QUERY,    /* char *: PromQL, non-empty unless KS_EMPTY_OK ("" is stored as NULL) */
    KT_NESTED,   /* a mapping or sequence with keys of its own, read by `parse` */
};

#define KS_REQUIRED  1u /* every rule must have it, its own or from `defaults:` */
#define KS_RULE_ONLY 2u /* `defaults:` may not set it */
#define KS_QUERY     4u /* a key of `queries:`, not of the rule itself */
#define KS_EMPTY_OK  8u /* KT_QUERY: "" means unset */

struct kchoice {
    const char *name;
    int value;
};

/* The value of one key in one mapping, as spec_parse leaves it (strings point into the DOM). */
union kval {
    bool b;
    int i;
    unsigned u;
    double d;
    const char *s;
    const struct ydom_node *n; /* KT_LABELS: the validated sequence */
};

/* Values of one mapping (a rule, `defaults:` or the built-in defaults), before inheritance. */
struct vals {
    bool seen[K__COUNT];                  /* key present, valid or not */
    const struct ydom_node *at[K__COUNT]; /* value node, when valid */
    union kval v[K__COUNT];
    struct notify_vals notify;
};

/* What a KT_NESTED parser fills: the mapping's values, and the rule itself (NULL in defaults). */
struct pstate {
    struct vals *v;
    struct rule *r;
    const char *where; /* "rule 'x'", "'defaults'" */
    const struct ydom_node **override_idle;
};

struct key_spec {
    const char *name;
    enum ktype type;
    unsigned flags;                /* KS_* */
    size_t off, off_n;             /* the effective value in struct rule (KT_LABELS: and count) */
    const char *dflt;              /* built-in default, rules-file syntax; NULL: none/computed */
    const char *min, *max;         /* bounds, rules-file syntax; NULL: none */
    const struct kchoice *choices; /* KT_ENUM: NULL-terminated, in documentation order */
    void (*parse)(struct ctx *c, const struct ydom_node *v, struct pstate *st); /* KT_NESTED */
    /* rules/README.md: type and default when not derived from type and dflt, what is allowed
     * besides the range or choices, and what the key means */
    const char *doc_type, *doc_default, *doc_allowed, *doc;
};

static const struct key_spec key_specs[K__COUNT];

/* Rule keys (queries: false) or query keys (queries: true) by name; NULL when unknown. */
static const struct key_spec *spec_lookup(const char *name, bool queries)
{
    for (size_t k = 0; k < K__COUNT; k++)
        if (!(key_specs[k].flags & KS_QUERY) == !queries && strcmp(name, key_specs[k].name) == 0)
            return &key_specs[k];
    return NULL;
}

/* "a, b or c" (sep " or ", messages) or "`a`, `b`, `c`" (sep NULL, rules/README.md). */
static void choice_list(struct sbuf *s, const struct kchoice *ch, const char *last_sep)
{
    for (size_t i = 0; ch[i].name; i++) {
        if (i > 0)
            sbuf_printf(s, "%s", last_sep && !ch[i + 1].name ? last_sep : ", ");
        sbuf_printf(s, last_sep ? "%s" : "`%s`", ch[i].name);
    }
}

static double bound(const struct key_spec *ks, const char *s)
{
    double d = 0;

    if (ks->type == KT_DURATION)
        dur_parse(s, &d);
    else
        d = strtod(s, NULL);
    return d;
}

static int parse_labels(struct ctx *c, const struct ydom_node *seq, const char *key)
{
    char b[QBUF];
    int bad = 0;
    struct strset seen = {0};

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, key))
        return -1;
    if (seq->nitems == 0) {
        err_at(c, seq, "'%s' must not be empty", key);
        return -1;
    }
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *it = seq->items[i];
        const char *s = get_item(c, it, key);
        if (!s) {
            bad = -1;
        } else if (!valid_label_name(s)) {
            err_at(c, it, "invalid label name '%s' in '%s'", scalar_text(it, b), key);
            bad = -1;
        } else if (strset_put(&seen, s, strlen(s), it)) {
            err_at(c, it, "duplicate label '%s' in '%s'", scalar_text(it, b), key);
            bad = -1;
        }
    }
    strset_free(&seen);
    return bad;
}

/* Check one value against its key's type and range. Returns 0, or -1 after an error. */
static int spec_parse(struct ctx *c, const struct key_spec *ks, const struct ydom_node *val,
                      union kval *out)
{
    char b[QBUF];
    const char *s;
    double d;

    switch (ks->type) {
    case KT_BOOL:
        return get_bool(c, val, ks->name, &out->b);
    case KT_ENUM: {
        if (!(s = get_string(c, val, ks->name)))
            return -1;
        for (const struct kchoice *ch = ks->choices; ch->name; ch++) {
            if (strcmp(s, ch->name) == 0) {
                out->i = ch->value;
                return 0;
            }
        }
        struct sbuf list = {0};
        choice_list(&list, ks->choices, " or ");
        err_at(c, val, "invalid %s '%s' (expected %s)", ks->name, scalar_text(val, b), list.buf);
        sbuf_free(&list);
        return -1;
    }
    case KT_PERCENT:
        if (get_number(c, val, ks->name, &out->d) < 0)
            return -1;
        if (!(out->d > bound(ks, ks->min) && out->d <= bound(ks, ks->max))) {
            err_at(c, val, "'%s' must be greater than %s and at most %s (percent), got %s",
                   ks->name, ks->min, ks->max, scalar_text(val, b));
            return -1;
        }
        return 0;
    case KT_COUNT:
        if (get_number(c, val, ks->name, &d) < 0)
            return -1;
        if (ydom_scalar_type(val) != YDOM_T_INT ||
            !(d >= bound(ks, ks->min) && d <= bound(ks, ks->max))) {
            err_at(c, val, "'%s' must be an integer between %s and %s, got %s", ks->name, ks->min,
                   ks->max, scalar_text(val, b));
            return -1;
        }
        out->u = (unsigned)d;
        return 0;
    case KT_DURATION:
        if (get_duration(c, val, ks->name, &out->d) < 0)
            return -1;
        if (ks->min && (out->d < bound(ks, ks->min) || out->d > bound(ks, ks->max))) {
            err_at(c, val, "'%s' must be between %s and %s, got %s", ks->name, ks->min, ks->max,
                   scalar_text(val, b));
            return -1;
        }
        return 0;
    case KT_LABEL:
        if (!(s = get_string(c, val, ks->name)))
            return -1;
        if (!valid_label_name(s)) {
            err_at(c, val, "invalid label name '%s' for '%s'", scalar_text(val, b), ks->name);
            return -1;
        }
        out->s = s;
        return 0;
    case KT_LABELS:
        if (parse_labels(c, val, ks->name) < 0)
            return -1;
        out->n = val;
        return 0;
    case KT_QUERY:
        if (!(s = get_string(c, val, ks->name)))
            return -1;
        if (!*s && !(ks->flags & KS_EMPTY_OK)) {
            err_at(c, val, "query '%s' must not be empty", ks->name);
            return -1;
        }
        out->s = s;
        return 0;
    case KT_NESTED:
        break;
    }
    return -1;
}

/* One key of a rule or of `defaults:`: a nested structure, or a value kept for inheritance. */
static void parse_key(struct ctx *c, const struct key_spec *ks, const struct ydom_node *val,
                      struct pstate *st)
{
    size_t k = (size_t)(ks - key_specs);

    if (ks->type == KT_NESTED) {
        if (ks->parse) /* `name` has none: parse_rule reads it first */
            ks->parse(c, val, st);
        return;
    }
    st->v->seen[k] = true;
    if (spec_parse(c, ks, val, &st->v->v[k]) == 0)
        st->v->at[k] = val;
}

/* Store a scalar value at `p`, the field the key's `off` names (in a rule or an override). */
static void spec_store(void *p, const struct key_spec *ks, const union kval *v)
{
    switch (ks->type) {
    case KT_BOOL:
        *(bool *)p = v->b;
        break;
    case KT_ENUM:
        *(int *)p = v->i;
        break;
    case KT_PERCENT:
    case KT_DURATION:
        *(double *)p = v->d;
        break;
    case KT_COUNT:
        *(unsigned *)p = v->u;
        break;
    case KT_LABEL:
    case KT_QUERY:
        *(char **)p = *v->s ? xstrdup(v->s) : NULL;
        break;
    case KT_LABELS:
    case KT_NESTED:
        break;
    }
}

static void parse_queries(struct ctx *c, const struct ydom_node *map, struct pstate *st)
{
    char b[QBUF];

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "queries"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        const struct key_spec *ks = spec_lookup(k->str, true);
        if (ks)
            parse_key(c, ks, val, st);
        else
            err_at(c, k, "unknown key '%s' in 'queries' of %s", scalar_text(k, b), st->where);
    }
}

static void parse_notify_key(struct ctx *c, const struct ydom_node *map, struct pstate *st)
{
    parse_notify(c, map, &st->v->notify, st->where);
}

/* ---- rule-only keys ---------------------------------------------------------------------- */

static void parse_strings(struct ctx *c, const struct ydom_node *seq, const char *key, char ***out,
                          size_t *nout)
{
    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, key))
        return;
    for (size_t i = 0; i < seq->nitems; i++) {
        const char *s = get_item(c, seq->items[i], key);
        if (!s)
            continue;
        if (!*s) {
            err_at(c, seq->items[i], "items of '%s' must not be empty", key);
            continue;
        }
        *out = xgrow(*out, *nout, sizeof(**out));
        (*out)[(*nout)++] = xstrdup(s);
    }
}

static void parse_matchers(struct ctx *c, const struct ydom_node *seq, struct matcher_set *ms,
                           bool required_nonempty, const char *where)
{
    char err[256];

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "matchers"))
        return;
    if (required_nonempty && seq->nitems == 0) {
        err_at(c, seq, "'matchers' of %s must not be empty", where);
        return;
    }
    for (size_t i = 0; i < seq->nitems; i++) {
        const char *s = get_item(c, seq->items[i], "matchers");
        if (!s)
            continue;
        struct matcher m;
        if (match_parse(s, &m, err, sizeof(err)) < 0) {
            err_at(c, seq->items[i], "%s", err);
            continue;
        }
        bool was_over = c->re_insts > RULES_MAX_RE_INSTS;
        c->re_insts += m.re_insts;
        if (!was_over && c->re_insts > RULES_MAX_RE_INSTS)
            err_at(c, seq->items[i],
                   "the regular expressions of this file compile to more than %d RE2 "
                   "instructions (simplify the patterns or merge rules)",
                   RULES_MAX_RE_INSTS);
        ms->m = xgrow(ms->m, ms->n, sizeof(*ms->m));
        ms->m[ms->n++] = m;
    }
}

static void parse_scope(struct ctx *c, const struct ydom_node *map, struct pstate *st)
{
    char b[QBUF];
    struct rule *r = st->r;
    const char *where = st->where;

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "scope"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        if (strcmp(k->str, "namespaces") == 0)
            parse_strings(c, val, "namespaces", &r->namespaces, &r->nnamespaces);
        else if (strcmp(k->str, "matchers") == 0)
            parse_matchers(c, val, &r->scope, false, where);
        else
            err_at(c, k, "unknown key '%s' in 'scope' of %s", scalar_text(k, b), where);
    }
}

static void missing(struct ctx *c, const struct ydom_node *map, const char *key, const char *where)
{
    err_at(c, map, "missing required key '%s' in %s", key, where);
}

static void parse_exemptions(struct ctx *c, const struct ydom_node *seq, struct pstate *st)
{
    char b[QBUF];
    struct rule *r = st->r;

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "exemptions"))
        return;
    r->exemptions = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->exemptions));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("exemption %zu of %s", i + 1, st->where);
        struct rule_exemption *e = &r->exemptions[r->nexemptions++];
        if (!expect_entry(c, map, where)) {
            free(where);
            continue;
        }
        for (size_t j = 0; j < map->npairs; j++) {
            const struct ydom_node *k = map->pairs[j].key, *val = map->pairs[j].value;
            if (strcmp(k->str, "matchers") == 0) {
                parse_matchers(c, val, &e->match, true, where);
            } else if (strcmp(k->str, "reason") == 0) {
                const char *s = get_string(c, val, "reason");
                if (s)
                    e->reason = xstrdup(s);
            } else {
                err_at(c, k, "unknown key '%s' in %s", scalar_text(k, b), where);
            }
        }
        if (!ydom_map_get(map, "matchers"))
            missing(c, map, "matchers", where);
        free(where);
    }
}

/* The rule keys an override may set, and where in struct rule_override they go. */
static const struct {
    enum rkey key;
    size_t off, has;
} override_keys[] = {
    {K_THRESHOLD, offsetof(struct rule_override, threshold),
     offsetof(struct rule_override, has_threshold)},
    {K_IDLE_TIMER, offsetof(struct rule_override, idle_timer),
     offsetof(struct rule_override, has_idle_timer)},
    {K_ENABLED, offsetof(struct rule_override, enabled),
     offsetof(struct rule_override, has_enabled)},
};

static void parse_overrides(struct ctx *c, const struct ydom_node *seq, struct pstate *st)
{
    char b[QBUF];
    struct rule *r = st->r;

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "overrides"))
        return;
    r->overrides = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->overrides));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("override %zu of %s", i + 1, st->where);
        struct rule_override *o = &r->overrides[r->noverrides++];
        bool any = false;
        if (!expect_entry(c, map, where)) {
            free(where);
            continue;
        }
        for (size_t j = 0; j < map->npairs; j++) {
            const struct ydom_node *k = map->pairs[j].key, *val = map->pairs[j].value;
            size_t ok = 0;
            while (ok < ARRAY_LEN(override_keys) &&
                   strcmp(k->str, key_specs[override_keys[ok].key].name) != 0)
                ok++;
            if (strcmp(k->str, "matchers") == 0) {
                parse_matchers(c, val, &o->match, true, where);
            } else if (ok < ARRAY_LEN(override_keys)) {
                const struct key_spec *ks = &key_specs[override_keys[ok].key];
                union kval x;
                any = true;
                if (spec_parse(c, ks, val, &x) == 0) {
                    spec_store((char *)o + override_keys[ok].off, ks, &x);
                    *(bool *)((char *)o + override_keys[ok].has) = true;
                    if (override_keys[ok].key == K_IDLE_TIMER)
                        st->override_idle[i] = val;
                }
            } else {
                err_at(c, k, "unknown key '%s' in %s", scalar_text(k, b), where);
            }
        }
        if (!ydom_map_get(map, "matchers"))
            missing(c, map, "matchers", where);
        if (!any)
            err_at(c, map, "%s sets none of 'threshold', 'idleTimer' or 'enabled'", where);
        free(where);
    }
}

/* "HH:MM" -> minutes; `max` is 23:59 for a start and 24:00 for an end. */
static int parse_hhmm(const char *s, int max_min)
{
    if (strlen(s) != 5 || s[2] != ':')
        return -1;
    for (int i = 0; i < 5; i++)
        if (i != 2 && !(s[i] >= '0' && s[i] <= '9'))
            return -1;
    int h = (s[0] - '0') * 10 + (s[1] - '0');
    int m = (s[3] - '0') * 10 + (s[4] - '0');
    if (m > 59 || h * 60 + m > max_min)
        return -1;
    return h * 60 + m;
}

static void parse_window(struct ctx *c, const struct ydom_node *map, struct rule_window *w,
                         const char *where)
{
    char b[QBUF];

    w->utc_offset_min = 0;
    for (size_t j = 0; j < map->npairs; j++) {
        const struct ydom_node *k = map->pairs[j].key, *val = map->pairs[j].value;
        if (strcmp(k->str, "days") == 0) {
            if (!expect_kind(c, val, YDOM_KIND_SEQUENCE, "days"))
                continue;
            if (val->nitems == 0)
                err_at(c, val, "'days' must not be empty");
            for (size_t i = 0; i < val->nitems; i++) {
                const struct ydom_node *it = val->items[i];
                const char *s = get_item(c, it, "days");
                int d = s ? lookup_name(s, day_names, ARRAY_LEN(day_names)) : -1;
                if (s && d < 0)
                    err_at(c, it,
                           "invalid day '%s' in 'days' (expected Sun, Mon, Tue, Wed, Thu, Fri "
                           "or Sat)",
                           scalar_text(it, b));
                else if (d >= 0 && (w->days >> d & 1u))
                    err_at(c, it, "duplicate day '%s' in 'days'", scalar_text(it, b));
                else if (d >= 0)
                    w->days |= 1u << d;
            }
        } else if (strcmp(k->str, "start") == 0 || strcmp(k->str, "end") == 0) {
            bool start = k->str[0] == 's';
            const char *s = get_string(c, val, k->str);
            int m = s ? parse_hhmm(s, start ? 23 * 60 + 59 : 24 * 60) : -1;
            if (s && m < 0)
                err_at(c, val, "invalid time '%s' for '%s' (expected HH:MM from 00:00 to %s)",
                       scalar_text(val, b), k->str, start ? "23:59" : "24:00");
            if (m >= 0)
                *(start ? &w->start_min : &w->end_min) = m;
        } else if (strcmp(k->str, "utcOffset") == 0) {
            const char *s = get_string(c, val, "utcOffset");
            int m = -1;
            if (s && (s[0] == '+' || s[0] == '-'))
                m = parse_hhmm(s + 1, 14 * 60);
            if (s && m < 0)
                err_at(c, val,
                       "invalid 'utcOffset' '%s' (expected +HH:MM or -HH:MM from -14:00 "
                       "to +14:00)",
                       scalar_text(val, b));
            if (m >= 0)
                w->utc_offset_min = s[0] == '-' ? -m : m;
            if (ydom_map_get(map, "timeZone"))
                err_at(c, k, "'utcOffset' and 'timeZone' are mutually exclusive in %s", where);
        } else if (strcmp(k->str, "timeZone") == 0) {
            char msg[256];
            const char *s = get_string(c, val, "timeZone");
            if (s && tz_load(s, &w->zone, msg, sizeof(msg)) < 0)
                err_at(c, val, "invalid 'timeZone' '%s': %s", scalar_text(val, b), msg);
        } else {
            err_at(c, k, "unknown key '%s' in %s", scalar_text(k, b), where);
        }
    }
    static const char *const required[] = {"days", "start", "end"};
    for (size_t i = 0; i < ARRAY_LEN(required); i++)
        if (!ydom_map_get(map, required[i]))
            missing(c, map, required[i], where);
}

static void parse_windows(struct ctx *c, const struct ydom_node *seq, struct pstate *st)
{
    struct rule *r = st->r;
    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "activeWindows"))
        return;
    r->windows = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->windows));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("active window %zu of %s", i + 1, st->where);
        if (expect_entry(c, map, where))
            parse_window(c, map, &r->windows[r->nwindows++], where);
        free(where);
    }
}

/* ---- the table --------------------------------------------------------------------------- */

static const struct kchoice policy_choices[] = {
    {"Always", POLICY_ALWAYS}, {"DuringGPUPressure", POLICY_DURING_PRESSURE}, {NULL, 0}};
static const struct kchoice action_choices[] = {{"report", ACTION_REPORT},
                                                {"scaleToZero", ACTION_SCALE_TO_ZERO},
                                                {"suspend", ACTION_SUSPEND},
                                                {"evict", ACTION_EVICT},
                                                {"delete", ACTION_DELETE},
                                                {"stop", ACTION_STOP},
                                                {NULL, 0}};

_Static_assert(sizeof(enum rule_policy) == sizeof(int) && sizeof(enum rule_action) == sizeof(int),
               "KT_ENUM fields are stored as int");

static const char *choice_name(const struct kchoice *ch, int value)
{
    for (; ch->name; ch++)
        if (ch->value == value)
            return ch->name;
    return "unknown";
}

const char *rules_policy_name(enum rule_policy p)
{
    return choice_name(policy_choices, (int)p);
}

const char *rules_action_name(enum rule_action a)
{
    return choice_name(action_choices, (int)a);
}

#define STR_(x)  #x
#define STR(x)   STR_(x)
#define FIELD(f) offsetof(struct rule, f)

static const struct key_spec key_specs[K__COUNT] = {
    [K_NAME] = {"name", KT_NESTED, KS_REQUIRED | KS_RULE_ONLY, .doc_type = "string",
                .doc_allowed = "`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most " STR(
                    NAME_MAX_LEN) " characters, unique in the file",
                .doc = "names the rule in logs, metrics and decisions"},
    [K_ENABLED] = {"enabled", KT_BOOL, 0, FIELD(enabled), .dflt = "true",
                   .doc = "`false` keeps the rule loaded but never reclaims"},
    [K_POLICY] = {"policy", KT_ENUM, 0, FIELD(policy), .dflt = "DuringGPUPressure",
                  .choices = policy_choices, .doc = "see [the two policies](#the-two-policies)"},
    [K_THRESHOLD] = {"threshold", KT_PERCENT, KS_REQUIRED, FIELD(threshold), .min = "0",
                     .max = "100",
                     .doc = "percent of the GPU compute **the workload was allocated** (not of "
                            "the card) below which it counts as idle; `10` means 10 %"},
    [K_IDLE_TIMER] = {"idleTimer", KT_DURATION, KS_REQUIRED, FIELD(idle_timer), .min = "1m",
                      .max = "30d", .doc_allowed = "`idleTimer / step <= " STR(MAX_POINTS) "`",
                      .doc = "how long the workload must stay below the threshold, without "
                             "interruption, before it may be reclaimed"},
    [K_STEP] = {"step", KT_DURATION, 0, FIELD(step), .dflt = "1m", .min = "1s", .max = "1h",
                .doc = "resolution of the range query; use the scrape interval of the activity "
                       "metric or a multiple of it. Prometheus refuses more than " STR(
                           MAX_POINTS) " points per series, hence the limit on `idleTimer / "
                                       "step`"},
    /* Checked against step and idleTimer once both are known (finish_rule). */
    [K_TOLERATED_GAP] = {"toleratedGap", KT_DURATION, 0, FIELD(tolerated_gap),
                         .doc_default = "twice `step`",
                         .doc_allowed = "`>= step` and `< idleTimer`",
                         .doc = "longest allowed distance between two raw samples of a series "
                                "(and from the last one to now); a longer gap means \"not "
                                "proven idle\". Measured at a resolution R = min(step, 15 s, "
                                "toleratedGap/4): gaps up to toleratedGap − R always pass, "
                                "longer than toleratedGap never"},
    [K_NOTICE_PERIOD] = {"noticePeriod", KT_DURATION, 0, FIELD(notice_period), .dflt = "0s",
                         .min = "0s", .max = "24h",
                         .doc = "time between announcing a reclaim and acting on it"},
    [K_MAX_KEEP_UNTIL] = {"maxKeepUntil", KT_DURATION, 0, FIELD(max_keep_until), .dflt = "0s",
                          .min = "0s", .max = "30d",
                          .doc = "how long after the notice an owner may postpone the action "
                                 "with the annotation `gpureclaim.io/keep-until: <RFC 3339>` on "
                                 "the workload or an owner; a later time is capped to this, and "
                                 "`0s` does not honour the annotation (see "
                                 "[Asking for time](#asking-for-time))"},
    [K_MAX_TERMINATIONS] = {"maxTerminationsPerCycle", KT_COUNT, 0, FIELD(max_terminations),
                            .dflt = "1", .min = "1", .max = "10000",
                            .doc = "at most this many workloads of the rule are acted on per "
                                   "enforcement cycle"},
    [K_DRY_RUN] = {"dryRun", KT_BOOL, 0, FIELD(dry_run), .dflt = "false",
                   .doc = "report decisions only, for this rule"},
    [K_ACTION] = {"action", KT_ENUM, 0, FIELD(action), .dflt = "report", .choices = action_choices,
                  .doc = "what happens to a reclaimed workload: only report it; scale its owner "
                         "to zero replicas; suspend its Job; evict or delete the pod; stop the "
                         "container (Docker/Podman)"},
    [K_IDENTITY] = {"identity", KT_LABELS, 0, FIELD(identity), FIELD(nidentity),
                    .dflt = "[namespace, pod]",
                    .doc_allowed = "non-empty, valid Prometheus label names "
                                   "(`[a-zA-Z_][a-zA-Z0-9_]*`), unique",
                    .doc = "the labels that identify one workload in the query results"},
    [K_RESOURCE_LABEL] = {"resourceLabel", KT_LABEL, 0, FIELD(resource_label), .dflt = "resource",
                          .doc_allowed = "valid label name",
                          .doc = "label carrying the GPU resource name in the `allocation` and "
                                 "`pending` results; values are compared after replacing every "
                                 "character other than `[a-zA-Z0-9_]` with `_`, so "
                                 "`amd.com/gpu` and `amd_com_gpu` match"},
    [K_QUERIES] = {"queries", KT_NESTED, 0, .parse = parse_queries, .doc_type = "mapping",
                   .doc_default = "see below", .doc = "PromQL sources of the rule"},
    [K_SCOPE] = {"scope", KT_NESTED, KS_RULE_ONLY, .parse = parse_scope, .doc_type = "mapping",
                 .doc_default = "everything", .doc = "which workloads the rule considers"},
    [K_EXEMPTIONS] = {"exemptions", KT_NESTED, KS_RULE_ONLY, .parse = parse_exemptions,
                      .doc_type = "sequence", .doc_default = "none",
                      .doc = "workloads never reclaimed"},
    [K_OVERRIDES] = {"overrides", KT_NESTED, KS_RULE_ONLY, .parse = parse_overrides,
                     .doc_type = "sequence", .doc_default = "none",
                     .doc = "per-workload threshold, idle timer or enabled"},
    [K_WINDOWS] = {"activeWindows", KT_NESTED, KS_RULE_ONLY, .parse = parse_windows,
                   .doc_type = "sequence", .doc_default = "always active",
                   .doc = "weekly windows outside which the rule does nothing"},
    [K_NOTIFY] = {"notify", KT_NESTED, 0, .parse = parse_notify_key, .doc_type = "mapping",
                  .doc_default = "none",
                  .doc = "webhook notices of notices, actions and spares; see "
                         "[`notify`](#notify)"},
    [K_Q_ACTIVITY] = {"activity", KT_QUERY, KS_QUERY, FIELD(q_activity),
                      .dflt = "gpureclaim:workload_busy:ratio",
                      .doc = "per workload, the share (0 to 1) of its allocated GPU compute in "
                             "use; must carry the `identity` labels"},
    [K_Q_ALLOCATION] = {"allocation", KT_QUERY, KS_QUERY, FIELD(q_allocation),
                        .dflt = "gpureclaim:workload_devices:count",
                        .doc = "per workload, devices held, labelled with `resourceLabel`"},
    [K_Q_PENDING] = {"pending", KT_QUERY, KS_QUERY, FIELD(q_pending), .dflt = DEFAULT_Q_PENDING,
                     .doc_default = "see below",
                     .doc = "pending demand in devices per `resourceLabel` value (used by "
                            "`DuringGPUPressure`)"},
    [K_Q_PRIORITY] = {"priority", KT_QUERY, KS_QUERY | KS_EMPTY_OK, FIELD(q_priority), .dflt = "",
                      .doc_default = "unset (`\"\"`)",
                      .doc = "optional, per workload; lower values are reclaimed first"},
};

/* ---- whole rules ------------------------------------------------------------------------- */

static void parse_defaults(struct ctx *c, const struct ydom_node *map, struct vals *dv)
{
    char b[QBUF];
    struct pstate st = {.v = dv, .where = "'defaults'"};

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "defaults"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        const struct key_spec *ks = spec_lookup(k->str, false);
        if (!ks)
            err_at(c, k, "unknown key '%s' in 'defaults'", scalar_text(k, b));
        else if (ks->flags & KS_RULE_ONLY)
            err_at(c, k, "'%s' is not allowed in 'defaults' (set it in each rule)", k->str);
        else
            parse_key(c, ks, val, &st);
    }
}

/*
 * The built-in defaults as a `defaults:` mapping in rules-file syntax, from the table. Strings
 * are single-quoted (a query holds `"`); every other value is written as a user would.
 */
static char *builtin_yaml(void)
{
    struct sbuf s = {0};

    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            sbuf_printf(&s, "queries:\n");
        for (size_t k = 0; k < K__COUNT; k++) {
            const struct key_spec *ks = &key_specs[k];
            if (!ks->dflt || !(ks->flags & KS_QUERY) != !pass)
                continue;
            sbuf_printf(&s, "%s%s: ", pass ? "  " : "", ks->name);
            if (ks->type == KT_LABEL || ks->type == KT_QUERY) {
                sbuf_printf(&s, "'");
                for (const char *p = ks->dflt; *p; p++) {
                    if (*p == '\'')
                        sbuf_putc(&s, '\'');
                    sbuf_putc(&s, *p);
                }
                sbuf_printf(&s, "'\n");
            } else {
                sbuf_printf(&s, "%s\n", ks->dflt);
            }
        }
    }
    return sbuf_take(&s);
}

/*
 * Load the built-in defaults into `bv` (its strings point into `doc`). A default the table
 * gets wrong fails every load, loudly, at 1:1 of the user's file (test_rules checks that none
 * does). Returns the number of such errors.
 */
static size_t builtin_load(struct ctx *c, struct ydom_doc *doc, struct vals *bv)
{
    struct ctx bc = {.file = "built-in defaults"};
    char *yaml = builtin_yaml();

    memset(bv, 0, sizeof(*bv));
    ydom_load(yaml, strlen(yaml), doc);
    free(yaml);
    for (size_t i = 0; i < doc->nerrors; i++)
        err_pos(&bc, doc->errors[i].line, doc->errors[i].col, "%s", doc->errors[i].msg);
    if (doc->root)
        parse_defaults(&bc, doc->root, bv);
    for (size_t i = 0; i < bc.n; i++) {
        err_pos(c, 1, 1, "internal error in a built-in default: %d:%d: %s", bc.v[i].line,
                bc.v[i].col, bc.v[i].msg);
        free(bc.v[i].msg);
    }
    free(bc.v);
    return bc.n;
}

static void matcher_set_free(struct matcher_set *ms)
{
    for (size_t i = 0; i < ms->n; i++)
        match_free(&ms->m[i]);
    free(ms->m);
}

static void rule_free(struct rule *r)
{
    free(r->name);
    free(r->file);
    free(r->q_activity);
    free(r->q_allocation);
    free(r->q_pending);
    free(r->q_priority);
    for (size_t i = 0; i < r->nidentity; i++)
        free(r->identity[i]);
    free(r->identity);
    free(r->resource_label);
    for (size_t i = 0; i < r->nnamespaces; i++)
        free(r->namespaces[i]);
    free(r->namespaces);
    matcher_set_free(&r->scope);
    for (size_t i = 0; i < r->nexemptions; i++) {
        matcher_set_free(&r->exemptions[i].match);
        free(r->exemptions[i].reason);
    }
    free(r->exemptions);
    for (size_t i = 0; i < r->noverrides; i++)
        matcher_set_free(&r->overrides[i].match);
    free(r->overrides);
    for (size_t i = 0; i < r->nwindows; i++)
        tz_free(&r->windows[i].zone);
    free(r->windows);
    free(r->notify.url_file);
    memset(r, 0, sizeof(*r));
}

/* The effective value's source: the rule's own, else `defaults:`, else NULL (built-in). */
static const struct vals *source(const struct vals *rv, const struct vals *dv, enum rkey k)
{
    if (rv->at[k])
        return rv;
    if (dv->at[k])
        return dv;
    return NULL;
}

/* A key whose winning occurrence (the rule's, else the default's) had an invalid value. */
static bool key_bad(const struct vals *rv, const struct vals *dv, enum rkey k)
{
    if (rv->seen[k])
        return rv->at[k] == NULL;
    return dv->seen[k] && dv->at[k] == NULL;
}

/* Inheritance, key by key: the rule's own value, else the one of `defaults:`, else built-in. */
static void inherit(struct rule *r, const struct vals *rv, const struct vals *dv,
                    const struct vals *bv)
{
    for (size_t k = 0; k < K__COUNT; k++) {
        const struct key_spec *ks = &key_specs[k];
        const struct vals *s = source(rv, dv, (enum rkey)k);
        if (ks->type == KT_NESTED || !(s || bv->at[k]))
            continue;
        if (!s)
            s = bv;
        else if (k == K_Q_ACTIVITY) {
            r->activity_line = s->at[k]->line;
            r->activity_col = s->at[k]->col;
        }
        if (ks->type == KT_LABELS) {
            const struct ydom_node *seq = s->v[k].n;
            char **list = xcalloc(seq->nitems, sizeof(*list));
            for (size_t i = 0; i < seq->nitems; i++)
                list[i] = xstrdup(seq->items[i]->str);
            *(char ***)((char *)r + ks->off) = list;
            *(size_t *)((char *)r + ks->off_n) = seq->nitems;
        } else {
            spec_store((char *)r + ks->off, ks, &s->v[k]);
        }
    }
}

/* Apply inheritance, then the checks that involve more than one key. */
static void finish_rule(struct ctx *c, const struct ydom_node *map, struct rule *r,
                        const struct vals *rv, const struct vals *dv, const struct vals *bv,
                        const char *where, const struct ydom_node *const *override_idle)
{
    char b1[32], b2[32];

    inherit(r, rv, dv, bv);
    finish_notify(c, r, &rv->notify, &dv->notify, where);

    /* `name` is looked for first, by parse_rule. */
    for (size_t k = K_NAME + 1; k < K__COUNT; k++)
        if ((key_specs[k].flags & KS_REQUIRED) && !rv->seen[k] && !dv->seen[k])
            missing(c, map, key_specs[k].name, where);

    /* Cross checks only when every value involved is valid, to avoid follow-on errors. */
    bool step_ok = !key_bad(rv, dv, K_STEP), gap_ok = !key_bad(rv, dv, K_TOLERATED_GAP);
    bool idle_ok = source(rv, dv, K_IDLE_TIMER) != NULL;
    const struct vals *gs = source(rv, dv, K_TOLERATED_GAP);
    const struct ydom_node *at_gap = rv->at[K_TOLERATED_GAP] ? rv->at[K_TOLERATED_GAP]
                                     : rv->at[K_IDLE_TIMER]  ? rv->at[K_IDLE_TIMER]
                                                             : map;
    if (!step_ok)
        return;
    if (gap_ok) {
        r->tolerated_gap = gs ? gs->v[K_TOLERATED_GAP].d : 2 * r->step;
        const char *how = gs ? "" : ", twice 'step' by default";
        if (gs && r->tolerated_gap < r->step)
            err_at(c, at_gap, "'toleratedGap' (%s) must be at least 'step' (%s) in %s",
                   dur_format(b1, sizeof(b1), r->tolerated_gap),
                   dur_format(b2, sizeof(b2), r->step), where);
        else if (idle_ok && r->tolerated_gap >= r->idle_timer)
            err_at(c, at_gap, "'toleratedGap' (%s%s) must be less than 'idleTimer' (%s) in %s",
                   dur_format(b1, sizeof(b1), r->tolerated_gap), how,
                   dur_format(b2, sizeof(b2), r->idle_timer), where);
    }
    if (idle_ok && r->idle_timer / r->step > MAX_POINTS) {
        const struct ydom_node *at = rv->at[K_STEP] ? rv->at[K_STEP] : at_gap;
        err_at(c, at, "'idleTimer' (%s) / 'step' (%s) is %.0f points, more than %d in %s",
               dur_format(b1, sizeof(b1), r->idle_timer), dur_format(b2, sizeof(b2), r->step),
               ceil(r->idle_timer / r->step), MAX_POINTS, where);
    }
    for (size_t i = 0; i < r->noverrides; i++) {
        const struct rule_override *o = &r->overrides[i];
        if (!o->has_idle_timer || !override_idle[i])
            continue;
        if (gap_ok && o->idle_timer <= r->tolerated_gap)
            err_at(c, override_idle[i],
                   "'idleTimer' (%s) of override %zu must be more than 'toleratedGap' (%s)",
                   dur_format(b1, sizeof(b1), o->idle_timer), i + 1,
                   dur_format(b2, sizeof(b2), r->tolerated_gap));
        else if (o->idle_timer / r->step > MAX_POINTS)
            err_at(c, override_idle[i],
                   "'idleTimer' (%s) of override %zu / 'step' (%s) is more than %d points",
                   dur_format(b1, sizeof(b1), o->idle_timer), i + 1,
                   dur_format(b2, sizeof(b2), r->step), MAX_POINTS);
    }
}

static void parse_rule(struct ctx *c, const struct ydom_node *map, size_t index,
                       const struct vals *dv, const struct vals *bv, struct rule *r)
{
    char b[QBUF];
    struct vals rv = {0};
    struct pstate st = {.v = &rv, .r = r};
    const struct ydom_node *name = ydom_map_get(map, "name");

    r->file = xstrdup(c->file);
    r->line = map->line;
    r->col = map->col;

    char *where;
    if (name && name->kind == YDOM_KIND_SCALAR && ydom_scalar_type(name) == YDOM_T_STRING &&
        valid_rule_name(name->str, name->len)) {
        r->name = xstrdup(name->str);
        where = xasprintf("rule '%s'", r->name);
    } else {
        where = xasprintf("rule %zu", index + 1);
        if (!name)
            missing(c, map, "name", where);
        else if (get_string(c, name, "name"))
            err_at(c, name,
                   "invalid rule name '%s' (expected lower-case letters, digits and '-', "
                   "starting and ending with a letter or digit, at most %d characters)",
                   scalar_text(name, b), NAME_MAX_LEN);
    }
    st.where = where;

    const struct ydom_node *oseq = ydom_map_get(map, "overrides");
    size_t nover = oseq && oseq->kind == YDOM_KIND_SEQUENCE ? oseq->nitems : 0;
    st.override_idle = xcalloc(nover ? nover : 1, sizeof(*st.override_idle));

    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        const struct key_spec *ks = spec_lookup(k->str, false);
        if (!ks)
            err_at(c, k, "unknown key '%s' in %s", scalar_text(k, b), where);
        else if (ks != &key_specs[K_NAME])
            parse_key(c, ks, val, &st);
    }
    finish_rule(c, map, r, &rv, dv, bv, where, st.override_idle);
    free(st.override_idle);
    free(where);
}

/* ---- rules/README.md --------------------------------------------------------------------- */

static void md_type(struct sbuf *s, const struct key_spec *ks)
{
    static const char *const words[] = {
        [KT_BOOL] = "boolean",
        [KT_ENUM] = "string",
        [KT_PERCENT] = "number",
        [KT_COUNT] = "integer",
        [KT_DURATION] = "duration",
        [KT_LABEL] = "label name",
        [KT_LABELS] = "sequence of label names",
        [KT_QUERY] = "string",
        [KT_NESTED] = "",
    };
    sbuf_printf(s, "%s%s", ks->doc_type ? ks->doc_type : words[ks->type],
                ks->flags & KS_REQUIRED ? ", **required**" : "");
}

static void md_default(struct sbuf *s, const struct key_spec *ks)
{
    if (ks->doc_default)
        sbuf_printf(s, "%s", ks->doc_default);
    else if (ks->dflt)
        sbuf_printf(s, "`%s`", ks->dflt);
    else
        sbuf_printf(s, "-");
}

static void md_allowed(struct sbuf *s, const struct key_spec *ks)
{
    size_t len = s->len;

    if (ks->type == KT_BOOL)
        sbuf_printf(s, "`true`, `false`");
    else if (ks->type == KT_ENUM)
        choice_list(s, ks->choices, NULL);
    else if (ks->type == KT_PERCENT)
        sbuf_printf(s, "`%s < %s <= %s`", ks->min, ks->name, ks->max);
    else if (ks->min)
        sbuf_printf(s, "`%s` to `%s`", ks->min, ks->max);
    if (ks->doc_allowed)
        sbuf_printf(s, "%s%s", s->len > len ? "; " : "", ks->doc_allowed);
}

int rules_schema_markdown(const char *table, void *out_file)
{
    FILE *out = out_file ? out_file : stdout;
    bool queries = strcmp(table, "queries") == 0;
    struct sbuf s = {0};

    if (!queries && strcmp(table, "rule-keys") != 0)
        return -1;
    sbuf_printf(&s, queries
                        ? "| key | default | meaning |\n|---|---|---|\n"
                        : "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n");
    for (size_t k = 0; k < K__COUNT; k++) {
        const struct key_spec *ks = &key_specs[k];
        if (!(ks->flags & KS_QUERY) != !queries)
            continue;
        sbuf_printf(&s, "| `%s` | ", ks->name);
        if (!queries) {
            md_type(&s, ks);
            sbuf_printf(&s, " | ");
        }
        md_default(&s, ks);
        sbuf_printf(&s, " | ");
        if (!queries) {
            md_allowed(&s, ks);
            sbuf_printf(&s, " | ");
        }
        sbuf_printf(&s, "%s |\n", ks->doc);
    }
    /* An empty cell is written "| |", as by hand. */
    for (char *p; (p = strstr(s.buf, "|  |"));)
        memmove(p + 1, p + 2, strlen(p + 2) + 1);
    fputs(s.buf, out);
    sbuf_free(&s);
    return 0;
}

/* kinds.c reports the problems of a `kinds:` section here, to be sorted with the others. */
static void kinds_report(void *arg, int line, int col, bool note, const char *msg)
{
    struct ctx *c = arg;
    if (!note) {
        err_pos(c, line, col, "%s", msg);
        return;
    }
    c->notes = xgrow(c->notes, c->nnotes, sizeof(*c->notes));
    c->notes[c->nnotes] = (struct perr){line, col, c->nnotes, xstrdup(msg)};
    c->nnotes++;
}

static void parse_document(struct ctx *c, const struct ydom_node *root, struct ruleset *rs)
{
    static const char *const top_keys[] = {"apiVersion", "kind", "defaults", "kinds", "rules"};
    char b[QBUF];
    struct vals dv = {0}, bv;
    struct ydom_doc bdoc;

    if (root->kind != YDOM_KIND_MAPPING) {
        err_at(c, root,
               "the document must be a mapping with 'apiVersion', 'kind' and 'rules', "
               "got %s",
               ydom_type_name(root));
        return;
    }
    const struct ydom_node *api = ydom_map_get(root, "apiVersion");
    if (!api) {
        missing(c, root, "apiVersion", "the document");
    } else {
        const char *s = get_string(c, api, "apiVersion");
        if (!s)
            return;
        if (strcmp(s, RULES_API_VERSION) != 0) {
            /* Keys of another version mean something else: checking them as v1 is noise. */
            err_at(c, api, "unsupported apiVersion '%s' (this build understands: %s)",
                   scalar_text(api, b), RULES_API_VERSION);
            return;
        }
    }
    rs->api_version = xstrdup(RULES_API_VERSION);

    const struct ydom_node *kind = ydom_map_get(root, "kind");
    if (!kind) {
        missing(c, root, "kind", "the document");
    } else {
        const char *s = get_string(c, kind, "kind");
        if (s && strcmp(s, RULES_KIND) != 0)
            err_at(c, kind, "'kind' must be '%s', got '%s'", RULES_KIND, scalar_text(kind, b));
    }
    for (size_t i = 0; i < root->npairs; i++) {
        const struct ydom_node *k = root->pairs[i].key;
        if (lookup_name(k->str, top_keys, ARRAY_LEN(top_keys)) < 0)
            err_at(c, k, "unknown top-level key '%s'", scalar_text(k, b));
    }
    const struct ydom_node *defaults = ydom_map_get(root, "defaults");
    if (defaults)
        parse_defaults(c, defaults, &dv);
    builtin_load(c, &bdoc, &bv);
    rs->kinds = kinds_parse(ydom_map_get(root, "kinds"), c->file, kinds_report, c);

    const struct ydom_node *rules = ydom_map_get(root, "rules");
    if (!rules) {
        missing(c, root, "rules", "the document");
        goto out;
    }
    if (!expect_kind(c, rules, YDOM_KIND_SEQUENCE, "rules"))
        goto out;
    if (rules->nitems == 0) {
        err_at(c, rules, "'rules' must not be empty");
        goto out;
    }
    rs->rules = xcalloc(rules->nitems, sizeof(*rs->rules));
    struct strset names = {0};
    for (size_t i = 0; i < rules->nitems; i++) {
        const struct ydom_node *map = rules->items[i];
        if (map->kind != YDOM_KIND_MAPPING) {
            err_at(c, map, "rule %zu must be a mapping, got %s", i + 1, ydom_type_name(map));
            continue;
        }
        struct rule *r = &rs->rules[rs->n++];
        parse_rule(c, map, i, &dv, &bv, r);
        if (!r->name)
            continue;
        /* Rules are not moved while the set lives: rs->rules was sized once above. */
        const struct rule *first = strset_put(&names, r->name, strlen(r->name), r);
        if (first)
            err_at(c, ydom_map_get(map, "name"), "duplicate rule name '%s' (first at %d:%d)",
                   r->name, first->line, first->col);
    }
    strset_free(&names);
out:
    ydom_doc_free(&bdoc);
}

/* ---- public API -------------------------------------------------------------------------- */

void rules_free(struct ruleset *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++)
        rule_free(&rs->rules[i]);
    free(rs->rules);
    free(rs->file);
    free(rs->api_version);
    kinds_free(rs->kinds);
    for (size_t i = 0; i < rs->nnotes; i++)
        free(rs->notes[i]);
    free(rs->notes);
    memset(rs, 0, sizeof(*rs));
}

void rules_errors_free(struct rules_errors *errs)
{
    if (!errs)
        return;
    for (size_t i = 0; i < errs->n; i++)
        free(errs->msg[i]);
    free(errs->msg);
    errs->msg = NULL;
    errs->n = 0;
}

static char *too_large(const char *name)
{
    return xasprintf("%s: file too large (a rules file may have at most %u MiB)", name,
                     RULES_MAX_FILE_BYTES >> 20);
}

int rules_load_buffer(const char *name, const char *buf, size_t len, struct ruleset *out,
                      struct rules_errors *errs)
{
    struct ctx c = {.file = name};
    struct ydom_doc doc;

    memset(out, 0, sizeof(*out));
    if (len > RULES_MAX_FILE_BYTES) {
        if (errs)
            errors_push(errs, too_large(name));
        return -1;
    }
    out->file = xstrdup(name);
    snprintf(out->hash, sizeof(out->hash), "%016" PRIx64, fnv1a64(buf, len));

    ydom_load(buf, len, &doc);
    for (size_t i = 0; i < doc.nerrors; i++)
        err_pos(&c, doc.errors[i].line, doc.errors[i].col, "%s", doc.errors[i].msg);
    if (doc.root)
        parse_document(&c, doc.root, out);
    else if (doc.nerrors == 0)
        err_pos(&c, 1, 1, "empty file (expected a '%s' mapping with apiVersion %s)", RULES_KIND,
                RULES_API_VERSION);
    ydom_doc_free(&doc);

    if (c.n > 1)
        qsort(c.v, c.n, sizeof(*c.v), perr_cmp);
    for (size_t i = 0; i < c.n; i++) {
        if (errs)
            errors_push(errs, xasprintf("%s:%d:%d: %s", name, c.v[i].line, c.v[i].col, c.v[i].msg));
        free(c.v[i].msg);
    }
    free(c.v);
    if (c.nnotes > 1)
        qsort(c.notes, c.nnotes, sizeof(*c.notes), perr_cmp);
    for (size_t i = 0; i < c.nnotes; i++) {
        if (!c.n) {
            out->notes = xgrow(out->notes, out->nnotes, sizeof(*out->notes));
            out->notes[out->nnotes++] = xasprintf("%s:%d:%d: note: %s", name, c.notes[i].line,
                                                  c.notes[i].col, c.notes[i].msg);
        }
        free(c.notes[i].msg);
    }
    free(c.notes);
    if (c.n) {
        rules_free(out);
        return -1;
    }
    if (!out->kinds)
        out->kinds = kinds_parse(NULL, name, NULL, NULL);
    return 0;
}

int rules_load_file(const char *path, struct ruleset *out, struct rules_errors *errs)
{
    char why[128];
    size_t len;

    memset(out, 0, sizeof(*out));
    /* A huge or endless file is refused after the cap, not slurped. */
    char *buf = file_read(path, RULES_MAX_FILE_BYTES, &len, why, sizeof(why));
    if (!buf) {
        if (errs)
            errors_push(errs, errno == EFBIG ? too_large(path)
                                             : xasprintf("%s: cannot read: %s", path, why));
        return -1;
    }
    int rc = rules_load_buffer(path, buf, len, out, errs);
    free(buf);
    return rc;
}

int rules_check_files(char *const *paths, size_t n, void *out_file)
{
    FILE *out = out_file ? out_file : stdout;
    int total = 0;

    for (size_t i = 0; i < n; i++) {
        struct ruleset rs;
        struct rules_errors errs = {0};
        if (rules_load_file(paths[i], &rs, &errs) == 0) {
            for (size_t j = 0; j < rs.nnotes; j++)
                fprintf(out, "%s\n", rs.notes[j]);
            fprintf(out, "%s: OK (%zu rules, version %s, hash %s)\n", paths[i], rs.n,
                    rs.api_version, rs.hash);
            rules_free(&rs);
        } else {
            for (size_t j = 0; j < errs.n; j++)
                fprintf(out, "%s\n", errs.msg[j]);
            fprintf(out, "%s: %zu errors\n", paths[i], errs.n);
            total += (int)errs.n;
        }
        rules_errors_free(&errs);
    }
    fflush(out);
    return total;
}
