/*
 * The json-c reference parser for Prometheus answers (tests and fuzzing only, never in the
 * enforcer): the parser promq used before jsonpush and promjson, json-c builds the whole document,
 * then promq walks it. Kept verbatim (with json-c in strict mode) so tests and fuzz/fuzz_promq.c
 * can check that the new parser gives the same matrix, or an error of the same class, on every
 * input.
 *
 * It uses static parts of promjson.c (promjson_type_desc, promjson_is_2xx) and promq.c
 * (promq_parse_as): a file #includes enforcer/promjson.c and enforcer/promq.c first, then
 * this one (tests/unit/test_promq.c, fuzz/fuzz_promq.c).
 */
#include <json-c/json.h>

/* Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf". */
static int promq_ref_value(const char *s, double *out)
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
static int promq_ref_pair(json_object *o, const char *what, struct point *p, char *err,
                          size_t errlen)
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
    if (promq_ref_value(json_object_get_string(v), &p->v) < 0) {
        snprintf(err, errlen, "prometheus answer: value '%.40s' in '%s' is not a number",
                 json_object_get_string(v), what);
        return -1;
    }
    return 0;
}

static int promq_ref_metric(json_object *el, size_t i, struct series *s, char *err, size_t errlen)
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

static int promq_ref_series(json_object *el, size_t i, bool matrix, struct matrix *m, char *err,
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
    if (promq_ref_metric(el, i, s, err, errlen) < 0)
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
        return promq_ref_pair(vals, what, &s->p[0], err, errlen);
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
        if (promq_ref_pair(json_object_array_get_idx(vals, j), what, &s->p[j], err, errlen) < 0)
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

static int promq_ref_data(json_object *root, unsigned want, struct matrix *m, char *err,
                          size_t errlen)
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
    unsigned got = strcmp(type, "matrix") == 0   ? PROMJSON_MATRIX
                   : strcmp(type, "vector") == 0 ? PROMJSON_VECTOR
                   : strcmp(type, "scalar") == 0 ? PROMJSON_SCALAR
                                                 : 0;
    if (!(got & want)) {
        snprintf(err, errlen, "prometheus answer: expected %s, got resultType '%.32s'",
                 promjson_type_desc(want), type);
        return -1;
    }
    if (!json_object_object_get_ex(data, "result", &result)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is missing");
        return -1;
    }
    if (got == PROMJSON_SCALAR) {
        struct series *s = matrix_push(m);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        return promq_ref_pair(result, "data.result", &s->p[0], err, errlen);
    }
    if (!json_object_is_type(result, json_type_array)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is not an array");
        return -1;
    }
    size_t n = json_object_array_length(result);
    for (size_t i = 0; i < n; i++)
        if (promq_ref_series(json_object_array_get_idx(result, i), i, got == PROMJSON_MATRIX, m,
                             err, errlen) < 0)
            return -1;
    return 0;
}

/* Interpret the envelope; on success fill `m`. */
static int promq_ref_envelope(json_object *root, long http_status, unsigned want, struct matrix *m,
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
        char hint[96];
        promjson_error_hint(msg, hint, sizeof(hint));
        snprintf(err, errlen, "prometheus error (%s%s): %s", type, hint, msg);
        return -1;
    }
    /* A 2xx-less answer without the error envelope comes from something in front of it. */
    if (!promjson_is_2xx(http_status)) {
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
    if (json_object_object_get_ex(root, "isPartial", &o) &&
        !json_object_is_type(o, json_type_null)) {
        if (!json_object_is_type(o, json_type_boolean)) {
            snprintf(err, errlen, "prometheus answer: 'isPartial' is not a boolean");
            return -1;
        }
        if (json_object_get_boolean(o)) {
            snprintf(err, errlen, "%s", PROMJSON_PARTIAL_MSG);
            return -1;
        }
    }
    return promq_ref_data(root, want, m, err, errlen);
}

static int promq_ref_parse_as(const char *body, size_t len, long http_status, unsigned want,
                              struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    json_tokener *tok = json_tokener_new_ex(JSONPUSH_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "cannot create a JSON parser");
        return -1;
    }
    /* The strict mode is the closest json-c comes to RFC 8259 (see jsonpush_err for the rest). */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                    JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = NULL;
    /* json_tokener_parse_ex takes an int length; API answers never get near 2 GiB. */
    if (len <= (size_t)INT32_MAX)
        root = json_tokener_parse_ex(tok, body, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    int ret = -1;

    if (!root || jerr != json_tokener_success) {
        if (!promjson_is_2xx(http_status))
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
        if (!promjson_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu", end);
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        if (!promjson_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        goto out;
    }
    ret = promq_ref_envelope(root, http_status, want, out, err, errlen);
out:
    if (ret < 0)
        matrix_free(out);
    json_object_put(root);
    json_tokener_free(tok);
    return ret;
}
/*
 * Classes of parse errors: two messages of one class say the same thing about an answer.
 * Truncated and invalid JSON are one class: where a broken number or nesting meets the end
 * of the input, json-c's choice between the two follows its internal states.
 */
static int promq_ref_class(const char *msg)
{
    static const char *const prefix[] = {
        "HTTP ",
        "empty answer from prometheus",
        "truncated JSON from prometheus",
        "invalid JSON from prometheus at offset ",
        "invalid JSON from prometheus: trailing data",
        "prometheus answer is not a JSON object",
        "prometheus error (",
        "partial answer: ",
        "prometheus answer: ",
    };
    for (size_t i = 0; i < ARRAY_LEN(prefix); i++)
        if (strncmp(msg, prefix[i], strlen(prefix[i])) == 0)
            return i == 2 ? 4 : (int)i + 1;
    return 0;
}

static bool promq_ref_same_matrix(const struct matrix *a, const struct matrix *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct series *x = &a->s[i], *y = &b->s[i];
        if (!labels_equal(&x->labels, &y->labels) || x->n != y->n ||
            (x->n && memcmp(x->p, y->p, x->n * sizeof(*x->p)) != 0))
            return false;
    }
    return true;
}

static int pj_check_value(void *arg, size_t depth, enum jsonpush_kind kind, const char *s,
                          size_t len)
{
    return 0;
}

static void pj_check_key(void *arg, size_t depth, const char *s, size_t len)
{
}

static int pj_check_close(void *arg, size_t depth)
{
    return 0;
}

/* The syntax check alone: the error and its offset, as the stream reports them. */
static enum jsonpush_err pj_check(const char *body, size_t len, size_t *pos)
{
    static const struct jsonpush_events none = {pj_check_value, pj_check_key, pj_check_close};
    struct jsonpush *p = jsonpush_new(&none, NULL, SIZE_MAX);
    jsonpush_feed(p, body, len);
    enum jsonpush_err e = jsonpush_end(p, pos);
    jsonpush_free(p);
    return e;
}

/*
 * Parse with both parsers and compare. Returns 0 when they agree: the same matrix bit for
 * bit, or errors of the same class (the same message, except for the wording of JSON syntax
 * errors). Where json-c accepts a construct pj_check refuses on purpose (jsonpush_err
 * from JSONPUSH_E_CONTROL on), only the new parser's failure is required. Otherwise -1 with `why`.
 */
static int promq_ref_compare(const char *body, size_t len, long http_status, unsigned want,
                             char *why, size_t whylen)
{
    struct matrix a, b;
    char ea[256] = "", eb[256] = "";
    int ra = promq_parse_as(body, len, http_status, want, &a, ea, sizeof(ea));
    int rb = promq_ref_parse_as(body, len, http_status, want, &b, eb, sizeof(eb));
    size_t pos;
    enum jsonpush_err jerr = len ? pj_check(body, len, &pos) : JSONPUSH_E_TRUNCATED;
    /* json-c returns no object for a top-level null, which promq_ref took for truncation. */
    size_t lead = 0;
    while (lead < len && strchr(" \t\n\r", body[lead]) && body[lead] != '\0')
        lead++;
    bool null_root = len - lead >= 4 && memcmp(body + lead, "null", 4) == 0;
    int ret = 0;
    if (null_root && ra != 0 && rb != 0) {
        /* Both refuse it; the class is json-c's accident. */
    } else if (jerr >= JSONPUSH_E_CONTROL) {
        if (ra == 0) {
            snprintf(why, whylen, "accepted a body with %s at %zu", jsonpush_strerror(jerr), pos);
            ret = -1;
        }
    } else if (ra != rb) {
        snprintf(why, whylen, "new %s, json-c %s", ra ? ea : "ok", rb ? eb : "ok");
        ret = -1;
    } else if (ra == 0 && !promq_ref_same_matrix(&a, &b)) {
        snprintf(why, whylen, "different matrices");
        ret = -1;
    } else if (ra != 0 && (promq_ref_class(ea) != promq_ref_class(eb) ||
                           (promq_ref_class(ea) != 4 && strcmp(ea, eb) != 0))) {
        snprintf(why, whylen, "new '%s', json-c '%s'", ea, eb);
        ret = -1;
    }
    matrix_free(&a);
    matrix_free(&b);
    return ret;
}
/*
 * Parse `body` whole and again fed in chunks of 1 to 64 bytes drawn from `seed` (as libcurl
 * may cut it anywhere); 0 when both give the same matrix bit for bit or the same message.
 */
static int promq_ref_chunked(const char *body, size_t len, long http_status, unsigned want,
                             uint64_t seed, char *why, size_t whylen)
{
    struct matrix a, b;
    char ea[256] = "", eb[256] = "";
    int ra = promq_parse_as(body, len, http_status, want, &a, ea, sizeof(ea));
    struct promjson *p = promjson_new(want, PROMQ_DEFAULT_MAX_ANSWER);
    uint64_t x = seed | 1;
    for (size_t i = 0; i < len;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = 1 + (size_t)(x % ((x >> 32) % 4 == 0 ? 64 : 4));
        if (n > len - i)
            n = len - i;
        promjson_feed(p, body + i, n);
        i += n;
    }
    int rb = promjson_finish(p, http_status, &b, eb, sizeof(eb));
    promjson_free(p);
    int ret = 0;
    if (ra != rb || strcmp(ea, eb) != 0) {
        snprintf(why, whylen, "whole %s, chunked %s", ra ? ea : "ok", rb ? eb : "ok");
        ret = -1;
    } else if (ra == 0 && !promq_ref_same_matrix(&a, &b)) {
        snprintf(why, whylen, "whole and chunked matrices differ");
        ret = -1;
    }
    matrix_free(&a);
    matrix_free(&b);
    return ret;
}
