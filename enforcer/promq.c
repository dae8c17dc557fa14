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
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "httpc.h"
#include "log.h"
#include "promq.h"
#include "util.h"

/* Result types promq_parse_as accepts. */
#define PROMQ_MATRIX 1u
#define PROMQ_VECTOR 2u
#define PROMQ_SCALAR 4u
#define PROMQ_ANY    (PROMQ_MATRIX | PROMQ_VECTOR | PROMQ_SCALAR)

/* json-c's default nesting limit is 32; a valid answer never goes deeper than 6. */
#define PROMQ_JSON_DEPTH 16

/* Token and password files are small; a huge one is a misconfiguration. */
#define PROMQ_SECRET_MAX 16384

struct promq {
    char *url; /* without a trailing slash */
    double timeout;
    char *bearer_file;
    char *basic_user;
    char *basic_pass_file;
    char *ca_file;
    bool insecure;
    atomic_ulong requests, failures;
};

static char *promq_strdup_opt(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

struct promq *promq_new(const struct promq_cfg *cfg)
{
    struct promq *q = xcalloc(1, sizeof(*q));
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

/* ---- parser ------------------------------------------------------------------------------ */

/* Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf". */
static int promq_value(const char *s, double *out)
{
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return 0;
    }
    if (strcmp(s, "+Inf") == 0 || strcmp(s, "Inf") == 0) {
        *out = INFINITY;
        return 0;
    }
    if (strcmp(s, "-Inf") == 0) {
        *out = -INFINITY;
        return 0;
    }
    /* Only plain decimal notation; strtod alone would also take hex, "inf" and "nan(...)". */
    if (s[0] == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow still yields the nearest value; only overflow is wrong. */
    if (end == s || *end != '\0' || (errno == ERANGE && isinf(v)))
        return -1;
    *out = v;
    return 0;
}

/* Parse `[<unix_time>, "<value>"]` at `what` (a JSON path for messages). */
static int promq_pair(json_object *o, const char *what, struct point *p, char *err, size_t errlen)
{
    if (!json_object_is_type(o, json_type_array) || json_object_array_length(o) != 2) {
        snprintf(err, errlen, "prometheus answer: '%s' is not a [time, value] pair", what);
        return -1;
    }
    json_object *t = json_object_array_get_idx(o, 0);
    json_object *v = json_object_array_get_idx(o, 1);
    if (!json_object_is_type(t, json_type_double) && !json_object_is_type(t, json_type_int)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not a number", what);
        return -1;
    }
    p->t = json_object_get_double(t);
    if (!isfinite(p->t)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not finite", what);
        return -1;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "prometheus answer: value in '%s' is not a string", what);
        return -1;
    }
    if (promq_value(json_object_get_string(v), &p->v) < 0) {
        snprintf(err, errlen, "prometheus answer: value '%.40s' in '%s' is not a number",
                 json_object_get_string(v), what);
        return -1;
    }
    return 0;
}

static int promq_metric(json_object *el, size_t i, struct series *s, char *err, size_t errlen)
{
    json_object *metric;
    if (!json_object_object_get_ex(el, "metric", &metric)) {
        /* Prometheus omits nothing here, but an empty label set is harmless. */
        return 0;
    }
    if (!json_object_is_type(metric, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].metric' is not an object", i);
        return -1;
    }
    json_object_object_foreach(metric, name, val)
    {
        if (!json_object_is_type(val, json_type_string)) {
            snprintf(err, errlen,
                     "prometheus answer: label '%.64s' of 'data.result[%zu]' is not a string", name,
                     i);
            return -1;
        }
        labels_set(&s->labels, name, json_object_get_string(val));
    }
    return 0;
}

static int promq_series(json_object *el, size_t i, bool matrix, struct matrix *m, char *err,
                        size_t errlen)
{
    char what[64];
    if (!json_object_is_type(el, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' is not an object", i);
        return -1;
    }
    if (json_object_object_get_ex(el, "histograms", NULL) ||
        json_object_object_get_ex(el, "histogram", NULL)) {
        snprintf(err, errlen,
                 "prometheus answer: 'data.result[%zu]' holds native histograms, which are not "
                 "supported",
                 i);
        return -1;
    }
    struct series *s = matrix_push(m);
    if (promq_metric(el, i, s, err, errlen) < 0)
        return -1;

    json_object *vals;
    if (!matrix) {
        if (!json_object_object_get_ex(el, "value", &vals)) {
            snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' has no 'value'", i);
            return -1;
        }
        snprintf(what, sizeof(what), "data.result[%zu].value", i);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        return promq_pair(vals, what, &s->p[0], err, errlen);
    }
    if (!json_object_object_get_ex(el, "values", &vals) ||
        !json_object_is_type(vals, json_type_array)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].values' is not an array", i);
        return -1;
    }
    size_t n = json_object_array_length(vals);
    s->p = n ? xmalloc(n * sizeof(*s->p)) : NULL;
    for (size_t j = 0; j < n; j++) {
        snprintf(what, sizeof(what), "data.result[%zu].values[%zu]", i, j);
        if (promq_pair(json_object_array_get_idx(vals, j), what, &s->p[j], err, errlen) < 0)
            return -1;
        s->n = j + 1;
        /* decide() walks points in order to find gaps; never hand it a shuffled series. */
        if (j > 0 && !(s->p[j].t > s->p[j - 1].t)) {
            snprintf(err, errlen,
                     "prometheus answer: timestamps in 'data.result[%zu]' are not "
                     "ascending",
                     i);
            return -1;
        }
    }
    return 0;
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

static int promq_data(json_object *root, unsigned want, struct matrix *m, char *err, size_t errlen)
{
    json_object *data, *rt, *result;
    if (!json_object_object_get_ex(root, "data", &data) ||
        !json_object_is_type(data, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data' is missing or not an object");
        return -1;
    }
    if (!json_object_object_get_ex(data, "resultType", &rt) ||
        !json_object_is_type(rt, json_type_string)) {
        snprintf(err, errlen, "prometheus answer: 'data.resultType' is missing or not a string");
        return -1;
    }
    const char *type = json_object_get_string(rt);
    unsigned got = strcmp(type, "matrix") == 0   ? PROMQ_MATRIX
                   : strcmp(type, "vector") == 0 ? PROMQ_VECTOR
                   : strcmp(type, "scalar") == 0 ? PROMQ_SCALAR
                                                 : 0;
    if (!(got & want)) {
        snprintf(err, errlen, "prometheus answer: expected %s, got resultType '%.32s'",
                 promq_type_desc(want), type);
        return -1;
    }
    if (!json_object_object_get_ex(data, "result", &result)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is missing");
        return -1;
    }
    if (got == PROMQ_SCALAR) {
        struct series *s = matrix_push(m);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        return promq_pair(result, "data.result", &s->p[0], err, errlen);
    }
    if (!json_object_is_type(result, json_type_array)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is not an array");
        return -1;
    }
    size_t n = json_object_array_length(result);
    for (size_t i = 0; i < n; i++)
        if (promq_series(json_object_array_get_idx(result, i), i, got == PROMQ_MATRIX, m, err,
                         errlen) < 0)
            return -1;
    return 0;
}

static bool promq_is_2xx(long status)
{
    return status >= 200 && status < 300;
}

/* Interpret the envelope; on success fill `m`. */
static int promq_envelope(json_object *root, long http_status, unsigned want, struct matrix *m,
                          char *err, size_t errlen)
{
    json_object *st, *o;
    const char *status = NULL;
    if (json_object_object_get_ex(root, "status", &st) && json_object_is_type(st, json_type_string))
        status = json_object_get_string(st);

    if (status && strcmp(status, "error") == 0) {
        const char *type = "unknown", *msg = "(no message)";
        if (json_object_object_get_ex(root, "errorType", &o) &&
            json_object_is_type(o, json_type_string))
            type = json_object_get_string(o);
        if (json_object_object_get_ex(root, "error", &o) &&
            json_object_is_type(o, json_type_string))
            msg = json_object_get_string(o);
        snprintf(err, errlen, "prometheus error (%s): %s", type, msg);
        return -1;
    }
    /* A 2xx-less answer without the error envelope comes from something in front of it. */
    if (!promq_is_2xx(http_status)) {
        snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        return -1;
    }
    if (!status) {
        snprintf(err, errlen, "prometheus answer: 'status' is missing or not a string");
        return -1;
    }
    if (strcmp(status, "success") != 0) {
        snprintf(err, errlen, "prometheus answer: unknown status '%.32s'", status);
        return -1;
    }
    if (json_object_object_get_ex(root, "warnings", &o) &&
        !json_object_is_type(o, json_type_null)) {
        if (!json_object_is_type(o, json_type_array)) {
            snprintf(err, errlen, "prometheus answer: 'warnings' is not an array");
            return -1;
        }
        if (json_object_array_length(o) > 0) {
            json_object *w = json_object_array_get_idx(o, 0);
            snprintf(err, errlen, "partial answer: %s",
                     json_object_is_type(w, json_type_string) ? json_object_get_string(w)
                                                              : "(warning is not a string)");
            return -1;
        }
    }
    return promq_data(root, want, m, err, errlen);
}

static int promq_parse_as(const char *body, size_t len, long http_status, unsigned want,
                          struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    json_tokener *tok = json_tokener_new_ex(PROMQ_JSON_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "cannot create a JSON parser");
        return -1;
    }
    json_object *root = NULL;
    /* json_tokener_parse_ex takes an int length; API answers never get near 2 GiB. */
    if (len <= (size_t)INT32_MAX)
        root = json_tokener_parse_ex(tok, body, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    int ret = -1;

    if (!root || jerr != json_tokener_success) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else if (len == 0)
            snprintf(err, errlen, "empty answer from prometheus");
        else if (len > (size_t)INT32_MAX)
            snprintf(err, errlen, "prometheus answer of %zu bytes is too large", len);
        else if (jerr == json_tokener_continue || (jerr == json_tokener_success && !root))
            snprintf(err, errlen, "truncated JSON from prometheus (%zu bytes)", len);
        else
            snprintf(err, errlen, "invalid JSON from prometheus at offset %zu: %s", end,
                     json_tokener_error_desc(jerr));
        goto out;
    }
    while (end < len && body[end] != '\0' && strchr(" \t\r\n", body[end]))
        end++;
    if (end < len) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu", end);
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        goto out;
    }
    ret = promq_envelope(root, http_status, want, out, err, errlen);
out:
    if (ret < 0)
        matrix_free(out);
    json_object_put(root);
    json_tokener_free(tok);
    return ret;
}

int promq_parse(const char *body, size_t len, long http_status, struct matrix *out, char *err,
                size_t errlen)
{
    return promq_parse_as(body, len, http_status, PROMQ_ANY, out, err, errlen);
}

/* ---- requests ---------------------------------------------------------------------------- */

/* Read a secret file, dropping trailing whitespace (files written by echo end in "\n"). */
static char *promq_read_secret(const char *path, const char *what, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s file '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    char *buf = xmalloc(PROMQ_SECRET_MAX + 1);
    size_t n = fread(buf, 1, PROMQ_SECRET_MAX + 1, f);
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (rerr || n > PROMQ_SECRET_MAX) {
        snprintf(err, errlen, "cannot read %s file '%s': %s", what, path,
                 rerr ? strerror(rerr) : "file too large");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    str_rtrim(buf);
    return buf;
}

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

static int promq_request(struct promq *q, const char *path, const struct sbuf *form, unsigned want,
                         struct matrix *out, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", q->url, path);
    char *token = NULL, *pass = NULL;
    struct httpc_resp resp = {0};
    int ret = -1;

    atomic_fetch_add(&q->requests, 1);
    *out = (struct matrix){0};
    if (q->bearer_file && !(token = promq_read_secret(q->bearer_file, "bearer token", err, errlen)))
        goto out;
    if (q->basic_user && q->basic_pass_file &&
        !(pass = promq_read_secret(q->basic_pass_file, "password", err, errlen)))
        goto out;

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
        .timeout = q->timeout,
        .ca_file = q->ca_file,
        .insecure = q->insecure,
        .bearer_token = token,
        .basic_user = q->basic_user,
        .basic_pass = pass,
    };
    if (httpc_do(&req, &resp, err, errlen) < 0)
        goto out;
    ret = promq_parse_as(resp.body.buf, resp.body.len, resp.status, want, out, err, errlen);
    log_debug("prometheus %s %s: HTTP %ld, %zu bytes, %.3f s%s", path, form->buf, resp.status,
              resp.body.len, resp.elapsed, ret < 0 ? " (failed)" : "");
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    if (pass) {
        memset(pass, 0, strlen(pass));
        free(pass);
    }
    free(url);
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
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "start", start);
    promq_form_num(&form, "end", end);
    promq_form_num(&form, "step", step);
    promq_form_num(&form, "timeout", q->timeout);
    int ret = promq_request(q, "/api/v1/query_range", &form, PROMQ_MATRIX, out, err, errlen);
    sbuf_free(&form);
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
    int ret =
        promq_request(q, "/api/v1/query", &form, PROMQ_VECTOR | PROMQ_SCALAR, out, err, errlen);
    sbuf_free(&form);
    return ret;
}
