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
#include "util.h"
#include "ydom.h"

#define DEFAULT_Q_ACTIVITY   "gpureclaim:workload_busy:ratio"
#define DEFAULT_Q_ALLOCATION "gpureclaim:workload_devices:count"
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
static const char *q(const struct ydom_node *n, char buf[QBUF])
{
    return ydom_printable(n->str, n->len, buf, QBUF);
}

/* ---- value parsers ---------------------------------------------------------------------- */

static const char *const policy_names[] = {
    [POLICY_DURING_PRESSURE] = "DuringGPUPressure",
    [POLICY_ALWAYS] = "Always",
};

static const char *const action_names[] = {
    [ACTION_REPORT] = "report",   [ACTION_SCALE_TO_ZERO] = "scaleToZero",
    [ACTION_SUSPEND] = "suspend", [ACTION_EVICT] = "evict",
    [ACTION_DELETE] = "delete",   [ACTION_STOP] = "stop",
};

static const char *const day_names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

const char *rules_policy_name(enum rule_policy p)
{
    return (unsigned)p < ARRAY_LEN(policy_names) ? policy_names[p] : "unknown";
}

const char *rules_action_name(enum rule_action a)
{
    return (unsigned)a < ARRAY_LEN(action_names) ? action_names[a] : "unknown";
}

int rules_parse_duration(const char *s, double *seconds)
{
    /* Prometheus' model.ParseDuration: units in this order, each at most once, or "0". */
    static const struct {
        const char *unit;
        uint64_t ms;
    } units[] = {
        {"y", 365ULL * 86400000},
        {"w", 7ULL * 86400000},
        {"d", 86400000},
        {"h", 3600000},
        {"ms", 1},
        {"m", 60000},
        {"s", 1000},
    };
    /* Rank in the required order; "ms" is listed before "m" only so that it matches first. */
    static const int rank[] = {0, 1, 2, 3, 6, 4, 5};
    uint64_t total = 0;
    int last = -1;

    if (!s || !*s)
        return -1;
    if (strcmp(s, "0") == 0) {
        *seconds = 0;
        return 0;
    }
    while (*s) {
        uint64_t v = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            if (++digits > 15)
                return -1;
            v = v * 10 + (uint64_t)(*s++ - '0');
        }
        if (!digits)
            return -1;
        size_t i;
        for (i = 0; i < ARRAY_LEN(units); i++)
            if (str_has_prefix(s, units[i].unit))
                break;
        if (i == ARRAY_LEN(units) || rank[i] <= last)
            return -1;
        last = rank[i];
        s += strlen(units[i].unit);
        if (v > (UINT64_MAX / 2 - total) / units[i].ms)
            return -1;
        total += v * units[i].ms;
    }
    *seconds = (double)total / 1000.0;
    return 0;
}

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

static bool valid_label_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
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
    if (strlen(v->str) != v->len || rules_parse_duration(v->str, out) < 0) {
        if (ydom_scalar_type(v) == YDOM_T_INT || ydom_scalar_type(v) == YDOM_T_FLOAT)
            err_at(c, v, "invalid duration '%s' for '%s' (a unit is required, e.g. '%sm')", q(v, b),
                   key, q(v, b));
        else
            err_at(c, v, "invalid duration '%s' for '%s'", q(v, b), key);
        return -1;
    }
    return 0;
}

/* Bounds come with their spelling, so that messages say "24h" as the documentation does. */
struct drange {
    double min, max;
    const char *smin, *smax;
};
static const struct drange idle_range = {60, 30 * 86400, "1m", "30d"};
static const struct drange step_range = {1, 3600, "1s", "1h"};
static const struct drange notice_range = {0, 86400, "0s", "24h"};

static int check_duration_range(struct ctx *c, const struct ydom_node *v, const char *key,
                                double val, const struct drange *r)
{
    char b[QBUF];

    if (val < r->min || val > r->max) {
        err_at(c, v, "'%s' must be between %s and %s, got %s", key, r->smin, r->smax, q(v, b));
        return -1;
    }
    return 0;
}

static int check_threshold(struct ctx *c, const struct ydom_node *v, double t)
{
    char b[QBUF];

    if (!(t > 0 && t <= 100)) {
        err_at(c, v, "'threshold' must be greater than 0 and at most 100 (percent), got %s",
               q(v, b));
        return -1;
    }
    return 0;
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

static int notify_lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

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
                err_at(c, val, "'urlFile' must be an absolute path, got '%s'", q(val, b));
            else if (s)
                nv->url_file = s;
            nv->bad |= nv->url_file == NULL;
        } else if (strcmp(k->str, "format") == 0) {
            const char *s = get_string(c, val, "format");
            nv->format = s ? notify_lookup(s, notify_format_names, 2) : -1;
            if (s && nv->format < 0)
                err_at(c, val, "invalid notify format '%s' (expected json or slack)", q(val, b));
            nv->bad |= nv->format < 0;
        } else if (strcmp(k->str, "events") == 0) {
            nv->has_events = true;
            if (!expect_kind(c, val, YDOM_KIND_SEQUENCE, "events")) {
                nv->bad = true;
                continue;
            }
            for (size_t j = 0; j < val->nitems; j++) {
                const char *s = get_item(c, val->items[j], "events");
                int e = s ? notify_lookup(s, notify_event_names, 3) : -1;
                if (s && e < 0)
                    err_at(c, val->items[j],
                           "invalid notify event '%s' (expected notice, action or spare)",
                           q(val->items[j], b));
                else if (e >= 0 && (nv->events & (1u << e)))
                    err_at(c, val->items[j], "duplicate notify event '%s'", s);
                if (e < 0)
                    nv->bad = true;
                else
                    nv->events |= 1u << e;
            }
        } else {
            err_at(c, k, "unknown key '%s' in 'notify' of %s", q(k, b), where);
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

/* ---- rule keys that `defaults:` may also set --------------------------------------------- */

enum rkey {
    K_ENABLED,
    K_POLICY,
    K_THRESHOLD,
    K_IDLE_TIMER,
    K_STEP,
    K_TOLERATED_GAP,
    K_NOTICE_PERIOD,
    K_MAX_TERMINATIONS,
    K_DRY_RUN,
    K_ACTION,
    K_IDENTITY,
    K_RESOURCE_LABEL,
    K_Q_ACTIVITY,
    K_Q_ALLOCATION,
    K_Q_PENDING,
    K_Q_PRIORITY,
    K__COUNT
};

static const char *const rkey_names[K__COUNT] = {
    [K_ENABLED] = "enabled",
    [K_POLICY] = "policy",
    [K_THRESHOLD] = "threshold",
    [K_IDLE_TIMER] = "idleTimer",
    [K_STEP] = "step",
    [K_TOLERATED_GAP] = "toleratedGap",
    [K_NOTICE_PERIOD] = "noticePeriod",
    [K_MAX_TERMINATIONS] = "maxTerminationsPerCycle",
    [K_DRY_RUN] = "dryRun",
    [K_ACTION] = "action",
    [K_IDENTITY] = "identity",
    [K_RESOURCE_LABEL] = "resourceLabel",
    [K_Q_ACTIVITY] = "activity",
    [K_Q_ALLOCATION] = "allocation",
    [K_Q_PENDING] = "pending",
    [K_Q_PRIORITY] = "priority",
};

/* Keys only a rule may have; named in the error when they appear under `defaults:`. */
static const char *const rule_only_keys[] = {"name", "scope", "exemptions", "overrides",
                                             "activeWindows"};

/* Values of one mapping (a rule or `defaults:`), before inheritance. Strings point into the DOM. */
struct vals {
    bool seen[K__COUNT];                  /* key present, valid or not */
    const struct ydom_node *at[K__COUNT]; /* value node, when valid */
    bool enabled, dry_run;
    enum rule_policy policy;
    enum rule_action action;
    double threshold, idle_timer, step, gap, notice;
    unsigned max_term;
    const struct ydom_node *identity; /* validated sequence of label names */
    const char *resource_label;
    const char *query[4]; /* K_Q_ACTIVITY.. K_Q_PRIORITY */
    struct notify_vals notify;
};

static int lookup_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

static void parse_queries(struct ctx *c, const struct ydom_node *map, struct vals *v,
                          const char *where)
{
    char b[QBUF];

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "queries"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        int key = lookup_name(k->str, rkey_names + K_Q_ACTIVITY, 4);
        if (key < 0) {
            err_at(c, k, "unknown key '%s' in 'queries' of %s", q(k, b), where);
            continue;
        }
        key += K_Q_ACTIVITY;
        v->seen[key] = true;
        const char *s = get_string(c, val, rkey_names[key]);
        if (!s)
            continue;
        if (!*s && key != K_Q_PRIORITY) {
            err_at(c, val, "query '%s' must not be empty", rkey_names[key]);
            continue;
        }
        v->query[key - K_Q_ACTIVITY] = s;
        v->at[key] = val;
    }
}

static int parse_identity(struct ctx *c, const struct ydom_node *seq)
{
    char b[QBUF];
    int bad = 0;
    struct strset seen = {0};

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "identity"))
        return -1;
    if (seq->nitems == 0) {
        err_at(c, seq, "'identity' must not be empty");
        return -1;
    }
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *it = seq->items[i];
        const char *s = get_item(c, it, "identity");
        if (!s) {
            bad = -1;
        } else if (!valid_label_name(s)) {
            err_at(c, it, "invalid label name '%s' in 'identity'", q(it, b));
            bad = -1;
        } else if (strset_put(&seen, s, strlen(s), it)) {
            err_at(c, it, "duplicate label '%s' in 'identity'", q(it, b));
            bad = -1;
        }
    }
    strset_free(&seen);
    return bad;
}

/* One key shared by rules and `defaults:`. Returns false when `key` is not such a key. */
static bool parse_rule_key(struct ctx *c, const struct ydom_node *k, const struct ydom_node *val,
                           struct vals *v, const char *where)
{
    char b[QBUF];
    double d;
    int key;

    if (strcmp(k->str, "queries") == 0) {
        parse_queries(c, val, v, where);
        return true;
    }
    if (strcmp(k->str, "notify") == 0) {
        parse_notify(c, val, &v->notify, where);
        return true;
    }
    key = lookup_name(k->str, rkey_names, K_Q_ACTIVITY);
    if (key < 0)
        return false;
    v->seen[key] = true;
    const char *name = rkey_names[key];
    switch ((enum rkey)key) {
    case K_ENABLED:
        if (get_bool(c, val, name, &v->enabled) < 0)
            return true;
        break;
    case K_DRY_RUN:
        if (get_bool(c, val, name, &v->dry_run) < 0)
            return true;
        break;
    case K_POLICY: {
        const char *s = get_string(c, val, name);
        int p = s ? lookup_name(s, policy_names, ARRAY_LEN(policy_names)) : -1;
        if (s && p < 0)
            err_at(c, val, "invalid policy '%s' (expected Always or DuringGPUPressure)", q(val, b));
        if (p < 0)
            return true;
        v->policy = (enum rule_policy)p;
        break;
    }
    case K_ACTION: {
        const char *s = get_string(c, val, name);
        int a = s ? lookup_name(s, action_names, ARRAY_LEN(action_names)) : -1;
        if (s && a < 0)
            err_at(c, val,
                   "invalid action '%s' (expected report, scaleToZero, suspend, evict, delete "
                   "or stop)",
                   q(val, b));
        if (a < 0)
            return true;
        v->action = (enum rule_action)a;
        break;
    }
    case K_THRESHOLD:
        if (get_number(c, val, name, &v->threshold) < 0 || check_threshold(c, val, v->threshold))
            return true;
        break;
    case K_IDLE_TIMER:
        if (get_duration(c, val, name, &v->idle_timer) < 0 ||
            check_duration_range(c, val, name, v->idle_timer, &idle_range) < 0)
            return true;
        break;
    case K_STEP:
        if (get_duration(c, val, name, &v->step) < 0 ||
            check_duration_range(c, val, name, v->step, &step_range) < 0)
            return true;
        break;
    case K_TOLERATED_GAP:
        /* Checked against step and idleTimer once both are known. */
        if (get_duration(c, val, name, &v->gap) < 0)
            return true;
        break;
    case K_NOTICE_PERIOD:
        if (get_duration(c, val, name, &v->notice) < 0 ||
            check_duration_range(c, val, name, v->notice, &notice_range) < 0)
            return true;
        break;
    case K_MAX_TERMINATIONS:
        if (get_number(c, val, name, &d) < 0)
            return true;
        if (ydom_scalar_type(val) != YDOM_T_INT || !(d >= 1 && d <= MAX_TERMINATIONS_CAP)) {
            err_at(c, val, "'%s' must be an integer between 1 and %d, got %s", name,
                   MAX_TERMINATIONS_CAP, q(val, b));
            return true;
        }
        v->max_term = (unsigned)d;
        break;
    case K_IDENTITY:
        if (parse_identity(c, val) < 0)
            return true;
        v->identity = val;
        break;
    case K_RESOURCE_LABEL:
        v->resource_label = get_string(c, val, name);
        if (!v->resource_label)
            return true;
        if (!valid_label_name(v->resource_label)) {
            err_at(c, val, "invalid label name '%s' for 'resourceLabel'", q(val, b));
            return true;
        }
        break;
    default:
        return false;
    }
    v->at[key] = val;
    return true;
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

static void parse_scope(struct ctx *c, const struct ydom_node *map, struct rule *r,
                        const char *where)
{
    char b[QBUF];

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "scope"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        if (strcmp(k->str, "namespaces") == 0)
            parse_strings(c, val, "namespaces", &r->namespaces, &r->nnamespaces);
        else if (strcmp(k->str, "matchers") == 0)
            parse_matchers(c, val, &r->scope, false, where);
        else
            err_at(c, k, "unknown key '%s' in 'scope' of %s", q(k, b), where);
    }
}

static void missing(struct ctx *c, const struct ydom_node *map, const char *key, const char *where)
{
    err_at(c, map, "missing required key '%s' in %s", key, where);
}

static void parse_exemptions(struct ctx *c, const struct ydom_node *seq, struct rule *r,
                             const char *rwhere)
{
    char b[QBUF];

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "exemptions"))
        return;
    r->exemptions = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->exemptions));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("exemption %zu of %s", i + 1, rwhere);
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
                err_at(c, k, "unknown key '%s' in %s", q(k, b), where);
            }
        }
        if (!ydom_map_get(map, "matchers"))
            missing(c, map, "matchers", where);
        free(where);
    }
}

static void parse_overrides(struct ctx *c, const struct ydom_node *seq, struct rule *r,
                            const char *rwhere, const struct ydom_node **idle_nodes)
{
    char b[QBUF];

    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "overrides"))
        return;
    r->overrides = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->overrides));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("override %zu of %s", i + 1, rwhere);
        struct rule_override *o = &r->overrides[r->noverrides++];
        bool any = false;
        if (!expect_entry(c, map, where)) {
            free(where);
            continue;
        }
        for (size_t j = 0; j < map->npairs; j++) {
            const struct ydom_node *k = map->pairs[j].key, *val = map->pairs[j].value;
            if (strcmp(k->str, "matchers") == 0) {
                parse_matchers(c, val, &o->match, true, where);
            } else if (strcmp(k->str, "threshold") == 0) {
                any = true;
                if (get_number(c, val, "threshold", &o->threshold) == 0 &&
                    check_threshold(c, val, o->threshold) == 0)
                    o->has_threshold = true;
            } else if (strcmp(k->str, "idleTimer") == 0) {
                any = true;
                if (get_duration(c, val, "idleTimer", &o->idle_timer) == 0 &&
                    check_duration_range(c, val, "idleTimer", o->idle_timer, &idle_range) == 0) {
                    o->has_idle_timer = true;
                    idle_nodes[i] = val;
                }
            } else if (strcmp(k->str, "enabled") == 0) {
                any = true;
                if (get_bool(c, val, "enabled", &o->enabled) == 0)
                    o->has_enabled = true;
            } else {
                err_at(c, k, "unknown key '%s' in %s", q(k, b), where);
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
                           q(it, b));
                else if (d >= 0 && (w->days >> d & 1u))
                    err_at(c, it, "duplicate day '%s' in 'days'", q(it, b));
                else if (d >= 0)
                    w->days |= 1u << d;
            }
        } else if (strcmp(k->str, "start") == 0 || strcmp(k->str, "end") == 0) {
            bool start = k->str[0] == 's';
            const char *s = get_string(c, val, k->str);
            int m = s ? parse_hhmm(s, start ? 23 * 60 + 59 : 24 * 60) : -1;
            if (s && m < 0)
                err_at(c, val, "invalid time '%s' for '%s' (expected HH:MM from 00:00 to %s)",
                       q(val, b), k->str, start ? "23:59" : "24:00");
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
                       q(val, b));
            if (m >= 0)
                w->utc_offset_min = s[0] == '-' ? -m : m;
            if (ydom_map_get(map, "timeZone"))
                err_at(c, k, "'utcOffset' and 'timeZone' are mutually exclusive in %s", where);
        } else if (strcmp(k->str, "timeZone") == 0) {
            char msg[256];
            const char *s = get_string(c, val, "timeZone");
            if (s && tz_load(s, &w->zone, msg, sizeof(msg)) < 0)
                err_at(c, val, "invalid 'timeZone' '%s': %s", q(val, b), msg);
        } else {
            err_at(c, k, "unknown key '%s' in %s", q(k, b), where);
        }
    }
    static const char *const required[] = {"days", "start", "end"};
    for (size_t i = 0; i < ARRAY_LEN(required); i++)
        if (!ydom_map_get(map, required[i]))
            missing(c, map, required[i], where);
}

static void parse_windows(struct ctx *c, const struct ydom_node *seq, struct rule *r,
                          const char *rwhere)
{
    if (!expect_kind(c, seq, YDOM_KIND_SEQUENCE, "activeWindows"))
        return;
    r->windows = xcalloc(seq->nitems ? seq->nitems : 1, sizeof(*r->windows));
    for (size_t i = 0; i < seq->nitems; i++) {
        const struct ydom_node *map = seq->items[i];
        char *where = xasprintf("active window %zu of %s", i + 1, rwhere);
        if (expect_entry(c, map, where))
            parse_window(c, map, &r->windows[r->nwindows++], where);
        free(where);
    }
}

/* ---- whole rules ------------------------------------------------------------------------- */

static void parse_defaults(struct ctx *c, const struct ydom_node *map, struct vals *dv)
{
    char b[QBUF];

    if (!expect_kind(c, map, YDOM_KIND_MAPPING, "defaults"))
        return;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        if (parse_rule_key(c, k, val, dv, "'defaults'"))
            continue;
        if (lookup_name(k->str, rule_only_keys, ARRAY_LEN(rule_only_keys)) >= 0)
            err_at(c, k, "'%s' is not allowed in 'defaults' (set it in each rule)", k->str);
        else
            err_at(c, k, "unknown key '%s' in 'defaults'", q(k, b));
    }
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

/* Apply inheritance, then the checks that involve more than one key. */
static void finish_rule(struct ctx *c, const struct ydom_node *map, struct rule *r,
                        const struct vals *rv, const struct vals *dv, const char *where,
                        const struct ydom_node *const *override_idle)
{
    const struct vals *s;
    char b1[32], b2[32];

    if ((s = source(rv, dv, K_ENABLED)))
        r->enabled = s->enabled;
    if ((s = source(rv, dv, K_POLICY)))
        r->policy = s->policy;
    if ((s = source(rv, dv, K_THRESHOLD)))
        r->threshold = s->threshold;
    if ((s = source(rv, dv, K_IDLE_TIMER)))
        r->idle_timer = s->idle_timer;
    if ((s = source(rv, dv, K_STEP)))
        r->step = s->step;
    if ((s = source(rv, dv, K_NOTICE_PERIOD)))
        r->notice_period = s->notice;
    if ((s = source(rv, dv, K_MAX_TERMINATIONS)))
        r->max_terminations = s->max_term;
    if ((s = source(rv, dv, K_DRY_RUN)))
        r->dry_run = s->dry_run;
    if ((s = source(rv, dv, K_ACTION)))
        r->action = s->action;
    if ((s = source(rv, dv, K_RESOURCE_LABEL)))
        r->resource_label = xstrdup(s->resource_label);
    else
        r->resource_label = xstrdup("resource");
    if ((s = source(rv, dv, K_IDENTITY))) {
        r->nidentity = s->identity->nitems;
        r->identity = xcalloc(r->nidentity, sizeof(*r->identity));
        for (size_t i = 0; i < r->nidentity; i++)
            r->identity[i] = xstrdup(s->identity->items[i]->str);
    } else {
        r->nidentity = 2;
        r->identity = xcalloc(2, sizeof(*r->identity));
        r->identity[0] = xstrdup("namespace");
        r->identity[1] = xstrdup("pod");
    }
    static const char *const qdefault[] = {DEFAULT_Q_ACTIVITY, DEFAULT_Q_ALLOCATION,
                                           DEFAULT_Q_PENDING, NULL};
    char **qdst[] = {&r->q_activity, &r->q_allocation, &r->q_pending, &r->q_priority};
    for (int i = 0; i < 4; i++) {
        s = source(rv, dv, (enum rkey)(K_Q_ACTIVITY + i));
        const char *v = s ? s->query[i] : qdefault[i];
        *qdst[i] = v && *v ? xstrdup(v) : NULL;
        if (i == 0 && s && s->at[K_Q_ACTIVITY]) {
            r->activity_line = s->at[K_Q_ACTIVITY]->line;
            r->activity_col = s->at[K_Q_ACTIVITY]->col;
        }
    }

    finish_notify(c, r, &rv->notify, &dv->notify, where);

    static const enum rkey required[] = {K_THRESHOLD, K_IDLE_TIMER};
    for (size_t i = 0; i < ARRAY_LEN(required); i++)
        if (!rv->seen[required[i]] && !dv->seen[required[i]])
            missing(c, map, rkey_names[required[i]], where);

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
        r->tolerated_gap = gs ? gs->gap : 2 * r->step;
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
                       const struct vals *dv, struct rule *r)
{
    char b[QBUF];
    struct vals rv = {0};
    char *where;
    const struct ydom_node *name = ydom_map_get(map, "name");

    r->file = xstrdup(c->file);
    r->line = map->line;
    r->col = map->col;
    r->enabled = true;
    r->policy = POLICY_DURING_PRESSURE;
    r->step = 60;
    r->max_terminations = 1;
    r->action = ACTION_REPORT;

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
                   q(name, b), NAME_MAX_LEN);
    }

    const struct ydom_node *oseq = ydom_map_get(map, "overrides");
    size_t nover = oseq && oseq->kind == YDOM_KIND_SEQUENCE ? oseq->nitems : 0;
    const struct ydom_node **override_idle = xcalloc(nover ? nover : 1, sizeof(*override_idle));

    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *val = map->pairs[i].value;
        if (strcmp(k->str, "name") == 0)
            continue;
        if (parse_rule_key(c, k, val, &rv, where))
            continue;
        if (strcmp(k->str, "scope") == 0)
            parse_scope(c, val, r, where);
        else if (strcmp(k->str, "exemptions") == 0)
            parse_exemptions(c, val, r, where);
        else if (strcmp(k->str, "overrides") == 0)
            parse_overrides(c, val, r, where, override_idle);
        else if (strcmp(k->str, "activeWindows") == 0)
            parse_windows(c, val, r, where);
        else
            err_at(c, k, "unknown key '%s' in %s", q(k, b), where);
    }
    finish_rule(c, map, r, &rv, dv, where, override_idle);
    free(override_idle);
    free(where);
}

static void parse_document(struct ctx *c, const struct ydom_node *root, struct ruleset *rs)
{
    static const char *const top_keys[] = {"apiVersion", "kind", "defaults", "rules"};
    char b[QBUF];
    struct vals dv = {0};

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
            err_at(c, api, "unsupported apiVersion '%s' (this build understands: %s)", q(api, b),
                   RULES_API_VERSION);
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
            err_at(c, kind, "'kind' must be '%s', got '%s'", RULES_KIND, q(kind, b));
    }
    for (size_t i = 0; i < root->npairs; i++) {
        const struct ydom_node *k = root->pairs[i].key;
        if (lookup_name(k->str, top_keys, ARRAY_LEN(top_keys)) < 0)
            err_at(c, k, "unknown top-level key '%s'", q(k, b));
    }
    const struct ydom_node *defaults = ydom_map_get(root, "defaults");
    if (defaults)
        parse_defaults(c, defaults, &dv);

    const struct ydom_node *rules = ydom_map_get(root, "rules");
    if (!rules) {
        missing(c, root, "rules", "the document");
        return;
    }
    if (!expect_kind(c, rules, YDOM_KIND_SEQUENCE, "rules"))
        return;
    if (rules->nitems == 0) {
        err_at(c, rules, "'rules' must not be empty");
        return;
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
        parse_rule(c, map, i, &dv, r);
        if (!r->name)
            continue;
        /* Rules are not moved while the set lives: rs->rules was sized once above. */
        const struct rule *first = strset_put(&names, r->name, strlen(r->name), r);
        if (first)
            err_at(c, ydom_map_get(map, "name"), "duplicate rule name '%s' (first at %d:%d)",
                   r->name, first->line, first->col);
    }
    strset_free(&names);
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
    if (c.n) {
        rules_free(out);
        return -1;
    }
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
