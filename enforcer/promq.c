/*
 * Prometheus HTTP API client: builds /api/v1/query and /api/v1/query_range requests, sends
 * them through httpc and turns the JSON answer into `struct matrix`.
 *
 * The parser is strict on purpose. The enforcer terminates workloads whose activity looks
 * idle, so anything that could make activity look lower than it was must fail the query:
 * an error envelope, a proxy's HTML page, a truncated body, a value that is not a number
 * string, points out of order, and warnings (Prometheus sets them when an answer is partial,
 * e.g. a remote-read source failed). Answer shapes follow prometheus/prometheus
 * docs/querying/api.md and web/api/v1/api.go (respondError, marshalTimestamp).
 *
 * Why not a general JSON library: with 10,000 workloads a range answer is some 13 MB and
 * 1.2 million [time, value] pairs, and building json-c's tree of it took 0.5 s and 200 MB.
 * The parser here is a push parser: libcurl's write callback feeds it each chunk as it
 * arrives, a byte-level state machine checks RFC 8259 and hands values to an extractor that
 * writes each series' points into one array, so the body is never held whole (at 100,000
 * workloads it is some 70 MB) and the cap on an answer bounds the parsed data, not the
 * text. Values take an exact fast path when they are short decimals. It keeps json-c's
 * answers: the old json-c parser is kept in tests/unit/promq_ref.c, and tests and
 * fuzz/fuzz_promq.c compare the two, and the whole-buffer parse with one fed in random
 * chunks.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "file.h"
#include "httpc.h"
#include "log.h"
#include "promq.h"
#include "utf8.h"
#include "util.h"

/* Result types promq_parse_as accepts. */
#define PROMQ_MATRIX 1u
#define PROMQ_VECTOR 2u
#define PROMQ_SCALAR 4u
#define PROMQ_ANY    (PROMQ_MATRIX | PROMQ_VECTOR | PROMQ_SCALAR)

/*
 * Default cap on the parsed data of one answer (series, labels and points as stored; see
 * promq_cfg.max_answer_bytes): a 15-minute window at a 30 s step over 100,000 workloads
 * takes some 70 MB, and a cycle holds about two such answers within 256 MiB.
 */
#define PROMQ_DEFAULT_MAX_ANSWER ((size_t)128 << 20)

/* Nesting limit, as json-c counts it; a valid answer never goes deeper than 6. */
#define PROMQ_JSON_DEPTH 16

struct promq {
    char *url; /* without a trailing slash */
    double timeout;
    char *bearer_file;
    char *basic_user;
    char *basic_pass_file;
    char *ca_file;
    bool insecure;
    size_t max_answer; /* cap on the parsed data of one answer */
    atomic_ulong requests, failures;
    /* What /flags told of a VictoriaMetrics server (promq_vm_probe), read once. */
    pthread_mutex_t vm_lock;
    bool vm_probed, vm;
    atomic_bool vm_warned;
    double vm_latency, vm_max_step; /* -search.latencyOffset, -search.maxStepForPointsAdjustment */
    atomic_int remote_read;         /* promq_remote_read: -1 not tried yet, 0 absent, 1 offered */
};

static char *promq_strdup_opt(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

struct promq *promq_new(const struct promq_cfg *cfg)
{
    struct promq *q = xcalloc(1, sizeof(*q));
    atomic_init(&q->remote_read, -1);
    q->url = xstrdup(cfg->url ? cfg->url : "");
    size_t n = strlen(q->url);
    while (n > 0 && q->url[n - 1] == '/')
        q->url[--n] = '\0';
    q->timeout = cfg->timeout > 0 ? cfg->timeout : 30.0;
    q->bearer_file = promq_strdup_opt(cfg->bearer_file);
    q->basic_user = promq_strdup_opt(cfg->basic_user);
    q->basic_pass_file = promq_strdup_opt(cfg->basic_pass_file);
    q->ca_file = promq_strdup_opt(cfg->ca_file);
    q->insecure = cfg->insecure;
    q->max_answer = cfg->max_answer_bytes ? cfg->max_answer_bytes : PROMQ_DEFAULT_MAX_ANSWER;
    pthread_mutex_init(&q->vm_lock, NULL);
    if (q->insecure)
        log_warn("TLS verification of '%s' is disabled", q->url);
    return q;
}

void promq_free(struct promq *q)
{
    if (!q)
        return;
    free(q->url);
    free(q->bearer_file);
    free(q->basic_user);
    free(q->basic_pass_file);
    free(q->ca_file);
    pthread_mutex_destroy(&q->vm_lock);
    free(q);
}

unsigned long promq_requests(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->requests);
}

unsigned long promq_failures(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->failures);
}

/* ---- values ------------------------------------------------------------------------------ */

/* 10^k for k <= 22: all exactly representable as doubles. */
static const double promq_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * `[+-]digits[.digits]` with at most 15 digits and no exponent, the shape of nearly every
 * value and timestamp Prometheus writes. The digits then fit a double exactly, and so does
 * 10^k, so one IEEE division gives the correctly rounded result, which is what strtod
 * returns (Clinger's fast path). False when the text has another shape.
 */
static bool promq_fast_decimal(const char *s, size_t n, double *out)
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
    double v = (double)m / promq_pow10[frac];
    *out = neg ? -v : v;
    return true;
}

/*
 * Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf".
 * `s` holds `n` bytes and need not end in NUL.
 */
static int promq_value_n(const char *s, size_t n, double *out)
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
    if (promq_fast_decimal(s, n, out))
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

/* ---- JSON syntax -------------------------------------------------------------------------- */

/*
 * The answer is parsed as it arrives (libcurl's write callback feeds ps_feed), so the body
 * is never held whole: with 100,000 workloads it is some 70 MB, and its text, grown by
 * doubling, cost more memory than the series it holds. A syntax error anywhere still wins
 * over a shape error (as when json-c parsed the document first): shape errors are only
 * recorded while the rest is checked, and reported at the end. The grammar is RFC 8259
 * with json-c's nesting limit; the errors from PJ_CONTROL on are constructs json-c 0.16
 * accepts even in strict mode and Prometheus never writes (Go's encoder escapes control
 * characters and writes valid UTF-8): refusing them keeps a mangled answer from passing.
 */
enum pj_err {
    PJ_OK = 0,
    PJ_TRUNCATED, /* the input ends inside a value */
    PJ_SYNTAX,    /* unexpected character */
    PJ_DEPTH,     /* a value inside PROMQ_JSON_DEPTH containers */
    PJ_CONTROL,   /* raw control character in a string */
    PJ_UTF8,      /* invalid UTF-8 (overlong, surrogate, above U+10FFFF, cut short) */
    PJ_NUL,       /* \u0000, which a C string cannot hold */
    PJ_SURROGATE, /* \uD800-\uDFFF not forming a pair */
    PJ_NUMBER,    /* a leading zero, or a '.' without digits on one side */
    PJ_LITERAL,   /* NaN or Infinity */
    PJ_QUOTE,     /* a key in single quotes */
};

static const char *const pj_err_desc[] = {
    [PJ_OK] = "success",
    [PJ_TRUNCATED] = "unexpected end of data",
    [PJ_SYNTAX] = "unexpected character",
    [PJ_DEPTH] = "nesting too deep",
    [PJ_CONTROL] = "control character in a string",
    [PJ_UTF8] = "invalid UTF-8",
    [PJ_NUL] = "\\u0000 in a string",
    [PJ_SURROGATE] = "unpaired UTF-16 surrogate",
    [PJ_NUMBER] = "malformed number",
    [PJ_LITERAL] = "NaN or Infinity literal",
    [PJ_QUOTE] = "key in single quotes",
};

static bool pj_is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool pj_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/*
 * A JSON number token as json-c 0.16 reads it: without '.', 'e' or 'E' it is an integer
 * (strtoll / strtoull, saturating) converted to double, otherwise strtod.
 */
static double pj_number(const char *s, size_t len)
{
    size_t i = 0;
    bool neg = s[0] == '-', dbl = false, exp = false;
    uint64_t m = 0;
    unsigned digits = 0, frac = 0;
    i += neg;
    for (; i < len && pj_is_digit((unsigned char)s[i]); i++, digits++)
        if (digits < 19)
            m = m * 10 + (uint64_t)(s[i] - '0');
    if (i < len && s[i] == '.') {
        dbl = true;
        for (i++; i < len && pj_is_digit((unsigned char)s[i]); i++, digits++, frac++)
            if (digits < 19)
                m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E'))
        dbl = exp = true;
    if (!dbl && digits <= 18)
        return neg ? (double)-(int64_t)m : (double)m;
    if (dbl && !exp && digits <= 15) {
        double v = (double)m / promq_pow10[frac];
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

/* Value kinds of an event. */
enum { V_OBJECT, V_ARRAY, V_STRING, V_NUMBER, V_LITERAL, V_NULL };

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
struct pj_path {
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
    size_t name, value; /* offsets in px.mbuf; value PJ_NONE when not a string */
    size_t order;       /* position in the object */
    const char *p;      /* the name, once mbuf stops moving */
};

#define PJ_NONE   SIZE_MAX
#define PX_MATRIX 0
#define PX_VECTOR 1
#define PX_SCALAR 2

struct px {
    unsigned want;
    size_t max, bytes; /* cap on the parsed data and what it holds now */
    size_t nseries;
    bool over;
    bool top_obj; /* the answer is an object */
    unsigned char role[PROMQ_JSON_DEPTH + 1];
    unsigned char key[PROMQ_JSON_DEPTH + 1];
    struct px_str status, etype, error, warn0, rtype;
    int warnings; /* 0 absent, 'n' null, '[' array, 'x' anything else */
    bool warn_any;
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
    c->str = kind == V_STRING;
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
        p->tk = kind == V_NUMBER ? 1 : 2;
        if (p->tk == 1)
            p->t = pj_number(s, len);
    } else if (k == 1) {
        p->vk = kind == V_STRING ? 1 : 2;
        if (p->vk == 1 && (p->vbad = promq_value_n(s, len, &p->v) < 0)) {
            size_t c = len < 40 ? len : 40;
            memcpy(p->vtext, s, c);
            p->vtext[c] = '\0';
        }
    }
}

static void pj_path_fmt(const struct pj_path *p, char *buf, size_t len)
{
    if (p->kind == 0)
        snprintf(buf, len, "data.result");
    else if (p->kind == 1)
        snprintf(buf, len, "data.result[%zu].value", p->i);
    else
        snprintf(buf, len, "data.result[%zu].values[%zu]", p->i, p->j);
}

/* The pair read, checked in the order the messages were always reported. */
static int px_pair_end(const struct px_pair *p, const struct pj_path *path, struct point *out,
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
    pj_path_fmt(path, w, sizeof(w));
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
    size_t bad = PJ_NONE, bad_order = PJ_NONE, groups = 0;
    for (size_t k = 0; k < x->nml; k++) {
        size_t last = px_label_last(x, k);
        groups++;
        if (x->ml[last].value == PJ_NONE && x->ml[k].order < bad_order) {
            bad = last;
            bad_order = x->ml[k].order;
        }
        k = last;
    }
    if (bad != PJ_NONE) {
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
            struct pj_path path = {1, idx, 0};
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
    struct pj_path path = {2, x->elem, x->npts};
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
 * a container (kind V_OBJECT / V_ARRAY; its members follow). Returns the role the
 * container plays, R_NONE for a scalar or a container nobody reads.
 */
static int px_value(struct px *x, size_t d, int kind, const char *s, size_t len)
{
    bool obj = kind == V_OBJECT, arr = kind == V_ARRAY;
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
        else if (key == K_ERROR)
            px_capture(&x->error, kind, s, len);
        else if (key == K_WARN) {
            x->warnings = arr ? '[' : kind == V_NULL ? 'n' : 'x';
            x->warn_any = false;
            x->warn0 = (struct px_str){0};
            return arr ? R_WARN : R_NONE;
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
        l->value = PJ_NONE;
        if (kind == V_STRING) {
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
    struct pj_path path = {0, 0, 0};
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

/* ---- the push parser ----------------------------------------------------------------------- */

/* Where the tokenizer is between two bytes. */
enum {
    T_VALUE, /* a value must start */
    T_OPEN,  /* just after '{' or '[': the container may close at once */
    T_KEY,   /* a key must start */
    T_COLON, /* after a key */
    T_AFTER, /* after a value inside a container: ',' or the closing bracket */
    T_DONE,  /* after the top-level value */
    T_STR,   /* inside a string */
    T_NUM,   /* inside a number */
    T_WORD,  /* inside true, false or null */
    T_STOP,  /* a final error: the rest is not read */
};

/* Inside a string. */
enum { S_CHAR, S_ESC, S_HEX, S_UTF8, S_HIBS, S_HIU, S_LOHEX };

/* Inside a number: after '-', in "0", in the integer part, after '.', ... */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

struct ps {
    int state;
    size_t depth;
    unsigned char stack[PROMQ_JSON_DEPTH]; /* '{' or '[' of each open container */
    bool is_key;                           /* the string read is a key */
    bool word;                             /* the top-level value is a number or literal */
    bool after;                            /* a byte followed the top-level value */
    int sst, nst;
    unsigned u, lo;
    int nhex;
    unsigned char utf_lo, utf_hi; /* bounds of the next continuation byte */
    int utf_need;                 /* continuation bytes still to come */
    size_t utf_pos, hi_pos;
    const char *wrest; /* the rest of the literal being read */
    int wkind;
    struct sbuf tok; /* the decoded string or the number's text */
    size_t off;      /* bytes fed before the current chunk */
    enum pj_err err;
    size_t err_pos;
    bool trailing; /* bytes after the top-level value, at trail_pos */
    size_t trail_pos;
    struct px x;
};

static void ps_init(struct ps *p, unsigned want, size_t max)
{
    memset(p, 0, sizeof(*p));
    p->x.want = want;
    p->x.max = max;
}

static void ps_free(struct ps *p)
{
    sbuf_free(&p->tok);
    px_free(&p->x);
}

static void ps_fail(struct ps *p, enum pj_err e, size_t pos)
{
    p->err = e;
    p->err_pos = pos;
    p->state = T_STOP;
}

/* A value of `kind` (scalar or container) starts at the current depth. */
static int ps_value(struct ps *p, int kind)
{
    if (p->depth == 0)
        p->word = kind == V_NUMBER || kind == V_LITERAL || kind == V_NULL;
    int role = px_value(&p->x, p->depth, kind, p->tok.buf ? p->tok.buf : "", p->tok.len);
    if (p->x.over)
        p->state = T_STOP;
    return role;
}

/* A scalar or a container has ended: what may follow. */
static void ps_value_done(struct ps *p)
{
    if (p->state != T_STOP)
        p->state = p->depth == 0 ? T_DONE : T_AFTER;
}

static void ps_string_done(struct ps *p)
{
    if (p->is_key) {
        px_key(&p->x, p->depth, p->tok.buf ? p->tok.buf : "", p->tok.len);
        p->state = T_COLON;
        return;
    }
    ps_value(p, V_STRING);
    ps_value_done(p);
}

static void ps_number_done(struct ps *p)
{
    ps_value(p, V_NUMBER);
    ps_value_done(p);
}

static void ps_put_utf8(struct sbuf *b, unsigned u)
{
    char buf[4];
    sbuf_add(b, buf, utf8_encode(u, buf));
}

/*
 * Bytes of a string from s[*i]; returns when the string ends (state changed) or the chunk
 * does. The checks and the offsets they report are those of Unicode 15 table 3-7 and
 * RFC 8259 section 7, in the order json-c met them.
 */
static void ps_string(struct ps *p, const unsigned char *s, size_t n, size_t *pi)
{
    size_t i = *pi;
    while (i < n) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        if (p->sst == S_CHAR) {
            size_t j = i;
            while (j < n && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\')
                j++;
            if (j > i)
                sbuf_add(&p->tok, (const char *)s + i, j - i);
            i = j;
            if (i >= n)
                break;
            c = s[i];
            pos = p->off + i;
            if (c == '"') {
                i++;
                *pi = i;
                ps_string_done(p);
                return;
            }
            if (c < 0x20) {
                ps_fail(p, c == 0 ? PJ_SYNTAX : PJ_CONTROL, pos);
                break;
            }
            if (c == '\\') {
                p->sst = S_ESC;
                i++;
                continue;
            }
            /* A UTF-8 lead byte. */
            p->utf_lo = 0x80;
            p->utf_hi = 0xbf;
            if (c >= 0xc2 && c <= 0xdf)
                p->utf_need = 1;
            else if (c == 0xe0)
                p->utf_need = 2, p->utf_lo = 0xa0;
            else if (c == 0xed)
                p->utf_need = 2, p->utf_hi = 0x9f;
            else if (c >= 0xe1 && c <= 0xef)
                p->utf_need = 2;
            else if (c == 0xf0)
                p->utf_need = 3, p->utf_lo = 0x90;
            else if (c == 0xf4)
                p->utf_need = 3, p->utf_hi = 0x8f;
            else if (c >= 0xf1 && c <= 0xf3)
                p->utf_need = 3;
            else {
                ps_fail(p, PJ_UTF8, pos);
                break;
            }
            p->utf_pos = pos;
            p->sst = S_UTF8;
            sbuf_putc(&p->tok, (char)c);
            i++;
        } else if (p->sst == S_UTF8) {
            if (c < p->utf_lo || c > p->utf_hi) {
                ps_fail(p, PJ_UTF8, p->utf_pos);
                break;
            }
            p->utf_lo = 0x80;
            p->utf_hi = 0xbf;
            sbuf_putc(&p->tok, (char)c);
            i++;
            if (--p->utf_need == 0)
                p->sst = S_CHAR;
        } else if (p->sst == S_ESC) {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            if (c == 'u') {
                p->sst = S_HEX;
                p->u = 0;
                p->nhex = 0;
            } else if (c != '\0' && strchr(from, c)) {
                sbuf_putc(&p->tok, to[strchr(from, c) - from]);
                p->sst = S_CHAR;
            } else {
                ps_fail(p, PJ_SYNTAX, pos);
                break;
            }
            i++;
        } else if (p->sst == S_HEX || p->sst == S_LOHEX) {
            int h = hex_value(c);
            if (h < 0) {
                ps_fail(p, PJ_SYNTAX, pos);
                break;
            }
            i++;
            unsigned *u = p->sst == S_HEX ? &p->u : &p->lo;
            *u = *u << 4 | (unsigned)h;
            if (++p->nhex < 4)
                continue;
            if (p->sst == S_LOHEX) {
                if (p->lo < 0xdc00 || p->lo > 0xdfff) {
                    ps_fail(p, PJ_SURROGATE, pos + 1);
                    break;
                }
                ps_put_utf8(&p->tok, 0x10000 + ((p->u - 0xd800) << 10) + (p->lo - 0xdc00));
                p->sst = S_CHAR;
            } else if (p->u == 0) {
                ps_fail(p, PJ_NUL, pos + 1);
                break;
            } else if (p->u >= 0xdc00 && p->u <= 0xdfff) {
                ps_fail(p, PJ_SURROGATE, pos + 1);
                break;
            } else if (p->u >= 0xd800 && p->u <= 0xdbff) {
                p->sst = S_HIBS;
                p->hi_pos = pos + 1;
            } else {
                ps_put_utf8(&p->tok, p->u);
                p->sst = S_CHAR;
            }
        } else if (p->sst == S_HIBS) {
            if (c != '\\') {
                ps_fail(p, PJ_SURROGATE, p->hi_pos);
                break;
            }
            p->sst = S_HIU;
            i++;
        } else { /* S_HIU */
            if (c != 'u') {
                ps_fail(p, PJ_SURROGATE, p->hi_pos);
                break;
            }
            p->sst = S_LOHEX;
            p->lo = 0;
            p->nhex = 0;
            i++;
        }
    }
    *pi = i;
}

/* Bytes of a number from s[*i]; a byte that cannot continue it ends it (not consumed). */
static void ps_number(struct ps *p, const unsigned char *s, size_t n, size_t *pi)
{
    size_t i = *pi, start = i;
    while (i < n) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        bool digit = pj_is_digit(c);
        switch (p->nst) {
        case N_MINUS:
            if (c == 'I') {
                ps_fail(p, PJ_LITERAL, pos);
            } else if (c == '.') {
                ps_fail(p, PJ_NUMBER, pos);
            } else if (c == '0') {
                p->nst = N_ZERO;
            } else if (digit) {
                p->nst = N_INT;
            } else {
                ps_fail(p, PJ_SYNTAX, pos);
            }
            break;
        case N_ZERO:
        case N_INT:
        case N_FRAC:
        case N_EXP:
            if (digit) {
                if (p->nst == N_ZERO) {
                    ps_fail(p, PJ_NUMBER, pos);
                    break;
                }
                while (i + 1 < n && pj_is_digit(s[i + 1]))
                    i++;
                break;
            }
            if (c == '.' && (p->nst == N_ZERO || p->nst == N_INT)) {
                p->nst = N_DOT;
                break;
            }
            if ((c == 'e' || c == 'E') && p->nst != N_EXP) {
                p->nst = N_E;
                break;
            }
            sbuf_add(&p->tok, (const char *)s + start, i - start);
            *pi = i;
            ps_number_done(p);
            return;
        case N_DOT:
            if (!digit)
                ps_fail(p, PJ_NUMBER, pos);
            p->nst = N_FRAC;
            break;
        case N_E:
            if (c == '+' || c == '-')
                p->nst = N_ESIGN;
            else if (digit)
                p->nst = N_EXP;
            else
                ps_fail(p, PJ_SYNTAX, pos);
            break;
        case N_ESIGN:
            if (!digit)
                ps_fail(p, PJ_SYNTAX, pos);
            p->nst = N_EXP;
            break;
        }
        if (p->state == T_STOP)
            break;
        i++;
    }
    sbuf_add(&p->tok, (const char *)s + start, i - start);
    *pi = i;
}

static void ps_open(struct ps *p, unsigned char c)
{
    int role = ps_value(p, c == '{' ? V_OBJECT : V_ARRAY);
    if (p->state == T_STOP)
        return;
    p->stack[p->depth++] = c;
    p->x.role[p->depth - 1] = (unsigned char)role;
    p->state = T_OPEN;
}

static void ps_close(struct ps *p)
{
    p->depth--;
    px_close(&p->x, p->x.role[p->depth]);
    p->x.role[p->depth] = R_NONE;
    ps_value_done(p);
    if (p->x.over)
        p->state = T_STOP;
}

/* Feed the next `n` bytes of the answer. */
static void ps_feed(struct ps *p, const char *buf, size_t n)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0;
    while (i < n && p->state != T_STOP) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        switch (p->state) {
        case T_STR:
        case T_NUM:
            if (p->state == T_STR)
                ps_string(p, s, n, &i);
            else
                ps_number(p, s, n, &i);
            /* One string or number longer than the cap is as much too large as many series. */
            if (p->tok.len > p->x.max) {
                p->x.over = true;
                p->state = T_STOP;
            }
            continue;
        case T_WORD:
            if (c != (unsigned char)*p->wrest) {
                ps_fail(p, PJ_SYNTAX, pos);
                continue;
            }
            i++;
            if (*++p->wrest == '\0') {
                ps_value(p, p->wkind);
                ps_value_done(p);
            }
            continue;
        case T_DONE:
            p->after = true;
            if (pj_is_ws(c)) {
                i++;
                continue;
            }
            /* As json-c: the first byte after the value must not start a multi-byte one. */
            if (c >= 0x80)
                ps_fail(p, PJ_UTF8, pos);
            else {
                p->trailing = true;
                p->trail_pos = pos;
                p->state = T_STOP;
            }
            continue;
        default:
            break;
        }
        if (pj_is_ws(c)) {
            i++;
            continue;
        }
        switch (p->state) {
        case T_OPEN:
            if (c == (p->stack[p->depth - 1] == '{' ? '}' : ']')) {
                i++;
                ps_close(p);
                continue;
            }
            p->state = p->stack[p->depth - 1] == '{' ? T_KEY : T_VALUE;
            continue;
        case T_KEY:
            if (c != '"') {
                ps_fail(p, c == '\'' ? PJ_QUOTE : PJ_SYNTAX, pos);
                continue;
            }
            i++;
            sbuf_reset(&p->tok);
            p->is_key = true;
            p->sst = S_CHAR;
            p->state = T_STR;
            continue;
        case T_COLON:
            if (c != ':') {
                ps_fail(p, PJ_SYNTAX, pos);
                continue;
            }
            i++;
            p->state = T_VALUE;
            continue;
        case T_AFTER:
            if (c == (p->stack[p->depth - 1] == '{' ? '}' : ']')) {
                i++;
                ps_close(p);
            } else if (c == ',') {
                i++;
                p->state = p->stack[p->depth - 1] == '{' ? T_KEY : T_VALUE;
            } else {
                ps_fail(p, PJ_SYNTAX, pos);
            }
            continue;
        default: /* T_VALUE */
            break;
        }
        if (p->depth == PROMQ_JSON_DEPTH) {
            /* json-c's limit counts values: an empty container may sit at the last level. */
            ps_fail(p, PJ_DEPTH, pos);
            continue;
        }
        sbuf_reset(&p->tok);
        if (c == '{' || c == '[') {
            i++;
            ps_open(p, c);
        } else if (c == '"') {
            i++;
            p->is_key = false;
            p->sst = S_CHAR;
            p->state = T_STR;
        } else if (c == '-' || pj_is_digit(c)) {
            p->nst = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
            sbuf_putc(&p->tok, (char)c);
            i++;
            p->state = T_NUM;
        } else if (c == 't' || c == 'f' || c == 'n') {
            p->wrest = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
            p->wkind = c == 'n' ? V_NULL : V_LITERAL;
            i++;
            p->state = T_WORD;
        } else {
            ps_fail(p, c == 'N' || c == 'I' ? PJ_LITERAL : PJ_SYNTAX, pos);
        }
    }
    p->off += n;
}

/* The answer has ended: the syntax error, if any (PJ_OK with no trailing bytes otherwise). */
static enum pj_err ps_end(struct ps *p)
{
    if (p->state == T_STOP)
        return p->err;
    if (p->state == T_DONE) {
        /* As json-c: a number or literal that reaches the end could go on. */
        if (p->word && !p->after)
            ps_fail(p, PJ_TRUNCATED, p->off);
        return p->err;
    }
    if (p->state == T_STR && p->sst == S_UTF8)
        ps_fail(p, PJ_UTF8, p->utf_pos);
    else
        ps_fail(p, PJ_TRUNCATED, p->off);
    return p->err;
}

static const char *promq_type_desc(unsigned want)
{
    switch (want) {
    case PROMQ_MATRIX:
        return "a matrix";
    case PROMQ_VECTOR | PROMQ_SCALAR:
        return "a vector or scalar";
    default:
        return "a matrix, vector or scalar";
    }
}

static bool promq_is_2xx(long status)
{
    return status >= 200 && status < 300;
}

/* The envelope once the document is known to be valid JSON: the checks in order. */
static int px_envelope(struct px *x, long http_status, struct matrix *m, char *err, size_t errlen)
{
    const struct px_str *st = x->status.seen && x->status.str ? &x->status : NULL;
    if (st && px_str_is(st, "error")) {
        bool et = x->etype.seen && x->etype.str, em = x->error.seen && x->error.str;
        snprintf(err, errlen, "prometheus error (%s): %s", et ? x->etype.s : "unknown",
                 em ? x->error.s : "(no message)");
        return -1;
    }
    if (!promq_is_2xx(http_status)) {
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
                 promq_type_desc(x->want), x->rtype.s);
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

/*
 * The whole answer has been fed: fill `out` or return -1 with the message. `len` is the
 * number of bytes fed.
 */
static int ps_finish(struct ps *p, long http_status, struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    size_t len = p->off;
    if (p->x.over) {
        /* Whatever the rest holds, it does not fit: never a partial answer. */
        snprintf(err, errlen,
                 "prometheus answer too large: its series need more than the cap of %zu bytes "
                 "(%zu series in the first %zu bytes of the answer)",
                 p->x.max, p->x.nseries, len);
        return -1;
    }
    enum pj_err jerr = len ? ps_end(p) : PJ_TRUNCATED;
    if (jerr != PJ_OK) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else if (len == 0)
            snprintf(err, errlen, "empty answer from prometheus");
        else if (jerr == PJ_TRUNCATED)
            snprintf(err, errlen, "truncated JSON from prometheus (%zu bytes)", len);
        else
            snprintf(err, errlen, "invalid JSON from prometheus at offset %zu: %s", p->err_pos,
                     pj_err_desc[jerr]);
        return -1;
    }
    if (p->trailing) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu",
                     p->trail_pos);
        return -1;
    }
    if (!p->x.top_obj) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        return -1;
    }
    return px_envelope(&p->x, http_status, out, err, errlen);
}

static int promq_parse_max(const char *body, size_t len, long http_status, unsigned want,
                           size_t max, struct matrix *out, char *err, size_t errlen)
{
    struct ps *p = xmalloc(sizeof(*p));
    ps_init(p, want, max);
    ps_feed(p, body, len);
    int ret = ps_finish(p, http_status, out, err, errlen);
    ps_free(p);
    free(p);
    return ret;
}

static int promq_parse_as(const char *body, size_t len, long http_status, unsigned want,
                          struct matrix *out, char *err, size_t errlen)
{
    return promq_parse_max(body, len, http_status, want, PROMQ_DEFAULT_MAX_ANSWER, out, err,
                           errlen);
}

int promq_parse(const char *body, size_t len, long http_status, struct matrix *out, char *err,
                size_t errlen)
{
    return promq_parse_as(body, len, http_status, PROMQ_ANY, out, err, errlen);
}

/* ---- requests ---------------------------------------------------------------------------- */

static void promq_form(struct sbuf *b, const char *name, const char *value)
{
    if (b->len)
        sbuf_putc(b, '&');
    sbuf_puts(b, name);
    sbuf_putc(b, '=');
    httpc_urlencode(b, value);
}

static void promq_form_num(struct sbuf *b, const char *name, double v)
{
    char tmp[64];
    /* Millisecond precision is all Prometheus keeps (marshalTimestamp). */
    snprintf(tmp, sizeof(tmp), "%.3f", v);
    promq_form(b, name, tmp);
}

/* libcurl's write callback: parse as the bytes arrive; stop at a final error. */
static int promq_sink(void *arg, const char *data, size_t len)
{
    struct ps *p = arg;
    ps_feed(p, data, len);
    return p->state == T_STOP ? -1 : 0;
}

/*
 * One request to the server with this client's authentication, TLS settings and timeout,
 * the only place they are applied: the PromQL queries, the /flags probe and the raw-sample
 * reads (promq_post) all go through it. The bearer token and password are re-read from
 * their files on every request. Returns httpc_do's result.
 */
static int promq_http(struct promq *q, struct httpc_req *req, struct httpc_resp *resp, char *err,
                      size_t errlen)
{
    char *token = NULL, *pass = NULL;
    int ret = -1;
    atomic_fetch_add(&q->requests, 1);
    if (q->bearer_file && !(token = secret_read(q->bearer_file, "bearer token", err, errlen)))
        goto out;
    if (q->basic_user && q->basic_pass_file &&
        !(pass = secret_read(q->basic_pass_file, "password", err, errlen)))
        goto out;
    req->timeout = q->timeout;
    req->ca_file = q->ca_file;
    req->insecure = q->insecure;
    req->bearer_token = token;
    req->basic_user = q->basic_user;
    req->basic_pass = pass;
    ret = httpc_do(req, resp, err, errlen);
out:
    secret_free(token);
    secret_free(pass);
    return ret;
}

static int promq_request(struct promq *q, const char *path, const struct sbuf *form, unsigned want,
                         struct matrix *out, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", q->url, path);
    struct httpc_resp resp = {0};
    struct ps *ps = xmalloc(sizeof(*ps));
    int ret = -1;

    ps_init(ps, want, q->max_answer);
    *out = (struct matrix){0};

    static const char *const headers[] = {
        "Content-Type: application/x-www-form-urlencoded",
        "Accept: application/json",
    };
    struct httpc_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = ARRAY_LEN(headers),
        .body = form->buf,
        .body_len = form->len,
        .sink = promq_sink,
        .sink_arg = ps,
    };
    if (promq_http(q, &req, &resp, err, errlen) < 0)
        goto out;
    ret = ps_finish(ps, resp.status, out, err, errlen);
    log_debug("prometheus %s %s: HTTP %ld, %zu bytes%s, %.3f s%s", path, form->buf, resp.status,
              ps->off, resp.stopped ? " (stopped)" : "", resp.elapsed, ret < 0 ? " (failed)" : "");
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    ps_free(ps);
    free(ps);
    free(url);
    return ret;
}

int promq_post(struct promq *q, const char *path, const char *const *headers, size_t nheaders,
               const char *body, size_t len, int (*sink)(void *, const char *, size_t), void *arg,
               long *status, char *ctype, size_t ctlen, char *err, size_t errlen)
{
    static const char *const want[] = {"Content-Type"};
    char *url = xasprintf("%s%s", q->url, path);
    struct httpc_resp resp = {0};
    struct httpc_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = nheaders,
        .body = body,
        .body_len = len,
        .sink = sink,
        .sink_arg = arg,
        .want_headers = want,
        .nwant_headers = 1,
    };
    int ret = promq_http(q, &req, &resp, err, errlen);
    *status = ret == 0 ? resp.status : 0;
    if (ctype) {
        const char *ct = ret == 0 ? httpc_resp_header(&resp, "Content-Type") : NULL;
        snprintf(ctype, ctlen, "%s", ct ? ct : "");
    }
    if (ret == 0)
        log_debug("prometheus %s: HTTP %ld, %zu-byte request%s, %.3f s", path, resp.status, len,
                  resp.stopped ? " (stopped)" : "", resp.elapsed);
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    free(url);
    return ret;
}

const char *promq_url(const struct promq *q)
{
    return q->url;
}

size_t promq_max_answer(const struct promq *q)
{
    return q->max_answer;
}

void promq_count_failure(struct promq *q)
{
    atomic_fetch_add(&q->failures, 1);
}

/* ---- VictoriaMetrics' rewritten newest points ----------------------------------------------- */

/*
 * A Go duration ("30s", "1m0s", "500ms", "0s") in seconds, or -1. VictoriaMetrics prints
 * its duration flags this way at /flags.
 */
static double promq_go_duration(const char *s, size_t n)
{
    static const struct {
        const char *unit;
        double sec;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3},
                 {"s", 1},     {"m", 60},    {"h", 3600}};
    double total = 0;
    size_t i = 0;
    if (n == 0)
        return -1;
    while (i < n) {
        size_t j = i;
        while (j < n && (pj_is_digit((unsigned char)s[j]) || s[j] == '.'))
            j++;
        double v;
        if (j == i || !promq_fast_decimal(s + i, j - i, &v))
            return -1;
        size_t k = j;
        while (k < n && !pj_is_digit((unsigned char)s[k]) && s[k] != '.')
            k++;
        size_t u = 0;
        while (u < ARRAY_LEN(units) &&
               !(strlen(units[u].unit) == k - j && memcmp(units[u].unit, s + j, k - j) == 0))
            u++;
        if (u == ARRAY_LEN(units))
            return v == 0 && k == j && k == n ? 0 : -1;
        total += v * units[u].sec;
        i = k;
    }
    return total;
}

/* The value of `-name="value"` in a /flags listing, as a duration; `def` when absent. */
static double promq_vm_flag(const char *body, const char *name, double def)
{
    size_t n = strlen(name);
    for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (p[0] != '-' || strncmp(p + 1, name, n) != 0 || p[1 + n] != '=')
            continue;
        const char *v = p + 2 + n, *e = strchr(v, '\n');
        size_t len = e ? (size_t)(e - v) : strlen(v);
        if (len >= 2 && v[0] == '"' && v[len - 1] == '"')
            v++, len -= 2;
        double d = promq_go_duration(v, len);
        /* Unreadable: assume the worst (the rewrite happens). */
        return d < 0 ? (def > 3600 ? def : 3600) : d;
    }
    return def;
}

/*
 * VictoriaMetrics' vmselect rewrites the newest points of a range answer: points within
 * -search.latencyOffset (30 s by default) of its clock take the value of the point before
 * them when the step is below -search.maxStepForPointsAdjustment (1m by default), because
 * their data may be incomplete (VictoriaMetrics app/vmselect/prometheus/prometheus.go,
 * adjustLastPoints). A workload that turned busy in the last 30 s then reads idle, and one
 * that stopped reporting reads fresh. Its /flags page lists the flags set on its command
 * line ("-search.latencyOffset=\"0s\""); Prometheus answers it with its web UI. Read once;
 * a server that cannot be reached, or answers 5xx, is asked again next time.
 */
static int promq_vm_probe(struct promq *q, char *err, size_t errlen)
{
    pthread_mutex_lock(&q->vm_lock);
    if (q->vm_probed) {
        pthread_mutex_unlock(&q->vm_lock);
        return 0;
    }
    char *url = xasprintf("%s/flags", q->url);
    struct httpc_resp resp = {0};
    int ret = -1;
    struct httpc_req req = {
        .url = url,
        .max_body = 1u << 20,
    };
    if (promq_http(q, &req, &resp, err, errlen) < 0)
        goto out;
    /* A server error says nothing of what the server is: ask again next time. */
    if (resp.status >= 500) {
        snprintf(err, errlen, "'%s/flags' answered HTTP %ld", q->url, resp.status);
        goto out;
    }
    ret = 0;
    q->vm_probed = true;
    q->vm = resp.status == 200 && resp.body.len > 0 && resp.body.buf[0] == '-';
    if (q->vm) {
        q->vm_latency = promq_vm_flag(resp.body.buf, "search.latencyOffset", 30);
        q->vm_max_step = promq_vm_flag(resp.body.buf, "search.maxStepForPointsAdjustment", 60);
    }
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    pthread_mutex_unlock(&q->vm_lock);
    httpc_resp_free(&resp);
    free(url);
    return ret;
}

int promq_remote_read(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->remote_read);
}

void promq_set_remote_read(struct promq *q, int offered)
{
    atomic_store(&q->remote_read, offered ? 1 : 0);
}

int promq_is_victoria(struct promq *q, char *err, size_t errlen)
{
    if (promq_vm_probe(q, err, errlen) < 0)
        return -1;
    return q->vm ? 1 : 0;
}

/*
 * Refuse a range query whose newest points VictoriaMetrics would rewrite (see
 * promq_vm_probe): its answer would be data that does not exist. Only queries ending near
 * the present are concerned; history at a fixed epoch (tests) never is.
 */
static int promq_vm_check(struct promq *q, double end, double step, char *err, size_t errlen)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double wall = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    if (end < wall - 3600)
        return 0;
    if (promq_vm_probe(q, err, errlen) < 0)
        return 0; /* unreachable: the query itself will say so */
    /* Said once, where it matters: rules reading raw samples never send range queries. */
    if (q->vm && q->vm_latency > 0 && !atomic_exchange(&q->vm_warned, true))
        log_warn("'%s' is VictoriaMetrics with -search.latencyOffset=%gs: range queries "
                 "with a step under %gs ending within %gs of now fail; start it with "
                 "-search.latencyOffset=0s",
                 q->url, q->vm_latency, q->vm_max_step, q->vm_latency);
    /* A minute of clock skew between us and the server counts as near. */
    if (q->vm && q->vm_latency > 0 && step < q->vm_max_step && end > wall - q->vm_latency - 60) {
        snprintf(err, errlen,
                 "VictoriaMetrics at '%s' replaces the points of the last %gs of a range answer "
                 "with older values (-search.latencyOffset) when the step is under %gs: start it "
                 "with -search.latencyOffset=0s",
                 q->url, q->vm_latency, q->vm_max_step);
        atomic_fetch_add(&q->failures, 1);
        return -1;
    }
    return 0;
}

static int promq_series_cmp(const void *a, const void *b)
{
    const struct series *const *x = a, *const *y = b;
    return labels_compare(&(*x)->labels, &(*y)->labels);
}

/*
 * A range answer without metric names. The enforcer's range queries are all functions of
 * selectors, whose results Prometheus gives without __name__; VictoriaMetrics 1.79 keeps it
 * for some (max_over_time) and not others (present_over_time), so series of two queries
 * about one workload would not match. Two series that differ only by name are an error, as
 * Prometheus makes it ("vector cannot contain metrics with the same labelset").
 */
static int promq_drop_names(struct matrix *m, char *err, size_t errlen)
{
    bool any = false;
    for (size_t i = 0; i < m->n; i++) {
        struct labels *ls = &m->s[i].labels;
        size_t k = 0;
        while (k < ls->n && strcmp(ls->v[k].name, "__name__") != 0)
            k++;
        if (k == ls->n)
            continue;
        any = true;
        struct label small[16], *v = ls->n <= 16 ? small : xmalloc(ls->n * sizeof(*v));
        memcpy(v, ls->v, k * sizeof(*v));
        memcpy(v + k, ls->v + k + 1, (ls->n - k - 1) * sizeof(*v));
        struct labels out;
        labels_from(&out, v, ls->n - 1);
        if (v != small)
            free(v);
        labels_free(ls);
        *ls = out;
    }
    if (!any || m->n < 2)
        return 0;
    const struct series **idx = xmalloc(m->n * sizeof(*idx));
    for (size_t i = 0; i < m->n; i++)
        idx[i] = &m->s[i];
    qsort(idx, m->n, sizeof(*idx), promq_series_cmp);
    int ret = 0;
    for (size_t i = 1; i < m->n && ret == 0; i++) {
        if (labels_equal(&idx[i - 1]->labels, &idx[i]->labels)) {
            char *l = labels_format(&idx[i]->labels);
            snprintf(err, errlen,
                     "prometheus answer: two series differ only in their metric name: %.160s", l);
            free(l);
            ret = -1;
        }
    }
    free(idx);
    return ret;
}

int promq_range(struct promq *q, const char *expr, double start, double end, double step,
                struct matrix *out, char *err, size_t errlen)
{
    if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step <= 0 || end < start) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid range [%.3f, %.3f] with step %g", start, end, step);
        return -1;
    }
    if (promq_vm_check(q, end, step, err, errlen) < 0) {
        *out = (struct matrix){0};
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "start", start);
    promq_form_num(&form, "end", end);
    promq_form_num(&form, "step", step);
    promq_form_num(&form, "timeout", q->timeout);
    /* VictoriaMetrics: not from its response cache, which may predate late samples. */
    promq_form(&form, "nocache", "1");
    int ret = promq_request(q, "/api/v1/query_range", &form, PROMQ_MATRIX, out, err, errlen);
    sbuf_free(&form);
    if (ret == 0 && promq_drop_names(out, err, errlen) < 0) {
        matrix_free(out);
        atomic_fetch_add(&q->failures, 1);
        ret = -1;
    }
    return ret;
}

int promq_instant(struct promq *q, const char *expr, double t, struct matrix *out, char *err,
                  size_t errlen)
{
    if (!isfinite(t)) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid evaluation time %g", t);
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "time", t);
    promq_form_num(&form, "timeout", q->timeout);
    promq_form(&form, "nocache", "1");
    int ret =
        promq_request(q, "/api/v1/query", &form, PROMQ_VECTOR | PROMQ_SCALAR, out, err, errlen);
    sbuf_free(&form);
    return ret;
}
