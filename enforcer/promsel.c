/*
 * Series selectors of a PromQL expression (promsel.h), by a recursive-descent parser of the
 * grammar of prometheus/prometheus `promql/parser/generated_parser.y` and `lex.go` (2.x):
 * operators by precedence (or < and/unless < comparisons < + - < * / % atan2 < ^, `^` right
 * associative), their modifiers (bool, on/ignoring, group_left/group_right), aggregations with
 * `by`/`without` before or after their arguments, function calls, `x[5m]`, subqueries
 * `(e)[5m:1m]`, `offset` and `@`. Keywords are case-insensitive as in lex.go; function names
 * are not. Prometheus 3's quoted names are read (`{"my.metric", "k8s.pod.name"="x"}`,
 * `by ("k8s.namespace.name")`, docs/tsdb-engines.md); the unquoted dotted form that 3.x
 * accepts only behind a feature flag is refused.
 *
 * What is safe to extract, and why (docs/promql-plan.md §5.8): the enforcer reads each
 * selector's raw samples over the window and proves them gap-free, so every sample the
 * expression can read must lie in [window start - reach, now].
 *  - Ranges, positive offsets and subquery ranges only move reads further back: they add to
 *    the reach, and proving a longer stretch is stricter, never weaker.
 *  - The @ modifier pins a read to a fixed time and a negative offset reads after the
 *    evaluation time: neither lies in that interval. An offset or @ on a subquery shifts
 *    every selector inside it the same way. All refused.
 *  - absent() and absent_over_time() produce a series exactly when their selector has none,
 *    so their output is backed by no raw sample; count_values() builds labels from values,
 *    so which workload its output belongs to comes from no series' labels. Refused.
 *  - A function this parser does not know (a newer Prometheus', MetricsQL's) may read its
 *    arguments in a way not listed here: refused rather than guessed.
 *  - label_replace, label_join and group_left/group_right(labels) rewrite labels: the names
 *    they write are reported (promsel.written) so that the caller stops trusting a series'
 *    own labels for those names.
 *  - Filters (comparisons without bool, and, unless, topk) choose series by value; all the
 *    series of a selector are proven, chosen or not, which is stricter than needed.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dur.h"
#include "promsel.h"
#include "utf8.h"
#include "util.h"

/* Nesting deeper than this is refused (a bound on the recursion, for hostile input). */
#define PROMSEL_MAX_DEPTH 200

enum tok {
    T_EOF = 0,
    T_IDENT,
    T_NUM,
    T_DUR,
    T_STR,
    T_LPAREN,
    T_RPAREN,
    T_LBRACE,
    T_RBRACE,
    T_LBRACK,
    T_RBRACK,
    T_COMMA,
    T_COLON,
    T_AT,
    T_OP,
    T_BAD
};

struct ps {
    const char *p;  /* next unread byte */
    enum tok k;     /* current token */
    const char *ts; /* its text */
    size_t tl;
    double dur; /* T_DUR: seconds */
    int depth;
    bool failed;
    char *err;
    size_t errlen;
    struct promsel *out;
    /* Every appearance of a selector, in order: a postfix range, offset or subquery adds to
       the reach of the appearances its operand holds (those after the operand's start). */
    struct app {
        size_t sel;
        double reach;
        bool gate;
    } * app;
    size_t napp;
};

static void ps_fail(struct ps *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ps_fail(struct ps *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
}

static bool name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_' || c == ':';
}

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == ':';
}

/* The current token is an identifier equal to `kw`, ignoring case (lex.go lower-cases keys). */
static bool is_kw(const struct ps *s, const char *kw)
{
    return s->k == T_IDENT && strlen(kw) == s->tl && strncasecmp(s->ts, kw, s->tl) == 0;
}

static bool is_op(const struct ps *s, const char *op)
{
    return s->k == T_OP && strlen(op) == s->tl && strncmp(s->ts, op, s->tl) == 0;
}

/* A duration `5m`, `1h30m`, `1500ms` at p: its length, or 0. */
static size_t dur_len(const char *p)
{
    const char *q = p;
    while (isdigit((unsigned char)*q)) {
        while (isdigit((unsigned char)*q))
            q++;
        if (strncmp(q, "ms", 2) == 0)
            q += 2;
        else if (*q && strchr("smhdwy", *q))
            q++;
        else
            return 0;
    }
    /* `5m:` is a subquery's range, so ':' may follow (a metric name's ':' may not start it). */
    return isalnum((unsigned char)*q) || *q == '_' || *q == '.' ? 0 : (size_t)(q - p);
}

static void next(struct ps *s)
{
    for (;;) {
        while (isspace((unsigned char)*s->p))
            s->p++;
        if (*s->p != '#')
            break;
        while (*s->p && *s->p != '\n')
            s->p++;
    }
    const char *p = s->p;
    s->ts = p;
    s->tl = 1;
    if (!*p) {
        s->k = T_EOF;
        s->tl = 0;
        return;
    }
    static const char *const ops[] = {"==", "!=", "<=", ">=", "=~", "!~", "<", ">",
                                      "=",  "+",  "-",  "*",  "/",  "%",  "^"};
    const char *single = "(){}[],:@";
    const enum tok singles[] = {T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_LBRACK,
                                T_RBRACK, T_COMMA,  T_COLON,  T_AT};
    const char *hit = strchr(single, *p);
    if (hit) {
        s->k = singles[hit - single];
        s->p++;
        return;
    }
    for (size_t i = 0; i < ARRAY_LEN(ops); i++) {
        size_t n = strlen(ops[i]);
        if (strncmp(p, ops[i], n) == 0) {
            s->k = T_OP;
            s->tl = n;
            s->p += n;
            return;
        }
    }
    if (*p == '"' || *p == '\'' || *p == '`') {
        char q = *p++;
        while (*p && *p != q) {
            if (*p == '\\' && q != '`' && p[1])
                p++;
            else if (*p == '\n' && q != '`')
                break;
            p++;
        }
        if (*p != q) {
            s->k = T_BAD;
            ps_fail(s, "unterminated string");
            return;
        }
        s->k = T_STR;
        s->tl = (size_t)(p + 1 - s->ts);
        s->p = p + 1;
        return;
    }
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        size_t dl = dur_len(p);
        if (dl) {
            char buf[64];
            if (dl >= sizeof(buf)) {
                s->k = T_BAD;
                ps_fail(s, "duration too long");
                return;
            }
            memcpy(buf, p, dl);
            buf[dl] = '\0';
            if (dur_parse(buf, &s->dur) < 0) {
                s->k = T_BAD;
                ps_fail(s, "invalid duration '%s'", buf);
                return;
            }
            s->k = T_DUR;
            s->tl = dl;
            s->p += dl;
            return;
        }
        char *end;
        s->dur = strtod(p, &end);
        if (end == p || name_char(*end) || *end == '.') {
            s->k = T_BAD;
            ps_fail(s, "invalid number at '%.20s'", p);
            return;
        }
        s->k = T_NUM;
        s->tl = (size_t)(end - p);
        s->p = end;
        return;
    }
    if (name_start(*p)) {
        while (name_char(*p))
            p++;
        s->tl = (size_t)(p - s->ts);
        s->p = p;
        s->k = T_IDENT;
        if (is_kw(s, "inf") || is_kw(s, "nan"))
            s->k = T_NUM;
        return;
    }
    s->k = T_BAD;
    ps_fail(s, "unexpected character '%c'", *p);
}

static bool expect(struct ps *s, enum tok k, const char *what)
{
    if (s->k != k) {
        if (s->k == T_EOF)
            ps_fail(s, "expected %s at the end", what);
        else
            ps_fail(s, "expected %s at '%.*s'", what, (int)(s->tl > 20 ? 20 : s->tl), s->ts);
        return false;
    }
    next(s);
    return true;
}

static void add_name(char ***v, size_t *n, const char *name, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*v)[i]) == len && strncmp((*v)[i], name, len) == 0)
            return;
    *v = xrealloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = xstrndup(name, len);
}

/* The current token is a label name: an identifier without ':' (metric names may have one). */
static bool is_label(const struct ps *s)
{
    return s->k == T_IDENT && !memchr(s->ts, ':', s->tl);
}

/*
 * The current token is Prometheus 3's quoted label name ("k8s.pod.name", generated_parser.y
 * string_identifier): its text between the quotes into *name, *len. A name with an escape
 * is refused rather than unescaped here: the lists it would go to compare names as written.
 */
static bool quoted_name(struct ps *s, const char **name, size_t *len)
{
    /* Not valid UTF-8: Prometheus refuses the name, and so does the raw read's matcher parser
       (match.c): refused here too, so that a rule `check` accepts reads as it was checked. */
    if (s->k != T_STR || s->tl < 3 || s->ts[0] == '`' || memchr(s->ts, '\\', s->tl) != NULL ||
        !utf8_valid(s->ts + 1, s->tl - 2)) {
        ps_fail(s,
                "expected a label name at '%.*s' (a quoted name must be non-empty UTF-8, in '\"' "
                "or \"'\", without escapes)",
                (int)(s->tl > 20 ? 20 : s->tl), s->ts);
        return false;
    }
    *name = s->ts + 1;
    *len = s->tl - 2;
    return true;
}

/* `( label, ... )`, a trailing comma allowed; each name goes to the lists given. */
static void label_list(struct ps *s, bool grouping, bool written)
{
    if (!expect(s, T_LPAREN, "'('"))
        return;
    while (!s->failed && s->k != T_RPAREN) {
        const char *name = s->ts;
        size_t len = s->tl;
        if (s->k == T_STR) {
            if (!quoted_name(s, &name, &len))
                return;
        } else if (!is_label(s)) {
            ps_fail(s, "expected a label name at '%.*s'", (int)(s->tl > 20 ? 20 : s->tl), s->ts);
            return;
        }
        if (grouping)
            add_name(&s->out->grouping, &s->out->ngrouping, name, len);
        if (written)
            add_name(&s->out->written, &s->out->nwritten, name, len);
        next(s);
        if (s->k == T_COMMA)
            next(s);
        else if (s->k != T_RPAREN)
            ps_fail(s, "expected ',' or ')' in a label list");
    }
    expect(s, T_RPAREN, "')'");
}

static void add_selector(struct ps *s, char *text, bool gate)
{
    struct promsel *o = s->out;
    size_t i = 0;
    while (i < o->nsel && strcmp(o->sel[i].text, text) != 0)
        i++;
    if (i < o->nsel) {
        free(text);
    } else {
        o->sel = xrealloc(o->sel, (o->nsel + 1) * sizeof(*o->sel));
        o->sel[o->nsel++] = (struct promsel_sel){.text = text};
    }
    s->app = xrealloc(s->app, (s->napp + 1) * sizeof(*s->app));
    s->app[s->napp++] = (struct app){.sel = i, .reach = 0, .gate = gate};
}

static void parse_expr(struct ps *s, int minprec, bool gate);

/* `name{...}` or `{...}` at the current token. */
static void selector(struct ps *s, bool gate)
{
    struct sbuf b = {0};
    bool named = false;
    if (s->k == T_IDENT) {
        sbuf_add(&b, s->ts, s->tl);
        next(s);
        named = true;
    }
    if (s->k == T_LBRACE) {
        sbuf_putc(&b, '{');
        next(s);
        bool first = true, name_eq = false; /* name_eq: a `__name__ =` matcher so far */
        while (!s->failed && s->k != T_RBRACE) {
            const char *qn;
            size_t ql;
            bool is_name = s->k == T_IDENT && s->tl == 8 && memcmp(s->ts, "__name__", 8) == 0;
            if (s->k == T_STR) {
                /* Prometheus 3: {"k8s.pod.name"="x"}, and {"my.metric"} for the metric name. */
                if (!quoted_name(s, &qn, &ql))
                    break;
                (void)qn;
                (void)ql;
            } else if (!is_label(s)) {
                ps_fail(s, "expected a label name in a selector at '%.*s'",
                        (int)(s->tl > 20 ? 20 : s->tl), s->ts);
                break;
            }
            if (!first)
                sbuf_putc(&b, ',');
            first = false;
            bool str = s->k == T_STR;
            sbuf_add(&b, s->ts, s->tl);
            next(s);
            if (str && (s->k == T_COMMA || s->k == T_RBRACE)) {
                /* After `__name__="x"`: refused as the raw read's parser refuses it (match.c);
                   either name alone would read other series than the pair. */
                if (named || name_eq) {
                    /* Prometheus refuses it ("metric name must not be set twice"). */
                    ps_fail(s, "a selector's metric name set twice");
                    break;
                }
                named = true;
                if (s->k == T_COMMA)
                    next(s);
                continue;
            }
            if (!(is_op(s, "=") || is_op(s, "!=") || is_op(s, "=~") || is_op(s, "!~"))) {
                ps_fail(s, "expected a label matcher operator");
                break;
            }
            if (is_name && is_op(s, "="))
                name_eq = true;
            sbuf_add(&b, s->ts, s->tl);
            next(s);
            if (s->k != T_STR) {
                ps_fail(s, "expected a string in a label matcher");
                break;
            }
            sbuf_add(&b, s->ts, s->tl);
            next(s);
            if (s->k == T_COMMA)
                next(s);
            else if (s->k != T_RBRACE)
                ps_fail(s, "expected ',' or '}' in a selector");
        }
        sbuf_putc(&b, '}');
        expect(s, T_RBRACE, "'}'");
        if (first && b.len == 2)
            ps_fail(s, "a selector needs a metric name or a matcher");
    }
    if (s->failed) {
        sbuf_free(&b);
        return;
    }
    add_selector(s, sbuf_take(&b), gate);
}

static const char *const aggregators[] = {
    "sum",   "min",  "max",     "avg",      "group",  "stddev",      "stdvar",
    "count", "topk", "bottomk", "quantile", "limitk", "limit_ratio", "count_values"};

/*
 * Functions of Prometheus 2.x and 3.x (promql/parser/functions.go) that read their arguments
 * as written: the samples of their selectors in the range or at the time given, no more.
 */
static const char *const functions[] = {"abs",
                                        "acos",
                                        "acosh",
                                        "asin",
                                        "asinh",
                                        "atan",
                                        "atanh",
                                        "avg_over_time",
                                        "ceil",
                                        "changes",
                                        "clamp",
                                        "clamp_max",
                                        "clamp_min",
                                        "cos",
                                        "cosh",
                                        "count_over_time",
                                        "day_of_month",
                                        "day_of_week",
                                        "day_of_year",
                                        "days_in_month",
                                        "deg",
                                        "delta",
                                        "deriv",
                                        "double_exponential_smoothing",
                                        "exp",
                                        "floor",
                                        "histogram_avg",
                                        "histogram_count",
                                        "histogram_fraction",
                                        "histogram_quantile",
                                        "histogram_stddev",
                                        "histogram_stdvar",
                                        "histogram_sum",
                                        "holt_winters",
                                        "hour",
                                        "idelta",
                                        "increase",
                                        "irate",
                                        "label_join",
                                        "label_replace",
                                        "last_over_time",
                                        "ln",
                                        "log10",
                                        "log2",
                                        "mad_over_time",
                                        "max_over_time",
                                        "min_over_time",
                                        "minute",
                                        "month",
                                        "pi",
                                        "predict_linear",
                                        "present_over_time",
                                        "quantile_over_time",
                                        "rad",
                                        "rate",
                                        "resets",
                                        "round",
                                        "scalar",
                                        "sgn",
                                        "sin",
                                        "sinh",
                                        "sort",
                                        "sort_by_label",
                                        "sort_by_label_desc",
                                        "sort_desc",
                                        "sqrt",
                                        "stddev_over_time",
                                        "stdvar_over_time",
                                        "sum_over_time",
                                        "tan",
                                        "tanh",
                                        "time",
                                        "timestamp",
                                        "vector",
                                        "year"};

static bool in_list(const char *const *v, size_t n, const char *s, size_t len, bool icase)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(v[i]) == len && (icase ? strncasecmp(v[i], s, len) : strncmp(v[i], s, len)) == 0)
            return true;
    return false;
}

static bool same(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && strncmp(s, name, len) == 0;
}

/* The arguments of a call, after its '(' up to and including ')'. With `label_dst` (for
   label_replace and label_join) the second argument is a label name the call writes. */
static void arguments(struct ps *s, bool gate, bool label_dst)
{
    size_t argi = 0;
    while (!s->failed && s->k != T_RPAREN) {
        if (label_dst && argi == 1 && s->k == T_STR && s->tl >= 2) {
            add_name(&s->out->written, &s->out->nwritten, s->ts + 1, s->tl - 2);
            next(s);
        } else {
            parse_expr(s, 0, gate);
        }
        argi++;
        if (s->k == T_COMMA)
            next(s);
        else if (s->k != T_RPAREN)
            ps_fail(s, "expected ',' or ')' in arguments");
    }
    expect(s, T_RPAREN, "')'");
}

/*
 * `KEEP (...)` or `DROP (...)` at the current token, if any: `by`/`without` of an aggregation,
 * `on`/`ignoring` of a binary operator. Only the labels kept are parts (promsel.grouping).
 */
static void label_clause(struct ps *s, const char *keep, const char *drop)
{
    if (is_kw(s, keep)) {
        next(s);
        label_list(s, true, false);
    } else if (is_kw(s, drop)) {
        next(s);
        label_list(s, false, false);
    }
}

/* A primary expression; *is_sel when it is a bare selector (which a range may follow). */
static void primary(struct ps *s, bool gate, bool *is_sel)
{
    *is_sel = false;
    if (s->k == T_LPAREN) {
        next(s);
        parse_expr(s, 0, gate);
        expect(s, T_RPAREN, "')'");
        return;
    }
    if (s->k == T_NUM || s->k == T_STR) {
        next(s);
        return;
    }
    if (s->k == T_LBRACE) {
        selector(s, gate);
        *is_sel = !s->failed;
        return;
    }
    if (s->k != T_IDENT) {
        if (s->k == T_EOF)
            ps_fail(s, "unexpected end of expression");
        else if (s->k != T_BAD)
            ps_fail(s, "unexpected '%.*s'", (int)(s->tl > 20 ? 20 : s->tl), s->ts);
        return;
    }
    const char *name = s->ts;
    size_t len = s->tl;
    if (in_list(aggregators, ARRAY_LEN(aggregators), name, len, true)) {
        if (len == strlen("count_values") && strncasecmp(name, "count_values", len) == 0) {
            ps_fail(s, "count_values() makes labels from values: no series says which "
                       "workload its result belongs to");
            return;
        }
        next(s);
        label_clause(s, "by", "without");
        if (!expect(s, T_LPAREN, "'(' after an aggregation"))
            return;
        arguments(s, gate, false);
        label_clause(s, "by", "without");
        return;
    }
    /* An identifier followed by '(' is a call, as lex.go decides. */
    const char *after = s->p;
    while (isspace((unsigned char)*after))
        after++;
    if (*after == '(') {
        if (same(name, len, "absent") || same(name, len, "absent_over_time")) {
            ps_fail(s,
                    "%.*s() stands for series that do not exist: no raw sample backs its "
                    "result",
                    (int)len, name);
            return;
        }
        if (!in_list(functions, ARRAY_LEN(functions), name, len, false)) {
            ps_fail(s, "unknown function '%.*s'", (int)(len > 40 ? 40 : len), name);
            return;
        }
        bool dst = same(name, len, "label_replace") || same(name, len, "label_join");
        next(s);
        next(s); /* '(' */
        arguments(s, gate, dst);
        return;
    }
    selector(s, gate);
    *is_sel = !s->failed;
}

/* A duration or (Prometheus 3) a number of seconds at the current token, into *v. */
static bool duration(struct ps *s, double *v, const char *what)
{
    if (s->k != T_DUR && s->k != T_NUM) {
        ps_fail(s, "expected a duration %s", what);
        return false;
    }
    *v = s->dur;
    next(s);
    if (!isfinite(*v) || *v < 0) {
        ps_fail(s, "invalid duration %s", what);
        return false;
    }
    return true;
}

/* A primary with its ranges, subqueries and modifiers. */
static void postfix(struct ps *s, bool gate)
{
    size_t start = s->napp;
    bool is_sel = false;
    primary(s, gate, &is_sel);
    bool ranged = false, subquery = false, shifted = false;
    while (!s->failed) {
        double by = 0;
        if (s->k == T_LBRACK) {
            next(s);
            if (!duration(s, &by, "after '['"))
                break;
            if (s->k == T_COLON) {
                next(s);
                double res;
                if (s->k != T_RBRACK && !duration(s, &res, "after ':'"))
                    break;
                if (ranged || subquery || shifted) {
                    ps_fail(s, "a subquery of a range vector or of a shifted selector");
                    break;
                }
                subquery = true;
            } else {
                if (!is_sel || ranged || shifted) {
                    ps_fail(s, "a range applies only to a series selector");
                    break;
                }
                ranged = true;
            }
            if (!expect(s, T_RBRACK, "']'"))
                break;
        } else if (is_kw(s, "offset")) {
            next(s);
            bool neg = false;
            if (is_op(s, "-") || is_op(s, "+")) {
                neg = is_op(s, "-");
                next(s);
            }
            if (!duration(s, &by, "after offset"))
                break;
            if (subquery) {
                ps_fail(s, "offset on a subquery shifts every selector inside it");
                break;
            }
            if (!is_sel || shifted) {
                ps_fail(s, "offset applies only to a selector or a subquery, once");
                break;
            }
            if (neg && by > 0) {
                ps_fail(s, "a negative offset reads samples after the evaluation time");
                break;
            }
            shifted = true;
        } else if (s->k == T_AT) {
            ps_fail(s, "the @ modifier reads samples at a fixed time, not in the window");
            break;
        } else {
            break;
        }
        /* Every selector read in this operand is read that much further back. */
        for (size_t i = start; i < s->napp; i++)
            s->app[i].reach += by;
    }
}

static void unary(struct ps *s, bool gate)
{
    if (++s->depth > PROMSEL_MAX_DEPTH) {
        ps_fail(s, "expression nested deeper than %d", PROMSEL_MAX_DEPTH);
        return;
    }
    if (is_op(s, "-") || is_op(s, "+")) {
        next(s);
        unary(s, gate);
    } else {
        postfix(s, gate);
    }
    s->depth--;
}

/* The precedence of the binary operator at the current token (generated_parser.y), or 0. */
static int binop_prec(const struct ps *s)
{
    if (is_kw(s, "or"))
        return 1;
    if (is_kw(s, "and") || is_kw(s, "unless"))
        return 2;
    if (is_op(s, "==") || is_op(s, "!=") || is_op(s, "<=") || is_op(s, ">=") || is_op(s, "<") ||
        is_op(s, ">"))
        return 3;
    if (is_op(s, "+") || is_op(s, "-"))
        return 4;
    if (is_op(s, "*") || is_op(s, "/") || is_op(s, "%") || is_kw(s, "atan2"))
        return 5;
    if (is_op(s, "^"))
        return 6;
    return 0;
}

static void parse_expr(struct ps *s, int minprec, bool gate)
{
    if (++s->depth > PROMSEL_MAX_DEPTH) {
        ps_fail(s, "expression nested deeper than %d", PROMSEL_MAX_DEPTH);
        return;
    }
    unary(s, gate);
    int prec;
    while (!s->failed && (prec = binop_prec(s)) >= minprec && prec > 0) {
        bool unless = is_kw(s, "unless");
        next(s);
        if (is_kw(s, "bool"))
            next(s);
        label_clause(s, "on", "ignoring");
        if (is_kw(s, "group_left") || is_kw(s, "group_right")) {
            next(s);
            if (s->k == T_LPAREN)
                label_list(s, true, true);
        }
        /* `^` is right-associative, the others left. */
        parse_expr(s, prec == 6 ? prec : prec + 1, gate || unless);
    }
    s->depth--;
}

int promsel_extract(const char *expr, struct promsel *out, char *err, size_t errlen)
{
    *out = (struct promsel){0};
    char dummy[8];
    struct ps s = {.p = expr ? expr : "",
                   .err = err ? err : dummy,
                   .errlen = err ? errlen : sizeof(dummy),
                   .out = out};
    s.err[0] = '\0';
    next(&s);
    if (!s.failed)
        parse_expr(&s, 1, false);
    if (!s.failed && s.k != T_EOF)
        ps_fail(&s, "unexpected '%.*s' after the expression", (int)(s.tl > 20 ? 20 : s.tl), s.ts);
    if (!s.failed && out->nsel == 0)
        ps_fail(&s, "no series selector");
    if (!s.failed) {
        for (size_t i = 0; i < out->nsel; i++)
            out->sel[i].gate = true;
        for (size_t i = 0; i < s.napp; i++) {
            struct promsel_sel *x = &out->sel[s.app[i].sel];
            if (s.app[i].reach > x->reach)
                x->reach = s.app[i].reach;
            /* The same series read again: a gate only if every appearance is one. */
            x->gate &= s.app[i].gate;
        }
    }
    free(s.app);
    if (s.failed)
        promsel_free(out); /* nothing half-listed */
    return s.failed ? -1 : 0;
}

void promsel_free(struct promsel *p)
{
    for (size_t i = 0; i < p->nsel; i++)
        free(p->sel[i].text);
    for (size_t i = 0; i < p->nwritten; i++)
        free(p->written[i]);
    for (size_t i = 0; i < p->ngrouping; i++)
        free(p->grouping[i]);
    free(p->sel);
    free(p->written);
    free(p->grouping);
    *p = (struct promsel){0};
}

bool promsel_writes(const struct promsel *p, const char *name)
{
    for (size_t i = 0; i < p->nwritten; i++)
        if (strcmp(p->written[i], name) == 0)
            return true;
    return false;
}
