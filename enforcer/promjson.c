/*
 * What Prometheus' answers mean: reads the events of the JSON tokenizer (jsonpush.h) as an
 * answer of the Prometheus HTTP API and writes its matrix, vector or scalar into
 * `struct matrix`, or refuses it with the message the enforcer reports.
 *
 * It is strict on purpose. The enforcer terminates workloads whose activity looks idle, so
 * anything that could make activity look lower than it was must fail the query: an error
 * envelope, a proxy's HTML page, a truncated body, a value that is not a number string,
 * points out of order, and warnings (Prometheus sets them when an answer is partial, e.g. a
 * remote-read source failed). Answer shapes follow prometheus/prometheus docs/querying/api.md
 * and web/api/v1/api.go (respondError, marshalTimestamp). Each series' points go into one
 * array as the events arrive, so the cap on an answer bounds the parsed data, not the text.
 * It keeps json-c's answers: the old json-c parser is kept in tests/unit/promq_ref.c, and
 * tests and fuzz/fuzz_promq.c compare the two, and the whole-buffer parse with one fed in
 * random chunks.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpush.h"
#include "promjson.h"
#include "util.h"

/* ---- values ------------------------------------------------------------------------------ */

/* 10^k for k <= 22: all exactly representable as doubles. */
static const double promjson_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * `[+-]digits[.digits]` with at most 15 digits and no exponent, the shape of nearly every
 * value and timestamp Prometheus writes. The digits then fit a double exactly, and so does
 * 10^k, so one IEEE division gives the correctly rounded result, which is what strtod
 * returns (Clinger's fast path). False when the text has another shape.
 */
bool promjson_decimal(const char *s, size_t n, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    uint64_t m = 0;
    unsigned digits = 0, frac = 0;
    bool dot = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            m = m * 10 + (uint64_t)(c - '0');
            digits++;
            frac += dot;
            if (digits > 15)
                return false;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            return false;
        }
    }
    if (digits == 0)
        return false;
    double v = (double)m / promjson_pow10[frac];
    *out = neg ? -v : v;
    return true;
}

/*
 * Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf".
 * `s` holds `n` bytes and need not end in NUL.
 */
static int promjson_value_n(const char *s, size_t n, double *out)
{
    if (n == 3 && memcmp(s, "NaN", 3) == 0) {
        *out = NAN;
        return 0;
    }
    if ((n == 4 && memcmp(s, "+Inf", 4) == 0) || (n == 3 && memcmp(s, "Inf", 3) == 0)) {
        *out = INFINITY;
        return 0;
    }
    if (n == 4 && memcmp(s, "-Inf", 4) == 0) {
        *out = -INFINITY;
        return 0;
    }
    if (promjson_decimal(s, n, out))
        return 0;
    /* Only plain decimal notation; strtod alone would also take hex, "inf" and "nan(...)". */
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eE", s[i]) || s[i] == '\0')
            return -1;
    char small[64], *buf = n < sizeof(small) ? small : xmalloc(n + 1);
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    /* ERANGE on underflow still yields the nearest value; only overflow is wrong. */
    int rc = end != buf + n || (errno == ERANGE && isinf(v)) ? -1 : 0;
    if (buf != small)
        free(buf);
    if (rc == 0)
        *out = v;
    return rc;
}

static bool px_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/*
 * A JSON number token as json-c 0.16 reads it: without '.', 'e' or 'E' it is an integer
 * (strtoll / strtoull, saturating) converted to double, otherwise strtod.
 */
static double px_number(const char *s, size_t len)
{
    size_t i = 0;
    bool neg = s[0] == '-', dbl = false, exp = false;
    uint64_t m = 0;
    unsigned digits = 0, frac = 0;
    i += neg;
    for (; i < len && px_is_digit((unsigned char)s[i]); i++, digits++)
        if (digits < 19)
            m = m * 10 + (uint64_t)(s[i] - '0');
    if (i < len && s[i] == '.') {
        dbl = true;
        for (i++; i < len && px_is_digit((unsigned char)s[i]); i++, digits++, frac++)
            if (digits < 19)
                m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E'))
        dbl = exp = true;
    if (!dbl && digits <= 18)
        return neg ? (double)-(int64_t)m : (double)m;
    if (dbl && !exp && digits <= 15) {
        double v = (double)m / promjson_pow10[frac];
        return neg ? -v : v;
    }
    char small[64], *buf = len < sizeof(small) ? small : xmalloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    double v;
    if (dbl)
        v = strtod(buf, NULL);
    else if (neg)
        v = (double)strtoll(buf, NULL, 10);
    else
        v = (double)strtoull(buf, NULL, 10);
    if (buf != small)
        free(buf);
    return v;
}

/* ---- extraction: what the answer's values mean ------------------------------------------- */

/*
 * The extractor sees the document as events (a container opens or closes, a key, a scalar)
 * with the depth of the value: the envelope at 0, its members at 1, data's members at 2,
 * data.result's elements at 3, their members at 4, labels and [time, value] pairs at 5.
 * It keeps what json-c's tree walk kept: where a key occurs twice the last one counts, and
 * data.result is read under every result type the caller accepts (a resultType written
 * after the result, or twice, only counts at the end); a type that meets an error stops
 * reading and keeps its first error, as the walk stopped at it.
 */
enum {
    K_OTHER,
    K_STATUS,
    K_ETYPE,
    K_ERROR,
    K_WARN,
    K_PARTIAL,
    K_DATA,
    K_RTYPE,
    K_RESULT,
    K_METRIC,
    K_VALUES,
    K_VALUE,
    K_HIST,
};

/* What a container at some depth is to the extractor. */
enum { R_NONE, R_ENV, R_WARN, R_DATA, R_RESULT, R_ELEM, R_METRIC, R_VALUES, R_PAIR, R_VPAIR };

/* Captured strings (status, error, ...) keep this much; messages are shorter. */
#define PX_CAP 4096

struct px_str {
    bool seen, str; /* the member was there; its value is a string */
    size_t len;     /* full decoded length (only PX_CAP bytes kept) */
    char s[PX_CAP + 1];
};

/* A [time, value] pair being read. */
struct px_pair {
    bool arr; /* the value is an array */
    size_t n; /* its elements */
    int tk;   /* first element: 0 none, 1 number, 2 anything else */
    double t;
    int vk; /* second element: 0 none, 1 string, 2 anything else */
    bool vbad;
    double v;
    char vtext[41]; /* start of the value string, for messages */
};

/* Where a [time, value] pair sits, for messages (formatted only on error). */
struct px_path {
    int kind; /* 0: data.result, 1: data.result[i].value, 2: data.result[i].values[j] */
    size_t i, j;
};

/* data.result read as one result type. */
struct px_type {
    bool on; /* still reading: no error yet */
    int rc;
    char err[256];
    struct matrix m;
    size_t cap;
};

struct px_label {
    size_t name, value; /* offsets in px.mbuf; value PX_NONE when not a string */
    size_t order;       /* position in the object */
    const char *p;      /* the name, once mbuf stops moving */
};

#define PX_NONE   SIZE_MAX
#define PX_MATRIX 0
#define PX_VECTOR 1
#define PX_SCALAR 2

struct px {
    unsigned want;
    size_t max, bytes; /* cap on the parsed data and what it holds now */
    size_t nseries;
    bool over;
    bool top_obj; /* the answer is an object */
    unsigned char role[JSONPUSH_DEPTH + 1];
    unsigned char key[JSONPUSH_DEPTH + 1];
    struct px_str status, etype, error, warn0, rtype;
    char ehint[96]; /* the setting the whole error message names (promjson_error_hint) */
    int warnings;   /* 0 absent, 'n' null, '[' array, 'x' anything else */
    bool warn_any;
    int partial; /* isPartial: 0 absent, null or false, 't' true, 'x' anything else */
    bool data, data_obj, res;
    struct px_type in[3];
    struct px_pair spair; /* data.result as a scalar */
    size_t elem;          /* index of the current element of data.result */
    /* The current element of data.result. */
    bool hist, metric, metric_bad, values, values_bad, value;
    char metric_err[256], values_err[256];
    struct labels lab;
    struct sbuf mbuf, lname; /* label names and values of the current metric; a label name */
    struct px_label *ml;
    size_t nml, capml;
    struct point *pts;
    size_t npts, cappts, hint;
    struct px_pair vpair, pair;
};

static void px_charge(struct px *x, size_t n)
{
    x->bytes += n;
    if (x->bytes > x->max)
        x->over = true;
}

static void px_capture(struct px_str *c, int kind, const char *s, size_t len)
{
    c->seen = true;
    c->str = kind == JSONPUSH_STRING;
    c->len = c->str ? len : 0;
    size_t k = c->len < PX_CAP ? c->len : PX_CAP;
    memcpy(c->s, s, k);
    c->s[k] = '\0';
}

static bool px_str_is(const struct px_str *c, const char *want)
{
    return c->seen && c->str && c->len == strlen(want) && strcmp(c->s, want) == 0;
}

static void px_pair_start(struct px_pair *p, bool arr)
{
    *p = (struct px_pair){.arr = arr};
}

static void px_pair_elem(struct px_pair *p, int kind, const char *s, size_t len)
{
    size_t k = p->n++;
    if (k == 0) {
        p->tk = kind == JSONPUSH_NUMBER ? 1 : 2;
        if (p->tk == 1)
            p->t = px_number(s, len);
    } else if (k == 1) {
        p->vk = kind == JSONPUSH_STRING ? 1 : 2;
        if (p->vk == 1 && (p->vbad = promjson_value_n(s, len, &p->v) < 0)) {
            size_t c = len < 40 ? len : 40;
            memcpy(p->vtext, s, c);
            p->vtext[c] = '\0';
        }
    }
}

static void px_path_fmt(const struct px_path *p, char *buf, size_t len)
{
    if (p->kind == 0)
        snprintf(buf, len, "data.result");
    else if (p->kind == 1)
        snprintf(buf, len, "data.result[%zu].value", p->i);
    else
        snprintf(buf, len, "data.result[%zu].values[%zu]", p->i, p->j);
}

/* The pair read, checked in the order the messages were always reported. */
static int px_pair_end(const struct px_pair *p, const struct px_path *path, struct point *out,
                       char *err, size_t errlen)
{
    int bad = !p->arr || p->n != 2 ? 1
              : p->tk != 1         ? 2
              : !isfinite(p->t)    ? 3
              : p->vk != 1         ? 4
              : p->vbad            ? 5
                                   : 0;
    if (!bad) {
        out->t = p->t;
        out->v = p->v;
        return 0;
    }
    /* The path is formatted only here: on success it would cost more than the parse. */
    char w[64];
    px_path_fmt(path, w, sizeof(w));
    if (bad == 1)
        snprintf(err, errlen, "prometheus answer: '%s' is not a [time, value] pair", w);
    else if (bad == 2)
        snprintf(err, errlen, "prometheus answer: time in '%s' is not a number", w);
    else if (bad == 3)
        snprintf(err, errlen, "prometheus answer: time in '%s' is not finite", w);
    else if (bad == 4)
        snprintf(err, errlen, "prometheus answer: value in '%s' is not a string", w);
    else
        snprintf(err, errlen, "prometheus answer: value '%s' in '%s' is not a number", p->vtext, w);
    return -1;
}

static void px_type_fail(struct px_type *ty, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void px_type_fail(struct px_type *ty, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ty->err, sizeof(ty->err), fmt, ap);
    va_end(ap);
    ty->on = false;
    ty->rc = -1;
    matrix_free(&ty->m);
    ty->cap = 0;
}

static struct series *px_push(struct px *x, struct px_type *ty)
{
    if (ty->m.n == ty->cap) {
        ty->cap = ty->cap ? 2 * ty->cap : 64;
        ty->m.s = xrealloc(ty->m.s, ty->cap * sizeof(*ty->m.s));
    }
    struct series *s = &ty->m.s[ty->m.n++];
    memset(s, 0, sizeof(*s));
    x->nseries++;
    px_charge(x, sizeof(*s));
    return s;
}

/* Forget data.result as read so far (a later "result" or "data" replaces it). */
static void px_reset_result(struct px *x)
{
    for (int t = 0; t < 3; t++) {
        matrix_free(&x->in[t].m);
        x->in[t] = (struct px_type){0};
    }
    x->res = false;
}

static void px_reset_element(struct px *x)
{
    x->hist = x->metric = x->metric_bad = x->values = x->values_bad = x->value = false;
    labels_free(&x->lab);
    free(x->pts);
    x->pts = NULL;
    x->npts = x->cappts = 0;
}

static int px_label_cmp(const void *a, const void *b)
{
    const struct px_label *x = a, *y = b;
    int c = strcmp(x->p, y->p);
    return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* End of the group of equal names starting at k (sorted), i.e. its last entry. */
static size_t px_label_last(const struct px *x, size_t k)
{
    while (k + 1 < x->nml && strcmp(x->ml[k].p, x->ml[k + 1].p) == 0)
        k++;
    return k;
}

/* The metric object is complete: sorted, unique labels, or the first non-string label. */
static void px_metric_end(struct px *x)
{
    for (size_t k = 0; k < x->nml; k++)
        x->ml[k].p = x->mbuf.buf + x->ml[k].name;
    /* Prometheus already sorts them, so check that first. */
    for (size_t k = 1; k < x->nml; k++) {
        if (strcmp(x->ml[k - 1].p, x->ml[k].p) >= 0) {
            qsort(x->ml, x->nml, sizeof(*x->ml), px_label_cmp);
            break;
        }
    }
    /* A name given twice keeps its last value; report the first non-string by position. */
    size_t bad = PX_NONE, bad_order = PX_NONE, groups = 0;
    for (size_t k = 0; k < x->nml; k++) {
        size_t last = px_label_last(x, k);
        groups++;
        if (x->ml[last].value == PX_NONE && x->ml[k].order < bad_order) {
            bad = last;
            bad_order = x->ml[k].order;
        }
        k = last;
    }
    if (bad != PX_NONE) {
        x->metric_bad = true;
        snprintf(x->metric_err, sizeof(x->metric_err),
                 "prometheus answer: label '%.64s' of 'data.result[%zu]' is not a string",
                 x->ml[bad].p, x->elem);
        return;
    }
    struct label small[16], *v = groups <= 16 ? small : xmalloc(groups * sizeof(*v));
    size_t n = 0;
    for (size_t k = 0; k < x->nml; k++) {
        k = px_label_last(x, k);
        v[n].name = (char *)x->ml[k].p;
        v[n].value = x->mbuf.buf + x->ml[k].value;
        n++;
    }
    labels_from(&x->lab, v, n);
    if (v != small)
        free(v);
}

/* Bytes a label set holds (one block, see series.c), malloc's own overhead included. */
static size_t px_labels_size(const struct labels *ls)
{
    size_t n = ls->n * sizeof(*ls->v) + 16;
    for (size_t i = 0; i < ls->n; i++)
        n += strlen(ls->v[i].name) + strlen(ls->v[i].value) + 2;
    return n;
}

/* An element of data.result is complete (or is not an object): judge it for each type. */
static void px_element_end(struct px *x, bool object)
{
    size_t idx = x->elem;
    for (int t = PX_MATRIX; t <= PX_VECTOR; t++) {
        struct px_type *ty = &x->in[t];
        if (!ty->on)
            continue;
        if (!object) {
            px_type_fail(ty, "prometheus answer: 'data.result[%zu]' is not an object", idx);
        } else if (x->hist) {
            px_type_fail(ty,
                         "prometheus answer: 'data.result[%zu]' holds native histograms, which "
                         "are not supported",
                         idx);
        } else if (x->metric && x->metric_bad) {
            px_type_fail(ty, "%s", x->metric_err);
        } else if (t == PX_MATRIX && !x->values) {
            px_type_fail(ty, "prometheus answer: 'data.result[%zu].values' is not an array", idx);
        } else if (t == PX_MATRIX && x->values_bad) {
            px_type_fail(ty, "%s", x->values_err);
        } else if (t == PX_VECTOR && !x->value) {
            px_type_fail(ty, "prometheus answer: 'data.result[%zu]' has no 'value'", idx);
        } else {
            struct point p = {0, 0};
            struct px_path path = {1, idx, 0};
            char err[256];
            if (t == PX_VECTOR && px_pair_end(&x->vpair, &path, &p, err, sizeof(err)) < 0) {
                px_type_fail(ty, "%s", err);
                continue;
            }
            struct series *s = px_push(x, ty);
            /* Both types read this element only while neither has failed (tests, fuzzing). */
            if (t == PX_MATRIX && x->in[PX_VECTOR].on)
                labels_copy(&s->labels, &x->lab);
            else {
                s->labels = x->lab;
                x->lab = (struct labels){0};
            }
            px_charge(x, px_labels_size(&s->labels));
            if (t == PX_MATRIX) {
                if (x->npts && x->npts < x->cappts)
                    x->pts = xrealloc(x->pts, x->npts * sizeof(*x->pts));
                s->p = x->pts;
                s->n = x->npts;
                if (x->npts)
                    x->hint = x->npts;
                x->pts = NULL;
                x->npts = x->cappts = 0;
            } else {
                s->p = xmalloc(sizeof(*s->p));
                s->n = 1;
                s->p[0] = p;
                px_charge(x, sizeof(*s->p));
            }
        }
    }
    x->elem++;
    px_reset_element(x);
}

/* A pair of data.result[elem].values is complete. */
static void px_values_pair_end(struct px *x)
{
    struct point p;
    struct px_path path = {2, x->elem, x->npts};
    if (px_pair_end(&x->pair, &path, &p, x->values_err, sizeof(x->values_err)) < 0) {
        x->values_bad = true;
        return;
    }
    /* decide() walks points in order to find gaps; never hand it a shuffled series. */
    if (x->npts > 0 && !(p.t > x->pts[x->npts - 1].t)) {
        x->values_bad = true;
        snprintf(x->values_err, sizeof(x->values_err),
                 "prometheus answer: timestamps in 'data.result[%zu]' are not ascending", x->elem);
        return;
    }
    if (x->npts == x->cappts) {
        x->cappts = x->cappts ? 2 * x->cappts : x->hint ? x->hint : 16;
        x->pts = xrealloc(x->pts, x->cappts * sizeof(*x->pts));
    }
    x->pts[x->npts++] = p;
    px_charge(x, sizeof(p));
}

static bool px_key_is(const char *s, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(s, want, len) == 0;
}

/* A key of the object whose members sit at depth d. */
static void px_key(struct px *x, size_t d, const char *s, size_t len)
{
    int parent = x->role[d - 1], k = K_OTHER;
    if (parent == R_ENV) {
        k = px_key_is(s, len, "status")      ? K_STATUS
            : px_key_is(s, len, "errorType") ? K_ETYPE
            : px_key_is(s, len, "error")     ? K_ERROR
            : px_key_is(s, len, "warnings")  ? K_WARN
            : px_key_is(s, len, "isPartial") ? K_PARTIAL
            : px_key_is(s, len, "data")      ? K_DATA
                                             : K_OTHER;
    } else if (parent == R_DATA) {
        k = px_key_is(s, len, "resultType") ? K_RTYPE
            : px_key_is(s, len, "result")   ? K_RESULT
                                            : K_OTHER;
    } else if (parent == R_ELEM) {
        k = px_key_is(s, len, "metric")                                         ? K_METRIC
            : px_key_is(s, len, "values")                                       ? K_VALUES
            : px_key_is(s, len, "value")                                        ? K_VALUE
            : px_key_is(s, len, "histograms") || px_key_is(s, len, "histogram") ? K_HIST
                                                                                : K_OTHER;
    } else if (parent == R_METRIC) {
        sbuf_reset(&x->lname);
        sbuf_add(&x->lname, s, len);
    }
    x->key[d] = (unsigned char)k;
}

static void px_scalar_end(struct px *x);

/*
 * A value starts at depth d: a scalar (s/len hold a decoded string or a number's text) or
 * a container (kind JSONPUSH_OBJECT / JSONPUSH_ARRAY; its members follow). Returns the role the
 * container plays, R_NONE for a scalar or a container nobody reads.
 */
static int px_value(struct px *x, size_t d, int kind, const char *s, size_t len)
{
    bool obj = kind == JSONPUSH_OBJECT, arr = kind == JSONPUSH_ARRAY;
    if (d == 0) {
        x->top_obj = obj;
        return obj ? R_ENV : R_NONE;
    }
    int parent = x->role[d - 1], key = x->key[d];
    switch (parent) {
    case R_ENV:
        if (key == K_STATUS)
            px_capture(&x->status, kind, s, len);
        else if (key == K_ETYPE)
            px_capture(&x->etype, kind, s, len);
        else if (key == K_ERROR) {
            px_capture(&x->error, kind, s, len);
            /* From the whole text: the name of the setting may come after PX_CAP bytes. */
            promjson_error_hint(kind == JSONPUSH_STRING ? s : "", x->ehint, sizeof(x->ehint));
        } else if (key == K_WARN) {
            x->warnings = arr ? '[' : kind == JSONPUSH_NULL ? 'n' : 'x';
            x->warn_any = false;
            x->warn0 = (struct px_str){0};
            return arr ? R_WARN : R_NONE;
        } else if (key == K_PARTIAL) {
            bool lit = kind == JSONPUSH_LITERAL;
            x->partial = lit && len == 4 && memcmp(s, "true", 4) == 0 ? 't'
                         : lit || kind == JSONPUSH_NULL               ? 0
                                                                      : 'x';
        } else if (key == K_DATA) {
            px_reset_result(x);
            x->rtype = (struct px_str){0};
            x->data = true;
            x->data_obj = obj;
            return obj ? R_DATA : R_NONE;
        }
        return R_NONE;
    case R_WARN:
        if (!x->warn_any) {
            x->warn_any = true;
            px_capture(&x->warn0, kind, s, len);
        }
        return R_NONE;
    case R_DATA:
        if (key == K_RTYPE) {
            px_capture(&x->rtype, kind, s, len);
        } else if (key == K_RESULT) {
            px_reset_result(x);
            px_reset_element(x);
            x->res = true;
            x->elem = 0;
            for (int t = 0; t < 3; t++)
                x->in[t].on = (x->want & (1u << t)) != 0;
            px_pair_start(&x->spair, arr);
            if (!arr) {
                for (int t = PX_MATRIX; t <= PX_VECTOR; t++)
                    if (x->in[t].on)
                        px_type_fail(&x->in[t], "prometheus answer: 'data.result' is not an array");
                px_scalar_end(x);
                return R_NONE;
            }
            return R_RESULT;
        }
        return R_NONE;
    case R_RESULT:
        px_pair_elem(&x->spair, kind, s, len);
        if (!x->in[PX_MATRIX].on && !x->in[PX_VECTOR].on)
            return R_NONE;
        if (!obj) {
            px_element_end(x, false);
            return R_NONE;
        }
        px_reset_element(x);
        return R_ELEM;
    case R_ELEM:
        if (key == K_HIST) {
            x->hist = true;
        } else if (key == K_METRIC) {
            x->metric = true;
            x->metric_bad = !obj;
            labels_free(&x->lab);
            sbuf_reset(&x->mbuf);
            x->nml = 0;
            if (obj)
                return R_METRIC;
            snprintf(x->metric_err, sizeof(x->metric_err),
                     "prometheus answer: 'data.result[%zu].metric' is not an object", x->elem);
        } else if (key == K_VALUES && x->in[PX_MATRIX].on) {
            x->values = true;
            x->values_bad = !arr;
            free(x->pts);
            x->pts = NULL;
            x->npts = x->cappts = 0;
            if (arr)
                return R_VALUES;
            snprintf(x->values_err, sizeof(x->values_err),
                     "prometheus answer: 'data.result[%zu].values' is not an array", x->elem);
        } else if (key == K_VALUE && x->in[PX_VECTOR].on) {
            x->value = true;
            px_pair_start(&x->vpair, arr);
            return arr ? R_VPAIR : R_NONE;
        }
        return R_NONE;
    case R_METRIC: {
        if (x->nml == x->capml) {
            x->capml = x->capml ? 2 * x->capml : 16;
            x->ml = xrealloc(x->ml, x->capml * sizeof(*x->ml));
        }
        struct px_label *l = &x->ml[x->nml];
        l->order = x->nml++;
        l->name = x->mbuf.len;
        sbuf_add(&x->mbuf, x->lname.buf ? x->lname.buf : "", x->lname.len + 1);
        l->value = PX_NONE;
        if (kind == JSONPUSH_STRING) {
            l->value = x->mbuf.len;
            sbuf_add(&x->mbuf, s, len + 1);
        }
        if (x->mbuf.len > x->max)
            x->over = true;
        return R_NONE;
    }
    case R_VALUES:
        if (x->values_bad)
            return R_NONE;
        px_pair_start(&x->pair, arr);
        if (!arr) {
            px_values_pair_end(x);
            return R_NONE;
        }
        return R_PAIR;
    case R_PAIR:
        px_pair_elem(&x->pair, kind, s, len);
        return R_NONE;
    case R_VPAIR:
        px_pair_elem(&x->vpair, kind, s, len);
        return R_NONE;
    default:
        return R_NONE;
    }
}

/* data.result is complete: read as a scalar, it is one pair. */
static void px_scalar_end(struct px *x)
{
    struct px_type *ty = &x->in[PX_SCALAR];
    if (!ty->on)
        return;
    struct point p;
    struct px_path path = {0, 0, 0};
    if (px_pair_end(&x->spair, &path, &p, ty->err, sizeof(ty->err)) < 0) {
        ty->on = false;
        ty->rc = -1;
        return;
    }
    struct series *s = px_push(x, ty);
    s->p = xmalloc(sizeof(*s->p));
    s->n = 1;
    s->p[0] = p;
}

/* The container at depth d, of role `role`, is complete. */
static void px_close(struct px *x, int role)
{
    switch (role) {
    case R_RESULT:
        px_scalar_end(x);
        break;
    case R_ELEM:
        px_element_end(x, true);
        break;
    case R_METRIC:
        px_metric_end(x);
        break;
    case R_PAIR:
        if (!x->values_bad)
            px_values_pair_end(x);
        break;
    default:
        break;
    }
}

static void px_free(struct px *x)
{
    px_reset_result(x);
    px_reset_element(x);
    sbuf_free(&x->mbuf);
    sbuf_free(&x->lname);
    free(x->ml);
}

static const char *promjson_type_desc(unsigned want)
{
    switch (want) {
    case PROMJSON_MATRIX:
        return "a matrix";
    case PROMJSON_VECTOR | PROMJSON_SCALAR:
        return "a vector or scalar";
    default:
        return "a matrix, vector or scalar";
    }
}

/*
 * A server's limit, named at the front of the message (a long query text in VictoriaMetrics'
 * answer would otherwise push its name past the end of the caller's buffer). Prometheus' answer
 * to a query over --query.max-samples does not name the setting (promql/engine.go
 * ErrTooManySamples, in 2.42 and prometheus/prometheus v0.316.0 = 3.16.0 alike);
 * VictoriaMetrics names its own, the last `-search.maxX` in the text ("increase -search.max*
 * command-line flag values (the most likely limit is -search.maxUniqueTimeseries)",
 * lib/storage/index_db.go errTooManyTimeseries at v1.153.0; 1.79 says the same without the
 * parenthesis). Thanos Query's answer when a store sent nothing within its
 * --store.response-timeout says "failed to receive any data in 1s from ..." and names no flag
 * (thanos-io/thanos v0.42.5 pkg/store/proxy_merge.go, docs/tsdb-engines.md).
 */
void promjson_error_hint(const char *msg, char *buf, size_t n)
{
    const char *flag = NULL, *p = msg;
    size_t len = 0;
    if (strstr(msg, "would load too many samples into memory"))
        flag = "--query.max-samples";
    /* 1.79 says only "increase -search.max* command-line flag values" there. */
    if (strstr(msg, "the number of matching timeseries exceeds"))
        flag = "-search.maxUniqueTimeseries";
    if (strstr(msg, "failed to receive any data in"))
        flag = "--store.response-timeout";
    if (flag)
        len = strlen(flag);
    while ((p = strstr(p, "-search.max")) != NULL) {
        size_t k = strlen("-search.max");
        if ((p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= 'a' && p[k] <= 'z')) {
            flag = p;
            for (len = k; len < 64 && (isalnum((unsigned char)p[len]) || p[len] == '.'); len++)
                ;
            while (len > k && p[len - 1] == '.') /* a sentence's full stop */
                len--;
        }
        p += k;
    }
    if (flag)
        snprintf(buf, n, ", over the server's %.*s", (int)len, flag);
    else if (n)
        buf[0] = '\0';
}

static bool promjson_is_2xx(long status)
{
    return status >= 200 && status < 300;
}

/* The envelope once the document is known to be valid JSON: the checks in order. */
static int px_envelope(struct px *x, long http_status, struct matrix *m, char *err, size_t errlen)
{
    const struct px_str *st = x->status.seen && x->status.str ? &x->status : NULL;
    if (st && px_str_is(st, "error")) {
        bool et = x->etype.seen && x->etype.str, em = x->error.seen && x->error.str;
        snprintf(err, errlen, "prometheus error (%s%s): %s", et ? x->etype.s : "unknown", x->ehint,
                 em ? x->error.s : "(no message)");
        return -1;
    }
    if (!promjson_is_2xx(http_status)) {
        /* A 2xx-less answer without the error envelope comes from something in front of it. */
        snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        return -1;
    }
    if (!st) {
        snprintf(err, errlen, "prometheus answer: 'status' is missing or not a string");
        return -1;
    }
    if (!px_str_is(st, "success")) {
        snprintf(err, errlen, "prometheus answer: unknown status '%.32s'", st->s);
        return -1;
    }
    if (x->warnings == 'x') {
        snprintf(err, errlen, "prometheus answer: 'warnings' is not an array");
        return -1;
    }
    if (x->warnings == '[' && x->warn_any) {
        snprintf(err, errlen, "partial answer: %s",
                 x->warn0.str ? x->warn0.s : "(warning is not a string)");
        return -1;
    }
    if (x->partial == 'x') {
        snprintf(err, errlen, "prometheus answer: 'isPartial' is not a boolean");
        return -1;
    }
    if (x->partial == 't') {
        snprintf(err, errlen, "%s", PROMJSON_PARTIAL_MSG);
        return -1;
    }
    if (!x->data || !x->data_obj) {
        snprintf(err, errlen, "prometheus answer: 'data' is missing or not an object");
        return -1;
    }
    if (!x->rtype.seen || !x->rtype.str) {
        snprintf(err, errlen, "prometheus answer: 'data.resultType' is missing or not a string");
        return -1;
    }
    int t = px_str_is(&x->rtype, "matrix")   ? PX_MATRIX
            : px_str_is(&x->rtype, "vector") ? PX_VECTOR
            : px_str_is(&x->rtype, "scalar") ? PX_SCALAR
                                             : -1;
    if (t < 0 || !(x->want & (1u << t))) {
        snprintf(err, errlen, "prometheus answer: expected %s, got resultType '%.32s'",
                 promjson_type_desc(x->want), x->rtype.s);
        return -1;
    }
    if (!x->res) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is missing");
        return -1;
    }
    struct px_type *ty = &x->in[t];
    if (ty->rc < 0) {
        snprintf(err, errlen, "%s", ty->err);
        return -1;
    }
    if (ty->m.n < ty->cap)
        ty->m.s = xrealloc(ty->m.s, ty->m.n * sizeof(*ty->m.s));
    *m = ty->m;
    ty->m = (struct matrix){0};
    return 0;
}

struct promjson {
    struct jsonpush *jp;
    struct px x;
};

/* The tokenizer's events, read as an answer; a container's role is kept until it closes. */
static int px_ev_value(void *arg, size_t d, enum jsonpush_kind kind, const char *s, size_t len)
{
    struct px *x = arg;
    int role = px_value(x, d, kind, s, len);
    if (kind == JSONPUSH_OBJECT || kind == JSONPUSH_ARRAY)
        x->role[d] = (unsigned char)role;
    return x->over ? -1 : 0;
}

static void px_ev_key(void *arg, size_t d, const char *s, size_t len)
{
    px_key(arg, d, s, len);
}

static int px_ev_close(void *arg, size_t d)
{
    struct px *x = arg;
    px_close(x, x->role[d]);
    x->role[d] = R_NONE;
    return x->over ? -1 : 0;
}

static const struct jsonpush_events px_events = {
    .value = px_ev_value,
    .key = px_ev_key,
    .close = px_ev_close,
};

struct promjson *promjson_new(unsigned want, size_t max)
{
    struct promjson *a = xcalloc(1, sizeof(*a));
    a->x.want = want;
    a->x.max = max;
    a->jp = jsonpush_new(&px_events, &a->x, max);
    return a;
}

void promjson_free(struct promjson *a)
{
    if (!a)
        return;
    jsonpush_free(a->jp);
    px_free(&a->x);
    free(a);
}

int promjson_feed(struct promjson *a, const char *buf, size_t n)
{
    return jsonpush_feed(a->jp, buf, n);
}

size_t promjson_fed(const struct promjson *a)
{
    return jsonpush_offset(a->jp);
}

int promjson_finish(struct promjson *a, long http_status, struct matrix *out, char *err,
                    size_t errlen)
{
    struct px *x = &a->x;
    *out = (struct matrix){0};
    size_t len = jsonpush_offset(a->jp), pos;
    if (x->over || jsonpush_too_long(a->jp)) {
        /* Whatever the rest holds, it does not fit: never a partial answer. */
        snprintf(err, errlen,
                 "prometheus answer too large: its series need more than the cap of %zu bytes "
                 "(%zu series in the first %zu bytes of the answer)",
                 x->max, x->nseries, len);
        return -1;
    }
    /*
     * A syntax error anywhere wins over a shape error (as when json-c parsed the document
     * first): shape errors are only recorded while the rest is checked, and reported here.
     */
    enum jsonpush_err jerr = len ? jsonpush_end(a->jp, &pos) : JSONPUSH_E_TRUNCATED;
    if (jerr != JSONPUSH_OK) {
        if (!promjson_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else if (len == 0)
            snprintf(err, errlen, "empty answer from prometheus");
        else if (jerr == JSONPUSH_E_TRUNCATED)
            snprintf(err, errlen, "truncated JSON from prometheus (%zu bytes)", len);
        else
            snprintf(err, errlen, "invalid JSON from prometheus at offset %zu: %s", pos,
                     jsonpush_strerror(jerr));
        return -1;
    }
    if (jsonpush_trailing(a->jp, &pos)) {
        if (!promjson_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu", pos);
        return -1;
    }
    if (!x->top_obj) {
        if (!promjson_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        return -1;
    }
    return px_envelope(x, http_status, out, err, errlen);
}

int promjson_parse(const char *body, size_t len, long http_status, unsigned want, size_t max,
                   struct matrix *out, char *err, size_t errlen)
{
    struct promjson *a = promjson_new(want, max);
    promjson_feed(a, body, len);
    int ret = promjson_finish(a, http_status, out, err, errlen);
    promjson_free(a);
    return ret;
}
