/*
 * VictoriaMetrics /api/v1/export reader (vmexport.h): lines are gathered in a buffer and
 * each complete one is parsed by a small recursive-descent parser of the one object shape
 * the endpoint writes. Label strings follow RFC 8259 (escapes, \u with surrogate pairs,
 * strict UTF-8 through utf8.h); numbers are JSON numbers read with strtod, plus the three
 * Go tokens `+Inf`, `-Inf` and `NaN` (1.79) and JSON's `null`, `"Infinity"` and `"-Infinity"`
 * (current releases). A NaN there is a staleness marker: VictoriaMetrics drops other NaNs at
 * ingestion.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "util.h"
#include "vmexport.h"

struct vmx {
    size_t max, used; /* cap and parsed data so far (points, labels) */
    struct sbuf line; /* the incomplete line */
    struct matrix m;
    size_t lineno;
    char err[256]; /* set once the answer is known bad */
};

/* The cursor over one line. */
struct vmx_cur {
    const char *s, *e;
    char *err;
    size_t errlen;
    size_t lineno;
};

static bool vmx_fail(struct vmx_cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool vmx_fail(struct vmx_cur *c, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "export answer line %zu: %s", c->lineno, msg);
    return false;
}

static void vmx_ws(struct vmx_cur *c)
{
    while (c->s < c->e && (*c->s == ' ' || *c->s == '\t' || *c->s == '\r'))
        c->s++;
}

static bool vmx_eat(struct vmx_cur *c, char ch)
{
    vmx_ws(c);
    if (c->s < c->e && *c->s == ch) {
        c->s++;
        return true;
    }
    return false;
}

static int vmx_hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value((unsigned char)p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* A JSON string into `out` (reset first, NUL-terminated; a NUL inside is refused). */
static bool vmx_string(struct vmx_cur *c, struct sbuf *out)
{
    sbuf_reset(out);
    if (!vmx_eat(c, '"'))
        return vmx_fail(c, "expected a string");
    while (c->s < c->e && *c->s != '"') {
        unsigned char ch = (unsigned char)*c->s;
        if (ch < 0x20)
            return vmx_fail(c, "control character in a string");
        if (ch != '\\') {
            sbuf_putc(out, (char)ch);
            c->s++;
            continue;
        }
        if (c->e - c->s < 2)
            break;
        char esc = c->s[1];
        c->s += 2;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, esc);
        if (esc && k) {
            sbuf_putc(out, to[k - from]);
            continue;
        }
        if (esc != 'u' || c->e - c->s < 4)
            return vmx_fail(c, "invalid escape in a string");
        long cp = vmx_hex4(c->s);
        c->s += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            int lo =
                c->e - c->s >= 6 && c->s[0] == '\\' && c->s[1] == 'u' ? vmx_hex4(c->s + 2) : -1;
            if (lo < 0xdc00 || lo > 0xdfff)
                return vmx_fail(c, "unpaired surrogate in a string");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            c->s += 6;
        } else if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff)) {
            return vmx_fail(c, "invalid \\u escape in a string");
        }
        if (cp == 0)
            return vmx_fail(c, "NUL in a string");
        char u[4];
        sbuf_add(out, u, utf8_encode((unsigned long)cp, u));
    }
    if (c->s >= c->e)
        return vmx_fail(c, "unterminated string");
    c->s++;
    if (!utf8_valid(out->buf ? out->buf : "", out->len) ||
        (out->len && memchr(out->buf, '\0', out->len)))
        return vmx_fail(c, "invalid UTF-8 in a string");
    if (!out->buf)
        sbuf_puts(out, "");
    return true;
}

/* The extent of a JSON number at c->s (RFC 8259 grammar); 0 when there is none. */
static size_t vmx_number_len(const char *s, const char *e)
{
    const char *p = s;
    if (p < e && *p == '-')
        p++;
    if (p >= e || !(*p >= '0' && *p <= '9'))
        return 0;
    if (*p == '0')
        p++;
    else
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !(*p >= '0' && *p <= '9'))
            return 0;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || !(*p >= '0' && *p <= '9'))
            return 0;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    return (size_t)(p - s);
}

static bool vmx_token(struct vmx_cur *c, const char *tok)
{
    size_t n = strlen(tok);
    if ((size_t)(c->e - c->s) >= n && memcmp(c->s, tok, n) == 0) {
        c->s += n;
        return true;
    }
    return false;
}

static bool vmx_value(struct vmx_cur *c, double *v)
{
    vmx_ws(c);
    if (vmx_token(c, "+Inf") || vmx_token(c, "Inf")) {
        *v = INFINITY;
        return true;
    }
    if (vmx_token(c, "-Inf")) {
        *v = -INFINITY;
        return true;
    }
    /*
     * Newer releases write JSON's forms instead (app/vmselect/prometheus/export.qtpl,
     * convertValueToSpecialJSON): NaN as null (VictoriaMetrics/VictoriaMetrics
     * ed8e88af111498cd5483f0ccc2c1916b33ca10ba, #2518) and the infinities as strings
     * (ec04fcac938245e003477e1ab37da2bf070e124c, #3180), as v1.153.0 does. Refused, they failed
     * every selector rule on a current release.
     */
    if (vmx_token(c, "\"Infinity\"")) {
        *v = INFINITY;
        return true;
    }
    if (vmx_token(c, "\"-Infinity\"")) {
        *v = -INFINITY;
        return true;
    }
    if (vmx_token(c, "NaN") || vmx_token(c, "null")) {
        uint64_t bits = SERIES_STALE_NAN_BITS;
        memcpy(v, &bits, sizeof(*v));
        return true;
    }
    size_t n = vmx_number_len(c->s, c->e);
    if (n == 0 || n > 400)
        return vmx_fail(c, "expected a number");
    char tmp[401];
    memcpy(tmp, c->s, n);
    tmp[n] = '\0';
    errno = 0;
    *v = strtod(tmp, NULL);
    c->s += n;
    return true;
}

static bool vmx_ts(struct vmx_cur *c, int64_t *t)
{
    vmx_ws(c);
    const char *p = c->s;
    bool neg = p < c->e && *p == '-';
    if (neg)
        p++;
    if (p >= c->e || !(*p >= '0' && *p <= '9') ||
        (*p == '0' && p + 1 < c->e && p[1] >= '0' && p[1] <= '9'))
        return vmx_fail(c, "expected an integer timestamp");
    uint64_t u = 0;
    while (p < c->e && *p >= '0' && *p <= '9') {
        if (u > (UINT64_C(1) << 53) / 10)
            return vmx_fail(c, "timestamp out of range");
        u = u * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p < c->e && (*p == '.' || *p == 'e' || *p == 'E'))
        return vmx_fail(c, "expected an integer timestamp");
    c->s = p;
    *t = neg ? -(int64_t)u : (int64_t)u;
    return true;
}

static int vmx_label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/* Charge `n` bytes against the cap. */
static bool vmx_charge(struct vmx *x, struct vmx_cur *c, size_t n)
{
    x->used += n;
    if (x->used > x->max)
        return vmx_fail(c, "answer larger than the cap of %zu bytes", x->max);
    return true;
}

/* Parse one line into a new series of x->m. */
static bool vmx_line(struct vmx *x, struct vmx_cur *c)
{
    struct label *lv = NULL;
    size_t nl = 0;
    double *vals = NULL;
    int64_t *ts = NULL;
    size_t nv = 0, nt = 0, capv = 0, capt = 0;
    bool have_m = false, have_v = false, have_t = false, ok = false;
    struct sbuf key = {0}, val = {0};

    if (!vmx_eat(c, '{')) {
        vmx_fail(c, "expected an object");
        goto out;
    }
    for (int field = 0;; field++) {
        if (field > 0 && !vmx_eat(c, ',')) {
            if (vmx_eat(c, '}'))
                break;
            vmx_fail(c, "expected ',' or '}'");
            goto out;
        }
        if (!vmx_string(c, &key))
            goto out;
        if (!vmx_eat(c, ':')) {
            vmx_fail(c, "expected ':'");
            goto out;
        }
        if (strcmp(key.buf, "metric") == 0 && !have_m) {
            have_m = true;
            if (!vmx_eat(c, '{')) {
                vmx_fail(c, "\"metric\" is not an object");
                goto out;
            }
            if (!vmx_eat(c, '}')) {
                do {
                    if (!vmx_string(c, &key))
                        goto out;
                    if (!vmx_eat(c, ':')) {
                        vmx_fail(c, "expected ':' in \"metric\"");
                        goto out;
                    }
                    if (!vmx_string(c, &val))
                        goto out;
                    if (!vmx_charge(x, c, key.len + val.len + 2 + sizeof(*lv)))
                        goto out;
                    lv = xrealloc(lv, (nl + 1) * sizeof(*lv));
                    lv[nl++] = (struct label){sbuf_take(&key), sbuf_take(&val)};
                } while (vmx_eat(c, ','));
                if (!vmx_eat(c, '}')) {
                    vmx_fail(c, "expected ',' or '}' in \"metric\"");
                    goto out;
                }
            }
        } else if (strcmp(key.buf, "values") == 0 && !have_v) {
            have_v = true;
            if (!vmx_eat(c, '[')) {
                vmx_fail(c, "\"values\" is not an array");
                goto out;
            }
            if (!vmx_eat(c, ']')) {
                do {
                    if (nv == capv) {
                        capv = capv ? 2 * capv : 64;
                        vals = xrealloc(vals, capv * sizeof(*vals));
                    }
                    if (!vmx_value(c, &vals[nv++]))
                        goto out;
                } while (vmx_eat(c, ','));
                if (!vmx_eat(c, ']')) {
                    vmx_fail(c, "expected ',' or ']' in \"values\"");
                    goto out;
                }
            }
        } else if (strcmp(key.buf, "timestamps") == 0 && !have_t) {
            have_t = true;
            if (!vmx_eat(c, '[')) {
                vmx_fail(c, "\"timestamps\" is not an array");
                goto out;
            }
            if (!vmx_eat(c, ']')) {
                do {
                    if (nt == capt) {
                        capt = capt ? 2 * capt : 64;
                        ts = xrealloc(ts, capt * sizeof(*ts));
                    }
                    if (!vmx_ts(c, &ts[nt]))
                        goto out;
                    if (nt > 0 && ts[nt] <= ts[nt - 1]) {
                        vmx_fail(c, "timestamps out of order");
                        goto out;
                    }
                    nt++;
                } while (vmx_eat(c, ','));
                if (!vmx_eat(c, ']')) {
                    vmx_fail(c, "expected ',' or ']' in \"timestamps\"");
                    goto out;
                }
            }
        } else {
            vmx_fail(c, "unexpected or repeated key '%.40s'", key.buf);
            goto out;
        }
    }
    vmx_ws(c);
    if (c->s != c->e) {
        vmx_fail(c, "trailing data after the object");
        goto out;
    }
    if (!have_m || !have_v || !have_t) {
        vmx_fail(c, "missing \"%s\"", !have_m ? "metric" : !have_v ? "values" : "timestamps");
        goto out;
    }
    if (nv != nt) {
        vmx_fail(c, "%zu values but %zu timestamps", nv, nt);
        goto out;
    }
    if (nl)
        qsort(lv, nl, sizeof(*lv), vmx_label_cmp);
    for (size_t i = 1; i < nl; i++) {
        if (strcmp(lv[i - 1].name, lv[i].name) == 0) {
            vmx_fail(c, "label '%.40s' repeated", lv[i].name);
            goto out;
        }
    }
    if (!vmx_charge(x, c, nv * sizeof(struct point) + sizeof(struct series)))
        goto out;
    struct series *s = matrix_push(&x->m);
    labels_from(&s->labels, lv, nl);
    s->p = xmalloc((nv ? nv : 1) * sizeof(*s->p));
    for (size_t i = 0; i < nv; i++)
        s->p[i] = (struct point){(double)ts[i] / 1000.0, vals[i]};
    s->n = nv;
    ok = true;
out:
    for (size_t i = 0; i < nl; i++) {
        free(lv[i].name);
        free(lv[i].value);
    }
    free(lv);
    free(vals);
    free(ts);
    sbuf_free(&key);
    sbuf_free(&val);
    return ok;
}

struct vmx *vmx_new(size_t max_bytes)
{
    struct vmx *x = xcalloc(1, sizeof(*x));
    x->max = max_bytes;
    return x;
}

void vmx_free(struct vmx *x)
{
    if (!x)
        return;
    sbuf_free(&x->line);
    matrix_free(&x->m);
    free(x);
}

/* Parse the complete line in s[0..n). */
static int vmx_do_line(struct vmx *x, const char *s, size_t n)
{
    x->lineno++;
    struct vmx_cur c = {
        .s = s, .e = s + n, .err = x->err, .errlen = sizeof(x->err), .lineno = x->lineno};
    vmx_ws(&c);
    if (c.s == c.e)
        return 0; /* a blank line */
    return vmx_line(x, &c) ? 0 : -1;
}

int vmx_feed(struct vmx *x, const char *buf, size_t len, char *err, size_t errlen)
{
    while (!x->err[0] && len) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (x->line.len + take > x->max) {
            snprintf(x->err, sizeof(x->err),
                     "export answer line %zu: longer than the cap of %zu bytes", x->lineno + 1,
                     x->max);
            break;
        }
        if (!nl) {
            sbuf_add(&x->line, buf, take);
            break;
        }
        if (x->line.len) {
            sbuf_add(&x->line, buf, take);
            vmx_do_line(x, x->line.buf, x->line.len);
            sbuf_reset(&x->line);
        } else {
            vmx_do_line(x, buf, take);
        }
        buf += take + 1;
        len -= take + 1;
    }
    if (x->err[0]) {
        snprintf(err, errlen, "%s", x->err);
        return -1;
    }
    return 0;
}

static int vmx_cmp_idx(const void *a, const void *b, void *arg)
{
    const struct series *m = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = labels_compare(&m[i].labels, &m[j].labels);
    return c ? c : (i > j) - (i < j);
}

static int vmx_cmp_point(const void *a, const void *b)
{
    double x = ((const struct point *)a)->t, y = ((const struct point *)b)->t;
    return (x > y) - (x < y);
}

/* Join the series that appear on several lines (`idx` sorted by labels, then line). */
static int vmx_join(struct vmx *x, struct matrix *out)
{
    size_t n = x->m.n;
    size_t *idx = xmalloc((n ? n : 1) * sizeof(*idx));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof(*idx), vmx_cmp_idx, x->m.s);
    *out = (struct matrix){0};
    out->s = xcalloc(n ? n : 1, sizeof(*out->s));
    int ret = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1, total = x->m.s[idx[i]].n;
        while (j < n && labels_equal(&x->m.s[idx[i]].labels, &x->m.s[idx[j]].labels))
            total += x->m.s[idx[j++]].n;
        struct series *dst = &out->s[out->n++];
        *dst = x->m.s[idx[i]];
        x->m.s[idx[i]] = (struct series){0};
        if (j > i + 1) {
            dst->p = xrealloc(dst->p, (total ? total : 1) * sizeof(*dst->p));
            for (size_t k = i + 1; k < j; k++) {
                struct series *s = &x->m.s[idx[k]];
                memcpy(dst->p + dst->n, s->p, s->n * sizeof(*s->p));
                dst->n += s->n;
                series_free(s);
            }
            qsort(dst->p, dst->n, sizeof(*dst->p), vmx_cmp_point);
            for (size_t k = 1; k < dst->n && ret == 0; k++)
                if (!(dst->p[k].t > dst->p[k - 1].t)) {
                    snprintf(x->err, sizeof(x->err),
                             "export answer: two lines of one series hold the time %.3f",
                             dst->p[k].t);
                    ret = -1;
                }
        }
        i = j;
    }
    free(idx);
    free(x->m.s);
    x->m = (struct matrix){0};
    if (ret < 0)
        matrix_free(out);
    return ret;
}

int vmx_finish(struct vmx *x, struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    if (!x->err[0] && x->line.len) {
        const char *p = x->line.buf, *e = p + x->line.len;
        while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p != e)
            snprintf(x->err, sizeof(x->err),
                     "export answer cut short: line %zu has no end (%zu bytes)", x->lineno + 1,
                     x->line.len);
    }
    if (!x->err[0])
        vmx_join(x, out);
    if (x->err[0]) {
        snprintf(err, errlen, "%s", x->err);
        return -1;
    }
    return 0;
}

int vmx_parse(const char *body, size_t len, size_t max_bytes, struct matrix *out, char *err,
              size_t errlen)
{
    struct vmx *x = vmx_new(max_bytes);
    int ret = vmx_feed(x, body, len, err, errlen);
    if (ret == 0)
        ret = vmx_finish(x, out, err, errlen);
    else
        *out = (struct matrix){0};
    vmx_free(x);
    return ret;
}
